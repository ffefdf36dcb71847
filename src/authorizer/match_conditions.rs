//! matchConditions, evaluated as kube-apiserver's `CELMatcher.Eval` does
//! (`k8s.io/apiserver/pkg/authorization/cel/matcher.go`): in order, on every review, never
//! cached. The first `false` excludes the authorizer at once (no opinion, no error), even after
//! an earlier condition errored; errors without a `false` fail the authorizer, with one
//! `cel evaluation error: ...` line per erroring condition; all `true` lets it run.

use super::contract::Input;
use super::error::{ConditionError, ConditionErrors};
use crate::cel::{Binding, Expression, RequestUse};
use std::time::{Duration, Instant};

/// The compiled conditions of one authorizer.
#[derive(Debug, Clone, Default)]
pub struct MatchConditions {
    conditions: Box<[Expression]>,
    uses: RequestUse,
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

/// What the metrics need of one evaluation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConditionReport {
    /// How long the conditions took.
    pub elapsed: Duration,
    /// Whether any condition errored (counted even when a later one was false).
    pub(crate) errored: bool,
    /// Whether the authorizer was excluded.
    pub excluded: bool,
}

impl MatchConditions {
    /// Conditions from their compiled expressions, in order.
    pub fn new(conditions: Vec<Expression>) -> Self {
        let uses = conditions
            .iter()
            .fold(RequestUse::default(), |u, c| u.union(c.uses()));
        Self {
            conditions: conditions.into_boxed_slice(),
            uses,
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.conditions.is_empty()
    }

    /// Evaluates the conditions for one review; `None` for the report when there are none.
    ///
    /// They take no deadline: each evaluation is bounded
    /// by its own CEL cost budget, and whether an authorizer applies must be known before it can
    /// fail for lack of time; otherwise an authorizer that does not apply to the request would
    /// answer for it with its failure policy once an earlier one had used up the deadline. Only
    /// an authorizer that applies can fail for the deadline (in the chain).
    pub fn evaluate(&self, input: &Input) -> (MatchOutcome, Option<ConditionReport>) {
        self.evaluate_bound(&Binding::new(input.review.spec(), input.now))
    }

    /// [`MatchConditions::evaluate`] on a review already bound for CEL (once per review, by
    /// the chain).
    pub(crate) fn evaluate_bound(
        &self,
        binding: &Binding<'_>,
    ) -> (MatchOutcome, Option<ConditionReport>) {
        if self.conditions.is_empty() {
            return (MatchOutcome::Matched, None);
        }
        let started = Instant::now();
        let bound = binding.with(self.uses);
        let mut errors = Vec::new();
        let mut excluded = false;
        for condition in self.conditions.iter() {
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
            MatchOutcome::Failed(ConditionErrors::new(errors))
        };
        (outcome, Some(report))
    }
}

#[cfg(test)]
mod tests;
