//! The [`Authorizer`] contract and the [`Chain`] that runs authorizers in order.
//!
//! The contract (`contract.rs`) knows no implementation: each type lives in its own module
//! (`always`, `policy`, [`webhook`], [`deletion_guard`]) and the chain treats them all alike. An
//! authorizer returns a [`crate::decision::Verdict`] or an [`AuthorizerError`]; an error is never
//! an answer, the chain turns it into one through the entry's `failurePolicy`. This file only
//! declares and re-exports, so no child imports its parent.

mod always;
mod chain;
pub mod conditional;
mod contract;
pub mod deletion_guard;
mod error;
mod match_conditions;
pub mod metrics;
mod policy;
pub mod webhook;

#[cfg(test)]
mod test_input;

pub use always::{AlwaysAllow, AlwaysDeny};
pub use chain::{Answer, BuildContext, BuildError, Chain, Entry, Step, StepOutcome};
pub use contract::{Authorizer, BoxFuture, Deadline, Input};
pub use error::{AuthorizerError, ConditionError, ConditionErrors};
pub use match_conditions::{ConditionReport, MatchConditions, MatchOutcome};
pub use policy::Policy;
