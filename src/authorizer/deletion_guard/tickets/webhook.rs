//! An external ticket system as a guard's ticket source (`tickets.source.webhook`): for each
//! presented ticket, warrant POSTs a `TicketReview` ([`contract`]) to the endpoint its kubeconfig
//! names (CA, client certificate, bearer token: loaded exactly as a `Webhook` authorizer's,
//! through `authorizer::webhook::kubeconfig`, and sent by the same reqwest client set-up) and
//! reads the ticket from the answer.
//!
//! The pipeline of one lookup: the request body's digest is the key -> a fresh kept answer
//! (`hit`) -> else one call per key in flight (`miss`, or `coalesced` for identical concurrent
//! lookups, through the `Webhook` authorizer's single-flight) -> the answer kept for its TTL
//! ([`cache`]). One call, no retry, bounded by the webhook's `timeout` and by the review's
//! deadline, whichever comes first. A failure ([`LookupError`]: unusable kubeconfig,
//! unreachable, timeout, non-2xx, malformed answer, wrong `apiVersion`) is logged, counted by
//! result and returned as an unreadable snapshot naming it: the guard then applies its
//! failure policy, never a ticket. The endpoint is asked only for a presented id; a ticket
//! system cannot pre-authorise a requester.

pub mod cache;
pub mod contract;
pub mod error;
pub mod metrics;
#[cfg(test)]
mod tests;

use super::snapshot::Snapshot;
use crate::authorizer::Deadline;
use crate::authorizer::deletion_guard::error::GuardError;
use crate::authorizer::deletion_guard::scope::Target;
use crate::authorizer::webhook::cache::VerdictKey;
use crate::authorizer::webhook::client::{self, ClientError};
use crate::authorizer::webhook::flight::{Flights, Role};
use crate::authorizer::webhook::kubeconfig::{self, Credentials};
use crate::authorizer::webhook::{BuildError, tls_provider};
use crate::config::model::guard::TicketWebhook;
use bytes::Bytes;
use cache::{TicketCache, Ttls};
use contract::{Looked, TicketReview};
use error::LookupError;
use metrics::TicketLookupMetrics;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::Arc;

/// Answers larger than this are refused (an answer is a ticket, a few KiB at most).
pub const MAX_ANSWER_BYTES: usize = 64 << 10;

type Outcome = Result<(Arc<Looked>, usize), LookupError>;

/// The endpoint, ready to call.
#[derive(Debug)]
struct Endpoint {
    http: reqwest::Client,
    url: reqwest::Url,
    credentials: Credentials,
}

/// One guard's ticket webhook: its endpoint (or why it cannot be used), kept answers, calls in
/// flight and series.
#[derive(Debug)]
pub struct WebhookTickets {
    settings: TicketWebhook,
    endpoint: Result<Endpoint, BuildError>,
    cache: TicketCache,
    flights: Flights<Outcome>,
    metrics: TicketLookupMetrics,
}

impl WebhookTickets {
    /// The source for `settings`: the kubeconfig is loaded now; when it cannot be used, every
    /// lookup fails with why (and the chain refuses to build, see [`Self::build_error`]).
    pub fn new(settings: &TicketWebhook, metrics: TicketLookupMetrics) -> Self {
        let endpoint = endpoint(settings);
        if let Err(e) = &endpoint {
            tracing::error!(error = %e, "the ticket webhook cannot be used");
        }
        Self {
            settings: settings.clone(),
            endpoint,
            cache: TicketCache::new(Ttls {
                approved: settings.approved_ttl,
                unapproved: settings.unapproved_ttl,
            }),
            flights: Flights::default(),
            metrics,
        }
    }

    /// Why the endpoint cannot be used, if it cannot.
    pub fn build_error(&self) -> Option<&BuildError> {
        self.endpoint.as_ref().err()
    }

    /// Ticket `id` presented for `target`: a snapshot holding it, an empty one when the ticket
    /// system knows no such ticket, or an unreadable one saying why there is no answer.
    pub async fn lookup(&self, id: &str, target: &Target<'_>, deadline: Deadline) -> Snapshot {
        let body = TicketReview::new(id, target).to_body();
        let key = VerdictKey(Sha256::digest(&body).into());
        let looked = match self.cache.get(&key) {
            Some(looked) => {
                self.metrics.record_cache("hit");
                Ok(looked)
            }
            None => {
                let call = async {
                    let outcome = self.call(id, target.user, body, deadline).await;
                    if let Ok((looked, bytes)) = &outcome {
                        self.cache.store(key, looked.clone(), *bytes);
                    }
                    outcome
                };
                let (outcome, role) = self.flights.run(key, call).await;
                self.metrics.record_cache(match role {
                    Role::Leader => "miss",
                    Role::Follower => "coalesced",
                });
                outcome.map(|(looked, _)| looked)
            }
        };
        match looked {
            Ok(looked) => match looked.as_ref() {
                Looked::NotFound => Snapshot::Loaded(HashMap::new()),
                Looked::Found(ticket) => {
                    Snapshot::Loaded(HashMap::from([(id.to_owned(), ticket.as_ref().clone())]))
                }
            },
            Err(source) => Snapshot::Unreadable(GuardError::TicketLookup {
                ticket: id.to_owned(),
                source,
            }),
        }
    }

    /// One call: its outcome counted, a failure logged.
    async fn call(&self, id: &str, requester: &str, body: Vec<u8>, deadline: Deadline) -> Outcome {
        let outcome = self.exchange(id, requester, body, deadline).await;
        match &outcome {
            Ok((looked, _)) => self.metrics.record_lookup(looked.metrics_result()),
            Err(e) => {
                self.metrics.record_lookup(e.metrics_result());
                tracing::error!(ticket = id, error = %e, "ticket lookup failed; the guard applies its failure policy");
            }
        }
        outcome
    }

    async fn exchange(
        &self,
        id: &str,
        requester: &str,
        body: Vec<u8>,
        deadline: Deadline,
    ) -> Outcome {
        let endpoint = self
            .endpoint
            .as_ref()
            .map_err(|e| LookupError::Unusable(e.clone()))?;
        let own = tokio::time::Instant::now() + self.settings.timeout;
        let at = own.min(deadline.0);
        let post = client::post(
            &endpoint.http,
            &endpoint.url,
            &endpoint.credentials,
            Bytes::from(body),
            MAX_ANSWER_BYTES,
        );
        let (code, _, answer) = match tokio::time::timeout_at(at, post).await {
            Err(_) if deadline.0 < own => return Err(LookupError::Deadline),
            Err(_) => {
                return Err(LookupError::Timeout {
                    timeout_ms: self.settings.timeout.as_millis() as u64,
                });
            }
            Ok(Err(e)) => return Err(LookupError::Unreachable(e)),
            Ok(Ok(r)) => r,
        };
        if !(200..300).contains(&code) {
            let text = String::from_utf8_lossy(&answer);
            return Err(LookupError::Status {
                code,
                body: text.chars().take(200).collect(),
            });
        }
        let looked = contract::decode(id, requester, &answer).map_err(LookupError::Malformed)?;
        Ok((Arc::new(looked), answer.len()))
    }
}

/// The endpoint of `settings`' kubeconfig.
fn endpoint(settings: &TicketWebhook) -> Result<Endpoint, BuildError> {
    let connection = kubeconfig::load(&settings.kubeconfig, &tls_provider())?;
    let client_error = |source: ClientError| BuildError::Client {
        kubeconfig: settings.kubeconfig.clone(),
        source,
    };
    let http =
        client::http_client(connection.tls, connection.proxy.as_deref()).map_err(client_error)?;
    Ok(Endpoint {
        http,
        url: connection.url,
        credentials: connection.credentials,
    })
}
