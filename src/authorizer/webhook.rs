//! `type: Webhook`: a downstream SubjectAccessReview webhook called with kube-apiserver's client
//! semantics (`plugin/pkg/authorizer/webhook/webhook.go`), split by concern: [`kubeconfig`]
//! (connection), [`client`] (one attempt, client-go's decoding and inner Retry-After layer),
//! [`retry`] (upstream's outer backoff), [`cache`] (split-TTL verdicts), [`flight`]
//! (single-flight) and [`error`].
//!
//! The pipeline of one review: canonical key -> fresh cache entry? (hit) -> else one call per key
//! in flight (miss, or coalesced) with retries -> store -> map the status to a verdict. On a
//! failure, an expired entry within `staleIfError` is served instead (stale); otherwise the error
//! goes to the chain, which applies `failurePolicy`. matchConditions are evaluated by the chain
//! before any authorizer is called.
//!
//! Time bound: each attempt is bounded by `timeout` and by the review deadline, whichever comes
//! first; no attempt starts and no backoff sleep begins that would end past the review deadline.
//! So one review waits at most `min(review deadline, 5 x timeout + 4.875 s)`.
//!
//! State that survives a reload: a [`WebhookStates`] registry of each webhook's live core (HTTP
//! client and pool, cache, flights), keyed by authorizer name. A new chain reuses a core only if
//! the settings, failure policy and the digest of the kubeconfig and every file it names are all
//! unchanged; otherwise it starts empty.

pub mod cache;
pub mod client;
pub mod conditional;
pub mod error;
pub mod flight;
pub mod kubeconfig;
pub(crate) mod media_type;
pub mod metrics;
pub mod retry;

use super::metrics::Families;
use super::{Authorizer, AuthorizerError, BoxFuture, Deadline, Input};
use crate::config::{FailurePolicy, WebhookConfig};
use crate::decision::{Decision, Reason, Verdict};
use crate::names::{AuthorizerName, Code};
use crate::review::{
    ApiVersion, AuthorizationOptions, ConditionsAwareDecision, canonical_spec_json, encode_request,
};
use bytes::Bytes;
use cache::{CacheBytes, CachePolicy, VerdictCache, VerdictKey, is_cacheable};
use client::{AttemptDeadline, Client, ClientError, DownstreamStatus};
use error::WebhookError;
use flight::{Flights, Role};
use kubeconfig::KubeconfigError;
use metrics::WebhookMetrics;
use retry::Backoff;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The error upstream attaches to an answer that is both allowed and denied.
pub(crate) const ALLOWED_AND_DENIED: &str =
    "webhook subject access review returned both allow and deny response";

/// The code carried by a verdict served from an expired cache entry (`staleIfError`).
pub(crate) const STALE_CODE: &str = "STALE_IF_ERROR";

type Outcome = Result<Arc<DownstreamStatus>, WebhookError>;

/// Everything a built webhook authorizer needs beyond its settings.
#[derive(Debug, Clone, Default)]
pub struct WebhookRuntime {
    /// The families the `warrant_webhook_*` series are resolved from.
    pub metrics: Families,
    /// The retry schedule (upstream's unless a test changed it).
    pub backoff: Backoff,
    /// The byte bound of each webhook's verdict cache.
    pub(crate) cache_bytes: CacheBytes,
}

/// What makes two builds of one webhook the same: if equal, its cache carries over a reload.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Fingerprint {
    settings: WebhookConfig,
    failure_policy: FailurePolicy,
    material: [u8; 32],
    backoff: Backoff,
    cache_bytes: CacheBytes,
}

/// The live part of one downstream webhook: client, cache, flights, metrics.
#[derive(Debug)]
pub struct Core {
    name: AuthorizerName,
    fingerprint: Fingerprint,
    client: Client,
    cache: VerdictCache,
    flights: Flights<Outcome>,
    runtime: WebhookRuntime,
    metrics: WebhookMetrics,
}

/// Why a webhook authorizer could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    /// Its kubeconfig cannot be used.
    #[error(transparent)]
    Kubeconfig(#[from] KubeconfigError),
    /// The HTTP client for its connection could not be built.
    #[error("kubeconfig {}: {source}", kubeconfig.display())]
    Client {
        /// The kubeconfig the connection came from.
        kubeconfig: PathBuf,
        /// The cause.
        source: ClientError,
    },
}

/// The live webhook cores of one chain, by authorizer name; the next chain's build reads it.
#[derive(Debug, Default)]
pub struct WebhookStates {
    by_name: HashMap<AuthorizerName, Arc<Core>>,
}

impl WebhookStates {
    /// The core of webhook `name`, if this chain has one.
    pub fn get(&self, name: &AuthorizerName) -> Option<&Arc<Core>> {
        self.by_name.get(name)
    }

    /// Records a core.
    pub fn insert(&mut self, core: Arc<Core>) {
        self.by_name.insert(core.name.clone(), core);
    }

    /// How many cached verdicts webhook `name` holds (for tests and diagnostics).
    pub fn cached_entries(&self, name: &AuthorizerName) -> Option<u64> {
        self.by_name.get(name).map(|c| c.cache.len())
    }
}

/// The TLS provider of every downstream connection: rustls on ring.
pub(crate) fn tls_provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

impl Core {
    /// Builds the core of webhook `name`, reusing `previous` when nothing that matters changed.
    pub fn build(
        name: &AuthorizerName,
        settings: &WebhookConfig,
        failure_policy: FailurePolicy,
        runtime: &WebhookRuntime,
        previous: Option<&Arc<Core>>,
    ) -> Result<Arc<Core>, BuildError> {
        let connection = kubeconfig::load(&settings.kubeconfig, &tls_provider())?;
        let fingerprint = Fingerprint {
            settings: settings.clone(),
            failure_policy,
            material: connection.digest,
            backoff: runtime.backoff,
            cache_bytes: runtime.cache_bytes,
        };
        if let Some(prev) = previous
            && prev.fingerprint == fingerprint
        {
            return Ok(prev.clone());
        }
        let client =
            Client::new(connection, settings.version).map_err(|source| BuildError::Client {
                kubeconfig: settings.kubeconfig.clone(),
                source,
            })?;
        let cache = VerdictCache::new(
            CachePolicy {
                authorized: settings.cache_authorized.then_some(settings.authorized_ttl),
                unauthorized: settings
                    .cache_unauthorized
                    .then_some(settings.unauthorized_ttl),
                stale_if_error: settings.stale_if_error.unwrap_or(Duration::ZERO),
            },
            runtime.cache_bytes,
        );
        Ok(Arc::new(Core {
            name: name.clone(),
            fingerprint,
            client,
            cache,
            flights: Flights::default(),
            runtime: runtime.clone(),
            metrics: WebhookMetrics::new(&runtime.metrics, name),
        }))
    }

    fn settings(&self) -> &WebhookConfig {
        &self.fingerprint.settings
    }

    /// The `authorizationOptions` of the review warrant sends for `input`: upstream's
    /// conditional list when warrant's caller opted in to conditions, else none.
    pub fn options(input: &Input) -> Option<AuthorizationOptions> {
        input
            .review
            .supports_conditions()
            .then(AuthorizationOptions::conditional)
    }

    /// The cache key of a review, and whether its answer may be stored. Upstream keys its cache
    /// by the canonical JSON of the spec itself; warrant keys it by that JSON's SHA-256, so an
    /// entry is small whatever the requester put in its user, groups and extra (evicted entries
    /// are freed lazily, so with keys of requester-chosen size a flood of unique reviews held
    /// many times the cache's bound). The key holds the authorization options whatever version
    /// the downstream speaks (upstream keys on the v1 spec before converting it), so an
    /// opted-in review and one that did not opt in never share an entry.
    pub fn key(input: &Input) -> (VerdictKey, bool) {
        use sha2::{Digest, Sha256};
        let spec = input.review.spec();
        let options = Self::options(input);
        let digest = Sha256::digest(canonical_spec_json(spec, options.as_ref()).as_bytes());
        (VerdictKey(digest.into()), is_cacheable(spec))
    }

    /// Whether the review sent downstream for `input` asks for conditions (v1 only).
    fn asks_conditions(&self, input: &Input) -> bool {
        self.client.version() == ApiVersion::V1 && input.review.supports_conditions()
    }

    /// Benchmarks and tests only: stores `status` as the downstream's answer to `input`, as a
    /// successful call would.
    #[doc(hidden)]
    pub fn prime(&self, input: &Input, status: DownstreamStatus) {
        let (key, _) = Self::key(input);
        let asked = self.asks_conditions(input);
        self.cache
            .store(key, Arc::new(status), std::time::Instant::now(), asked);
    }

    async fn judge(&self, input: &Input, deadline: Deadline) -> Result<Verdict, AuthorizerError> {
        let asked = self.asks_conditions(input);
        let single_flight = self.settings().single_flight;
        let use_cache = self.cache.is_enabled() && is_cacheable(input.review.spec());
        // The key (a digest of the spec) only when the cache or single flight needs it.
        let key = (use_cache || single_flight).then(|| Self::key(input).0);
        let cached = match (&key, use_cache) {
            (Some(key), true) => self.cache.get(key),
            _ => None,
        };
        if let Some(e) = &cached
            && e.is_fresh(std::time::Instant::now())
        {
            self.metrics.record_cache("hit");
            return verdict(&e.status, false, asked).map_err(AuthorizerError::Webhook);
        }
        let call = async {
            let outcome = self.call(input, deadline).await;
            if let Ok(status) = &outcome
                && let Some(key) = key.as_ref().filter(|_| use_cache)
            {
                self.cache
                    .store(*key, status.clone(), std::time::Instant::now(), asked);
            }
            outcome
        };
        let (outcome, role) = match key.as_ref().filter(|_| single_flight) {
            Some(key) => self.flights.run(*key, call).await,
            None => (call.await, Role::Leader),
        };
        let name = self.name.as_str();
        match outcome {
            Ok(status) => {
                self.metrics.record_cache(role_label(role));
                verdict(&status, false, asked).map_err(AuthorizerError::Webhook)
            }
            Err(e) => {
                if let Some(stale) = cached.filter(|c| c.may_serve_stale(std::time::Instant::now()))
                {
                    self.metrics.record_cache("stale");
                    tracing::warn!(authorizer = name, error = %e, "downstream webhook failed; serving an expired verdict (staleIfError)");
                    return verdict(&stale.status, true, asked).map_err(AuthorizerError::Webhook);
                }
                self.metrics.record_cache(role_label(role));
                tracing::error!(authorizer = name, error = %e, "Failed to make webhook authorizer request");
                if self.fingerprint.failure_policy == FailurePolicy::NoOpinion && !e.is_canceled() {
                    self.metrics.record_fail_open(e.metrics_result());
                }
                Err(AuthorizerError::Webhook(e))
            }
        }
    }

    /// The downstream call with upstream's retries, bounded by the review deadline.
    async fn call(&self, input: &Input, deadline: Deadline) -> Outcome {
        let options = Self::options(input);
        let body = Bytes::from(encode_request(
            self.client.version(),
            input.review.spec(),
            options.as_ref(),
        ));
        let timeout = self.settings().timeout;
        let timeout_ms = timeout.as_millis() as u64;
        retry::with_backoff(self.runtime.backoff, deadline.0, |_| {
            let body = body.clone();
            async move {
                let own = tokio::time::Instant::now() + timeout;
                let attempt_deadline = AttemptDeadline {
                    at: own.min(deadline.0),
                    is_review_deadline: deadline.0 < own,
                    timeout_ms,
                };
                let mut guard = AttemptGuard::start(self);
                let result = self.client.attempt(&body, attempt_deadline).await;
                let label = match &result {
                    Ok(_) => "success",
                    Err(e) => e.metrics_result(),
                };
                guard.finish(label);
                result.map(Arc::new)
            }
        })
        .await
    }
}

impl Core {
    /// Asks the downstream to evaluate `sub`, the sub-decision it authored, against
    /// `admission_request` (an `AuthorizationConditionsReview`, with upstream's retries, each
    /// attempt bounded by the webhook timeout and the deadline); fails closed to `sub`'s
    /// failure decision. Not cached, as upstream caches no evaluation.
    pub(crate) async fn evaluate_conditions(
        &self,
        sub: &ConditionsAwareDecision,
        admission_request: &serde_json::Value,
        deadline: Deadline,
    ) -> ConditionsAwareDecision {
        let (body, uid) = conditional::review_body(sub, admission_request);
        let timeout = self.settings().timeout;
        let timeout_ms = timeout.as_millis() as u64;
        let answer = retry::with_backoff(self.runtime.backoff, deadline.0, |_| {
            let body = body.clone();
            async move {
                let own = tokio::time::Instant::now() + timeout;
                let attempt_deadline = AttemptDeadline {
                    at: own.min(deadline.0),
                    is_review_deadline: deadline.0 < own,
                    timeout_ms,
                };
                self.client
                    .attempt_conditions(&body, attempt_deadline)
                    .await
            }
        })
        .await;
        if let Err(e) = &answer {
            let name = self.name.as_str();
            tracing::error!(authorizer = name, error = %e, "Failed to make webhook authorizer condition evaluation request");
        }
        conditional::judge_answer(sub, &uid, answer)
    }
}

fn role_label(role: Role) -> &'static str {
    match role {
        Role::Leader => "miss",
        Role::Follower => "coalesced",
    }
}

/// Records one attempt's metrics; an attempt dropped mid-call (the review was cancelled) is
/// recorded as `canceled`, as upstream records a call whose context ended.
struct AttemptGuard<'a> {
    core: &'a Core,
    started: std::time::Instant,
    done: bool,
}

impl<'a> AttemptGuard<'a> {
    fn start(core: &'a Core) -> Self {
        Self {
            core,
            started: std::time::Instant::now(),
            done: false,
        }
    }

    fn finish(&mut self, result: &'static str) {
        self.done = true;
        self.core
            .metrics
            .record_attempt(result, self.started.elapsed());
    }
}

impl Drop for AttemptGuard<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.core
                .metrics
                .record_attempt("canceled", self.started.elapsed());
        }
    }
}

/// The status to a verdict, as upstream's final switch; allowed+denied is a Deny whose reason
/// carries upstream's error text (warrant answers it as a clean 403-style denial). A
/// conditional decision is read by [`conditional::verdict`] (`asked`: the review opted in).
fn verdict(s: &DownstreamStatus, stale: bool, asked: bool) -> Result<Verdict, WebhookError> {
    if let Some(v) = conditional::verdict(s, asked) {
        return v;
    }
    Ok(unconditional(s, stale))
}

fn unconditional(s: &DownstreamStatus, stale: bool) -> Verdict {
    let (decision, message) = match (s.allowed, s.denied) {
        (true, true) => (
            Decision::Deny,
            if s.reason.is_empty() {
                ALLOWED_AND_DENIED.to_owned()
            } else {
                format!("{} ({ALLOWED_AND_DENIED})", s.reason)
            },
        ),
        (false, true) => (Decision::Deny, s.reason.clone()),
        (true, false) => (Decision::Allow, s.reason.clone()),
        (false, false) => (Decision::NoOpinion, s.reason.clone()),
    };
    if stale {
        let message = if message.is_empty() {
            "expired verdict served after a downstream failure".to_owned()
        } else {
            message
        };
        return Verdict::new(
            decision,
            Reason {
                rule: None,
                message,
                code: Code::new(STALE_CODE).ok(),
            },
        );
    }
    if message.is_empty() {
        Verdict::bare(decision)
    } else {
        Verdict::new(decision, Reason::message(message))
    }
}

/// A `Webhook` entry of the chain.
#[derive(Debug)]
pub struct Webhook {
    core: Arc<Core>,
}

impl Webhook {
    /// Wraps a built core.
    pub fn new(core: Arc<Core>) -> Self {
        Self { core }
    }

    /// The live core (shared with the registry).
    pub fn core(&self) -> &Arc<Core> {
        &self.core
    }
}

impl Authorizer for Webhook {
    fn authorize<'a>(
        &'a self,
        input: &'a Input,
        deadline: Deadline,
    ) -> BoxFuture<'a, Result<Verdict, AuthorizerError>> {
        Box::pin(self.core.judge(input, deadline))
    }
}
