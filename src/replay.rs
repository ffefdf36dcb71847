//! `warrant replay`: recorded traffic judged again by a candidate configuration, before it can
//! hurt anyone. Inputs are warrant's own audit log ([`warrant_log`]), kube-apiserver audit logs
//! ([`apiserver`], with [`request_uri`] and [`selectors`] rebuilding the review the API server
//! sent) and SubjectAccessReview files ([`sar`]), read by [`input`]; the [`engine`] judges each
//! recorded review with the candidate (and a baseline, or the recorded answer) and the
//! [`report`] groups every flip, flagging those that would lock out a bootstrap identity
//! ([`lockout`]). `warrant validate --replay` and `warrant serve --replay-on-reload` run the same.

pub mod apiserver;
pub(crate) mod audit_event;
pub mod engine;
pub mod gate;
pub mod input;
pub mod lockout;
pub(crate) mod read_error;
pub mod record;
pub mod report;
pub(crate) mod request_uri;
pub(crate) mod sar;
pub mod selectors;
pub mod warrant_log;

pub use engine::{At, Options, ReplayError, replay, replay_blocking};
pub use gate::LockoutGate;
pub use lockout::Bootstrap;
pub use report::Report;

#[cfg(test)]
mod tests;
