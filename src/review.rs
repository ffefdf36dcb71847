//! The `SubjectAccessReview` wire format: decoding `authorization.k8s.io/v1` and `v1beta1`
//! reviews into one v1-shaped [`Review`], and encoding the answer in the version that was asked.
//!
//! v1 uses the k8s-openapi types; v1beta1 differs only in spelling the groups field `group`
//! (`k8s.io/api/authorization/v1beta1/types.go`), so it goes through a small shim. Decoding is
//! lenient about fields it does not know (as the API server's own decoder is), with one
//! exception: `groups` in a v1beta1 review or `group` in a v1 review is refused, because silently
//! dropping a user's groups could slip past a deny rule.

mod decode;
mod request;
mod response;

pub use decode::{ReviewError, decode};
pub use request::{canonical_spec_json, encode_request};
pub use response::encode_response;

use k8s_openapi::api::authorization::v1::SubjectAccessReviewSpec;

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

/// Which kind of request a review describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attributes {
    /// `spec.resourceAttributes` is set.
    Resource,
    /// `spec.nonResourceAttributes` is set.
    NonResource,
}

/// One decoded review: the version it arrived in and its spec in the v1 shape. Holding a `Review`
/// means exactly one of `resourceAttributes` / `nonResourceAttributes` is set.
#[derive(Debug, Clone, PartialEq)]
pub struct Review {
    version: ApiVersion,
    spec: SubjectAccessReviewSpec,
}

impl Review {
    /// Wraps a v1 spec after checking that exactly one attribute kind is set.
    pub fn new(version: ApiVersion, spec: SubjectAccessReviewSpec) -> Result<Self, ReviewError> {
        match (&spec.resource_attributes, &spec.non_resource_attributes) {
            (Some(_), Some(_)) => Err(ReviewError::BothAttributes),
            (None, None) => Err(ReviewError::NoAttributes),
            _ => Ok(Self { version, spec }),
        }
    }

    /// The version the review arrived in.
    pub fn version(&self) -> ApiVersion {
        self.version
    }

    /// The spec, in the v1 shape.
    pub fn spec(&self) -> &SubjectAccessReviewSpec {
        &self.spec
    }

    /// Whether this is a resource or a non-resource request.
    pub fn attributes(&self) -> Attributes {
        if self.spec.resource_attributes.is_some() {
            Attributes::Resource
        } else {
            Attributes::NonResource
        }
    }

    /// The user name, or "" when the review carries none.
    pub fn user(&self) -> &str {
        self.spec.user.as_deref().unwrap_or("")
    }

    /// The groups, in order.
    pub fn groups(&self) -> &[String] {
        self.spec.groups.as_deref().unwrap_or(&[])
    }

    /// The verb of either attribute kind, or "" when unset.
    pub fn verb(&self) -> &str {
        match (
            &self.spec.resource_attributes,
            &self.spec.non_resource_attributes,
        ) {
            (Some(r), _) => r.verb.as_deref().unwrap_or(""),
            (None, Some(n)) => n.verb.as_deref().unwrap_or(""),
            (None, None) => "",
        }
    }
}

#[cfg(test)]
mod tests;
