//! `type: DeletionGuard`: the authorization ring of a deletion defense. It never allows: for a
//! destructive request on a protected target it denies (Enforce) or records the would-be denial
//! (Observe), and otherwise stands aside (NoOpinion) so the rest of the chain and RBAC decide.
//! Observe is the chain's shadow mode: the guard answers what it would enforce, marked
//! `OBSERVED_<CODE>`, and its entry (in shadow mode with it) keeps that answer out of the chain's.
//!
//! [`DeletionGuard::judge`] is a pipeline with one submodule per step: `scope` (is the request
//! destructive, on a target the guard looks at?), `risk` (protection level and score), then the
//! gates in order, the first that stops the request deciding: `gates` (break-glass, trusted
//! principals), [`rate`] (limits), `windows` (freezes and change windows, `WINDOW_BLOCKED` above
//! LOW), [`tickets`] (`MISSING_TICKET`, `TICKET_NOT_FOUND`, `TICKET_NOT_APPROVED`,
//! `INSUFFICIENT_APPROVALS`, `TICKET_EXPIRED`, `TICKET_SCOPE`), with `unusual` between the
//! limits and the windows (a principal's burst far above its own baseline, `baseline`:
//! `UNUSUAL_DELETION_RATE` or a ticket demanded, or only recorded); a request that passes them all
//! gets `ALLOW`, or `ALLOW_WITH_COOLDOWN` for CRITICAL risk. `conclusion` turns the finding into
//! the verdict and its [`Assessment`].
//!
//! The settings are the validated [`GuardSpec`], owned by `config`; the state that outlives one
//! chain (rate-limit buckets, the ticket source) is [`GuardShared`]. The chain applies the
//! failure policy to a [`GuardError`].

mod assessment;
pub(crate) mod baseline;
mod buffered;
mod case;
pub(crate) mod cluster_baselines;
pub(crate) mod cluster_buckets;
mod conclusion;
mod conditional;
mod error;
mod gates;
mod metrics;
mod objects;
mod pipeline;
pub mod rate;
pub(crate) mod rescore;
mod risk;
mod scope;
mod state;
pub mod tickets;
mod traffic;
mod unusual;
mod windows;

pub use crate::config::model::guard::{GuardSpec, Level, Mode};
pub use assessment::{Assessment, GuardCode, ImpactReport, RiskLevel, UnusualReport};
pub use baseline::{Baseline, Judgement};
pub(crate) use cluster_baselines::{BaselineError, BaselineKey, ClusterBaselines};
pub(crate) use cluster_buckets::{
    BucketError, BucketKey, BucketLevel, ClusterBuckets, SharedBuckets,
};
pub use error::GuardError;
pub use pipeline::DeletionGuard;
pub use scope::Target;
pub use state::{GuardShared, GuardStates, Links};
pub use traffic::{Fallback, LiveTrafficSource, Traffic, TrafficSource};

#[cfg(test)]
mod tests;
