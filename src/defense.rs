//! The deletion defense: one place to find every ring's code, and the owner of what the
//! validation ring does after it has decided.
//!
//! A destructive request meets up to three rings; this map says where each one's code lives.
//!
//! | Ring | What it does | Code |
//! |---|---|---|
//! | authorization | a `DeletionGuard` entry in the chain judges the SubjectAccessReview (names only) | [`crate::authorizer::deletion_guard`] (`pipeline`: scope, risk, gates; `rate`, `tickets`, `windows`, `gates`) run by [`crate::authorizer::Chain::authorize`] |
//! | validation | the same guard judges the AdmissionReview of a DELETE or UPDATE with the object's facts | [`crate::admission`] (the wire), [`crate::object`] (the object and the cluster view), `deletion_guard::objects` and `buffered`, run by [`crate::authorizer::Chain::admit`]; [`admission`] adds the follow-ups, [`FollowUps`] performs them |
//! | buffer | a finalizer holds a CRITICAL deletion for a cool-down, released by time or confirmation | [`crate::buffer`] (the controller), `deletion_guard::rescore` (its risk model) |
//!
//! What the rings share: the settings ([`crate::config::model::guard`],
//! [`crate::config::model::buffer`], validated by `config::validate::guard`), the cluster
//! ([`crate::cluster`]: the metadata cache behind the validation ring's view, the Leases of
//! `scope: Cluster` rate limits, the annotator that records a requester), leader election for
//! the buffer's controller ([`crate::leader`]), and the audit records
//! ([`crate::telemetry::audit`]).
//!
//! [`coverage`] looks the other way: at what the rings do *not* protect (objects whose deletion
//! the risk model scores high, or named like production, that no rule or label protects);
//! [`recommend`] proposes the levels that history argues for (what was deleted and restored,
//! what many principals write, what is never deleted), with the evidence for each; both print their fixes as
//! [`label_patch`] documents.
//!
//! [`why`] explains a refusal to the person who got it: the chain's answer to their DELETE,
//! with the guard's risk report, from what the cluster says now (`warrant why`).
//!
//! The validation ring's decision is an [`Admission`]: the chain's answer plus the
//! [`FollowUp`]s the defense owes before the answer goes out (today: recording who asked for a
//! held deletion). The server only routes: it asks [`admission::decide`] for the decision and
//! hands it to [`FollowUps::perform`], which performs each follow-up and applies the failure rule
//! in one place: a follow-up the defense requires that fails turns the answer into a Deny by
//! the guard that asked for it, with that follow-up's code.

pub mod admission;
pub mod coverage;
pub mod coverage_export;
pub(crate) mod follow_up;
pub mod label_patch;
pub mod metrics;
mod perform;
pub mod recommend;
pub mod why;

pub use admission::Admission;
pub use follow_up::{FollowUp, OnFailure, RecordRequester};
pub use metrics::DefenseMetrics;
pub use perform::{FollowUpError, FollowUps};

#[cfg(test)]
mod tests;
