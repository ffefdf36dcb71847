//! Why an authorizer could not decide: [`AuthorizerError`], one variant per cause, each wrapping
//! the typed error of the type that failed; and the matchCondition errors of an entry.

use super::deletion_guard::GuardError;
use super::webhook::error::WebhookError;
use crate::cel::EvaluationError;
use crate::names::RuleName;
use std::fmt;
use thiserror::Error;

/// Why an authorizer could not decide. Each renders as one line, usable in `evaluationError`
/// and in a Deny reason. Later authorizer types add their own variants.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum AuthorizerError {
    /// The review's deadline passed while the authorizer was still working through its rules.
    #[error("the review deadline passed before this authorizer finished")]
    DeadlinePassed,
    /// The review's deadline passed before the authorizer answered.
    #[error("no answer within the review deadline ({budget_ms} ms)")]
    DeadlineExceeded {
        /// The time the chain allowed, in milliseconds.
        budget_ms: u64,
    },
    /// A downstream webhook gave no answer (after upstream's retries).
    #[error(transparent)]
    Webhook(#[from] WebhookError),
    /// matchConditions errored and none was false; upstream's aggregate text (one error as
    /// itself, several as `[e1, e2]`).
    #[error(transparent)]
    MatchConditions(ConditionErrors),
    /// The deletion guard could not decide (its ticket source is unreadable).
    #[error(transparent)]
    Guard(#[from] GuardError),
    /// A policy rule failed to evaluate.
    #[error("rule {rule}: {error}")]
    Rule {
        /// The rule.
        rule: RuleName,
        /// Its evaluation failure, kube-apiserver-style `cel evaluation error: ...`.
        #[source]
        error: EvaluationError,
    },
}

/// Why one matchCondition gave no answer.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConditionError {
    /// The condition failed to evaluate (`cel evaluation error: ...`).
    #[error(transparent)]
    Evaluation(#[from] EvaluationError),
}

/// The errors of one authorizer's matchConditions, in condition order; never empty. Renders as
/// upstream's `utilerrors.NewAggregate`: one error as itself, several as `[e1, e2]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConditionErrors(Vec<ConditionError>);

impl ConditionErrors {
    /// The errors of one evaluation, in condition order (never empty).
    pub(crate) fn new(errors: Vec<ConditionError>) -> Self {
        debug_assert!(!errors.is_empty());
        Self(errors)
    }

    /// The errors, in condition order.
    pub fn as_slice(&self) -> &[ConditionError] {
        &self.0
    }
}

impl fmt::Display for ConditionErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.as_slice() {
            [one] => write!(f, "{one}"),
            many => {
                f.write_str("[")?;
                for (i, e) in many.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{e}")?;
                }
                f.write_str("]")
            }
        }
    }
}

impl std::error::Error for ConditionErrors {
    /// A single error is the aggregate's source; several have no one source (see
    /// [`ConditionErrors::as_slice`]).
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self.0.as_slice() {
            [one] => Some(one),
            _ => None,
        }
    }
}
