//! The buffer ring: a finalizer cool-down for high-risk deletions.
//!
//! Protected objects (protection level at or above `finalizeAt`, from the protection label on
//! the object or a `protectedResources` rule naming it, and of a kind in `resources`) carry
//! warrant's finalizer. **How it gets there: the controller alone** puts it on the objects it
//! sees in its watch (and takes it off objects no longer protected that are not Terminating).
//! There is no mutating admission here, so an object created protected is without the
//! finalizer for the moment between its creation and the controller's first patch (normally
//! well under a second; longer while no replica leads or the API server is slow). A deletion
//! in that window is judged by the validation ring as always but is not held.
//!
//! When a finalized object gets a `deletionTimestamp`, the controller re-computes the risk
//! with the guard's own model (`authorizer::deletion_guard::rescore`): below CRITICAL it removes
//! the finalizer at once; CRITICAL, it records an audit snapshot, publishes an Event, notifies
//! the receivers, waits `cooldown` from the `deletionTimestamp` (then the confirmation
//! annotation when `requireConfirmation`), and removes the finalizer; never later than
//! `maxHold` (`COOLDOWN_EXPIRED`). Nothing is stored between the rings or across restarts:
//! everything is re-computed from the object, so a new leader finishes a pending cool-down.
//!
//! Files: `decide` (the policy, pure), `controller` (watch and applier), `reconcile` and
//! `deletion` (acting on one object), `announce` (audit, Event, notification), `patch`,
//! `snapshot`, `notify`, `kinds` (discovery), `retire` (a dropped block's finalizers), `holds` and `metrics`, `record`, `run`
//! (leadership and configuration). For the commands people run with their own credentials:
//! `held` (the held deletions and what each waits for) and `confirm` (the confirmation
//! annotation written as the person).

mod announce;
pub mod confirm;
mod context;
mod controller;
pub mod decide;
mod deletion;
pub mod error;
pub mod held;
pub mod holds;
mod kinds;
pub mod metrics;
mod notify;
pub(crate) mod patch;
mod reconcile;
pub mod record;
pub(crate) mod retire;
mod run;
pub mod snapshot;

#[cfg(test)]
mod tests;

pub use error::BufferError;
pub use metrics::BufferMetrics;
pub use run::{Buffer, buffered_guards};
