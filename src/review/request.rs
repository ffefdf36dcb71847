//! A v1-shaped spec to the bytes of an outgoing review, in either wire version, and the
//! canonical JSON of the v1 spec that downstream caches key on.
//!
//! Go's encoder omits empty strings, lists and maps (`omitempty` on every spec field of
//! `k8s.io/api/authorization/{v1,v1beta1}/types.go`), so a spec with no user encodes as
//! `{"nonResourceAttributes":{}}`; the shims here do the same. v1beta1 spells the groups `group`.

use super::version::ApiVersion;
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, ResourceAttributes, SubjectAccessReviewSpec,
};
use serde::Serialize;
use std::collections::BTreeMap;

fn empty_str(s: &Option<String>) -> bool {
    s.as_deref().is_none_or(str::is_empty)
}

fn empty_list(v: &Option<Vec<String>>) -> bool {
    v.as_ref().is_none_or(Vec::is_empty)
}

fn empty_map(m: &Option<BTreeMap<String, Vec<String>>>) -> bool {
    m.as_ref().is_none_or(BTreeMap::is_empty)
}

/// The v1 spelling of a spec. Field order is fixed, `extra` is sorted, so the JSON is canonical.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct V1Spec<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    resource_attributes: Option<&'a ResourceAttributes>,
    #[serde(skip_serializing_if = "Option::is_none")]
    non_resource_attributes: Option<&'a NonResourceAttributes>,
    #[serde(skip_serializing_if = "empty_str")]
    user: &'a Option<String>,
    #[serde(skip_serializing_if = "empty_list")]
    groups: &'a Option<Vec<String>>,
    #[serde(skip_serializing_if = "empty_map")]
    extra: &'a Option<BTreeMap<String, Vec<String>>>,
    #[serde(skip_serializing_if = "empty_str")]
    uid: &'a Option<String>,
}

/// The v1beta1 spelling: the same fields, groups as `group`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct V1beta1Spec<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    resource_attributes: Option<&'a ResourceAttributes>,
    #[serde(skip_serializing_if = "Option::is_none")]
    non_resource_attributes: Option<&'a NonResourceAttributes>,
    #[serde(skip_serializing_if = "empty_str")]
    user: &'a Option<String>,
    #[serde(skip_serializing_if = "empty_list")]
    group: &'a Option<Vec<String>>,
    #[serde(skip_serializing_if = "empty_map")]
    extra: &'a Option<BTreeMap<String, Vec<String>>>,
    #[serde(skip_serializing_if = "empty_str")]
    uid: &'a Option<String>,
}

fn v1(spec: &SubjectAccessReviewSpec) -> V1Spec<'_> {
    V1Spec {
        resource_attributes: spec.resource_attributes.as_ref(),
        non_resource_attributes: spec.non_resource_attributes.as_ref(),
        user: &spec.user,
        groups: &spec.groups,
        extra: &spec.extra,
        uid: &spec.uid,
    }
}

#[derive(Serialize)]
struct Envelope<S> {
    #[serde(rename = "apiVersion")]
    api_version: &'static str,
    kind: &'static str,
    metadata: Empty,
    spec: S,
    status: Unanswered,
}

#[derive(Serialize)]
struct Empty {}

#[derive(Serialize)]
struct Unanswered {
    allowed: bool,
}

/// The canonical JSON of the v1 form of `spec`: what downstream caches key on, whatever version
/// the downstream is sent (upstream keys on `json.Marshal` of the v1 spec).
pub fn canonical_spec_json(spec: &SubjectAccessReviewSpec) -> String {
    // Serializing strings, lists and maps into a String cannot fail.
    serde_json::to_string(&v1(spec)).unwrap_or_default()
}

/// Encodes an outgoing review of `spec` in `version`, as kube-apiserver's webhook client sends it.
pub fn encode_request(version: ApiVersion, spec: &SubjectAccessReviewSpec) -> Vec<u8> {
    let status = Unanswered { allowed: false };
    let bytes = match version {
        ApiVersion::V1 => serde_json::to_vec(&Envelope {
            api_version: version.as_str(),
            kind: "SubjectAccessReview",
            metadata: Empty {},
            spec: v1(spec),
            status,
        }),
        ApiVersion::V1beta1 => serde_json::to_vec(&Envelope {
            api_version: version.as_str(),
            kind: "SubjectAccessReview",
            metadata: Empty {},
            spec: V1beta1Spec {
                resource_attributes: spec.resource_attributes.as_ref(),
                non_resource_attributes: spec.non_resource_attributes.as_ref(),
                user: &spec.user,
                group: &spec.groups,
                extra: &spec.extra,
                uid: &spec.uid,
            },
            status,
        }),
    };
    bytes.unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nonresource(user: Option<&str>) -> SubjectAccessReviewSpec {
        SubjectAccessReviewSpec {
            user: user.map(str::to_owned),
            non_resource_attributes: Some(NonResourceAttributes::default()),
            ..Default::default()
        }
    }

    /// Spec vectors 1 and 2 (`TestV1Webhook`): an empty user encodes as only the attributes.
    #[test]
    fn empty_fields_are_omitted() {
        let body: serde_json::Value =
            serde_json::from_slice(&encode_request(ApiVersion::V1, &nonresource(None))).unwrap();
        assert_eq!(body["apiVersion"], "authorization.k8s.io/v1");
        assert_eq!(body["kind"], "SubjectAccessReview");
        assert_eq!(
            body["spec"],
            serde_json::json!({"nonResourceAttributes": {}})
        );
        assert_eq!(body["status"], serde_json::json!({"allowed": false}));
        let mut jane = nonresource(Some("jane"));
        jane.groups = Some(vec![]);
        let body: serde_json::Value =
            serde_json::from_slice(&encode_request(ApiVersion::V1, &jane)).unwrap();
        assert_eq!(
            body["spec"],
            serde_json::json!({"user": "jane", "nonResourceAttributes": {}})
        );
    }

    #[test]
    fn v1beta1_spells_groups_as_group_and_key_stays_v1() {
        let mut spec = nonresource(Some("jane"));
        spec.groups = Some(vec!["b".into(), "a".into()]);
        let body: serde_json::Value =
            serde_json::from_slice(&encode_request(ApiVersion::V1beta1, &spec)).unwrap();
        assert_eq!(body["apiVersion"], "authorization.k8s.io/v1beta1");
        assert_eq!(body["spec"]["group"], serde_json::json!(["b", "a"]));
        assert!(body["spec"].get("groups").is_none());
        assert_eq!(
            canonical_spec_json(&spec),
            r#"{"nonResourceAttributes":{},"user":"jane","groups":["b","a"]}"#
        );
    }
}
