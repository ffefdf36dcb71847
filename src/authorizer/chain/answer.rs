//! What a chain run yields: a [`Step`] per authorizer consulted and the [`Answer`], which maps
//! field for field onto `SubjectAccessReviewStatus`.

use crate::authorizer::{AuthorizerError, ConditionReport};
use crate::config::{AuthorizerType, FailurePolicy, Mode};
use crate::decision::{Decision, Verdict};
use crate::names::{AuthorizerName, Code, RuleName};
use crate::review::ConditionsAwareDecision;
use k8s_openapi::api::authorization::v1::SubjectAccessReviewStatus;
use std::time::Duration;

/// What happened at one authorizer.
#[derive(Debug, Clone, PartialEq)]
pub enum StepOutcome {
    /// It answered.
    Verdict(Verdict),
    /// A matchCondition was false: it was not asked (no opinion, no error).
    Excluded,
    /// It failed; `policy` says what the failure yielded.
    Failed {
        /// The failure.
        error: AuthorizerError,
        /// The failure policy that was applied.
        policy: FailurePolicy,
    },
}

/// One authorizer consulted for a review.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// Which authorizer.
    pub authorizer: AuthorizerName,
    /// Its type.
    pub(crate) authorizer_type: AuthorizerType,
    /// What it did.
    pub outcome: StepOutcome,
    /// How long it took, matchConditions included.
    pub elapsed: Duration,
    /// What its matchConditions did, when it has any.
    pub conditions: Option<ConditionReport>,
    /// Its entry's mode: in `Observe` the step never contributes to the answer.
    pub mode: Mode,
}

impl Step {
    /// The decision this step contributed to the chain: NoOpinion in shadow mode, else
    /// [`Step::would_have`].
    pub fn decision(&self) -> Decision {
        if self.mode.is_observe() {
            Decision::NoOpinion
        } else {
            self.would_have()
        }
    }

    /// Whether the step ran in shadow mode and was evaluated (not excluded by its
    /// matchConditions): its would-be answer is recorded.
    pub(crate) fn is_shadow(&self) -> bool {
        self.mode.is_observe() && !matches!(self.outcome, StepOutcome::Excluded)
    }

    /// The decision this step's outcome gives after failure policy, whatever the mode: in shadow
    /// mode, what enforcing it would have contributed (`wouldHave`).
    pub(crate) fn would_have(&self) -> Decision {
        match &self.outcome {
            StepOutcome::Verdict(v) => v.decision,
            StepOutcome::Excluded => Decision::NoOpinion,
            StepOutcome::Failed {
                policy: FailurePolicy::Deny,
                ..
            } => Decision::Deny,
            StepOutcome::Failed {
                policy: FailurePolicy::NoOpinion,
                ..
            } => Decision::NoOpinion,
        }
    }
}

/// The chain's answer to one review: maps field for field onto `SubjectAccessReviewStatus`, plus
/// the trace of every authorizer consulted.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The final decision.
    pub decision: Decision,
    /// The authorizer that decided; `None` for NoOpinion.
    pub decided_by: Option<AuthorizerName>,
    /// The rule that decided, if the deciding authorizer has rules.
    pub rule: Option<RuleName>,
    /// The deciding code, if any.
    pub code: Option<Code>,
    /// The user-facing reason (`<authorizer>/<rule>: <message> [<code>]`; NoOpinion reasons are
    /// joined by newlines).
    pub reason: String,
    /// Errors met on the way, each as `<authorizer>: <error>`.
    pub errors: Vec<String>,
    /// One step per authorizer consulted, in order.
    pub trace: Vec<Step>,
    /// The conditional decision (KEP-5681), when the caller handles conditions and the answer
    /// depends on the object; it is then the answer, and `decision` only what the chain
    /// settled on before it.
    pub conditional: Option<ConditionsAwareDecision>,
}

impl Answer {
    /// The errors as upstream renders an aggregate: one error keeps its text, several become
    /// `[e1, e2]`.
    pub fn evaluation_error(&self) -> Option<String> {
        match self.errors.as_slice() {
            [] => None,
            [one] => Some(one.clone()),
            many => Some(format!("[{}]", many.join(", "))),
        }
    }

    /// The status kube-apiserver's own SAR endpoint would give for this chain result:
    /// `allowed = Allow`, `denied = Deny`, the reason and the error text.
    pub fn status(&self) -> SubjectAccessReviewStatus {
        SubjectAccessReviewStatus {
            allowed: self.decision == Decision::Allow,
            denied: (self.decision == Decision::Deny).then_some(true),
            reason: (!self.reason.is_empty()).then(|| self.reason.clone()),
            evaluation_error: self.evaluation_error(),
        }
    }
}
