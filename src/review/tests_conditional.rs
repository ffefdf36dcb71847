//! The conditional wire format against JSON written by the real Go types (k8s.io/api
//! v0.38.0-beta.0, `tests/conditional-golden`).

use super::*;
use serde_json::Value;

fn golden(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/conditional-golden/testdata/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn json(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap()
}

#[test]
fn opted_in_review_decodes_its_options() {
    let review = decode(&golden("sar-request-conditional.json")).unwrap();
    assert!(review.supports_conditions());
    assert_eq!(
        review.options().unwrap().handled_decision_types,
        ["Allow", "ConditionsMap", "Deny", "NoOpinion", "Union"]
    );
}

#[test]
fn authorization_options_as_an_array_are_refused_as_go_refuses_them() {
    let mut body = json(&golden("sar-request-conditional.json"));
    let options = body["spec"]["authorizationOptions"].take();
    let types = options["handledDecisionTypes"].clone();
    body["spec"]["authorizationOptions"] = serde_json::json!([types]);
    let err = decode(&serde_json::to_vec(&body).unwrap()).unwrap_err();
    assert!(
        err.to_string()
            .contains("invalid type: sequence, expected a JSON object"),
        "{err}"
    );
    body["spec"]["authorizationOptions"] = Value::Null;
    let review = decode(&serde_json::to_vec(&body).unwrap()).unwrap();
    assert!(!review.supports_conditions());
}

#[test]
fn unknown_decision_types_are_accepted_and_ignored() {
    let review = decode(&golden("sar-request-unknown-types.json")).unwrap();
    let options = review.options().unwrap();
    assert!(
        options
            .handled_decision_types
            .contains(&"SomethingNew".to_owned())
    );
    assert!(!review.supports_conditions());
}

#[test]
fn v1beta1_never_opts_in() {
    let mut body = json(&golden("sar-request-conditional.json"));
    body["apiVersion"] = "authorization.k8s.io/v1beta1".into();
    let groups = body["spec"]["groups"].take();
    body["spec"]["group"] = groups;
    body["spec"].as_object_mut().unwrap().remove("groups");
    let review = decode(&serde_json::to_vec(&body).unwrap()).unwrap();
    assert!(review.options().is_none());
    assert!(!review.supports_conditions());
}

#[test]
fn conditional_status_encodes_as_go_does() {
    for name in [
        "sar-response-conditions-map.json",
        "sar-response-union.json",
    ] {
        let go = json(&golden(name));
        let decision: ConditionsAwareDecision =
            serde_json::from_value(go["status"]["conditionalDecision"].clone()).unwrap();
        let ours = json(&encode_conditional_response(&decision, None));
        // Go also writes the empty spec of its response object; only `status` is read.
        assert_eq!(ours["status"], go["status"], "{name}");
        assert_eq!(ours["apiVersion"], go["apiVersion"]);
        assert_eq!(ours["kind"], go["kind"]);
    }
}

#[test]
fn conditions_review_round_trip() {
    let body = golden("acr-request-delete.json");
    assert!(is_conditions_review(&body));
    assert!(!is_conditions_review(&golden(
        "sar-request-conditional.json"
    )));
    let review = decode_conditions_review(&body).unwrap();
    assert_eq!(review.uid, "0b8c5f57-6a1e-4d35-9d8b-1b2a0f6f1c11");
    assert_eq!(review.decision.decision_type, DecisionType::ConditionsMap);
    let map = review.decision.conditions_map.as_ref().unwrap();
    assert_eq!(map.deny_conditions[0].condition_type, CEL_CONDITION_TYPE);
    assert_eq!(check_map(map), Ok(()));
    assert_eq!(
        review.field("oldObject").unwrap()["metadata"]["labels"]["warrant.dev/protection"],
        "critical"
    );
    assert!(review.field("object").is_none());
    let go = json(&golden("acr-response-deny.json"));
    let reason = go["response"]["decision"]["deny"]["reason"]
        .as_str()
        .unwrap();
    let ours = json(&encode_conditions_response(
        &review.uid,
        &ConditionsAwareDecision::deny(reason, ""),
    ));
    assert_eq!(ours, go);
}

#[test]
fn conditions_review_refusals() {
    let mut body = json(&golden("acr-request-delete.json"));
    body["apiVersion"] = "authorization.k8s.io/v1".into();
    let err = decode_conditions_review(&serde_json::to_vec(&body).unwrap()).unwrap_err();
    assert!(matches!(err, ConditionsReviewError::ApiVersion(_)));
    let mut body = json(&golden("acr-request-delete.json"));
    body["request"]["admissionRequest"]["uid"] = "".into();
    let err = decode_conditions_review(&serde_json::to_vec(&body).unwrap()).unwrap_err();
    assert!(matches!(err, ConditionsReviewError::MissingUid));
    let mut body = json(&golden("acr-request-delete.json"));
    body["request"]["decision"]["type"] = "Maybe".into();
    assert!(decode_conditions_review(&serde_json::to_vec(&body).unwrap()).is_err());
    assert!(decode_conditions_review(b"[1]").is_err());
}
