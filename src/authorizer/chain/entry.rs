//! [`Entry`]: one configured authorizer in the chain, and how it is consulted for one review:
//! its matchConditions, then its authorizer within the deadline, then its metrics.

use super::answer::{Step, StepOutcome};
use crate::authorizer::conditional::Catalog;
use crate::authorizer::metrics::EntryMetrics;
use crate::authorizer::{
    Authorizer, AuthorizerError, Deadline, Input, MatchConditions, MatchOutcome,
};
use crate::cel::Binding;
use crate::config::model::{ConditionsSettings, WhenUnsupported};
use crate::config::{AuthorizerType, FailurePolicy, Mode};
use crate::decision::{Decision, Verdict};
use crate::names::AuthorizerName;
use std::time::Instant;

/// One configured authorizer in the chain.
#[derive(Debug)]
pub struct Entry {
    /// Its unique name.
    pub name: AuthorizerName,
    /// Its type, for traces and metric labels.
    pub(crate) authorizer_type: AuthorizerType,
    /// What its errors yield.
    pub failure_policy: FailurePolicy,
    /// `Observe`: shadow mode, its answers are recorded and never the chain's.
    pub mode: Mode,
    /// The authorizer itself.
    pub authorizer: Box<dyn Authorizer>,
    /// Its matchConditions, evaluated before it on every review.
    pub match_conditions: MatchConditions,
    /// Its series of the decision, failure and matchCondition families.
    pub metrics: EntryMetrics,
    /// Its `conditions:` settings (KEP-5681).
    pub conditions: Option<ConditionsSettings>,
    /// The conditions it may author, evaluated when the API server asks back.
    pub(crate) catalog: Catalog,
}

impl Entry {
    /// Consults this entry for one review: its matchConditions, then (if they hold) its
    /// authorizer within the deadline.
    pub(super) async fn run(
        &self,
        input: &Input,
        binding: &Binding<'_>,
        deadline: Deadline,
        budget_ms: u64,
    ) -> Step {
        let started = Instant::now();
        let (matched, conditions) = self.match_conditions.evaluate_bound(binding);
        let outcome = match matched {
            MatchOutcome::Excluded => StepOutcome::Excluded,
            MatchOutcome::Failed(errors) => StepOutcome::Failed {
                error: AuthorizerError::MatchConditions(errors),
                policy: self.failure_policy,
            },
            MatchOutcome::Matched => {
                if let Some(judged) = self.authorizer.judge_bound(input, binding, deadline) {
                    judged.map_or_else(
                        |error| StepOutcome::Failed {
                            error,
                            policy: self.failure_policy,
                        },
                        |verdict| StepOutcome::Verdict(self.settle(verdict, input)),
                    )
                } else {
                    self.call(input, deadline, budget_ms).await
                }
            }
        };
        Step {
            authorizer: self.name.clone(),
            authorizer_type: self.authorizer_type,
            outcome,
            elapsed: started.elapsed(),
            conditions,
            mode: self.mode,
        }
    }

    /// Asks the authorizer within the deadline.
    async fn call(&self, input: &Input, deadline: Deadline, budget_ms: u64) -> StepOutcome {
        let call = self.authorizer.authorize(input, deadline);
        match tokio::time::timeout_at(deadline.0, call).await {
            Ok(Ok(verdict)) => StepOutcome::Verdict(self.settle(verdict, input)),
            Ok(Err(error)) => StepOutcome::Failed {
                error,
                policy: self.failure_policy,
            },
            Err(_) => StepOutcome::Failed {
                error: AuthorizerError::DeadlineExceeded { budget_ms },
                policy: self.failure_policy,
            },
        }
    }

    /// A conditional verdict for a caller that cannot handle conditions: the fold the
    /// authorizer gave, or NoOpinion when `whenUnsupported: ValidationRing` leaves the object
    /// checks to the validation ring.
    fn settle(&self, mut verdict: Verdict, input: &Input) -> Verdict {
        if verdict.conditions.is_some() && !input.review.supports_conditions() {
            let when = self.conditions.unwrap_or_default().when_unsupported;
            if when == WhenUnsupported::ValidationRing {
                verdict.decision = Decision::NoOpinion;
            }
        }
        verdict
    }

    /// Counts what this entry's shadows would have answered, and where that disagrees with the
    /// chain's `answer`: the entry's own would-be answer in shadow mode, and each shadow rule
    /// its verdict reports.
    pub(super) fn record_shadows(&self, step: &Step, answer: Decision) {
        let verdict = match &step.outcome {
            StepOutcome::Verdict(v) => Some(v),
            _ => None,
        };
        if step.is_shadow() {
            let rule = verdict
                .and_then(|v| v.reason.as_ref())
                .and_then(|r| r.rule.as_ref())
                .map_or("", |r| r.as_str());
            let would = step.would_have();
            self.metrics
                .record_shadow(rule, would.as_str(), would, answer);
        }
        for shadow in verdict.map(|v| v.shadows.as_slice()).unwrap_or_default() {
            let rule = shadow.reason.rule.as_ref().map_or("", |r| r.as_str());
            self.metrics
                .record_shadow(rule, shadow.would_label(), shadow.would, answer);
        }
    }

    /// Records one step of this entry in its metrics; `conditional`: the caller handles
    /// conditions, so a verdict with conditions is counted as `conditional` (not as its fold).
    pub(super) fn record(&self, step: &Step, conditional: bool) {
        if let Some(report) = &step.conditions {
            self.metrics.record_conditions(report);
        }
        let enforced_conditions = conditional
            && !step.mode.is_observe()
            && matches!(&step.outcome, StepOutcome::Verdict(v) if v.conditions.is_some());
        if enforced_conditions {
            self.metrics.record_conditional();
        } else {
            self.metrics.record_decision(step.decision());
        }
        if let StepOutcome::Failed { policy, .. } = &step.outcome {
            self.metrics.record_failure(*policy);
        }
    }
}
