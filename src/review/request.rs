//! A v1-shaped spec to the bytes of an outgoing review, in either wire version, and the
//! canonical JSON of the v1 spec that downstream caches key on.
//!
//! Go's encoder omits empty strings, lists and maps (`omitempty` on every spec field of
//! `k8s.io/api/authorization/{v1,v1beta1}/types.go`, the attributes' fields included), so a spec
//! with no user encodes as `{"nonResourceAttributes":{}}`; the shims here (and
//! [`super::omit_empty`] for the attributes) do the same. v1beta1 spells the groups `group`.

use super::conditional::AuthorizationOptions;
use super::omit_empty::{self, NonResource, Resource};
use super::version::ApiVersion;
use k8s_openapi::api::authorization::v1::SubjectAccessReviewSpec;
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
    resource_attributes: Option<Resource<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    non_resource_attributes: Option<NonResource<'a>>,
    #[serde(skip_serializing_if = "empty_str")]
    user: &'a Option<String>,
    #[serde(skip_serializing_if = "empty_list")]
    groups: &'a Option<Vec<String>>,
    #[serde(skip_serializing_if = "empty_map")]
    extra: &'a Option<BTreeMap<String, Vec<String>>>,
    #[serde(skip_serializing_if = "empty_str")]
    uid: &'a Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    authorization_options: Option<&'a AuthorizationOptions>,
}

/// The v1beta1 spelling: the same fields, groups as `group`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct V1beta1Spec<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    resource_attributes: Option<Resource<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    non_resource_attributes: Option<NonResource<'a>>,
    #[serde(skip_serializing_if = "empty_str")]
    user: &'a Option<String>,
    #[serde(skip_serializing_if = "empty_list")]
    group: &'a Option<Vec<String>>,
    #[serde(skip_serializing_if = "empty_map")]
    extra: &'a Option<BTreeMap<String, Vec<String>>>,
    #[serde(skip_serializing_if = "empty_str")]
    uid: &'a Option<String>,
}

fn v1<'a>(
    spec: &'a SubjectAccessReviewSpec,
    options: Option<&'a AuthorizationOptions>,
) -> V1Spec<'a> {
    V1Spec {
        resource_attributes: spec.resource_attributes.as_ref().map(omit_empty::resource),
        non_resource_attributes: spec
            .non_resource_attributes
            .as_ref()
            .map(omit_empty::non_resource),
        user: &spec.user,
        groups: &spec.groups,
        extra: &spec.extra,
        uid: &spec.uid,
        authorization_options: options,
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

/// The canonical JSON of the v1 form of `spec` with the `authorizationOptions` sent downstream:
/// what downstream caches key on, whatever version the downstream is sent (upstream keys on
/// `json.Marshal` of the v1 spec it sends, `authorizationOptions` included: `sendSARWebhook`
/// in `plugin/pkg/authorizer/webhook/webhook.go`, v0.38.0-beta.0).
pub fn canonical_spec_json(
    spec: &SubjectAccessReviewSpec,
    options: Option<&AuthorizationOptions>,
) -> String {
    // Serializing strings, lists and maps into a String cannot fail.
    serde_json::to_string(&v1(spec, options)).unwrap_or_default()
}

/// Encodes an outgoing review of `spec` in `version`, as kube-apiserver's webhook client sends it;
/// `options` only in v1 (v1beta1 cannot carry them: the downstream is then unconditional-only,
/// as upstream's v1beta1 conversion downgrades it).
pub fn encode_request(
    version: ApiVersion,
    spec: &SubjectAccessReviewSpec,
    options: Option<&AuthorizationOptions>,
) -> Vec<u8> {
    let status = Unanswered { allowed: false };
    let bytes = match version {
        ApiVersion::V1 => serde_json::to_vec(&Envelope {
            api_version: version.as_str(),
            kind: "SubjectAccessReview",
            metadata: Empty {},
            spec: v1(spec, options),
            status,
        }),
        ApiVersion::V1beta1 => serde_json::to_vec(&Envelope {
            api_version: version.as_str(),
            kind: "SubjectAccessReview",
            metadata: Empty {},
            spec: V1beta1Spec {
                resource_attributes: spec.resource_attributes.as_ref().map(omit_empty::resource),
                non_resource_attributes: spec
                    .non_resource_attributes
                    .as_ref()
                    .map(omit_empty::non_resource),
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
    use k8s_openapi::api::authorization::v1::{
        FieldSelectorAttributes, LabelSelectorAttributes, NonResourceAttributes, ResourceAttributes,
    };
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
        FieldSelectorRequirement, LabelSelectorRequirement,
    };

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
            serde_json::from_slice(&encode_request(ApiVersion::V1, &nonresource(None), None))
                .unwrap();
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
            serde_json::from_slice(&encode_request(ApiVersion::V1, &jane, None)).unwrap();
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
            serde_json::from_slice(&encode_request(ApiVersion::V1beta1, &spec, None)).unwrap();
        assert_eq!(body["apiVersion"], "authorization.k8s.io/v1beta1");
        assert_eq!(body["spec"]["group"], serde_json::json!(["b", "a"]));
        assert!(body["spec"].get("groups").is_none());
        assert_eq!(
            canonical_spec_json(&spec, None),
            r#"{"nonResourceAttributes":{},"user":"jane","groups":["b","a"]}"#
        );
    }

    /// Found by the property `webhook_cache_key_stable_across_encodings`: an attribute spelled
    /// as `""` (or an empty selector list) and the same attribute omitted decode alike but gave
    /// two cache keys (and two downstream bodies). Go's encoder omits both, so upstream keys
    /// them alike; so does warrant now, in Go's field order.
    #[test]
    fn cache_key_same_for_empty_attributes_spelled_or_omitted() {
        let spelled = SubjectAccessReviewSpec {
            resource_attributes: Some(ResourceAttributes {
                namespace: Some(String::new()),
                verb: Some("list".into()),
                group: Some(String::new()),
                version: Some("v1".into()),
                resource: Some("pods".into()),
                subresource: Some(String::new()),
                name: Some(String::new()),
                field_selector: Some(FieldSelectorAttributes {
                    raw_selector: Some(String::new()),
                    requirements: Some(vec![FieldSelectorRequirement {
                        key: "metadata.name".into(),
                        operator: "Exists".into(),
                        values: Some(vec![]),
                    }]),
                }),
                label_selector: Some(LabelSelectorAttributes {
                    raw_selector: None,
                    requirements: Some(vec![LabelSelectorRequirement {
                        key: "tier".into(),
                        operator: "In".into(),
                        values: Some(vec!["web".into()]),
                    }]),
                }),
            }),
            ..Default::default()
        };
        let omitted = SubjectAccessReviewSpec {
            resource_attributes: Some(ResourceAttributes {
                verb: Some("list".into()),
                version: Some("v1".into()),
                resource: Some("pods".into()),
                field_selector: Some(FieldSelectorAttributes {
                    raw_selector: None,
                    requirements: Some(vec![FieldSelectorRequirement {
                        key: "metadata.name".into(),
                        operator: "Exists".into(),
                        values: None,
                    }]),
                }),
                label_selector: Some(LabelSelectorAttributes {
                    raw_selector: Some(String::new()),
                    requirements: Some(vec![LabelSelectorRequirement {
                        key: "tier".into(),
                        operator: "In".into(),
                        values: Some(vec!["web".into()]),
                    }]),
                }),
                ..Default::default()
            }),
            ..Default::default()
        };
        let expected = concat!(
            r#"{"resourceAttributes":{"verb":"list","version":"v1","resource":"pods","#,
            r#""fieldSelector":{"requirements":[{"key":"metadata.name","operator":"Exists"}]},"#,
            r#""labelSelector":{"requirements":[{"key":"tier","operator":"In","values":["web"]}]}}}"#
        );
        assert_eq!(canonical_spec_json(&spelled, None), expected);
        assert_eq!(canonical_spec_json(&omitted, None), expected);
        let empty_selector = SubjectAccessReviewSpec {
            non_resource_attributes: Some(NonResourceAttributes {
                path: Some(String::new()),
                verb: Some(String::new()),
            }),
            ..Default::default()
        };
        assert_eq!(
            canonical_spec_json(&empty_selector, None),
            r#"{"nonResourceAttributes":{}}"#
        );
        let body: serde_json::Value =
            serde_json::from_slice(&encode_request(ApiVersion::V1beta1, &spelled, None)).unwrap();
        assert!(
            body["spec"]["resourceAttributes"]
                .get("namespace")
                .is_none()
        );
    }

    /// Options are part of the v1 body and of the key (last, as Go orders the spec's fields);
    /// v1beta1 has no such field.
    #[test]
    fn options_go_into_v1_body_and_key_only() {
        let spec = nonresource(Some("jane"));
        let options = AuthorizationOptions::conditional();
        let with = canonical_spec_json(&spec, Some(&options));
        assert_eq!(
            with,
            r#"{"nonResourceAttributes":{},"user":"jane","authorizationOptions":{"handledDecisionTypes":["Allow","ConditionsMap","Deny","NoOpinion","Union"]}}"#
        );
        assert_ne!(with, canonical_spec_json(&spec, None));
        let body: serde_json::Value =
            serde_json::from_slice(&encode_request(ApiVersion::V1, &spec, Some(&options))).unwrap();
        assert_eq!(
            body["spec"]["authorizationOptions"]["handledDecisionTypes"][1],
            "ConditionsMap"
        );
        let body: serde_json::Value =
            serde_json::from_slice(&encode_request(ApiVersion::V1beta1, &spec, Some(&options)))
                .unwrap();
        assert!(body["spec"].get("authorizationOptions").is_none());
    }
}
