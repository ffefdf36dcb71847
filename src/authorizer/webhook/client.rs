//! One attempt against a downstream: POST the review to the server URL exactly, with
//! kube-apiserver's headers, and turn the answer into a status or a [`CallError`] the way
//! client-go's REST client does (`rest/request.go` `transformResponse`, `rest/with_retry.go`).
//!
//! client-go's inner layer is kept: a 429 or 5xx answer with an integer `Retry-After` is re-sent
//! up to 10 more times inside the same attempt, sleeping `Retry-After` seconds, all within the
//! attempt's deadline; if the deadline comes first the attempt is a timeout.

use super::error::{CallError, DecodeError, StatusReason, TransportError};
use super::kubeconfig::{Connection, Credentials};
use super::media_type;
use crate::review::refuse_array;
use crate::review::{ApiVersion, ConditionsAwareDecision};
use bytes::Bytes;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue, RETRY_AFTER};
use serde::Deserialize;
use std::error::Error as StdError;
use std::sync::Arc;
use thiserror::Error;
use tokio::time::Instant;

/// client-go re-sends a throttled request at most this many times within one attempt.
pub(crate) const MAX_INNER_RETRIES: u32 = 10;
/// Answers larger than this are refused (a downstream status is a few hundred bytes).
pub(crate) const MAX_RESPONSE_BYTES: usize = 1 << 20;
/// client-go keeps text bodies up to this size as the error message.
const MAX_UNSTRUCTURED_TEXT: usize = 2048;

/// The status fields of a downstream answer (the same in v1 and v1beta1, but for the v1-only
/// `conditionalDecision`); `evaluationError` is kept only to be checked empty beside a
/// conditional decision, as upstream's validation does.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DownstreamStatus {
    /// `status.allowed`.
    pub allowed: bool,
    /// `status.denied`.
    pub denied: bool,
    /// `status.reason`.
    pub reason: String,
    /// `status.evaluationError`.
    pub evaluation_error: String,
    /// `status.conditionalDecision` (KEP-5681), as sent; boxed, as most answers have none and
    /// the decision is large (a cached verdict holds this struct).
    pub conditional_decision: Option<Box<ConditionsAwareDecision>>,
    /// The size of the answer's body, what a cache entry of it weighs.
    pub body_bytes: usize,
}

/// How an attempt's deadline was chosen: its own timeout, or the review's deadline.
#[derive(Debug, Clone, Copy)]
pub struct AttemptDeadline {
    /// When the attempt must be done.
    pub at: Instant,
    /// Whether `at` is the review deadline (then running out is `Canceled`, not `Timeout`).
    pub(crate) is_review_deadline: bool,
    /// The configured per-attempt timeout, for messages.
    pub(crate) timeout_ms: u64,
}

impl AttemptDeadline {
    fn expired(&self) -> CallError {
        if self.is_review_deadline {
            CallError::Canceled
        } else {
            CallError::Timeout {
                timeout_ms: self.timeout_ms,
            }
        }
    }
}

/// Why the HTTP client of a downstream could not be built from its connection. (TLS and the
/// client identity are assembled, and refused, with the kubeconfig.)
#[derive(Debug, Clone, Error)]
pub enum ClientError {
    /// `proxy-url` is not a proxy reqwest can use.
    #[error("proxy-url {proxy:?}: {source}")]
    Proxy {
        /// The proxy URL as written.
        proxy: String,
        /// reqwest's error.
        source: Arc<reqwest::Error>,
    },
    /// reqwest could not build the client (its TLS backend refused the configuration).
    #[error("HTTP client: {source}")]
    Build {
        /// reqwest's error.
        source: Arc<reqwest::Error>,
    },
}

/// Two errors are equal when they are the same variant and render the same text (reqwest's
/// errors have no equality of their own).
impl PartialEq for ClientError {
    fn eq(&self, other: &Self) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
            && self.to_string() == other.to_string()
    }
}

impl Eq for ClientError {}

/// A configured HTTP client for one downstream.
#[derive(Debug)]
pub struct Client {
    http: reqwest::Client,
    url: reqwest::Url,
    credentials: Credentials,
    version: ApiVersion,
}

/// The `User-Agent` sent downstream, shaped like kube-apiserver's.
fn user_agent() -> String {
    format!(
        "warrant/{} ({}/{})",
        env!("CARGO_PKG_VERSION"),
        std::env::consts::OS,
        std::env::consts::ARCH
    )
}

impl Client {
    /// A pooled, keep-alive client for `connection` (HTTP/2 when the server offers it).
    pub fn new(connection: Connection, version: ApiVersion) -> Result<Self, ClientError> {
        let http = http_client(connection.tls, connection.proxy.as_deref())?;
        Ok(Self {
            http,
            url: connection.url,
            credentials: connection.credentials,
            version,
        })
    }

    /// The version reviews are sent in.
    pub fn version(&self) -> ApiVersion {
        self.version
    }

    /// One attempt, with client-go's inner Retry-After layer.
    pub async fn attempt(
        &self,
        body: &Bytes,
        deadline: AttemptDeadline,
    ) -> Result<DownstreamStatus, CallError> {
        let (code, headers, bytes, retry_after) = self.exchange(body, deadline).await?;
        decode(self.version, code, &headers, &bytes, retry_after)
    }

    /// One attempt of an `AuthorizationConditionsReview` (KEP-5681) to the same server URL,
    /// as kube-apiserver sends it when the webhook's `conditionsReview` names no other
    /// kubeconfig context: its `response`, decoded.
    pub(crate) async fn attempt_conditions(
        &self,
        body: &Bytes,
        deadline: AttemptDeadline,
    ) -> Result<ConditionsAnswer, CallError> {
        let (code, headers, bytes, retry_after) = self.exchange(body, deadline).await?;
        decode_conditions(code, &headers, &bytes, retry_after)
    }

    /// Sends `body` until an answer that is not a throttle with `Retry-After` comes back.
    async fn exchange(
        &self,
        body: &Bytes,
        deadline: AttemptDeadline,
    ) -> Result<(u16, HeaderMap, Bytes, Option<u64>), CallError> {
        let mut resends = 0;
        loop {
            let (code, headers, bytes) =
                match tokio::time::timeout_at(deadline.at, self.send(body.clone())).await {
                    Err(_) => return Err(deadline.expired()),
                    Ok(r) => r?,
                };
            let retry_after = retry_after_seconds(&headers);
            if (code == 429 || code >= 500)
                && let Some(secs) = retry_after
                && resends < MAX_INNER_RETRIES
            {
                resends += 1;
                let wake = Instant::now() + std::time::Duration::from_secs(secs);
                if wake >= deadline.at {
                    tokio::time::sleep_until(deadline.at).await;
                    return Err(deadline.expired());
                }
                tokio::time::sleep_until(wake).await;
                continue;
            }
            return Ok((code, headers, bytes, retry_after));
        }
    }

    async fn send(&self, body: Bytes) -> Result<(u16, HeaderMap, Bytes), CallError> {
        post(
            &self.http,
            &self.url,
            &self.credentials,
            body,
            MAX_RESPONSE_BYTES,
        )
        .await
    }
}

/// A pooled, keep-alive reqwest client over `tls` (its ALPN offers HTTP/2 and HTTP/1.1), sending
/// JSON, following no redirect, through `proxy` when one is set: what every downstream call of
/// warrant (a SubjectAccessReview webhook, a ticket webhook) is made with.
pub(crate) fn http_client(
    tls: rustls::ClientConfig,
    proxy: Option<&str>,
) -> Result<reqwest::Client, ClientError> {
    let mut headers = HeaderMap::new();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(ACCEPT, HeaderValue::from_static("application/json, */*"));
    let mut b = reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .user_agent(user_agent())
        .default_headers(headers)
        .redirect(reqwest::redirect::Policy::none());
    b = match proxy {
        Some(p) => b.proxy(reqwest::Proxy::all(p).map_err(|e| ClientError::Proxy {
            proxy: p.to_owned(),
            source: Arc::new(e),
        })?),
        None => b.no_proxy(),
    };
    b.build().map_err(|e| ClientError::Build {
        source: Arc::new(e),
    })
}

/// POSTs `body` to `url` exactly, with `credentials`: the answer's code, headers and body, or
/// the failure sorted as upstream sorts it; an answer larger than `limit` bytes is refused.
pub(crate) async fn post(
    http: &reqwest::Client,
    url: &reqwest::Url,
    credentials: &Credentials,
    body: Bytes,
    limit: usize,
) -> Result<(u16, HeaderMap, Bytes), CallError> {
    let mut req = http.post(url.clone()).body(body);
    match credentials {
        Credentials::None => {}
        Credentials::Bearer(t) => {
            req = req.header(AUTHORIZATION, format!("Bearer {}", t.token()));
        }
        Credentials::Basic(v) => req = req.header(AUTHORIZATION, v.0.as_str()),
    }
    let resp = req.send().await.map_err(classify)?;
    let code = resp.status().as_u16();
    let headers = resp.headers().clone();
    if resp.content_length().is_some_and(|n| n > limit as u64) {
        return Err(CallError::Decode(DecodeError::TooLarge { limit }));
    }
    let bytes = resp.bytes().await.map_err(classify)?;
    if bytes.len() > limit {
        return Err(CallError::Decode(DecodeError::TooLarge { limit }));
    }
    Ok((code, headers, bytes))
}

/// client-go's `retryAfterSeconds`: an integer header only.
fn retry_after_seconds(headers: &HeaderMap) -> Option<u64> {
    let v = headers.get(RETRY_AFTER)?.to_str().ok()?;
    let n: i64 = v.trim().parse().ok()?;
    Some(n.max(0) as u64)
}

/// Sorts a reqwest failure into upstream's classes by walking its causes.
fn classify(e: reqwest::Error) -> CallError {
    enum Class {
        Tls,
        Reset,
        Connect,
        Transport,
    }
    let mut class = None;
    let mut cur: Option<&(dyn StdError + 'static)> = Some(&e);
    while let Some(err) = cur {
        if err.downcast_ref::<rustls::Error>().is_some() {
            class = Some(Class::Tls);
            break;
        }
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            match io.kind() {
                std::io::ErrorKind::ConnectionReset => {
                    class = Some(Class::Reset);
                    break;
                }
                std::io::ErrorKind::ConnectionRefused => {
                    class = Some(Class::Connect);
                    break;
                }
                _ => {}
            }
            // An io::Error's `source()` skips the error it wraps; look at that error itself.
            if let Some(inner) = io.get_ref() {
                cur = Some(inner as &(dyn StdError + 'static));
                continue;
            }
        }
        cur = err.source();
    }
    let class = class.unwrap_or(if e.is_connect() {
        Class::Connect
    } else {
        Class::Transport
    });
    let error = TransportError::new(e);
    match class {
        Class::Tls => CallError::Tls(error),
        Class::Reset => CallError::Reset(error),
        Class::Connect => CallError::Connect(error),
        Class::Transport => CallError::Transport(error),
    }
}

#[derive(Deserialize)]
struct ReviewAnswer<'a> {
    #[serde(rename = "apiVersion", default)]
    api_version: Option<String>,
    #[serde(borrow, default)]
    status: Option<&'a serde_json::value::RawValue>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct StatusFields {
    #[serde(default)]
    allowed: bool,
    #[serde(default)]
    denied: bool,
    #[serde(default)]
    reason: String,
    #[serde(default)]
    evaluation_error: String,
    #[serde(default)]
    conditional_decision: Option<ConditionsAwareDecision>,
}

/// The `response` of an `AuthorizationConditionsReview` answer.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct ConditionsAnswer {
    /// `response.uid`, which must echo `request.admissionRequest.uid`.
    #[serde(default)]
    pub uid: String,
    /// `response.decision`, which must be unconditional.
    pub decision: ConditionsAwareDecision,
}

#[derive(Deserialize)]
struct ConditionsEnvelope {
    #[serde(rename = "apiVersion", default)]
    api_version: Option<String>,
    #[serde(default)]
    response: Option<ConditionsAnswer>,
}

/// A `metav1.Status` error body.
#[derive(Deserialize)]
struct ApiStatus<'a> {
    #[serde(default)]
    kind: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    message: String,
    #[serde(default)]
    reason: String,
    #[serde(borrow, default)]
    details: Option<&'a serde_json::value::RawValue>,
}

#[derive(Deserialize)]
struct ApiStatusDetails {
    #[serde(rename = "retryAfterSeconds", default)]
    retry_after_seconds: i64,
}

/// The answer's media type as client-go settles it (see [`super::media_type`]): the webhook
/// client's `application/json` when there is no `Content-Type` or an empty one; Go's
/// `mime.ParseMediaType` of it otherwise, whose failure fails the attempt whatever the code.
fn media_type(code: u16, headers: &HeaderMap) -> Result<String, CallError> {
    let raw = headers
        .get(CONTENT_TYPE)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .unwrap_or_default();
    if raw.is_empty() {
        return Ok("application/json".to_owned());
    }
    media_type::parse(&raw).map_err(|error| CallError::MediaType {
        code,
        content_type: raw,
        error,
    })
}

/// What every answer goes through before its JSON is read: a Content-Type that parses, a 2xx
/// code (else the error the status says), a body that is not empty.
fn successful_body(
    code: u16,
    headers: &HeaderMap,
    body: &[u8],
    retry_after: Option<u64>,
) -> Result<(), CallError> {
    let media = media_type(code, headers)?;
    // kube-apiserver's webhook client registers one serializer with no media type, which
    // matches any (`pkg/util/webhook/webhook.go`, apimachinery `SerializerInfoForMediaType`):
    // every body is decoded as JSON whatever its Content-Type, Status bodies of errors too.
    if !(200..=206).contains(&code) {
        // client-go's `isTextResponse`: text without a Content-Type, or with a text/ type.
        let is_text =
            headers.get(CONTENT_TYPE).is_none_or(|v| v.is_empty()) || media.starts_with("text/");
        return Err(status_error(code, is_text, true, body, retry_after));
    }
    if body.is_empty() {
        return Err(CallError::Decode(DecodeError::Empty {
            code,
            content_type: media,
        }));
    }
    Ok(())
}

fn decode(
    version: ApiVersion,
    code: u16,
    headers: &HeaderMap,
    body: &[u8],
    retry_after: Option<u64>,
) -> Result<DownstreamStatus, CallError> {
    successful_body(code, headers, body, retry_after)?;
    let json = |e| CallError::Decode(DecodeError::Json(Arc::new(e)));
    refuse_array(body, "a SubjectAccessReview object").map_err(json)?;
    let answer: ReviewAnswer<'_> = serde_json::from_slice(body).map_err(json)?;
    if let Some(v) = answer.api_version.as_deref()
        && v != version.as_str()
    {
        return Err(CallError::Decode(DecodeError::ApiVersion {
            got: v.to_owned(),
            want: version.as_str(),
        }));
    }
    let s = match answer.status {
        Some(raw) => {
            refuse_array(raw.get().as_bytes(), "a SubjectAccessReviewStatus object")
                .map_err(json)?;
            serde_json::from_str(raw.get()).map_err(json)?
        }
        None => StatusFields::default(),
    };
    Ok(DownstreamStatus {
        allowed: s.allowed,
        denied: s.denied,
        reason: s.reason,
        evaluation_error: s.evaluation_error,
        // v1beta1 has no such field (upstream's conversion leaves it nil).
        conditional_decision: s
            .conditional_decision
            .filter(|_| version == ApiVersion::V1)
            .map(Box::new),
        body_bytes: body.len(),
    })
}

/// An `AuthorizationConditionsReview` answer to its `response` (a missing one is a decode
/// error: upstream fails closed on it).
fn decode_conditions(
    code: u16,
    headers: &HeaderMap,
    body: &[u8],
    retry_after: Option<u64>,
) -> Result<ConditionsAnswer, CallError> {
    // The same client and the same media-type rules as for a SubjectAccessReview (`decode`).
    successful_body(code, headers, body, retry_after)?;
    let json = |e| CallError::Decode(DecodeError::Json(Arc::new(e)));
    refuse_array(body, "an AuthorizationConditionsReview object").map_err(json)?;
    let answer: ConditionsEnvelope = serde_json::from_slice(body).map_err(json)?;
    let want = crate::review::CONDITIONS_REVIEW_API_VERSION;
    if let Some(v) = answer.api_version.as_deref()
        && v != want
    {
        return Err(CallError::Decode(DecodeError::ApiVersion {
            got: v.to_owned(),
            want,
        }));
    }
    answer
        .response
        .ok_or(CallError::Decode(DecodeError::MissingResponse))
}

/// A non-2xx answer as an API error: a `Status` body's own reason and message, else
/// apimachinery's `NewGenericServerResponse` text for the code.
fn status_error(
    code: u16,
    is_text: bool,
    is_json: bool,
    body: &[u8],
    retry_after: Option<u64>,
) -> CallError {
    if is_json
        && refuse_array(body, "a Status object").is_ok()
        && let Ok(s) = serde_json::from_slice::<ApiStatus<'_>>(body)
        && s.kind == "Status"
        && s.status == "Failure"
    {
        let from_details = s
            .details
            .filter(|raw| refuse_array(raw.get().as_bytes(), "StatusDetails").is_ok())
            .and_then(|raw| serde_json::from_str::<ApiStatusDetails>(raw.get()).ok())
            .map(|d| d.retry_after_seconds)
            .filter(|n| *n > 0)
            .map(|n| n as u64);
        return CallError::Status {
            code,
            reason: StatusReason::from_status_reason(&s.reason, code),
            message: s.message,
            retry_after: from_details.or(retry_after),
        };
    }
    let server_message = if is_text && body.len() <= MAX_UNSTRUCTURED_TEXT {
        String::from_utf8_lossy(body).trim().to_owned()
    } else {
        String::new()
    };
    let message = match code {
        400 => "the server rejected our request for an unknown reason".to_owned(),
        401 => "Unauthorized".to_owned(),
        403 => "forbidden".to_owned(),
        404 => "the server could not find the requested resource".to_owned(),
        405 => "the server does not allow this method on the requested resource".to_owned(),
        409 => "the server reported a conflict".to_owned(),
        415 => "the server responded with the status code 415 but did not return more information".to_owned(),
        422 => "the server rejected our request due to an error in our request".to_owned(),
        429 => "the server has received too many requests and has asked us to try again later"
            .to_owned(),
        503 => "the server is currently unable to handle the request".to_owned(),
        504 => "the server was unable to return a response in the time allotted, but may still be processing the request".to_owned(),
        c if c >= 500 => format!(
            "an error on the server ({server_message:?}) has prevented the request from succeeding"
        ),
        c => format!("the server responded with the status code {c} but did not return more information"),
    };
    let message = if !server_message.is_empty() && (code < 500 || [503, 504].contains(&code)) {
        format!("{message}: {server_message}")
    } else {
        message
    };
    CallError::Status {
        code,
        reason: StatusReason::from_code(code),
        message,
        retry_after,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(ct: Option<&str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        if let Some(ct) = ct {
            h.insert(CONTENT_TYPE, HeaderValue::from_str(ct).unwrap());
        }
        h
    }

    #[test]
    fn decodes_like_client_go() {
        let ok = br#"{"apiVersion":"authorization.k8s.io/v1","status":{"allowed":true,"reason":"r","evaluationError":"ignored"}}"#;
        let s = decode(ApiVersion::V1, 200, &headers(None), ok, None).unwrap();
        assert_eq!((s.allowed, s.denied, s.reason.as_str()), (true, false, "r"));
        // Any media type is decoded as JSON, as kube-apiserver's webhook client does.
        let s = decode(ApiVersion::V1, 200, &headers(Some("text/html")), ok, None).unwrap();
        assert!(s.allowed);
        let e = decode(
            ApiVersion::V1,
            200,
            &headers(Some("application/json")),
            b"",
            None,
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("0-length response with status code: 200")
        );
        assert!(matches!(
            decode(ApiVersion::V1beta1, 200, &headers(None), ok, None),
            Err(CallError::Decode(_))
        ));
        assert!(matches!(
            decode(ApiVersion::V1, 200, &headers(None), b"{not json", None),
            Err(CallError::Decode(_))
        ));
    }

    #[test]
    fn decode_failures_keep_their_cause() {
        use std::error::Error as _;
        let e = decode(ApiVersion::V1, 200, &headers(None), b"{not json", None).unwrap_err();
        assert!(
            matches!(&e, CallError::Decode(DecodeError::Json(_))),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            "cannot decode the downstream's answer: key must be a string at line 1 column 2"
        );
        let json = e.source().and_then(|s| s.source());
        assert!(
            json.and_then(|s| s.downcast_ref::<Arc<serde_json::Error>>())
                .is_some(),
            "{e:?}"
        );
        let ok = br#"{"apiVersion":"authorization.k8s.io/v1","status":{"allowed":true}}"#;
        let e = decode(ApiVersion::V1beta1, 200, &headers(None), ok, None).unwrap_err();
        assert_eq!(
            e,
            CallError::Decode(DecodeError::ApiVersion {
                got: "authorization.k8s.io/v1".into(),
                want: "authorization.k8s.io/v1beta1",
            })
        );
        assert_eq!(
            e.to_string(),
            "cannot decode the downstream's answer: answer apiVersion \"authorization.k8s.io/v1\" does not match the request's \"authorization.k8s.io/v1beta1\""
        );
    }

    /// An unparseable Content-Type fails the attempt whatever the code, as
    /// client-go's `mime.ParseMediaType` check does; none or an empty one means JSON.
    #[test]
    fn unparseable_content_type_is_a_retried_failure() {
        let ok = br#"{"apiVersion":"authorization.k8s.io/v1","status":{"allowed":true}}"#;
        for code in [200, 404, 500] {
            let e = decode(
                ApiVersion::V1,
                code,
                &headers(Some("application/")),
                ok,
                None,
            )
            .unwrap_err();
            assert!(
                matches!(e, CallError::MediaType { code: c, .. } if c == code),
                "{e:?}"
            );
            assert!(e.is_retried());
        }
        let e = decode(ApiVersion::V1, 200, &headers(Some("a/b; c")), ok, None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Internal error occurred: mime: invalid media parameter (Content-Type \"a/b; c\", HTTP 200)"
        );
        for ct in [
            None,
            Some(""),
            Some("json"),
            Some("text/html; charset=utf-8"),
        ] {
            let s = decode(ApiVersion::V1, 200, &headers(ct), ok, None).unwrap();
            assert!(s.allowed, "{ct:?}");
        }
    }

    /// An answer (or its status) in serde's sequence form is refused, as
    /// Go's decoder refuses it, instead of being read field by field.
    #[test]
    fn array_answers_are_decode_failures() {
        let as_array = br#"["authorization.k8s.io/v1",{"allowed":true}]"#;
        let e = decode(ApiVersion::V1, 200, &headers(None), as_array, None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "cannot decode the downstream's answer: invalid type: sequence, expected a SubjectAccessReview object"
        );
        let status_array = br#"{"apiVersion":"authorization.k8s.io/v1","status":[true,false,"r"]}"#;
        let e = decode(ApiVersion::V1, 200, &headers(None), status_array, None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "cannot decode the downstream's answer: invalid type: sequence, expected a SubjectAccessReviewStatus object"
        );
        // A Status error body as an array is not a Status: the generic text for the code (which
        // quotes the body, as client-go's does), not the array's "message".
        let e = decode(
            ApiVersion::V1,
            500,
            &headers(None),
            br#"["Status","Failure","nope"]"#,
            None,
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("an error on the server ("), "{e}");
    }

    #[test]
    fn non_2xx_become_api_errors() {
        let e = decode(
            ApiVersion::V1,
            500,
            &headers(Some("text/plain")),
            b"boom",
            None,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "an error on the server (\"boom\") has prevented the request from succeeding (HTTP 500)"
        );
        assert!(e.is_retried());
        let status = br#"{"kind":"Status","status":"Failure","reason":"ServerTimeout","message":"slow","code":500}"#;
        let e = decode(
            ApiVersion::V1,
            500,
            &headers(Some("application/json")),
            status,
            None,
        )
        .unwrap_err();
        assert!(
            matches!(&e, CallError::Status { reason: StatusReason::ServerTimeout, message, .. } if message == "slow")
        );
        let e = decode(ApiVersion::V1, 503, &headers(None), b"", Some(2)).unwrap_err();
        assert!(e.is_retried());
        let e = decode(ApiVersion::V1, 503, &headers(None), b"", None).unwrap_err();
        assert!(!e.is_retried());
    }
}
