//! The routes: `POST /authorize` (SubjectAccessReview), `POST /admit` (AdmissionReview, the
//! validation ring: [`super::admit`]), `GET /healthz`, `GET /readyz` (ready once a valid
//! configuration is loaded and the cluster cache, when one is in use, has synced) and
//! `GET /metrics`. Probes are open to everyone, because kubelet probes present no credentials;
//! `/authorize`, `/admit` and `/metrics` require an authenticated caller when caller
//! authentication is configured.

use super::admit;
use super::body::{
    self, BODY_READ_TIMEOUT, BodyBudget, Growth, MAX_ADMISSION_BODY_BYTES, MAX_BODY_BYTES,
};
use super::caller::CallerAuth;
use super::decoded;
use super::rejection::Rejection;
use crate::admission::{self, Mapped};
use crate::authorizer::{Deadline, Input};
use crate::clock::Clock;
use crate::defense::{self, Admission, FollowUps};
use crate::object::ViewError;
use crate::pod_admission::Stage;
use crate::reload::{Active, LiveChain};
use crate::review;
use crate::telemetry::audit::{AdmissionAudit, AuditRecord, AuditSink};
use crate::telemetry::metrics::{self, Metrics};
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode, header};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

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
    /// Request bytes held in memory at once, across every connection.
    pub body_budget: BodyBudget,
    /// The cluster as the validation ring sees it (the metadata cache, or
    /// [`crate::object::NoCluster`] without a cluster connection).
    pub cluster: Arc<dyn crate::object::ClusterView>,
    /// Performs what the deletion defense owes after an admission decision (recording who
    /// asked for a held deletion).
    pub follow_ups: FollowUps,
    /// Asks the API server who may do what (approving a ticket, using a constraint), or
    /// [`crate::object::NoAccessReview`] without a cluster connection.
    pub access_review: Arc<dyn crate::object::AccessReview>,
    /// Pod security admission (`POST /mutate`, and pods on `POST /admit`), when enabled.
    pub pod_security: Option<Arc<crate::pod_admission::PodSecurity>>,
    /// Whether answers carry `status.authorizationDetails` (`--authorization-details`; see
    /// [`super::details`]).
    pub authorization_details: bool,
}

/// What the connection knows about its peer.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionInfo {
    /// A client certificate was presented and verified during the handshake.
    pub(crate) verified_cert: bool,
    /// The connection is the plain-HTTP loopback listener.
    pub insecure: bool,
}

/// One request's future, boxed at the size of what its route needs.
pub type ServeFuture = Pin<Box<dyn Future<Output = Response<Full<Bytes>>> + Send>>;

/// Serves one request; never fails, every problem becomes a response. The route is chosen
/// before the future is made, and the future is boxed here at its route's size: hyper moves
/// each request's future into the task it spawns (and the task moves it again as it runs), and
/// an authorization's stays within the allocator's per-thread cache (glibc's serves up to 1,032
/// bytes; one future able to run every route was several KiB, allocated the slow way on every
/// review).
pub fn serve(state: Arc<AppState>, conn: ConnectionInfo, req: Request<Incoming>) -> ServeFuture {
    match route(&state, conn, req) {
        Ok(Routed::Authorize(body)) => Box::pin(authorization(state, body)),
        Ok(Routed::Admit { body, budget }) => Box::pin(admission(state, body, budget)),
        Ok(Routed::Mutate(req)) => {
            Box::pin(async move { answered(&state, pods(&state, req, Stage::Mutate).await) })
        }
        Ok(Routed::Ready(resp)) => Box::pin(std::future::ready(answered(&state, Ok(resp)))),
        Err(rejection) => Box::pin(std::future::ready(answered(&state, Err(rejection)))),
    }
}

/// `POST /authorize`'s future, as [`serve`] boxes it.
async fn authorization(state: Arc<AppState>, body: Incoming) -> Response<Full<Bytes>> {
    answered(&state, authorize(&state, body).await)
}

/// `POST /admit`'s future, as [`serve`] boxes it.
async fn admission(
    state: Arc<AppState>,
    body: Incoming,
    budget: Duration,
) -> Response<Full<Bytes>> {
    answered(&state, admit(&state, body, budget).await)
}

/// The response of a route's result, counted.
fn answered(
    state: &AppState,
    result: Result<Response<Full<Bytes>>, Rejection>,
) -> Response<Full<Bytes>> {
    let resp = result.unwrap_or_else(Rejection::into_response);
    state.metrics.record_http(resp.status().as_u16());
    resp
}

/// Where a request goes, decided from its head.
enum Routed {
    /// Answered from the head alone (probes, metrics).
    Ready(Response<Full<Bytes>>),
    /// A SubjectAccessReview (or conditions review), its content type accepted and its
    /// declared length within the limit: the body to read and judge.
    Authorize(Incoming),
    /// An AdmissionReview for the validation ring (content type and declared length accepted),
    /// within `budget` (the API server's `timeout` parameter, else the review timeout).
    Admit {
        /// The body to read.
        body: Incoming,
        /// The time the request may take.
        budget: Duration,
    },
    /// An AdmissionReview for pod security's mutation.
    Mutate(Request<Incoming>),
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

fn route(
    state: &AppState,
    conn: ConnectionInfo,
    req: Request<Incoming>,
) -> Result<Routed, Rejection> {
    let path = req.uri().path().to_owned();
    let method = req.method().clone();
    let (allowed, allow) = match path.as_str() {
        "/authorize" | "/admit" | "/mutate" => (Method::POST, "POST"),
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
        "/healthz" | "/livez" => Ok(Routed::Ready(text(StatusCode::OK, "ok"))),
        "/readyz" => Ok(Routed::Ready(readyz(state, req.uri().query()))),
        _ => {
            authenticate(state, conn, &req)?;
            if path == "/metrics" {
                let mut r = Response::new(Full::new(Bytes::from(state.metrics.encode())));
                r.headers_mut().insert(
                    header::CONTENT_TYPE,
                    header::HeaderValue::from_static(metrics::CONTENT_TYPE),
                );
                Ok(Routed::Ready(r))
            } else if path == "/admit" {
                check_content_type(&req)?;
                let budget = admit::budget(req.uri().query(), state.review_timeout);
                let growth = Growth::at_most(MAX_ADMISSION_BODY_BYTES);
                let body = body_within(req, &growth)?;
                Ok(Routed::Admit { body, budget })
            } else if path == "/mutate" {
                Ok(Routed::Mutate(req))
            } else {
                check_content_type(&req)?;
                Ok(Routed::Authorize(body_within(req, &authorize_growth())?))
            }
        }
    }
}

/// Ready once a valid configuration is loaded and, when a cluster view is configured and the
/// chain needs it, once its cache has synced (the validation ring's answers depend on it).
/// With `?verbose`, one line per check in kube-apiserver's shape (`[+]name ok`,
/// `[-]name failed: why`), plus one per remote audit sink: `[!]audit-sink-<name> failing ...`
/// while it cannot deliver, which never makes warrant unready (reviews do not depend on it).
fn readyz(state: &AppState, query: Option<&str>) -> Response<Full<Bytes>> {
    let verbose = query.is_some_and(|q| {
        q.split('&')
            .any(|p| p == "verbose" || p.starts_with("verbose="))
    });
    let mut lines = Vec::new();
    let mut problem = None;
    if state.live.is_ready() {
        lines.push("[+]config ok".to_owned());
    } else {
        let why = "no valid authorization configuration is loaded";
        lines.push(format!("[-]config failed: {why}"));
        problem = Some(why.to_owned());
    }
    // The cache matters once the chain judges admission requests; a warrant with no cluster
    // connection at all serves the authorization ring and is ready for it.
    let admits = state.live.load().is_some_and(|a| a.chain.admits());
    if admits && problem.is_none() {
        match state.cluster.ready() {
            Ok(()) | Err(ViewError::NoCluster) => lines.push("[+]cluster-cache ok".to_owned()),
            Err(e) => {
                lines.push(format!("[-]cluster-cache failed: {e}"));
                problem = Some(e.to_string());
            }
        }
    }
    for sink in state.audit.remote_statuses() {
        lines.push(match sink.problem {
            None => format!("[+]audit-sink-{} ok", sink.name),
            Some(p) => format!(
                "[!]audit-sink-{} failing (readiness not affected): {p}",
                sink.name
            ),
        });
    }
    let status = match problem {
        None => StatusCode::OK,
        Some(_) => StatusCode::SERVICE_UNAVAILABLE,
    };
    let body = match (verbose, problem) {
        (true, None) => format!("{}\nreadyz check passed\n", lines.join("\n")),
        (true, Some(_)) => format!("{}\nreadyz check failed\n", lines.join("\n")),
        (false, None) => "ok".to_owned(),
        (false, Some(why)) => format!("not ready: {why}"),
    };
    let mut r = text(status, "");
    *r.body_mut() = Full::new(Bytes::from(body));
    r
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
    caller.ok_or(Rejection::Unauthenticated)?;
    // The connection has proved who is on it: it keeps its slot (see `slots.rs`).
    if let Some(trust) = req.extensions().get::<super::Trust>() {
        trust.authenticated();
    }
    Ok(())
}

fn check_content_type(req: &Request<Incoming>) -> Result<(), Rejection> {
    if let Some(encoding) = req.headers().get(header::CONTENT_ENCODING) {
        let raw = encoding.to_str().unwrap_or("");
        if !raw.trim().eq_ignore_ascii_case("identity") {
            return Err(Rejection::ContentEncoding(raw.to_owned()));
        }
    }
    let Some(value) = req.headers().get(header::CONTENT_TYPE) else {
        // Absent means JSON, as the API server's own client assumes.
        return Ok(());
    };
    let raw = value.to_str().unwrap_or("");
    let essence = raw.split(';').next().unwrap_or("").trim();
    if essence.eq_ignore_ascii_case("application/json") {
        Ok(())
    } else {
        Err(Rejection::ContentType(raw.to_owned()))
    }
}

/// The request's body, refused at once when its declared length is past `growth`'s largest
/// limit (the limit is also enforced while reading, for a body that declares none).
fn body_within(req: Request<Incoming>, growth: &Growth) -> Result<Incoming, Rejection> {
    let limit = growth.larger.map_or(growth.limit, |(more, _)| more);
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(Rejection::TooLarge { limit });
    }
    Ok(req.into_body())
}

/// The body read within the size (`growth`), time and memory bounds; the hold keeps its bytes
/// counted against the process budget until the request is answered.
async fn read_body(
    state: &AppState,
    body: Incoming,
    growth: Growth,
) -> Result<(Bytes, body::BodyHold), Rejection> {
    body::read(body, growth, BODY_READ_TIMEOUT, &state.body_budget).await
}

/// What `/authorize` reads: a SubjectAccessReview of at most [`MAX_BODY_BYTES`], or an
/// AuthorizationConditionsReview (which carries an admission request's objects) of at most
/// [`MAX_ADMISSION_BODY_BYTES`] when its first bytes say so.
fn authorize_growth() -> Growth {
    Growth {
        limit: MAX_BODY_BYTES,
        larger: Some((MAX_ADMISSION_BODY_BYTES, |head| {
            review::declares_kind(head, review::CONDITIONS_REVIEW_KIND)
        })),
    }
}

/// `POST /authorize`: the body of a request [`route`] accepted (content type, declared length).
async fn authorize(state: &AppState, body: Incoming) -> Result<Response<Full<Bytes>>, Rejection> {
    let (body, mut hold) = read_body(state, body, authorize_growth()).await?;
    decoded::charge(&mut hold, &state.body_budget, &body)?;
    // kube-apiserver sends its AuthorizationConditionsReviews to the same endpoint unless the
    // webhook's conditionsReview names another kubeconfig context; TypeMeta tells them apart
    // (and, for a body past the SubjectAccessReview limit, must lead it). A body within that
    // limit is read once for both its kind and the review.
    // The conditions review's future is boxed (see `route`): it is the rare kind here.
    if body.len() > MAX_BODY_BYTES {
        if review::is_conditions_review(&body) {
            return Box::pin(conditions_review(state, &body)).await;
        }
        return Err(Rejection::TooLarge {
            limit: MAX_BODY_BYTES,
        });
    }
    let review = match review::decode_authorize(&body)? {
        review::AuthorizeBody::Review(review) => *review,
        review::AuthorizeBody::ConditionsReview => {
            return Box::pin(conditions_review(state, &body)).await;
        }
    };
    let active = state.live.load().ok_or(Rejection::NotReady)?;
    let started = Instant::now();
    let input = Input::new(review, state.clock.now());
    // Boxed apart from this future, so that each stays within the allocator's per-thread
    // cache (see `serve`).
    let answer = Box::pin(
        active
            .chain
            .authorize(&input, Deadline::after(state.review_timeout)),
    )
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
    let details = state
        .authorization_details
        .then(|| super::details::of_answer(&input, &answer, &active.source.hash));
    let bytes = match &answer.conditional {
        Some(decision) => review::encode_conditional_response(decision, details.as_ref()),
        None => review::encode_response_with_details(
            input.review.version(),
            &answer.status(),
            details.as_ref(),
        ),
    };
    let mut r = Response::new(Full::new(Bytes::from(bytes)));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    Ok(r)
}

/// An `AuthorizationConditionsReview` (KEP-5681): the conditions warrant authored, evaluated
/// against the admission request the API server sends (the objects may be as large as an
/// AdmissionReview's, hence its body limit).
async fn conditions_review(
    state: &AppState,
    body: &[u8],
) -> Result<Response<Full<Bytes>>, Rejection> {
    let review = review::decode_conditions_review(body)?;
    let active = state.live.load().ok_or(Rejection::NotReady)?;
    let started = Instant::now();
    let decision = active
        .chain
        .evaluate_conditions(&review, Deadline::after(state.review_timeout))
        .await;
    let elapsed = started.elapsed();
    state
        .metrics
        .record_conditions_evaluation(decision.decision_type, elapsed);
    if state.audit.is_enabled()
        && let Some(input) = conditions_input(state, &review)
    {
        let hash = Some(active.source.hash.as_str());
        state.audit.write(&AuditRecord::conditions_review(
            &input,
            &review.decision,
            &decision,
            elapsed,
            hash,
        ));
    }
    let bytes = review::encode_conditions_response(&review.uid, &decision);
    let mut r = Response::new(Full::new(Bytes::from(bytes)));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    Ok(r)
}

/// The admission request of a conditions review mapped onto a review, for its audit record
/// (the user and the attributes); `None` when it is not an admission request warrant can read.
fn conditions_input(state: &AppState, review: &review::ConditionsReview) -> Option<Input> {
    let wrapped = serde_json::json!({
        "apiVersion": admission::API_VERSION,
        "kind": "AdmissionReview",
        "request": review.admission_request,
    });
    let body = serde_json::to_vec(&wrapped).ok()?;
    let request = admission::decode_shared(body.into()).ok()?;
    let mapped = admission::map(request, state.cluster.clone());
    Some(Input::new(mapped.review, state.clock.now()))
}

/// `POST /admit`: one AdmissionReview through the validation ring ([`super::admit`] says how
/// the answer is made).
async fn admit(
    state: &AppState,
    body: Incoming,
    budget: Duration,
) -> Result<Response<Full<Bytes>>, Rejection> {
    let growth = Growth::at_most(MAX_ADMISSION_BODY_BYTES);
    let (body, mut hold) = read_body(state, body, growth).await?;
    decoded::charge(&mut hold, &state.body_budget, &body)?;
    let request = admission::decode_shared(body)?;
    let response = admission_path(state, request, budget)?.await;
    let answered = admission_json(&response);
    drop(hold);
    Ok(answered)
}

/// One admission path's future, boxed at its own size.
type AdmissionFuture<'a> = Pin<Box<dyn Future<Output = admission::AdmissionResponse> + Send + 'a>>;

/// The path of an admission request, chosen before its future is made: pod security for a pod
/// (when enabled), a ticket's own admission, else the validation ring. Each path's future is
/// boxed at its own size (kilobytes for pod security's and a ticket's, which the common path's
/// would otherwise carry too, and hyper moves each request's future twice).
fn admission_path(
    state: &AppState,
    request: admission::AdmissionRequest,
    budget: Duration,
) -> Result<AdmissionFuture<'_>, Rejection> {
    if let Some(pod_security) = &state.pod_security
        && crate::pod_admission::is_pod(&request)
    {
        let deadline = tokio::time::Instant::now() + budget;
        return Ok(Box::pin(async move {
            pod_security
                .review(Stage::Validate, &request, deadline)
                .await
        }));
    }
    let active = state.live.load().ok_or(Rejection::NotReady)?;
    let started = Instant::now();
    if crate::tickets::is_ticket_request(&request) {
        return Ok(Box::pin(async move {
            admit_ticket(state, &active, request, budget, started).await
        }));
    }
    Ok(Box::pin(judged(state, active, request, (started, budget))))
}

/// The validation ring's answer to an admission request: mapped and judged by the chain's
/// guards (when it is theirs to judge), its follow-ups performed, counted and audited. The
/// review is boxed before the future is made: it is held across the chain's await beside the
/// chain's future, and together they would pass the allocator's per-thread cache (see `serve`).
fn judged(
    state: &AppState,
    active: Arc<Active>,
    request: admission::AdmissionRequest,
    (started, budget): (Instant, Duration),
) -> impl Future<Output = admission::AdmissionResponse> + Send + '_ {
    let Mapped {
        uid,
        operation,
        dry_run,
        review,
        context,
    } = admission::map(request, state.cluster.clone());
    let mut input = Input::new(review, state.clock.now());
    if let Some(ctx) = context {
        input = input.with_object(Arc::new(ctx));
    }
    let input = Box::new(input);
    async move {
        let admission = match input.object.is_some() {
            true => {
                defense::admission::decide(&active.chain, &input, Deadline::after(budget)).await
            }
            false => Admission::answered(admit::unjudged(operation)),
        };
        let answer = state.follow_ups.perform(admission, started + budget).await;
        let elapsed = started.elapsed();
        admit::log_failures(&uid, &answer);
        let response = admit::respond(uid, &answer);
        let resource = resource_label(&input);
        let outcome = AdmissionOutcome {
            input: &input,
            answer: &answer,
            response: &response,
            operation,
            dry_run,
            elapsed,
        };
        record_admission_outcome(state, &active, &resource, outcome);
        response
    }
}

/// The resource of a mapped review as admission metrics name it (`deployments.apps`, `pods`).
fn resource_label(input: &Input) -> String {
    input
        .review
        .spec()
        .resource_attributes
        .as_ref()
        .map(|ra| match ra.group.as_deref().unwrap_or("") {
            "" => ra.resource.clone().unwrap_or_default(),
            group => format!("{}.{group}", ra.resource.as_deref().unwrap_or("")),
        })
        .unwrap_or_default()
}

/// One answered admission request of the validation ring, as it is counted and audited.
struct AdmissionOutcome<'a> {
    input: &'a Input,
    answer: &'a crate::authorizer::Answer,
    response: &'a admission::AdmissionResponse,
    operation: admission::AdmissionOperation,
    dry_run: bool,
    elapsed: Duration,
}

/// Counts an admission answer in the metrics and writes its audit record (when auditing is on),
/// stamped with the revision of the chain that decided it.
fn record_admission_outcome(
    state: &AppState,
    active: &Active,
    resource: &str,
    outcome: AdmissionOutcome<'_>,
) {
    let AdmissionOutcome {
        input,
        answer,
        response,
        operation,
        dry_run,
        elapsed,
    } = outcome;
    state
        .metrics
        .record_admission(operation.as_str(), resource, response.allowed, elapsed);
    if state.audit.is_enabled() {
        let audit = AdmissionAudit {
            uid: &response.uid,
            operation: operation.as_str(),
            dry_run,
        };
        let hash = Some(active.source.hash.as_str());
        state
            .audit
            .write(&AuditRecord::admission(input, answer, elapsed, hash, audit));
    }
}

/// A `DeletionTicket` write through `/admit` ([`super::tickets`]): judged, answered, counted
/// and audited like any admission request.
async fn admit_ticket(
    state: &AppState,
    active: &Active,
    request: admission::AdmissionRequest,
    budget: Duration,
    started: Instant,
) -> admission::AdmissionResponse {
    let own = active.chain.own_identities();
    let now = state.clock.now();
    let judgement = crate::tickets::TicketJudge {
        access: state.access_review.as_ref(),
        own: &own,
        now,
        budget: budget.saturating_sub(started.elapsed()),
        wildcards: active.chain.ticket_wildcards(),
    }
    .judge(&request)
    .await;
    let elapsed = started.elapsed();
    let (operation, dry_run) = (request.operation, request.dry_run);
    let place = format!("{}/{}", request.namespace, request.name);
    let uid = request.uid.clone();
    let answer = super::tickets::answer(&judgement, &place);
    let response = super::tickets::respond(uid, &judgement, &answer);
    let resource = format!("{}.{}", crate::tickets::PLURAL, crate::tickets::GROUP);
    let input = Input::new(admission::map(request, state.cluster.clone()).review, now);
    let outcome = AdmissionOutcome {
        input: &input,
        answer: &answer,
        response: &response,
        operation,
        dry_run,
        elapsed,
    };
    record_admission_outcome(state, active, &resource, outcome);
    response
}

/// `POST /mutate`: a pod `AdmissionReview` through pod security's mutating side; anything else
/// (or pod security off) is admitted unchanged.
async fn pods(
    state: &AppState,
    req: Request<Incoming>,
    stage: Stage,
) -> Result<Response<Full<Bytes>>, Rejection> {
    check_content_type(&req)?;
    let budget = admit::budget(req.uri().query(), state.review_timeout);
    let growth = Growth::at_most(MAX_ADMISSION_BODY_BYTES);
    let body = body_within(req, &growth)?;
    let (body, mut hold) = read_body(state, body, growth).await?;
    decoded::charge(&mut hold, &state.body_budget, &body)?;
    let request = admission::decode_shared(body)?;
    let started = Instant::now();
    let response = match &state.pod_security {
        Some(pod_security) => {
            let deadline = tokio::time::Instant::now() + budget;
            pod_security.review(stage, &request, deadline).await
        }
        None => crate::admission::AdmissionResponse::allow(request.uid.clone()),
    };
    state.metrics.record_admission(
        request.operation.as_str(),
        &request.resource.resource,
        response.allowed,
        started.elapsed(),
    );
    Ok(admission_json(&response))
}

/// An `AdmissionReview` response as the HTTP response.
fn admission_json(response: &crate::admission::AdmissionResponse) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(response.encode())));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authorizer::Chain;

    /// The size of the future `_make` returns, without making one (for a function of any
    /// arguments: the size depends on the function alone).
    fn future_size<A, R: Future>(_make: impl Fn(A) -> R) -> usize {
        std::mem::size_of::<R>()
    }

    const THREAD_CACHE_LARGEST: usize = 1_032;

    /// Every request's future is boxed and moved (see [`serve`]), and the futures boxed inside
    /// them apart: each stays within what glibc's per-thread cache serves (1,032 bytes; a
    /// larger block takes the slow path, on every request).
    #[test]
    fn the_request_futures_stay_within_the_allocators_thread_cache() {
        let sizes = [
            (
                "authorization",
                future_size(|(s, b): (Arc<AppState>, Incoming)| authorization(s, b)),
            ),
            (
                "the chain's",
                future_size(|(c, i, d): (&'static Chain, &'static Input, Deadline)| {
                    c.authorize(i, d)
                }),
            ),
            (
                "admission",
                future_size(|(s, b, t): (Arc<AppState>, Incoming, Duration)| admission(s, b, t)),
            ),
            (
                "the validation ring's",
                future_size(
                    |(s, a, r, t): (&'static AppState, _, admission::AdmissionRequest, _)| {
                        judged(s, a, r, t)
                    },
                ),
            ),
        ];
        for (name, size) in sizes {
            assert!(
                size <= THREAD_CACHE_LARGEST,
                "the {name} future is {size} bytes"
            );
        }
    }
}
