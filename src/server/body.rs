//! A review's body: its content type and encoding checked, read within a size and a time limit.

use super::rejection::Rejection;
use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper::{Request, header};
use std::time::Duration;

/// The largest SubjectAccessReview body accepted (1 MiB).
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// The largest AdmissionReview body accepted (8 MiB). An UPDATE carries the object twice, new
/// and stored: the new one is bounded by kube-apiserver's request body limit (3 MiB,
/// `MaxRequestBodyBytes` in `k8s.io/apiserver/pkg/server/config.go`), the stored one by the same
/// limit when it was written; 2 MiB more cover the envelope. A smaller limit would refuse (and,
/// with `failurePolicy: Fail`, block) updates of large objects such as CustomResourceDefinitions.
pub const MAX_ADMISSION_BODY_BYTES: usize = 8 * 1024 * 1024;

/// How long a client may take to send the body after its headers.
pub const BODY_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Refuses an encoded body and a content type other than JSON (absent means JSON).
pub(super) fn check_content_type(req: &Request<Incoming>) -> Result<(), Rejection> {
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

/// Reads the body, at most `limit` bytes within [`BODY_READ_TIMEOUT`].
pub(super) async fn read_body(req: Request<Incoming>, limit: usize) -> Result<Bytes, Rejection> {
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(Rejection::TooLarge { limit });
    }
    let body = Limited::new(req.into_body(), limit);
    match tokio::time::timeout(BODY_READ_TIMEOUT, body.collect()).await {
        Err(_) => Err(Rejection::BodyTimeout(BODY_READ_TIMEOUT)),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => {
            Err(Rejection::TooLarge { limit })
        }
        Ok(Err(e)) => Err(Rejection::BodyRead(e)),
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
    }
}
