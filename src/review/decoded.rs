//! One decoded review in the v1 shape, checked to describe exactly one kind of request.

use super::conditional::AuthorizationOptions;
use super::error::ReviewError;
use super::version::ApiVersion;
use k8s_openapi::api::authorization::v1::{ResourceAttributes, SubjectAccessReviewSpec};

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
    options: Option<AuthorizationOptions>,
}

impl Review {
    /// Wraps a v1 spec after checking that exactly one attribute kind is set.
    pub fn new(version: ApiVersion, spec: SubjectAccessReviewSpec) -> Result<Self, ReviewError> {
        match (&spec.resource_attributes, &spec.non_resource_attributes) {
            (Some(_), Some(_)) => Err(ReviewError::BothAttributes),
            (None, None) => Err(ReviewError::NoAttributes),
            _ => Ok(Self {
                version,
                spec,
                options: None,
            }),
        }
    }

    /// A resource review: `spec` with `attributes` as its resource attributes (and no
    /// non-resource ones), so it needs no check. An admission request is judged as one.
    pub fn resource(
        version: ApiVersion,
        mut spec: SubjectAccessReviewSpec,
        attributes: ResourceAttributes,
    ) -> Self {
        spec.resource_attributes = Some(attributes);
        spec.non_resource_attributes = None;
        Self {
            version,
            spec,
            options: None,
        }
    }

    /// The same review with `spec.authorizationOptions` (v1 only; v1beta1 has no such field).
    pub(crate) fn with_options(mut self, options: Option<AuthorizationOptions>) -> Self {
        self.options = options.filter(|_| self.version == ApiVersion::V1);
        self
    }

    /// `spec.authorizationOptions`, when the caller sent them.
    pub fn options(&self) -> Option<&AuthorizationOptions> {
        self.options.as_ref()
    }

    /// Whether the caller handles conditional decisions (KEP-5681): a v1 review whose
    /// `handledDecisionTypes` include all of Allow, Deny, NoOpinion, ConditionsMap and Union.
    pub(crate) fn supports_conditions(&self) -> bool {
        self.options
            .as_ref()
            .is_some_and(AuthorizationOptions::supports_conditions)
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
