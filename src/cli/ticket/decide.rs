//! `warrant ticket approve|reject NAME`: one approval (or the rejection) in the user's own name,
//! written to the ticket's `/status` at the `resourceVersion` read, so that a concurrent write
//! makes this one conflict and start again (three tries). warrant's validation ring decides
//! whether it stands (RBAC's verb `approve`, not the requester, not twice).

use super::output::{self, Format};
use super::session::{Session, TicketError, decode, encode};
use crate::tickets::{Phase, Signoff, status_of};
use clap::Args;
use kube::api::PostParams;

/// `warrant ticket approve|reject`.
#[derive(Debug, Args)]
pub struct DecideArgs {
    /// The ticket.
    pub name: String,
    /// Why, in words.
    #[arg(long, default_value = "")]
    pub comment: String,
}

/// Approve or reject.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// One approval added.
    Approve,
    /// The ticket rejected.
    Reject,
}

/// Writes the approval or rejection; what kubectl would print.
pub async fn run(
    session: &Session,
    args: &DecideArgs,
    verdict: Verdict,
    format: Format,
) -> Result<String, TicketError> {
    let me = session.whoami().await?;
    let api = session.api(Some(&session.namespace));
    let mut tries = 0;
    loop {
        tries += 1;
        let mut ticket = decode(&api.get_status(&args.name).await?)?;
        let mut status = status_of(&ticket);
        let signoff = Signoff {
            user: me.clone(),
            time: chrono::Utc::now(),
            comment: args.comment.clone(),
        };
        match verdict {
            Verdict::Approve => {
                status.approvals.push(signoff);
                status.phase = Some(Phase::Approved);
            }
            Verdict::Reject => {
                status.rejection = Some(signoff);
                status.phase = Some(Phase::Rejected);
            }
        }
        ticket.status = Some(status);
        match api
            .replace_status(&args.name, &PostParams::default(), &encode(&ticket)?)
            .await
        {
            Ok(written) => {
                let done = match verdict {
                    Verdict::Approve => "approved",
                    Verdict::Reject => "rejected",
                };
                return output::one(&decode(&written)?, format, done);
            }
            Err(kube::Error::Api(s)) if s.is_conflict() && tries < 3 => continue,
            Err(e) => return Err(e.into()),
        }
    }
}
