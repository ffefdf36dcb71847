//! [`DeletionGuard`]: scope, risk, then the gates in their fixed order; the first gate that stops
//! the case decides, and `conclusion` turns the finding into the verdict.

use super::assessment::GuardCode;
use super::case::Case;
use super::conclusion::{self, Finding};
use super::error::GuardError;
use super::metrics::GuardMetrics;
use super::state::GuardShared;
use super::tickets::{self, Ticketed};
use super::{gates, rate, risk, scope, windows};
use crate::authorizer::metrics::Families;
use crate::authorizer::{Authorizer, AuthorizerError, BoxFuture, Deadline, Input};
use crate::decision::{Decision, Verdict};
use crate::names::AuthorizerName;
use std::sync::Arc;

/// A deletion guard in a chain.
#[derive(Debug)]
pub struct DeletionGuard {
    shared: Arc<GuardShared>,
    metrics: GuardMetrics,
}

impl DeletionGuard {
    /// Guard `name` over shared state, counting its assessments in `families`.
    pub fn new(shared: Arc<GuardShared>, name: &AuthorizerName, families: &Families) -> Self {
        let metrics = GuardMetrics::new(families, name, shared.spec.mode.as_str());
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

    /// Runs the gates in their fixed order; the first that stops the case decides. Break-glass
    /// and trusted principals stand aside before any rate limit; a request the later gates let
    /// through then spends its rate-limit tokens (a denied one spends none).
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
        let finding = self.protection_gates(case)?;
        if finding.code.denies() {
            return Ok(finding);
        }
        Ok(rate::spend(&self.shared.buckets, &spec.rate_limits, case).unwrap_or(finding))
    }

    /// The gates of a protected target: change windows and freezes, then tickets.
    fn protection_gates(&self, case: &Case<'_>) -> Result<Finding, GuardError> {
        let spec = &self.shared.spec;
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
