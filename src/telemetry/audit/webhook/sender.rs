//! [`WebhookSender`]: one POST per batch, gzip-compressed when asked; a 2xx answer delivers
//! the batch, anything else (an error status, no answer) fails it and the sink retries.

use super::eventlist::event_list;
use super::settings::{WebhookFormat, WebhookSettings};
use crate::telemetry::audit::remote::{Deliver, DeliverError, SinkRecord};
use futures_util::future::BoxFuture;
use std::io::Write;

/// The webhook sink's receiver.
#[derive(Debug)]
pub struct WebhookSender {
    settings: WebhookSettings,
    client: reqwest::Client,
}

/// The most bytes of an error answer kept for the message.
const ERROR_BODY_BYTES: usize = 256;

impl WebhookSender {
    /// A sender for `settings`.
    pub fn new(settings: WebhookSettings) -> Result<Self, reqwest::Error> {
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured((*settings.tls).clone())
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .build()?;
        Ok(Self { settings, client })
    }

    /// The body of `batch` and its content type.
    fn body(&self, batch: &[SinkRecord]) -> Result<(Vec<u8>, &'static str), DeliverError> {
        let (plain, content_type) = match self.settings.format {
            WebhookFormat::JsonLines => {
                let mut out = Vec::with_capacity(batch.iter().map(|r| r.json.len() + 1).sum());
                for r in batch {
                    out.extend_from_slice(&r.json);
                    out.push(b'\n');
                }
                (out, "application/x-ndjson")
            }
            WebhookFormat::EventList => {
                let list = event_list(batch.iter().map(|r| r.json.as_slice()));
                let bytes = serde_json::to_vec(&list).map_err(|e| DeliverError::Receiver {
                    what: "encode the EventList".into(),
                    source: Box::new(e),
                })?;
                (bytes, "application/json")
            }
        };
        if !self.settings.gzip {
            return Ok((plain, content_type));
        }
        let mut gz = flate2::write::GzEncoder::new(
            Vec::with_capacity(plain.len() / 4),
            flate2::Compression::fast(),
        );
        gz.write_all(&plain)
            .and_then(|()| gz.finish())
            .map(|body| (body, content_type))
            .map_err(|e| DeliverError::Receiver {
                what: "gzip the batch".into(),
                source: Box::new(e),
            })
    }

    async fn post(&self, batch: &[SinkRecord]) -> Result<(), DeliverError> {
        let (body, content_type) = self.body(batch)?;
        let mut request = self
            .client
            .post(self.settings.url.clone())
            .header(reqwest::header::CONTENT_TYPE, content_type)
            .body(body);
        if self.settings.gzip {
            request = request.header(reqwest::header::CONTENT_ENCODING, "gzip");
        }
        let what = || format!("POST {}", self.settings.url);
        let answer = request.send().await.map_err(|e| DeliverError::Receiver {
            what: what(),
            source: Box::new(e),
        })?;
        let status = answer.status();
        if status.is_success() {
            return Ok(());
        }
        let text = answer.text().await.unwrap_or_default();
        let cut = text
            .char_indices()
            .nth(ERROR_BODY_BYTES)
            .map_or(text.as_str(), |(i, _)| &text[..i]);
        Err(DeliverError::Refused(format!(
            "{}: HTTP {}: {}",
            what(),
            status.as_u16(),
            cut.trim()
        )))
    }
}

impl Deliver for WebhookSender {
    fn deliver<'a>(&'a self, batch: &'a [SinkRecord]) -> BoxFuture<'a, Result<(), DeliverError>> {
        Box::pin(self.post(batch))
    }

    fn describe(&self) -> String {
        format!("webhook {}", self.settings.url)
    }
}
