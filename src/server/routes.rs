//! The routes: `POST /authorize` (SubjectAccessReview), `POST /admit` (AdmissionReview, the
//! validation ring: [`super::admit`]), `GET /healthz`, `GET /readyz` (ready once a valid
//! configuration is loaded and the cluster cache, when one is in use, has synced) and
//! `GET /metrics`. Probes are open to everyone, because kubelet probes present no credentials;
//! `/authorize`, `/admit` and `/metrics` require an authenticated caller when caller
//! authentication is configured.

use super::body::{check_content_type, read_body};
use super::caller::CallerAuth;
use super::rejection::Rejection;
use crate::authorizer::{Deadline, Input};
use crate::clock::Clock;
use crate::object::ViewError;
use crate::reload::LiveChain;
use crate::review;
use crate::telemetry::audit::{AuditRecord, AuditSink};
use crate::telemetry::metrics::{self, Metrics};
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode, header};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use super::body::{BODY_READ_TIMEOUT, MAX_ADMISSION_BODY_BYTES, MAX_BODY_BYTES};

/// Everything a request needs, shared by all connections.
#[derive(Debug)]
pub struct AppState {
    /// The chain being served.
    pub live: Arc<LiveChain>,
    /// Metrics.
    pub metrics: Arc<Metrics>,
    /// Audit records.
    pub audit: Arc<AuditSink>,
    /// The source of "now".
    pub clock: Arc<dyn Clock>,
    /// Caller authentication for the TLS listener.
    pub caller_auth: CallerAuth,
    /// Time budget of one review through the chain.
    pub review_timeout: Duration,
    /// The cluster as the validation ring sees it (the metadata cache, or
    /// [`crate::object::NoCluster`] without a cluster connection).
    pub cluster: Arc<dyn crate::object::ClusterView>,
}

/// What the connection knows about its peer.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionInfo {
    /// A client certificate was presented and verified during the handshake.
    pub verified_cert: bool,
    /// The connection is the plain-HTTP loopback listener.
    pub insecure: bool,
}

/// Serves one request; never fails, every problem becomes a response.
pub async fn serve(
    state: Arc<AppState>,
    conn: ConnectionInfo,
    req: Request<Incoming>,
) -> Response<Full<Bytes>> {
    let resp = match route(&state, conn, req).await {
        Ok(r) => r,
        Err(rejection) => rejection.into_response(),
    };
    state.metrics.record_http(resp.status().as_u16());
    resp
}

fn text(code: StatusCode, body: &'static str) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from_static(body.as_bytes())));
    *r.status_mut() = code;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

async fn route(
    state: &AppState,
    conn: ConnectionInfo,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Rejection> {
    let path = req.uri().path().to_owned();
    let method = req.method().clone();
    let (allowed, allow) = match path.as_str() {
        "/authorize" | "/admit" => (Method::POST, "POST"),
        "/healthz" | "/readyz" | "/livez" | "/metrics" => (Method::GET, "GET, HEAD"),
        _ => return Err(Rejection::NotFound(path)),
    };
    if method != allowed && !(allowed == Method::GET && method == Method::HEAD) {
        return Err(Rejection::MethodNotAllowed {
            method: method.to_string(),
            path,
            allow,
        });
    }
    match path.as_str() {
        "/healthz" | "/livez" => Ok(text(StatusCode::OK, "ok")),
        "/readyz" => Ok(readyz(state)),
        _ => {
            authenticate(state, conn, &req)?;
            if path == "/metrics" {
                let mut r = Response::new(Full::new(Bytes::from(state.metrics.encode())));
                r.headers_mut().insert(
                    header::CONTENT_TYPE,
                    header::HeaderValue::from_static(metrics::CONTENT_TYPE),
                );
                Ok(r)
            } else if path == "/admit" {
                super::admit::admit(state, req).await
            } else {
                authorize(state, req).await
            }
        }
    }
}

/// Ready once a valid configuration is loaded and, when a cluster view is configured and the
/// chain needs it, once its cache has synced (the validation ring's answers depend on it).
fn readyz(state: &AppState) -> Response<Full<Bytes>> {
    if !state.live.is_ready() {
        return text(
            StatusCode::SERVICE_UNAVAILABLE,
            "not ready: no valid authorization configuration is loaded",
        );
    }
    match state.cluster.ready() {
        Ok(()) | Err(ViewError::NoCluster) => text(StatusCode::OK, "ok"),
        Err(e) => {
            let mut r = text(StatusCode::SERVICE_UNAVAILABLE, "");
            *r.body_mut() = Full::new(Bytes::from(format!("not ready: {e}")));
            r
        }
    }
}

fn authenticate(
    state: &AppState,
    conn: ConnectionInfo,
    req: &Request<Incoming>,
) -> Result<(), Rejection> {
    let authorization = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    let caller = if conn.insecure {
        state.caller_auth.authenticate_plain(authorization)
    } else {
        state
            .caller_auth
            .authenticate(conn.verified_cert, authorization)
    };
    caller.map(|_| ()).ok_or(Rejection::Unauthenticated)
}

async fn authorize(
    state: &AppState,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Rejection> {
    check_content_type(&req)?;
    let body = read_body(req, MAX_BODY_BYTES).await?;
    let review = review::decode(&body)?;
    let active = state.live.load().ok_or(Rejection::NotReady)?;
    let started = Instant::now();
    let input = Input::new(review, state.clock.now());
    let answer = active
        .chain
        .authorize(&input, Deadline::after(state.review_timeout))
        .await;
    let elapsed = started.elapsed();
    state.metrics.record_answer(&answer, elapsed);
    if state.audit.is_enabled() {
        state.audit.write(&AuditRecord::new(
            &input,
            &answer,
            elapsed,
            Some(&active.source.hash),
        ));
    }
    let bytes = review::encode_response(input.review.version(), &answer.status());
    let mut r = Response::new(Full::new(Bytes::from(bytes)));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    Ok(r)
}
