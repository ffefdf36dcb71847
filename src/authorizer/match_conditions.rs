//! matchConditions, evaluated as kube-apiserver's `CELMatcher.Eval` does
//! (`k8s.io/apiserver/pkg/authorization/cel/matcher.go`): in order, on every review, never
//! cached. The first `false` excludes the authorizer at once (no opinion, no error), even after
//! an earlier condition errored; errors without a `false` fail the authorizer, with one
//! `cel evaluation error: ...` line per erroring condition; all `true` lets it run.

use super::{Deadline, Input};
use crate::cel::{Bound, EvaluationError, Expression, SelectorUse};
use std::fmt;
use std::time::{Duration, Instant};
use thiserror::Error;

/// The compiled conditions of one authorizer.
#[derive(Debug, Clone, Default)]
pub struct MatchConditions {
    conditions: Box<[Expression]>,
    selectors: SelectorUse,
}

/// What the conditions said about one review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MatchOutcome {
    /// Every condition held (or there are none): the authorizer runs.
    Matched,
    /// A condition was false: the authorizer is skipped.
    Excluded,
    /// Some conditions errored and none was false: the authorizer has failed.
    Failed(ConditionErrors),
}

/// Why one matchCondition gave no answer.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConditionError {
    /// The condition failed to evaluate (`cel evaluation error: ...`).
    #[error(transparent)]
    Evaluation(#[from] EvaluationError),
    /// The review deadline passed before the condition was reached.
    #[error("{}", super::DEADLINE_PASSED)]
    DeadlinePassed,
}

/// The errors of one authorizer's matchConditions, in condition order; never empty. Renders as
/// upstream's `utilerrors.NewAggregate`: one error as itself, several as `[e1, e2]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConditionErrors(Vec<ConditionError>);

impl ConditionErrors {
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

/// What the metrics need of one evaluation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConditionReport {
    /// How long the conditions took.
    pub elapsed: Duration,
    /// Whether any condition errored (counted even when a later one was false).
    pub errored: bool,
    /// Whether the authorizer was excluded.
    pub excluded: bool,
}

impl MatchConditions {
    /// Conditions from their compiled expressions, in order.
    pub fn new(conditions: Vec<Expression>) -> Self {
        let selectors = conditions
            .iter()
            .fold(SelectorUse::default(), |u, c| u.union(c.selectors()));
        Self {
            conditions: conditions.into_boxed_slice(),
            selectors,
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.conditions.is_empty()
    }

    /// Evaluates the conditions for one review; `None` for the report when there are none.
    /// A condition reached after `deadline` counts as an erroring one.
    pub fn evaluate(
        &self,
        input: &Input,
        deadline: Deadline,
    ) -> (MatchOutcome, Option<ConditionReport>) {
        if self.conditions.is_empty() {
            return (MatchOutcome::Matched, None);
        }
        let started = Instant::now();
        let bound = Bound::new(input.review.spec(), input.now, self.selectors);
        let mut errors = Vec::new();
        let mut excluded = false;
        for condition in self.conditions.iter() {
            if deadline.check().is_err() {
                errors.push(ConditionError::DeadlinePassed);
                break;
            }
            match condition.judge(&bound) {
                Ok(true) => {}
                Ok(false) => {
                    excluded = true;
                    break;
                }
                Err(e) => errors.push(ConditionError::Evaluation(e)),
            }
        }
        let report = ConditionReport {
            elapsed: started.elapsed(),
            errored: !errors.is_empty(),
            excluded,
        };
        let outcome = if excluded {
            MatchOutcome::Excluded
        } else if errors.is_empty() {
            MatchOutcome::Matched
        } else {
            MatchOutcome::Failed(ConditionErrors(errors))
        };
        (outcome, Some(report))
    }
}

#[cfg(test)]
mod tests;
