//! The chain: authorizers run in file order, the first Allow or Deny wins, and when none decides
//! the answer is NoOpinion with every reason joined by newlines and every error kept
//! (`k8s.io/apiserver/pkg/authorization/union/union.go`). Failure policy is applied here, once,
//! for every type, and so is shadow mode: an entry in `mode: Observe` is evaluated where it
//! stands, its would-be answer is kept in the trace and counted, and the chain goes on as if it
//! had answered NoOpinion.
//!
//! Files: `union` (the [`Chain`] and its loop), `build` (a configuration to a chain) and `error`, `entry`
//! (one authorizer consulted), `run` (the union's progress to an answer), `answer` (steps and
//! the answer), `conditions` (conditional decisions asked back at admission). This file only
//! declares and re-exports.

mod answer;
mod build;
mod conditions;
mod entry;
mod error;
mod run;
mod union;

pub use answer::{Answer, Step, StepOutcome};
pub use entry::Entry;
pub use error::BuildError;
pub use union::{BuildContext, Chain};

#[cfg(test)]
mod tests;
