//! Notifications of a held deletion: one JSON document POSTed to each `notify` receiver over
//! HTTPS (rustls on ring; the receiver's `caFile` or the platform's roots). Each receiver is
//! tried up to `attempts` times, the waits doubling from 1s and capped at 60s; each delivery
//! runs in its own task, so a slow receiver never holds up another object or another receiver.

use super::error::BufferError;
use super::metrics::BufferMetrics;
use crate::config::model::buffer::Notify;
use std::sync::Arc;
use std::time::Duration;

/// The first wait between two attempts.
const FIRST_WAIT: Duration = Duration::from_secs(1);
/// The longest wait between two attempts.
const MAX_WAIT: Duration = Duration::from_secs(60);

/// One receiver, with its HTTPS client.
#[derive(Debug, Clone)]
struct Receiver {
    settings: Notify,
    client: reqwest::Client,
}

/// The receivers of one guard's `notify` list.
#[derive(Debug, Clone, Default)]
pub(crate) struct Notifier {
    receivers: Arc<Vec<Receiver>>,
}

impl Notifier {
    /// Builds a client per receiver (reads each `caFile`).
    pub fn new(settings: &[Notify]) -> Result<Self, BufferError> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let receivers = settings
            .iter()
            .map(|n| {
                Ok(Receiver {
                    client: client(n)?,
                    settings: n.clone(),
                })
            })
            .collect::<Result<Vec<_>, BufferError>>()?;
        Ok(Self {
            receivers: Arc::new(receivers),
        })
    }

    /// Sends `body` to every receiver, each in its own task; returns at once.
    pub fn send(&self, body: serde_json::Value, metrics: &BufferMetrics) {
        let body = Arc::new(body);
        for r in self.receivers.iter() {
            let (r, body, metrics) = (r.clone(), body.clone(), metrics.clone());
            tokio::spawn(async move {
                if let Err(e) = deliver(&r, &body).await {
                    tracing::error!(url = %r.settings.url, error = %e, "buffer notification not delivered");
                    metrics.failed("notify");
                }
            });
        }
    }
}

/// A client for one receiver: its CA bundle alone when given, else the platform's roots.
fn client(n: &Notify) -> Result<reqwest::Client, BufferError> {
    let mut b = reqwest::Client::builder()
        .timeout(n.timeout)
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy();
    if let Some(path) = &n.ca_file {
        let pem = std::fs::read(path).map_err(|source| BufferError::NotifyCa {
            path: path.clone(),
            source: Arc::new(source),
        })?;
        let certs = reqwest::Certificate::from_pem_bundle(&pem).map_err(|source| {
            BufferError::NotifyClient {
                url: n.url.clone(),
                source: Arc::new(source),
            }
        })?;
        b = b.tls_certs_only(certs);
    }
    b.build().map_err(|source| BufferError::NotifyClient {
        url: n.url.clone(),
        source: Arc::new(source),
    })
}

/// Up to `attempts` POSTs; a 2xx answer ends it.
async fn deliver(r: &Receiver, body: &serde_json::Value) -> Result<(), BufferError> {
    let mut wait = FIRST_WAIT;
    let mut last = String::new();
    for attempt in 1..=r.settings.attempts.max(1) {
        match r.client.post(&r.settings.url).json(body).send().await {
            Ok(resp) if resp.status().is_success() => return Ok(()),
            Ok(resp) => last = format!("HTTP {}", resp.status().as_u16()),
            Err(e) => last = e.to_string(),
        }
        tracing::warn!(url = %r.settings.url, attempt, error = %last, "buffer notification attempt failed");
        if attempt < r.settings.attempts {
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(MAX_WAIT);
        }
    }
    Err(BufferError::NotifyFailed {
        url: r.settings.url.clone(),
        attempts: r.settings.attempts,
        last,
    })
}
