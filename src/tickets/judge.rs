//! One admission request on a `DeletionTicket`, judged: the objects decoded, the rules of
//! [`super::rules`] applied, and, for an approval (or a rejection by someone other than the
//! requester), the cluster asked whether the writer may `approve` this ticket. The question
//! carries the request's `userInfo` (user, uid, groups, extra), never anything from the body;
//! a question the cluster cannot answer in time refuses the write (`TICKET_APPROVER_UNVERIFIED`).

use super::code::{Refusal, TicketCode};
use super::resource::{DeletionTicket, GROUP, PLURAL};
use super::rules::{self, Change, Ruling, Wildcards, Writer};
use crate::admission::{AdmissionOperation, AdmissionRequest};
use crate::object::{AccessAnswer, AccessQuestion, AccessReview, Subject};
use chrono::{DateTime, Utc};
use std::time::Duration;

/// Whether an admission request is about a `DeletionTicket` (or its status).
pub fn is_ticket_request(request: &AdmissionRequest) -> bool {
    request.resource.group == GROUP && request.resource.resource == PLURAL
}

/// What judging a ticket write needs.
#[derive(Debug, Clone, Copy)]
pub struct TicketJudge<'a> {
    /// Asks the cluster who may approve.
    pub access: &'a dyn AccessReview,
    /// warrant's own user names (the guards' `warrantServiceAccount`).
    pub own: &'a [String],
    /// When the request is judged.
    pub now: DateTime<Utc>,
    /// How long the cluster may take to answer.
    pub budget: Duration,
    /// Whether targets may name objects with `*` (the guards' `tickets.allowWildcardTargets`).
    pub wildcards: Wildcards,
}

/// The outcome of one ticket write: the change admitted, or the refusal.
pub type Judgement = Result<Change, Refusal>;

impl TicketJudge<'_> {
    /// Judges one request (see the module documentation). DELETE and CONNECT are admitted
    /// unjudged: RBAC says who may delete a ticket.
    pub async fn judge(&self, request: &AdmissionRequest) -> Judgement {
        let user = request.user_info.username.as_deref().unwrap_or("");
        let writer = Writer {
            user,
            own: self.own.iter().any(|o| o == user),
        };
        let ruling = match request.operation {
            AdmissionOperation::Create => rules::create(
                &ticket("object", request.object.as_ref())?,
                writer,
                self.now,
                self.wildcards,
            )?,
            AdmissionOperation::Update => {
                let old = ticket("oldObject", request.old_object.as_ref())?;
                let new = ticket("object", request.object.as_ref())?;
                match request.sub_resource.as_str() {
                    "status" => rules::status(&old, &new, writer, self.now)?,
                    _ => rules::update(&old, &new)?,
                }
            }
            AdmissionOperation::Delete | AdmissionOperation::Connect => {
                Ruling::Admit(Change::Unchanged)
            }
        };
        match ruling {
            Ruling::Admit(change) => Ok(change),
            Ruling::IfApprover(change) => {
                self.approver(request).await?;
                Ok(change)
            }
        }
    }

    /// Asks whether the writer may `approve` this ticket.
    async fn approver(&self, request: &AdmissionRequest) -> Result<(), Refusal> {
        let question = question(request);
        let answer = tokio::time::timeout(self.budget, self.access.review(&question)).await;
        match answer {
            Ok(Ok(AccessAnswer::Allowed)) => Ok(()),
            Ok(Ok(AccessAnswer::NotAllowed { reason })) => Err(Refusal::new(
                TicketCode::TicketApproverNotAuthorized,
                format!(
                    "{:?} is not allowed to approve deletiontickets.{GROUP} {:?} in namespace {:?}{}",
                    question.user,
                    question.name,
                    question.namespace,
                    if reason.is_empty() {
                        String::new()
                    } else {
                        format!(": {reason}")
                    }
                ),
            )),
            Ok(Err(e)) => Err(Refusal::new(
                TicketCode::TicketApproverUnverified,
                format!("could not verify that {:?} may approve: {e}", question.user),
            )),
            Err(_) => Err(Refusal::new(
                TicketCode::TicketApproverUnverified,
                format!(
                    "could not verify that {:?} may approve: no answer within {:?}",
                    question.user, self.budget
                ),
            )),
        }
    }
}

/// The access question for an approval: the writer as the API server authenticated them, the
/// verb `approve` on this ticket.
pub fn question(request: &AdmissionRequest) -> AccessQuestion {
    let user = &request.user_info;
    AccessQuestion {
        user: user.username.clone().unwrap_or_default(),
        uid: user.uid.clone(),
        groups: user.groups.clone().unwrap_or_default(),
        extra: user.extra.clone().unwrap_or_default(),
        verb: "approve".to_owned(),
        group: GROUP.to_owned(),
        resource: PLURAL.to_owned(),
        subresource: String::new(),
        namespace: request.namespace.clone(),
        name: request.name.clone(),
    }
}

/// The ticket in `field`, decoded.
fn ticket(field: &str, subject: Option<&Subject>) -> Result<DeletionTicket, Refusal> {
    let Some(subject) = subject else {
        return Err(Refusal::new(
            TicketCode::TicketMalformed,
            format!("the request carries no {field}"),
        ));
    };
    subject.decode::<DeletionTicket>().map_err(|e| {
        Refusal::new(
            TicketCode::TicketMalformed,
            format!("{field} is not a DeletionTicket warrant can read: {e}"),
        )
    })
}
