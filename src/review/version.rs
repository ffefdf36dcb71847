//! The `apiVersion` of a review, which is also the version its answer is written in.

/// The `apiVersion` of a review. The answer is written in the same version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ApiVersion {
    /// `authorization.k8s.io/v1`.
    V1,
    /// `authorization.k8s.io/v1beta1`.
    V1beta1,
}

impl ApiVersion {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ApiVersion::V1 => "authorization.k8s.io/v1",
            ApiVersion::V1beta1 => "authorization.k8s.io/v1beta1",
        }
    }
}
