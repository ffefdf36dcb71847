//! Identity-bound pod security: OpenShift's SecurityContextConstraints, judged by warrant.
//!
//! A pure engine, no I/O: the constraint objects ([`constraint`], with the defaults OpenShift
//! stores them with, [`defaults`]), the values a namespace pre-allocates ([`namespace`]), the
//! order constraints are tried in ([`order`]), the strategies ([`strategy`]), a constraint made
//! ready for a namespace ([`provider`]), OpenShift's field errors ([`field`]), who a pod is
//! judged for ([`subjects`]), and the engine that tries constraints and admits or refuses
//! ([`engine`]), with the JSONPatch of what it changed ([`patch`]), and the arithmetic of the
//! namespace range allocator ([`allocation`]). The `use` answers,
//! the constraints and the namespaces come from the caller.

pub mod allocation;
pub mod constraint;
pub mod containers;
pub mod defaults;
pub mod engine;
pub mod field;
pub mod namespace;
pub mod order;
pub mod patch;
pub mod provider;
pub mod strategy;
pub mod subjects;

#[cfg(test)]
mod tests;

pub use constraint::SecurityContextConstraints;
pub use engine::{Admitted, Engine, Refusal};
pub use namespace::Namespace;
pub use subjects::{Identity, SubjectType, Subjects};
