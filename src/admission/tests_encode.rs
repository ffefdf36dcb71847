//! The response written field by field is byte for byte what serde writes for the same shape
//! (the shape kube-apiserver reads, `k8s.io/api/admission/v1` `AdmissionResponse`).

use super::{API_VERSION, AdmissionResponse, KIND};
use crate::decision::AnnotationValue;
use base64::Engine as _;
use base64::prelude::BASE64_STANDARD;
use proptest::prelude::*;
use serde::Serialize;
use serde_json::json;
use std::collections::BTreeMap;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Envelope<'a> {
    api_version: &'static str,
    kind: &'static str,
    response: Wire<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Wire<'a> {
    uid: &'a str,
    allowed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<Status<'a>>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    audit_annotations: BTreeMap<&'a str, String>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    warnings: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    patch_type: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    patch: Option<String>,
}

#[derive(Serialize)]
struct Status<'a> {
    status: &'static str,
    message: &'a str,
    reason: &'static str,
    code: u16,
}

/// What serde writes for `r`, each annotation as its text.
fn by_serde(r: &AdmissionResponse) -> Vec<u8> {
    serde_json::to_vec(&Envelope {
        api_version: API_VERSION,
        kind: KIND,
        response: Wire {
            uid: &r.uid,
            allowed: r.allowed,
            status: r.denial.as_deref().map(|message| Status {
                status: "Failure",
                message,
                reason: "Forbidden",
                code: 403,
            }),
            audit_annotations: r
                .audit_annotations
                .iter()
                .map(|(k, v)| (k.as_ref(), v.text().into_owned()))
                .collect(),
            warnings: &r.warnings,
            patch_type: r.patch.as_ref().map(|_| "JSONPatch"),
            patch: r.patch.as_ref().map(|p| BASE64_STANDARD.encode(p)),
        },
    })
    .unwrap()
}

#[test]
fn a_refusal_with_a_report_is_written_as_serde_writes_it() {
    let mut r = AdmissionResponse::deny("u-1", "no \"ticket\"\n");
    assert!(r.annotate("code", "MISSING_TICKET"));
    let report = json!({"riskReasons": ["label a=\"b\" +40", "tab\t"], "qps": 3000.0});
    assert!(r.annotate("report", AnnotationValue::json(&report).unwrap()));
    r.warn("careful");
    let written = r.encode();
    assert_eq!(written, by_serde(&r));
    let v: serde_json::Value = serde_json::from_slice(&written).unwrap();
    let text = v["response"]["auditAnnotations"]["report"]
        .as_str()
        .unwrap();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(text).unwrap(),
        report
    );
}

fn annotation() -> impl Strategy<Value = AnnotationValue> {
    prop_oneof![
        any::<String>().prop_map(AnnotationValue::Text),
        prop::collection::vec(any::<String>(), 0..4)
            .prop_map(|v| AnnotationValue::json(&v).unwrap()),
    ]
}

proptest! {
    #[test]
    fn any_response_is_written_as_serde_writes_it(
        uid in any::<String>(),
        allowed in any::<bool>(),
        denial in proptest::option::of(any::<String>()),
        annotations in prop::collection::btree_map("[a-z][a-z0-9.-]{0,8}[a-z0-9]", annotation(), 0..4),
        warnings in prop::collection::vec(any::<String>(), 0..3),
        patch in proptest::option::of(prop::collection::vec(any::<u8>(), 0..16)),
    ) {
        let r = AdmissionResponse {
            uid,
            allowed,
            denial,
            audit_annotations: annotations.into_iter().map(|(k, v)| (k.into(), v)).collect(),
            warnings,
            patch,
        };
        prop_assert_eq!(r.encode(), by_serde(&r));
    }
}
