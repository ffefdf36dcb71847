//! [`BufferError`]: why the buffer ring could not do something. Every error is logged and
//! counted; none releases a held object early (the object stays Terminating until the next
//! attempt, and never past `maxHold`).

use std::path::PathBuf;
use std::sync::Arc;
use thiserror::Error;

/// Why a buffer ring operation failed.
#[derive(Debug, Clone, Error)]
pub enum BufferError {
    /// A notification receiver's CA bundle could not be read.
    #[error("notify caFile {}: {source}", path.display())]
    NotifyCa {
        /// The file.
        path: PathBuf,
        /// Why.
        source: Arc<std::io::Error>,
    },
    /// A notification receiver's client could not be built.
    #[error("notify {url}: {source}")]
    NotifyClient {
        /// The receiver.
        url: String,
        /// Why.
        source: Arc<reqwest::Error>,
    },
    /// Every attempt to notify a receiver failed.
    #[error("notify {url}: {attempts} attempts failed, the last: {last}")]
    NotifyFailed {
        /// The receiver.
        url: String,
        /// How many attempts.
        attempts: u32,
        /// The last failure.
        last: String,
    },
    /// A configured kind is not served by the API server.
    #[error("buffer resource {group}/{resource}: {why}")]
    Discovery {
        /// API group.
        group: String,
        /// Plural resource.
        resource: String,
        /// Why.
        why: String,
    },
    /// A call to the API server failed.
    #[error("{operation} {object}: {source}")]
    Api {
        /// What was tried (`get`, `patch`, `event`).
        operation: &'static str,
        /// The object, `resource.group namespace/name`.
        object: String,
        /// The cause.
        source: Arc<kube::Error>,
    },
    /// The finalizer patch kept conflicting with other writers.
    #[error("patch {object}: still conflicting after {attempts} attempts")]
    Conflict {
        /// The object.
        object: String,
        /// How many attempts.
        attempts: u32,
    },
    /// An object read from the API server could not be re-encoded for the risk model.
    #[error("object encoding: {0}")]
    Encode(Arc<serde_json::Error>),
    /// The cluster client could not be built.
    #[error(transparent)]
    Connect(Arc<crate::cluster::ConnectError>),
}
