//! Why a request body is not a usable review.

use thiserror::Error;

/// Why a request body is not a usable review. Each renders as one line for a `Status` message.
#[derive(Debug, Error)]
pub enum ReviewError {
    /// The body is not a JSON object.
    #[error("request body is not a JSON object: {0}")]
    NotJson(serde_json::Error),
    /// `apiVersion` is absent.
    #[error(
        "apiVersion is required: expected authorization.k8s.io/v1 or authorization.k8s.io/v1beta1"
    )]
    MissingApiVersion,
    /// `apiVersion` names another group or version.
    #[error(
        "apiVersion {0:?} is not supported: expected authorization.k8s.io/v1 or authorization.k8s.io/v1beta1"
    )]
    UnsupportedApiVersion(String),
    /// `kind` is absent or not `SubjectAccessReview`.
    #[error("kind {0:?} is not supported: expected SubjectAccessReview")]
    WrongKind(String),
    /// `spec` is absent.
    #[error("spec is required")]
    MissingSpec,
    /// `spec` does not decode.
    #[error("spec is invalid: {0}")]
    InvalidSpec(serde_json::Error),
    /// The field for groups is spelled for the other version.
    #[error("spec.{found} is not a field of {version}: use spec.{expected}")]
    GroupsSpelling {
        /// The version of the review.
        version: &'static str,
        /// The field that was sent.
        found: &'static str,
        /// The field this version uses.
        expected: &'static str,
    },
    /// Neither attribute kind is set.
    #[error(
        "spec: exactly one of resourceAttributes or nonResourceAttributes must be set, got neither"
    )]
    NoAttributes,
    /// Both attribute kinds are set.
    #[error(
        "spec: exactly one of resourceAttributes or nonResourceAttributes must be set, got both"
    )]
    BothAttributes,
}
