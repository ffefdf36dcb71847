//! `type: DeletionGuard`: the authorization ring of a deletion defense. It never allows: for a
//! destructive request on a protected target it denies (Enforce) or records the would-be denial
//! (Observe), and otherwise stands aside (NoOpinion) so the rest of the chain and RBAC decide.
//!
//! [`DeletionGuard::judge`] is a pipeline with one submodule per step: `scope` (is the request
//! destructive, on a target the guard looks at?), `risk` (protection level and score), then the
//! gates in order, the first that stops the request deciding: `gates` (break-glass, trusted
//! principals), [`rate`] (limits), `windows` (freezes and change windows, `WINDOW_BLOCKED` above
//! LOW), [`tickets`] (`MISSING_TICKET`, `TICKET_NOT_FOUND`, `TICKET_NOT_APPROVED`,
//! `INSUFFICIENT_APPROVALS`, `TICKET_EXPIRED`, `TICKET_SCOPE`); a request that passes them all
//! gets `ALLOW`, or `ALLOW_WITH_COOLDOWN` for CRITICAL risk. `conclusion` turns the finding into
//! the verdict and its [`Assessment`].
//!
//! The settings are the validated [`GuardSpec`], owned by `config`; the state that outlives one
//! chain (rate-limit buckets, the ticket source) is [`GuardShared`]. The chain applies the
//! failure policy to a [`GuardError`].

mod assessment;
mod conclusion;
mod error;
mod gates;
mod metrics;
pub mod rate;
mod risk;
mod scope;
mod state;
pub mod tickets;
mod windows;

pub use crate::config::model::guard::{GuardSpec, Level, Mode};
pub use assessment::{Assessment, GuardCode, RiskLevel};
pub use error::GuardError;
pub use scope::Target;
pub use state::{GuardShared, GuardStates};

use super::metrics::Families;
use crate::authorizer::{Authorizer, AuthorizerError, BoxFuture, Deadline, Input};
use crate::decision::{Decision, Verdict};
use crate::names::AuthorizerName;
use crate::review::Review;
use chrono::{DateTime, Utc};
use conclusion::Finding;
use risk::Risk;
use std::sync::Arc;
use tickets::Ticketed;

/// A deletion guard in a chain.
#[derive(Debug)]
pub struct DeletionGuard {
    shared: Arc<GuardShared>,
    metrics: metrics::GuardMetrics,
}

/// One review in the guard's scope, as every gate sees it: what it targets, when, and its risk.
#[derive(Debug)]
struct Case<'a> {
    review: &'a Review,
    now: DateTime<Utc>,
    target: Target<'a>,
    risk: Risk,
}

impl DeletionGuard {
    /// Guard `name` over shared state, counting its assessments in `families`.
    pub fn new(shared: Arc<GuardShared>, name: &AuthorizerName, families: &Families) -> Self {
        let metrics = metrics::GuardMetrics::new(families, name, shared.spec.mode.as_str());
        Self { shared, metrics }
    }

    /// Judges one review synchronously: NoOpinion without a reason when the review is none of
    /// the guard's business, else the verdict of the first gate that stops it (or of none).
    pub fn judge(&self, input: &Input) -> Result<Verdict, AuthorizerError> {
        let spec = &self.shared.spec;
        let Some(target) = scope::target(spec, &input.review) else {
            return Ok(Verdict::bare(Decision::NoOpinion));
        };
        let case = Case {
            review: &input.review,
            now: input.now,
            risk: risk::assess(spec, &target, input.now),
            target,
        };
        let finding = self.decide(&case)?;
        self.metrics.record(finding.code);
        Ok(conclusion::verdict(spec.mode, finding, case.risk))
    }

    /// Runs the gates in their fixed order; the first that stops the case decides.
    fn decide(&self, case: &Case<'_>) -> Result<Finding, GuardError> {
        let spec = &self.shared.spec;
        if let Some(stop) = gates::break_glass(spec, case) {
            return Ok(stop);
        }
        if let Some(stop) = gates::trusted(spec, case) {
            return Ok(stop);
        }
        if let Some(stop) = rate::gate(&self.shared.buckets, &spec.rate_limits, case) {
            return Ok(stop);
        }
        let Some(level) = case.risk.protection else {
            return Ok(Finding::new(GuardCode::Allow, "target not protected"));
        };
        if let Some(stop) = windows::gate(spec, case) {
            return Ok(stop);
        }
        Ok(
            match tickets::gate(spec, self.shared.tickets.as_deref(), level, case)? {
                Ticketed::Refused(stop) => stop,
                Ticketed::NotRequired => Finding::passed(case.risk.level, None),
                Ticketed::Covered(id) => Finding::passed(case.risk.level, Some(id)),
            },
        )
    }
}

impl Authorizer for DeletionGuard {
    fn authorize<'a>(
        &'a self,
        input: &'a Input,
        _deadline: Deadline,
    ) -> BoxFuture<'a, Result<Verdict, AuthorizerError>> {
        Box::pin(std::future::ready(self.judge(input)))
    }
}

#[cfg(test)]
mod tests;
