//! [`Deliver`]: what a remote sink's receiver must do, a batch at a time. The sink's queue,
//! spool, retries and metrics are the same for every receiver ([`super::run`]).

use super::record::SinkRecord;
use futures_util::future::BoxFuture;
use std::time::Duration;
use thiserror::Error;

/// Why a batch was not delivered; the sink keeps it and tries again.
#[derive(Debug, Error)]
pub enum DeliverError {
    /// The receiver refused the batch or could not be reached.
    #[error("{what}: {source}")]
    Receiver {
        /// What was being done (`produce to topic warrant-audit`, `POST https://...`).
        what: String,
        /// The receiver's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The receiver answered with an error of its own, with no underlying cause.
    #[error("{0}")]
    Refused(String),
    /// The batch was not acknowledged in time.
    #[error("no acknowledgement within {0:?}")]
    Timeout(Duration),
}

/// A receiver of audit records: Kafka, an HTTPS endpoint.
pub trait Deliver: Send + Sync + std::fmt::Debug {
    /// Sends `batch`, oldest first; `Ok` only once the receiver has taken every record of it
    /// (a batch partly taken is sent again whole: delivery is at least once).
    fn deliver<'a>(&'a self, batch: &'a [SinkRecord]) -> BoxFuture<'a, Result<(), DeliverError>>;

    /// Where it delivers, for logs and `/readyz?verbose` (`kafka topic warrant-audit at
    /// 10.0.0.1:9093`); no secret.
    fn describe(&self) -> String;
}
