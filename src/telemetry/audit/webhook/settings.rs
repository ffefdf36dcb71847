//! [`WebhookSettings`]: where the webhook sink POSTs and in which shape.

use std::sync::Arc;

/// The body of a POST.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum WebhookFormat {
    /// warrant's records, one JSON object per line (`application/x-ndjson`).
    #[value(name = "jsonl")]
    JsonLines,
    /// An `audit.k8s.io/v1` `EventList`, one Event per record (`application/json`).
    #[value(name = "eventlist")]
    EventList,
}

/// Where and how the webhook sink POSTs.
#[derive(Debug, Clone)]
pub struct WebhookSettings {
    /// The receiver's URL (`https://`).
    pub url: reqwest::Url,
    /// The TLS client configuration (the CA to trust, a client certificate).
    pub tls: Arc<rustls::ClientConfig>,
    /// The body's shape.
    pub format: WebhookFormat,
    /// Whether bodies are gzip-compressed (`Content-Encoding: gzip`).
    pub gzip: bool,
}
