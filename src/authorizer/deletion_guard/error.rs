//! [`GuardError`]: why the deletion guard could not decide (its ticket source is unreadable, or
//! at admission the cluster view cannot answer, in Enforce mode). The chain turns it into an answer through the entry's `failurePolicy`; Observe
//! mode reports the same text as a `TICKET_SOURCE_UNAVAILABLE` finding instead.

use std::path::PathBuf;
use std::sync::Arc;
use thiserror::Error;

/// Why the deletion guard could not decide. Renders as one line, usable in `evaluationError`
/// and in a Deny reason.
///
/// The kept causes sit in an [`Arc`] so that the error is `Clone`, and errors compare by kind
/// and rendered text (neither `std::io::Error` nor the YAML error is comparable): two errors
/// that read alike are alike to every reader of reasons, `evaluationError` and audit records.
#[derive(Debug, Clone, Error)]
pub enum GuardError {
    /// The tickets file could not be read.
    #[error("ticket source unavailable: cannot read {}: {source}", path.display())]
    TicketsUnreadable {
        /// The tickets file.
        path: PathBuf,
        /// Why it could not be read.
        source: Arc<std::io::Error>,
    },
    /// The tickets file is not a valid tickets file.
    #[error("ticket source unavailable: {}: {source}", path.display())]
    TicketsInvalid {
        /// The tickets file.
        path: PathBuf,
        /// Why it does not decode.
        source: Arc<serde_saphyr::Error>,
    },
    /// The watch of the cluster's `DeletionTicket`s has not listed them, or broke.
    #[error("ticket source unavailable: {reason}")]
    TicketWatch {
        /// What the watch says.
        reason: Arc<str>,
    },
    /// The ticket webhook gave no answer warrant accepts for a presented ticket.
    #[error("ticket source unavailable: ticket {ticket}: {source}")]
    TicketLookup {
        /// The ticket id presented.
        ticket: String,
        /// Why there is no answer.
        source: super::tickets::webhook::error::LookupError,
    },
    /// The cluster view (metadata cache or a live call) could not answer.
    #[error(transparent)]
    Cluster(crate::object::ViewError),
    /// A `scope: Cluster` rate-limit bucket could not be read or written.
    #[error(transparent)]
    RateLimit(super::cluster_buckets::BucketError),
    /// A `scope: Cluster` unusual-deletion baseline could not be read or written.
    #[error(transparent)]
    Baseline(super::cluster_baselines::BaselineError),
}

impl PartialEq for GuardError {
    fn eq(&self, other: &Self) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
            && self.to_string() == other.to_string()
    }
}

impl Eq for GuardError {}
