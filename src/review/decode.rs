//! Bytes to [`Review`]: peek at `apiVersion` and `kind`, then decode `spec` in that version.

use super::conditional::AuthorizationOptions;
use super::decoded::Review;
use super::error::ReviewError;
use super::json_object::refuse_array;
use super::version::ApiVersion;
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, ResourceAttributes, SubjectAccessReviewSpec,
};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::collections::BTreeMap;

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(rename = "apiVersion", default)]
    api_version: Option<String>,
    #[serde(default)]
    kind: Option<String>,
    #[serde(borrow, default)]
    spec: Option<&'a RawValue>,
}

/// The spec as either version spells it. v1 names the groups `groups` and v1beta1 `group`
/// (`k8s.io/api/authorization/{v1,v1beta1}/types.go`); everything else is the same, so one shim
/// reads both and [`decode`] refuses the spelling of the other version.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireSpec {
    #[serde(default)]
    user: Option<String>,
    #[serde(default)]
    groups: Option<Vec<String>>,
    #[serde(default)]
    group: Option<Vec<String>>,
    #[serde(default)]
    uid: Option<String>,
    #[serde(default, deserialize_with = "super::extra_map::deserialize")]
    extra: Option<BTreeMap<String, Vec<String>>>,
    #[serde(default)]
    resource_attributes: Option<ResourceAttributes>,
    #[serde(default)]
    non_resource_attributes: Option<NonResourceAttributes>,
    /// v1 only (KEP-5681); a v1beta1 review carrying it has it ignored, as v1beta1 defines no
    /// such field. An object only, as Go's decoder reads it.
    #[serde(default, deserialize_with = "super::json_object::object_only")]
    authorization_options: Option<AuthorizationOptions>,
}

/// What a body posted to `/authorize` holds: kube-apiserver sends both review kinds to one
/// endpoint unless told otherwise, told apart by `kind`.
#[derive(Debug)]
pub enum AuthorizeBody {
    /// A SubjectAccessReview, decoded.
    Review(Box<Review>),
    /// An AuthorizationConditionsReview: decode it with `decode_conditions_review`.
    ConditionsReview,
}

/// Decodes one review from a JSON body.
pub fn decode(body: &[u8]) -> Result<Review, ReviewError> {
    refuse_array(body, "a SubjectAccessReview object").map_err(ReviewError::NotJson)?;
    let envelope: Envelope<'_> = serde_json::from_slice(body).map_err(ReviewError::NotJson)?;
    decode_envelope(envelope)
}

/// Tells the two kinds `/authorize` takes apart and decodes a SubjectAccessReview, in one pass
/// over the body (a conditions review, the rare kind, is decoded apart).
pub fn decode_authorize(body: &[u8]) -> Result<AuthorizeBody, ReviewError> {
    refuse_array(body, "a SubjectAccessReview object").map_err(ReviewError::NotJson)?;
    let envelope: Envelope<'_> = serde_json::from_slice(body).map_err(ReviewError::NotJson)?;
    if envelope.kind.as_deref() == Some(super::CONDITIONS_REVIEW_KIND) {
        return Ok(AuthorizeBody::ConditionsReview);
    }
    decode_envelope(envelope).map(|r| AuthorizeBody::Review(Box::new(r)))
}

fn decode_envelope(envelope: Envelope<'_>) -> Result<Review, ReviewError> {
    let version = match envelope.api_version.as_deref() {
        None | Some("") => return Err(ReviewError::MissingApiVersion),
        Some("authorization.k8s.io/v1") => ApiVersion::V1,
        Some("authorization.k8s.io/v1beta1") => ApiVersion::V1beta1,
        Some(other) => return Err(ReviewError::UnsupportedApiVersion(other.to_owned())),
    };
    match envelope.kind.as_deref() {
        Some("SubjectAccessReview") => {}
        other => return Err(ReviewError::WrongKind(other.unwrap_or("").to_owned())),
    }
    let raw = envelope.spec.ok_or(ReviewError::MissingSpec)?;
    refuse_array(raw.get().as_bytes(), "a SubjectAccessReviewSpec object")
        .map_err(ReviewError::InvalidSpec)?;
    let wire: WireSpec = serde_json::from_str(raw.get()).map_err(ReviewError::InvalidSpec)?;
    let (groups, other, found, expected) = match version {
        ApiVersion::V1 => (wire.groups, wire.group, "group", "groups"),
        ApiVersion::V1beta1 => (wire.group, wire.groups, "groups", "group"),
    };
    if other.is_some() {
        return Err(ReviewError::GroupsSpelling {
            version: version.as_str(),
            found,
            expected,
        });
    }
    let spec = SubjectAccessReviewSpec {
        user: wire.user,
        groups,
        uid: wire.uid,
        extra: wire.extra,
        resource_attributes: wire.resource_attributes,
        non_resource_attributes: wire.non_resource_attributes,
    };
    Ok(Review::new(version, spec)?.with_options(wire.authorization_options))
}
