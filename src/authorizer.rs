//! The [`Authorizer`] contract and the [`Chain`] that runs authorizers in order.
//!
//! The contract knows no implementation: each type lives in its own module (`always` here; the
//! CEL policy, webhook and deletion guard types slot in beside it) and the chain treats them all
//! alike. An authorizer returns a [`Verdict`] or an [`AuthorizerError`]; an error is never an
//! answer, the chain turns it into one through the entry's `failurePolicy`.

mod always;
mod chain;
pub mod deletion_guard;
mod match_conditions;
pub mod metrics;
mod policy;
pub mod webhook;

pub use always::{AlwaysAllow, AlwaysDeny};
pub use chain::{Answer, BuildContext, BuildError, Chain, Entry, Step, StepOutcome};
pub use match_conditions::{
    ConditionError, ConditionErrors, ConditionReport, MatchConditions, MatchOutcome,
};
pub use policy::Policy;

use crate::cel::EvaluationError;
use crate::decision::Verdict;
use crate::names::RuleName;
use crate::review::Review;
use chrono::{DateTime, Utc};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;
use thiserror::Error;

/// A pinned, boxed, `Send` future: what [`Authorizer::authorize`] returns, since an `async fn`
/// in a trait cannot sit behind `dyn`.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What every authorizer sees: the review and the instant it is judged at, read once per review
/// so that every authorizer of the chain sees the same `now`.
#[derive(Debug, Clone)]
pub struct Input {
    /// The review, in the v1 shape.
    pub review: Review,
    /// When the review is judged.
    pub now: DateTime<Utc>,
}

/// When the review must be answered. It may cut work short (an `Err`) but never steers a
/// verdict, as upstream says of its request context.
#[derive(Debug, Clone, Copy)]
pub struct Deadline(pub tokio::time::Instant);

impl Deadline {
    /// A deadline `budget` from now.
    pub fn after(budget: Duration) -> Self {
        Self(tokio::time::Instant::now() + budget)
    }

    /// An error once the deadline has passed, for synchronous work checked between steps.
    pub fn check(self) -> Result<(), AuthorizerError> {
        if tokio::time::Instant::now() >= self.0 {
            Err(AuthorizerError::DeadlinePassed)
        } else {
            Ok(())
        }
    }
}

/// One authorizer: a review in, a verdict (or "I could not decide") out.
pub trait Authorizer: Send + Sync + fmt::Debug {
    /// Judges one review.
    fn authorize<'a>(
        &'a self,
        input: &'a Input,
        deadline: Deadline,
    ) -> BoxFuture<'a, Result<Verdict, AuthorizerError>>;
}

/// Why an authorizer could not decide. Each renders as one line, usable in `evaluationError`
/// and in a Deny reason. Later authorizer types add their own variants.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum AuthorizerError {
    /// The review's deadline passed while the authorizer was still working through its
    /// conditions or rules.
    #[error("{}", DEADLINE_PASSED)]
    DeadlinePassed,
    /// The review's deadline passed before the authorizer answered.
    #[error("no answer within the review deadline ({budget_ms} ms)")]
    DeadlineExceeded {
        /// The time the chain allowed, in milliseconds.
        budget_ms: u64,
    },
    /// A downstream webhook gave no answer (after upstream's retries).
    #[error("{0}")]
    Webhook(#[from] webhook::error::WebhookError),
    /// matchConditions errored and none was false; upstream's aggregate text (one error as
    /// itself, several as `[e1, e2]`).
    #[error("{0}")]
    MatchConditions(#[source] ConditionErrors),
    /// The deletion guard could not decide (its ticket source is unreadable).
    #[error("{0}")]
    Guard(#[from] deletion_guard::GuardError),
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

/// What [`AuthorizerError::DeadlinePassed`] (and a matchCondition the deadline cut off) says.
const DEADLINE_PASSED: &str = "the review deadline passed before this authorizer finished";
