//! Conditional authorization end to end inside the library: a file with a guard protecting by
//! label and a Policy with a `condition:`, an opted-in review, the union answered, and the
//! conditions review evaluated as kube-apiserver would ask for it.

use crate::authorizer::{Chain, Deadline, Input};
use crate::decision::Decision;
use crate::review::{self, ConditionsAwareDecision, DecisionType};
use serde_json::json;
use std::time::Duration;

const FILE: &str = r#"apiVersion: warrant.dev/v1alpha1
kind: AuthorizationConfiguration
authorizers:
- type: DeletionGuard
  name: guard
  conditions:
    whenUnsupported: Fold
  guard:
    protectionLabel: warrant.dev/protection
- type: Policy
  name: owners
  policy:
    rules:
    - name: owner-updates
      effect: Allow
      expression: "request.resourceAttributes.verb == 'update'"
      condition: "has(object.metadata.labels) && 'owner' in object.metadata.labels && object.metadata.labels['owner'] in request.userInfo.groups"
      message: owners may update their objects
      code: OWNER_UPDATE
"#;

fn chain(file: &str) -> Chain {
    let loaded = crate::config::parse("c.yaml", file.as_bytes()).unwrap();
    Chain::build(&loaded.config).unwrap()
}

fn sar(verb: &str, opted_in: bool) -> review::Review {
    let mut body = json!({
        "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
        "spec": {"user": "jane", "groups": ["team-a"],
                 "resourceAttributes": {"namespace": "prod", "verb": verb, "group": "apps",
                                        "version": "v1", "resource": "deployments", "name": "web"}}
    });
    if opted_in {
        body["spec"]["authorizationOptions"] = json!({"handledDecisionTypes": ["Allow", "ConditionsMap", "Deny", "NoOpinion", "Union"]});
    }
    review::decode(&serde_json::to_vec(&body).unwrap()).unwrap()
}

async fn answer(chain: &Chain, review: review::Review) -> crate::authorizer::Answer {
    let input = Input::new(review, chrono::Utc::now());
    chain
        .authorize(&input, Deadline::after(Duration::from_secs(5)))
        .await
}

fn later() -> crate::authorizer::Deadline {
    crate::authorizer::Deadline::after(std::time::Duration::from_secs(5))
}

fn ask_back(
    decision: &ConditionsAwareDecision,
    admission: serde_json::Value,
) -> review::ConditionsReview {
    let body = json!({
        "apiVersion": "authorization.k8s.io/v1alpha1", "kind": "AuthorizationConditionsReview",
        "request": {"decision": decision, "admissionRequest": admission}
    });
    review::decode_conditions_review(&serde_json::to_vec(&body).unwrap()).unwrap()
}

fn delete_of(labels: serde_json::Value) -> serde_json::Value {
    json!({"uid": "u1", "operation": "DELETE", "userInfo": {"username": "jane", "groups": ["team-a"]},
           "oldObject": {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "labels": labels}}})
}

#[tokio::test]
async fn guard_answers_an_opted_in_delete_with_deny_conditions() {
    let chain = chain(FILE);
    let a = answer(&chain, sar("delete", true)).await;
    let d = a.conditional.expect("conditional");
    assert_eq!(d.decision_type, DecisionType::Union);
    assert_eq!(d.union[0].authorizer_name, "guard");
    let map = d.union[0].decision.conditions_map.as_ref().unwrap();
    assert_eq!(map.deny_conditions.len(), 2);
    assert_eq!(review::check_map(map), Ok(()));
    let critical = chain
        .evaluate_conditions(
            &ask_back(&d, delete_of(json!({"warrant.dev/protection": "critical"}))),
            later(),
        )
        .await;
    assert_eq!(critical.decision_type, DecisionType::Deny);
    assert!(
        critical
            .parts()
            .0
            .starts_with("guard/protection-critical: "),
        "{:?}",
        critical.parts()
    );
    assert!(critical.parts().0.ends_with("[LABEL_PROTECTED]"));
    let plain = chain
        .evaluate_conditions(&ask_back(&d, delete_of(json!({"app": "web"}))), later())
        .await;
    assert_eq!(plain.decision_type, DecisionType::NoOpinion);
    // No labels at all: the guarded lookups do not error.
    let bare = chain
        .evaluate_conditions(
            &ask_back(&d, json!({"uid": "u", "oldObject": {"metadata": {}}})),
            later(),
        )
        .await;
    assert_eq!(bare.decision_type, DecisionType::NoOpinion);
}

#[tokio::test]
async fn guard_conditions_read_the_protection_label_as_the_validation_ring_does() {
    // `Critical` and `CRITICAL` count as critical in the validation ring; the conditions
    // kube-apiserver evaluates must deny them too, and with `standard` guarded, a value that
    // is no level's spelling reads as standard in both.
    let file = FILE.replace(
        "    protectionLabel: warrant.dev/protection\n",
        "    protectionLabel: warrant.dev/protection\n    tickets:\n      requiredFor: [standard]\n",
    );
    let chain = chain(&file);
    let d = answer(&chain, sar("delete", true))
        .await
        .conditional
        .expect("conditional");
    for (value, reads_as) in [
        ("critical", "critical"),
        ("Critical", "critical"),
        ("CRITICAL", "critical"),
        ("High", "high"),
        ("Standard", "standard"),
        ("bogus", "standard"),
    ] {
        let ring = crate::config::model::guard::Level::of_label(value);
        assert_eq!(ring.as_str(), reads_as, "{value}");
        let evaluated = chain
            .evaluate_conditions(
                &ask_back(&d, delete_of(json!({"warrant.dev/protection": value}))),
                later(),
            )
            .await;
        assert_eq!(evaluated.decision_type, DecisionType::Deny, "{value}");
        let reason = evaluated.parts().0;
        assert!(
            reason.starts_with(&format!("guard/protection-{reads_as}: ")),
            "{value}: {reason}"
        );
    }
}

/// An opted-in delete presenting `ticket` (the `extra` values) under `file`.
fn ticketed_delete(ticket: serde_json::Value) -> review::Review {
    let body = json!({
        "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
        "spec": {"user": "jane", "groups": ["team-a"], "extra": {"warrant.dev/ticket": ticket},
                 "authorizationOptions": {"handledDecisionTypes": ["Allow", "ConditionsMap", "Deny", "NoOpinion", "Union"]},
                 "resourceAttributes": {"namespace": "prod", "verb": "delete", "group": "apps",
                                        "version": "v1", "resource": "deployments", "name": "web"}}
    });
    review::decode(&serde_json::to_vec(&body).unwrap()).unwrap()
}

/// The guard's condition ids in an answer (none when it answered without conditions).
fn guard_condition_ids(a: &crate::authorizer::Answer) -> Vec<String> {
    let Some(d) = &a.conditional else {
        return Vec::new();
    };
    d.union
        .iter()
        .filter(|m| m.authorizer_name == "guard")
        .filter_map(|m| m.decision.conditions_map.as_ref())
        .flat_map(|m| m.deny_conditions.iter().map(|c| c.id.clone()))
        .collect()
}

#[tokio::test]
async fn only_a_ticket_that_passes_the_guard_lifts_its_label_conditions() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tickets.yaml"),
        "tickets:\n- {id: CHG-2, status: Approved, approvers: [a, b], expires: \"2999-01-01T00:00:00Z\"}\n- {id: CHG-1, status: Approved, approvers: [a], expires: \"2999-01-01T00:00:00Z\"}\n- {id: CHG-0, status: Pending, approvers: [a, b], expires: \"2999-01-01T00:00:00Z\"}\n",
    )
    .unwrap();
    let file = FILE.replace(
        "    protectionLabel: warrant.dev/protection\n",
        "    protectionLabel: warrant.dev/protection\n    tickets: {file: tickets.yaml}\n",
    );
    let path = dir.path().join("authz.yaml");
    let loaded = crate::config::parse(&path.to_string_lossy(), file.as_bytes()).unwrap();
    let chain = Chain::build(&loaded.config).unwrap();
    let both = vec![
        "warrant.dev/protection-critical".to_owned(),
        "warrant.dev/protection-high".to_owned(),
    ];
    for (ticket, want) in [
        (json!(["BOGUS"]), both.clone()),
        (json!([]), both.clone()),
        (json!(["CHG-0"]), both.clone()),
        // One approver covers high (1 needed), not critical (2 needed).
        (
            json!(["CHG-1"]),
            vec!["warrant.dev/protection-critical".to_owned()],
        ),
        (json!(["CHG-2"]), Vec::new()),
    ] {
        let a = answer(&chain, ticketed_delete(ticket.clone())).await;
        assert_eq!(guard_condition_ids(&a), want, "{ticket}");
    }
}

#[tokio::test]
async fn a_conditions_review_is_held_to_what_warrant_authored() {
    let chain = chain(FILE);
    let d = answer(&chain, sar("delete", true))
        .await
        .conditional
        .expect("conditional");
    let critical = delete_of(json!({"warrant.dev/protection": "critical"}));
    let guard_map = d.union[0].decision.conditions_map.clone().unwrap();
    let resend = |member: serde_json::Value| {
        let decision: ConditionsAwareDecision = serde_json::from_value(json!({
            "type": "Union",
            "union": [{"authorizerName": "guard", "decision": member}],
        }))
        .unwrap();
        decision
    };

    // The guard's Deny condition moved under allowConditions does not allow.
    let mut moved = guard_map.clone();
    moved.allow_conditions = std::mem::take(&mut moved.deny_conditions);
    let moved = resend(json!({"type": "ConditionsMap", "conditionsMap": moved}));
    let r = chain
        .evaluate_conditions(&ask_back(&moved, critical.clone()), later())
        .await;
    assert_ne!(r.decision_type, DecisionType::Allow, "{r:?}");
    assert!(r.parts().1.contains("effect=Deny"), "{:?}", r.parts());

    // The same condition with another type is not evaluated as warrant's.
    let mut retyped = guard_map.clone();
    retyped.deny_conditions[0].condition_type = "example.com/other".into();
    let retyped = resend(json!({"type": "ConditionsMap", "conditionsMap": retyped}));
    let r = chain
        .evaluate_conditions(&ask_back(&retyped, critical.clone()), later())
        .await;
    assert_eq!(
        r.decision_type,
        DecisionType::Deny,
        "an erroring Deny condition denies"
    );
    assert!(r.parts().1.contains("type"), "{:?}", r.parts());

    // An unconditional Allow member from the guard, which never allows, is not honoured.
    let forged = resend(json!({"type": "Allow", "allow": {"reason": "trust me"}}));
    let r = chain
        .evaluate_conditions(&ask_back(&forged, critical.clone()), later())
        .await;
    assert_eq!(r.decision_type, DecisionType::NoOpinion, "{r:?}");
    assert!(
        r.parts().1.contains("never answers Allow"),
        "{:?}",
        r.parts()
    );

    // Evaluation errors come back as evaluationError, and a flood of unknown ids gets a
    // bounded answer.
    let mut unknown = guard_map.clone();
    unknown.deny_conditions.clear();
    unknown.allow_conditions = (0..25_000)
        .map(|i| crate::review::Condition {
            id: format!("warrant.dev/bogus-{i}"),
            condition: "true".into(),
            condition_type: crate::review::CEL_CONDITION_TYPE.into(),
            description: String::new(),
        })
        .collect();
    let unknown = resend(json!({"type": "ConditionsMap", "conditionsMap": unknown}));
    let r = chain
        .evaluate_conditions(&ask_back(&unknown, critical), later())
        .await;
    assert_eq!(r.decision_type, DecisionType::NoOpinion, "{r:?}");
    let (reason, error) = r.parts();
    assert!(error.contains("bogus-0"), "{error}");
    assert!(
        error.len() + reason.len() < 8 * 1024,
        "{} bytes",
        error.len()
    );
}

#[tokio::test]
async fn callers_that_did_not_opt_in_get_the_fold_or_the_ring() {
    let a = answer(&chain(FILE), sar("delete", false)).await;
    assert!(a.conditional.is_none());
    assert_eq!(a.decision, Decision::Deny);
    let ring = FILE.replace("whenUnsupported: Fold", "whenUnsupported: ValidationRing");
    let a = answer(&chain(&ring), sar("delete", false)).await;
    assert!(a.conditional.is_none());
    assert_eq!(a.decision, Decision::NoOpinion);
    // A read is never conditional.
    let a = answer(&chain(FILE), sar("get", true)).await;
    assert!(a.conditional.is_none());
}

#[tokio::test]
async fn policy_condition_allows_owners_only() {
    let chain = chain(FILE);
    let a = answer(&chain, sar("update", true)).await;
    let d = a.conditional.expect("conditional");
    assert_eq!(d.union.len(), 1);
    assert_eq!(d.union[0].authorizer_name, "owners");
    let update = |owner: &str| {
        json!({"uid": "u2", "operation": "UPDATE", "userInfo": {"username": "jane", "groups": ["team-a"]},
        "object": {"metadata": {"labels": {"owner": owner}}}, "oldObject": {"metadata": {}}})
    };
    let mine = chain
        .evaluate_conditions(&ask_back(&d, update("team-a")), later())
        .await;
    assert_eq!(mine.decision_type, DecisionType::Allow);
    assert_eq!(
        mine.parts().0,
        "owners/owner-updates: owners may update their objects [OWNER_UPDATE]"
    );
    let theirs = chain
        .evaluate_conditions(&ask_back(&d, update("team-b")), later())
        .await;
    assert_eq!(theirs.decision_type, DecisionType::NoOpinion);
    // Not opted in: an Allow-only condition folds to NoOpinion.
    let a = answer(&chain, sar("update", false)).await;
    assert_eq!(a.decision, Decision::NoOpinion);
}

#[tokio::test]
async fn tampered_or_unknown_conditions_fail_closed() {
    let chain = chain(FILE);
    let a = answer(&chain, sar("delete", true)).await;
    let mut d = a.conditional.unwrap();
    d.union[0]
        .decision
        .conditions_map
        .as_mut()
        .unwrap()
        .deny_conditions[0]
        .condition = "false".into();
    let r = chain
        .evaluate_conditions(&ask_back(&d, delete_of(json!({}))), later())
        .await;
    assert_eq!(r.decision_type, DecisionType::Deny);
    assert!(r.parts().1.contains("differs"));
    d.union[0].authorizer_name = "gone".into();
    let r = chain
        .evaluate_conditions(&ask_back(&d, delete_of(json!({}))), later())
        .await;
    assert_eq!(r.decision_type, DecisionType::Deny);
}

#[test]
fn conditions_are_type_checked_at_load_with_line_and_path() {
    let bad = FILE.replace(
        "object.metadata.labels['owner'] in",
        "namespaceObject.metadata.name in",
    );
    let err = crate::config::parse("c.yaml", bad.as_bytes())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("c.yaml:17: authorizers[1].policy.rules[0].condition"),
        "{err}"
    );
    assert!(
        err.contains("undeclared reference to 'namespaceObject'"),
        "{err}"
    );
    let misplaced = "apiVersion: warrant.dev/v1alpha1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: AlwaysAllow\n  name: a\n  conditions: {}\n";
    let err = crate::config::parse("c.yaml", misplaced.as_bytes())
        .unwrap_err()
        .to_string();
    assert!(err.contains("authorizers[0].conditions"), "{err}");
}

/// The guarded levels follow the guard's `tickets.requiredFor`, never fewer than critical and
/// high.
#[tokio::test]
async fn guarded_levels_follow_the_tickets_required_for() {
    use crate::config::model::guard::Level;
    let with_standard = FILE.replace(
        "    protectionLabel: warrant.dev/protection\n",
        "    protectionLabel: warrant.dev/protection\n    tickets:\n      requiredFor: [standard]\n",
    );
    let loaded = crate::config::parse("c.yaml", with_standard.as_bytes()).unwrap();
    let crate::config::AuthorizerSpec::DeletionGuard(g) = &loaded.config.authorizers[0].spec else {
        panic!("a guard first");
    };
    assert_eq!(
        super::guarded_levels(g),
        vec![Level::Critical, Level::High, Level::Standard]
    );
    let chain = Chain::build(&loaded.config).unwrap();
    let a = answer(&chain, sar("delete", true)).await;
    let d = a.conditional.expect("conditional");
    let ids: Vec<&str> = d.union[0]
        .decision
        .conditions_map
        .as_ref()
        .unwrap()
        .deny_conditions
        .iter()
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(
        ids,
        [
            "warrant.dev/protection-critical",
            "warrant.dev/protection-high",
            "warrant.dev/protection-standard"
        ]
    );
    let standard = chain
        .evaluate_conditions(
            &ask_back(&d, delete_of(json!({"warrant.dev/protection": "standard"}))),
            later(),
        )
        .await;
    assert_eq!(standard.decision_type, DecisionType::Deny);
}
