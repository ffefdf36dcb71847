//! The review the unit tests of the chain, policies and matchConditions share.

use super::contract::Input;
use crate::review::{ApiVersion, Review};
use k8s_openapi::api::authorization::v1::{NonResourceAttributes, SubjectAccessReviewSpec};

/// `jane` asks `get /healthz`: a non-resource review, so reading `request.resourceAttributes`
/// errors. Judged now.
pub(crate) fn healthz() -> Input {
    let spec = SubjectAccessReviewSpec {
        user: Some("jane".into()),
        non_resource_attributes: Some(NonResourceAttributes {
            path: Some("/healthz".into()),
            verb: Some("get".into()),
        }),
        ..Default::default()
    };
    Input::new(
        Review::new(ApiVersion::V1, spec).unwrap(),
        chrono::Utc::now(),
    )
}
