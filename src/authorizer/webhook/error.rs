//! Why a downstream webhook gave no answer: one attempt's [`CallError`], and the
//! [`WebhookError`] a review ends with after retries. Both render as one line, usable in
//! `evaluationError` and in a Deny reason.

use super::media_type::MediaTypeError;
use std::error::Error as StdError;
use std::fmt;
use std::sync::Arc;
use thiserror::Error;

/// A failure below HTTP (connect, TLS, reset, other I/O), as reqwest reported it. Renders as the
/// error and its causes on one line without repeats; keeps reqwest's error as its source.
#[derive(Debug, Clone)]
pub struct TransportError {
    text: Arc<str>,
    source: Option<Arc<reqwest::Error>>,
}

impl TransportError {
    /// Wraps reqwest's error.
    pub fn new(error: reqwest::Error) -> Self {
        Self {
            text: chain_text(&error).into(),
            source: Some(Arc::new(error)),
        }
    }

    /// The one-line text.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

/// The error and its causes on one line, without repeats.
fn chain_text(e: &(dyn StdError + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut cur = Some(e);
    while let Some(err) = cur {
        let s = err.to_string();
        if !parts.iter().any(|p| p.contains(&s)) {
            parts.push(s);
        }
        cur = err.source();
    }
    parts.join(": ")
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl StdError for TransportError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn StdError + 'static))
    }
}

/// Equal when the texts are: reqwest's errors have no equality of their own, and the text
/// holds every cause.
impl PartialEq for TransportError {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for TransportError {}

/// Unit tests build transport failures from their text alone (reqwest's errors cannot be made
/// without a request).
#[cfg(test)]
impl From<&str> for TransportError {
    fn from(text: &str) -> Self {
        Self {
            text: text.into(),
            source: None,
        }
    }
}

/// Why a 2xx answer is not a usable review.
#[derive(Debug, Clone, Error)]
pub enum DecodeError {
    /// The answer is larger than the client accepts.
    #[error("answer larger than {limit} bytes")]
    TooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
    /// The body is empty (client-go's wording).
    #[error("0-length response with status code: {code} and content type: {content_type}")]
    Empty {
        /// The HTTP status code.
        code: u16,
        /// The media type, `application/json` when none was sent.
        content_type: String,
    },
    /// The body is not a review in JSON.
    #[error("{0}")]
    Json(#[source] Arc<serde_json::Error>),
    /// An `AuthorizationConditionsReview` answer without `response`.
    #[error("response: Required value: must be set in AuthorizationConditionsReview responses")]
    MissingResponse,
    /// The answer is in another apiVersion than the request.
    #[error("answer apiVersion {got:?} does not match the request's {want:?}")]
    ApiVersion {
        /// The answer's apiVersion.
        got: String,
        /// The request's.
        want: &'static str,
    },
}

/// Equal when the variants and texts are (`serde_json::Error` has no equality of its own).
impl PartialEq for DecodeError {
    fn eq(&self, other: &Self) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
            && self.to_string() == other.to_string()
    }
}

impl Eq for DecodeError {}

/// The `reason` of an API error, from a `Status` body or synthesised from the HTTP code as
/// apimachinery's `NewGenericServerResponse` does. It drives retry classification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusReason {
    /// `InternalError`: 500, 502 and every 5xx other than 503 and 504.
    InternalError,
    /// `Timeout`: 504.
    Timeout,
    /// `ServerTimeout`, only ever from a `Status` body.
    ServerTimeout,
    /// `TooManyRequests`: 429.
    TooManyRequests,
    /// `ServiceUnavailable`: 503.
    ServiceUnavailable,
    /// Anything else (400, 401, 403, 404, ...).
    Other,
}

impl StatusReason {
    /// The reason apimachinery gives an HTTP code without a `Status` body.
    pub(crate) fn from_code(code: u16) -> Self {
        match code {
            429 => Self::TooManyRequests,
            503 => Self::ServiceUnavailable,
            504 => Self::Timeout,
            c if c >= 500 => Self::InternalError,
            _ => Self::Other,
        }
    }

    /// The reason named in a `Status` body.
    pub(crate) fn from_status_reason(reason: &str, code: u16) -> Self {
        match reason {
            "InternalError" => Self::InternalError,
            "Timeout" => Self::Timeout,
            "ServerTimeout" => Self::ServerTimeout,
            "TooManyRequests" => Self::TooManyRequests,
            "ServiceUnavailable" => Self::ServiceUnavailable,
            "" => Self::from_code(code),
            _ => Self::Other,
        }
    }
}

/// Why one attempt failed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CallError {
    /// The attempt hit its own `timeout` (connect, TLS, request and body read). Not retried.
    #[error("downstream did not answer within the webhook timeout ({timeout_ms} ms)")]
    Timeout {
        /// The per-attempt timeout, in milliseconds.
        timeout_ms: u64,
    },
    /// The review's deadline ended the attempt. Not retried.
    #[error("the review deadline ended the call")]
    Canceled,
    /// The TCP connection could not be made (refused, unreachable, DNS). Not retried.
    #[error("cannot connect to the downstream: {0}")]
    Connect(#[source] TransportError),
    /// The TLS handshake or a TLS alert failed the call. Not retried.
    #[error("TLS failure talking to the downstream: {0}")]
    Tls(#[source] TransportError),
    /// The downstream reset the connection. Retried.
    #[error("connection reset by the downstream: {0}")]
    Reset(#[source] TransportError),
    /// Any other transport failure. Not retried.
    #[error("transport failure talking to the downstream: {0}")]
    Transport(#[source] TransportError),
    /// A non-2xx answer.
    #[error("{message} (HTTP {code})")]
    Status {
        /// The HTTP status code.
        code: u16,
        /// Its reason, which drives retries.
        reason: StatusReason,
        /// The message, from a `Status` body or synthesised from the code.
        message: String,
        /// `Retry-After` in seconds (or `details.retryAfterSeconds` of a `Status` body).
        retry_after: Option<u64>,
    },
    /// The answer's `Content-Type` is not a media type, whatever the status code. client-go
    /// makes this an `InternalError` before it looks at the code (`rest/request.go`,
    /// `transformResponse`), so it is retried as one.
    #[error("Internal error occurred: {error} (Content-Type {content_type:?}, HTTP {code})")]
    MediaType {
        /// The HTTP status code.
        code: u16,
        /// The `Content-Type` as sent.
        content_type: String,
        /// Why it does not parse.
        #[source]
        error: MediaTypeError,
    },
    /// A 2xx answer that is not a usable review (empty, another media type, invalid JSON, another
    /// apiVersion). Not retried.
    #[error("cannot decode the downstream's answer: {0}")]
    Decode(#[source] DecodeError),
}

impl CallError {
    /// Whether upstream's `DefaultShouldRetry` retries this error (`pkg/util/webhook/webhook.go`):
    /// connection resets; API errors whose reason is InternalError (an unparseable
    /// `Content-Type` among them), Timeout or TooManyRequests;
    /// and any API error that suggests a client delay (ServerTimeout, or a positive Retry-After).
    pub(crate) fn is_retried(&self) -> bool {
        match self {
            CallError::Reset(_) | CallError::MediaType { .. } => true,
            CallError::Status {
                reason,
                retry_after,
                ..
            } => {
                matches!(
                    reason,
                    StatusReason::InternalError
                        | StatusReason::Timeout
                        | StatusReason::TooManyRequests
                        | StatusReason::ServerTimeout
                ) || retry_after.is_some_and(|s| s > 0)
            }
            _ => false,
        }
    }

    /// The `result` label of `warrant_webhook_evaluations_total` for this failure, as upstream
    /// classifies an attempt: `canceled`, `timeout` (client timeout or a 504 / Timeout answer), or
    /// `error`.
    pub(crate) fn metrics_result(&self) -> &'static str {
        match self {
            CallError::Canceled => "canceled",
            CallError::Timeout { .. } => "timeout",
            CallError::Status { code: 504, .. }
            | CallError::Status {
                reason: StatusReason::Timeout,
                ..
            } => "timeout",
            _ => "error",
        }
    }
}

/// Why a review got no answer from a downstream webhook.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum WebhookError {
    /// Every attempt failed, or one failed in a way that is not retried; the last error is kept.
    #[error("{last}{}", attempts_note(*.attempts))]
    Call {
        /// How many attempts were made.
        attempts: u32,
        /// The last attempt's error.
        last: CallError,
    },
    /// Retried attempts failed and the review deadline left no time for the next one. Like
    /// upstream, whose context is done by then, this is not a fail-open.
    #[error("{last} (after {attempts} attempts; the review deadline left no time for another)")]
    CutShort {
        /// How many attempts were made.
        attempts: u32,
        /// The last attempt's error.
        last: CallError,
    },
    /// The review deadline left no time for a first attempt.
    #[error("webhook call failed: the review deadline passed before the first attempt")]
    NoTime,
    /// The answer breaks the rules of a conditional answer (upstream's
    /// `ValidateSubjectAccessReviewStatus`): the failure policy applies.
    #[error("invalid SubjectAccessReview answer: {0}")]
    Invalid(String),
}

fn attempts_note(attempts: u32) -> String {
    if attempts > 1 {
        format!(" (after {attempts} attempts)")
    } else {
        String::new()
    }
}

impl WebhookError {
    /// Whether the review's deadline, not the downstream, ended the call.
    pub(crate) fn is_canceled(&self) -> bool {
        matches!(
            self,
            WebhookError::NoTime
                | WebhookError::CutShort { .. }
                | WebhookError::Call {
                    last: CallError::Canceled,
                    ..
                }
        )
    }

    /// The `result` label of the fail-open counter.
    pub(crate) fn metrics_result(&self) -> &'static str {
        match self {
            WebhookError::Call { last, .. } => last.metrics_result(),
            WebhookError::NoTime | WebhookError::CutShort { .. } => "canceled",
            WebhookError::Invalid(_) => "error",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: u16, retry_after: Option<u64>) -> CallError {
        CallError::Status {
            code,
            reason: StatusReason::from_code(code),
            message: String::new(),
            retry_after,
        }
    }

    /// The classification table of spec section 2.3.
    #[test]
    fn retry_classification_matches_upstream() {
        let rows: &[(CallError, bool)] = &[
            (status(500, None), true),
            (status(502, None), true),
            (status(507, None), true),
            (status(504, None), true),
            (status(429, None), true),
            (status(503, None), false),
            (status(503, Some(0)), false),
            (status(503, Some(5)), true),
            (status(404, Some(1)), true),
            (status(400, None), false),
            (status(401, None), false),
            (status(403, None), false),
            (status(404, None), false),
            (status(409, None), false),
            (status(422, None), false),
            (CallError::Reset("x".into()), true),
            (CallError::Connect("refused".into()), false),
            (CallError::Tls("bad cert".into()), false),
            (CallError::Timeout { timeout_ms: 1 }, false),
            (CallError::Decode(DecodeError::TooLarge { limit: 1 }), false),
            (
                CallError::MediaType {
                    code: 200,
                    content_type: "application/json; charset".into(),
                    error: MediaTypeError::InvalidParameter,
                },
                true,
            ),
        ];
        for (e, want) in rows {
            assert_eq!(e.is_retried(), *want, "{e:?}");
        }
        let server_timeout = CallError::Status {
            code: 500,
            reason: StatusReason::from_status_reason("ServerTimeout", 500),
            message: String::new(),
            retry_after: None,
        };
        assert!(server_timeout.is_retried());
    }

    #[test]
    fn metrics_results() {
        assert_eq!(status(504, None).metrics_result(), "timeout");
        assert_eq!(status(500, None).metrics_result(), "error");
        assert_eq!(CallError::Canceled.metrics_result(), "canceled");
        assert_eq!(
            CallError::Timeout { timeout_ms: 5 }.metrics_result(),
            "timeout"
        );
    }
}
