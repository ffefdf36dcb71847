//! The one place where a refused request becomes an HTTP response: a `metav1.Status`-shaped JSON
//! body whose message says what is wrong.

use crate::admission::AdmissionError;
use crate::review::ReviewError;
use bytes::Bytes;
use http_body_util::Full;
use hyper::{Response, StatusCode, header};
use serde::Serialize;
use thiserror::Error;

/// Why a request is refused.
#[derive(Debug, Error)]
pub enum Rejection {
    /// The body is not a usable review.
    #[error(transparent)]
    BadReview(#[from] ReviewError),
    /// The body is not a usable AdmissionReview.
    #[error(transparent)]
    BadAdmission(#[from] AdmissionError),
    /// The body is not a usable AuthorizationConditionsReview.
    #[error(transparent)]
    BadConditionsReview(#[from] crate::review::ConditionsReviewError),
    /// The request's content type is not JSON.
    #[error("Content-Type {0:?} is not supported: send application/json")]
    ContentType(String),
    /// The body is encoded (compressed); reviews are sent as plain JSON.
    #[error("Content-Encoding {0:?} is not supported: send the review unencoded (identity)")]
    ContentEncoding(String),
    /// The body is larger than allowed.
    #[error("request body is larger than the limit of {limit} bytes")]
    TooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// The body would decode into more memory than one request may take.
    #[error(
        "request body would take an estimated {estimate} bytes once decoded, above the limit of {limit} bytes"
    )]
    TooComplex {
        /// The estimated decoded size.
        estimate: usize,
        /// The limit in bytes.
        limit: usize,
    },
    /// The body did not arrive in time.
    #[error("request body could not be read: not received within {}s", .0.as_secs())]
    BodyTimeout(std::time::Duration),
    /// The body could not be read in full.
    #[error("request body could not be read: {0}")]
    BodyRead(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// No client certificate and no valid bearer token.
    #[error(
        "caller is not authenticated: present a client certificate signed by the configured client CA or a valid bearer token"
    )]
    Unauthenticated,
    /// No such route.
    #[error("no route for {0}")]
    NotFound(String),
    /// The route exists but not for this method.
    #[error("method {method} is not allowed on {path}")]
    MethodNotAllowed {
        /// The method used.
        method: String,
        /// The path.
        path: String,
        /// The methods the path takes, for the `Allow` header.
        allow: &'static str,
    },
    /// No valid configuration is loaded yet.
    #[error("no valid authorization configuration is loaded yet")]
    NotReady,
    /// The process holds as many request bytes as its budget allows.
    #[error(
        "too many request bytes are being received at once (budget {budget} bytes): retry shortly"
    )]
    Overloaded {
        /// The budget in bytes.
        budget: usize,
    },
}

impl Rejection {
    /// The HTTP status and the Status `reason` for this rejection.
    pub fn code(&self) -> (StatusCode, &'static str) {
        match self {
            Rejection::BadReview(_)
            | Rejection::BadAdmission(_)
            | Rejection::BadConditionsReview(_)
            | Rejection::BodyRead(_) => (StatusCode::BAD_REQUEST, "BadRequest"),
            // As kube-apiserver answers a body it has no serializer for.
            Rejection::ContentType(_) | Rejection::ContentEncoding(_) => {
                (StatusCode::UNSUPPORTED_MEDIA_TYPE, "UnsupportedMediaType")
            }
            Rejection::BodyTimeout(_) => (StatusCode::REQUEST_TIMEOUT, "Timeout"),
            Rejection::TooLarge { .. } | Rejection::TooComplex { .. } => {
                (StatusCode::PAYLOAD_TOO_LARGE, "RequestEntityTooLarge")
            }
            Rejection::Unauthenticated => (StatusCode::UNAUTHORIZED, "Unauthorized"),
            Rejection::NotFound(_) => (StatusCode::NOT_FOUND, "NotFound"),
            Rejection::MethodNotAllowed { .. } => {
                (StatusCode::METHOD_NOT_ALLOWED, "MethodNotAllowed")
            }
            Rejection::NotReady => (StatusCode::SERVICE_UNAVAILABLE, "ServiceUnavailable"),
            // client-go retries a 429 after its Retry-After, as it does for the API server's own.
            Rejection::Overloaded { .. } => (StatusCode::TOO_MANY_REQUESTS, "TooManyRequests"),
        }
    }

    /// The response for this rejection.
    pub(crate) fn into_response(self) -> Response<Full<Bytes>> {
        let (code, reason) = self.code();
        let allow = match &self {
            Rejection::MethodNotAllowed { allow, .. } => Some(*allow),
            _ => None,
        };
        let body = Status {
            kind: "Status",
            api_version: "v1",
            metadata: Empty {},
            status: "Failure",
            message: self.to_string(),
            reason,
            code: code.as_u16(),
        };
        let bytes = serde_json::to_vec(&body).unwrap_or_default();
        let mut resp = Response::new(Full::new(Bytes::from(bytes)));
        *resp.status_mut() = code;
        resp.headers_mut().insert(
            header::CONTENT_TYPE,
            header::HeaderValue::from_static("application/json"),
        );
        if let Some(allow) = allow {
            resp.headers_mut()
                .insert(header::ALLOW, header::HeaderValue::from_static(allow));
        }
        if code == StatusCode::TOO_MANY_REQUESTS {
            resp.headers_mut()
                .insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
        }
        if code == StatusCode::UNAUTHORIZED {
            resp.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Bearer realm=\"warrant\""),
            );
        }
        resp
    }
}

#[derive(Serialize)]
struct Empty {}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Status {
    kind: &'static str,
    api_version: &'static str,
    metadata: Empty,
    status: &'static str,
    message: String,
    reason: &'static str,
    code: u16,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;
    use std::time::Duration;

    #[test]
    fn body_failures_are_bad_requests_with_their_cause() {
        let timeout = Rejection::BodyTimeout(Duration::from_secs(10));
        assert_eq!(
            timeout.to_string(),
            "request body could not be read: not received within 10s"
        );
        // A body that does not arrive in time is 408, not 400.
        assert_eq!(timeout.code(), (StatusCode::REQUEST_TIMEOUT, "Timeout"));
        let cause = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "peer went away");
        let read = Rejection::BodyRead(Box::new(cause));
        assert_eq!(
            read.to_string(),
            "request body could not be read: peer went away"
        );
        assert_eq!(read.code(), (StatusCode::BAD_REQUEST, "BadRequest"));
        let kept = read
            .source()
            .and_then(|s| s.downcast_ref::<std::io::Error>());
        assert_eq!(
            kept.map(|e| e.kind()),
            Some(std::io::ErrorKind::ConnectionReset)
        );
    }
}
