//! Why a request body is not a usable `AdmissionReview`.

use thiserror::Error;

/// Why a request body is not a usable `AdmissionReview`. Each renders as one line for a `Status`
/// message.
#[derive(Debug, Error)]
pub enum AdmissionError {
    /// The body is not a JSON object.
    #[error("request body is not a JSON object: {0}")]
    NotJson(serde_json::Error),
    /// `apiVersion` is absent.
    #[error("apiVersion is required: expected admission.k8s.io/v1")]
    MissingApiVersion,
    /// `apiVersion` names another group or version.
    #[error("apiVersion {0:?} is not supported: expected admission.k8s.io/v1")]
    UnsupportedApiVersion(String),
    /// `kind` is absent or not `AdmissionReview`.
    #[error("kind {0:?} is not supported: expected AdmissionReview")]
    WrongKind(String),
    /// `request` is absent.
    #[error("request is required")]
    MissingRequest,
    /// `request` (or a field of it) does not decode.
    #[error("request is invalid: {0}")]
    InvalidRequest(serde_json::Error),
    /// A field warrant needs is absent or empty.
    #[error("request.{0} is required")]
    Missing(&'static str),
    /// A field the operation needs is absent.
    #[error("request.{field} is required for operation {operation}")]
    MissingForOperation {
        /// The field.
        field: &'static str,
        /// The operation.
        operation: &'static str,
    },
    /// `operation` is not one of the four.
    #[error("request.operation {0:?} is not supported: expected CREATE, UPDATE, DELETE or CONNECT")]
    UnknownOperation(String),
    /// `object` or `oldObject` is not a JSON object.
    #[error("request.{field} must be a JSON object, got {found}")]
    NotAnObject {
        /// The field.
        field: &'static str,
        /// What was sent instead (`an array`, `a string`, ...).
        found: &'static str,
    },
}
