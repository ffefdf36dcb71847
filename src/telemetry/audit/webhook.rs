//! The HTTPS webhook sink: batches of audit records POSTed to one URL, as JSON lines of
//! warrant's records (`application/x-ndjson`) or as an `audit.k8s.io/v1` `EventList` that
//! existing Kubernetes audit pipelines accept ([`eventlist`]), gzip-compressed when asked. A
//! [`WebhookSender`] is the [`super::remote::Deliver`] of a [`super::remote::RemoteSink`],
//! which queues, spools and retries (any answer but 2xx, and no answer in time, is a failure).

pub mod eventlist;
mod sender;
mod settings;

pub use sender::WebhookSender;
pub use settings::{WebhookFormat, WebhookSettings};
