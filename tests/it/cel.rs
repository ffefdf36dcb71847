//! matchConditions and Policy rules through the server: the spec's vectors 17-28 and 38
//! (upstream `TestV1WebhookMatchConditions`, `compile_test.go`, `TestValidateAndCompile
//! MatchConditions`), with AlwaysAllow standing in for the webhook upstream calls when every
//! condition holds.

use crate::support::*;
use serde_json::{Value, json};

fn review(spec: Value) -> String {
    json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec})
        .to_string()
}

fn alice() -> String {
    review(json!({
        "user": "alice", "uid": "1", "groups": ["group1", "group2"],
        "extra": {"key1": ["a", "b", "c"]},
        "resourceAttributes": {"verb": "get", "namespace": "kittensandponies", "resource": "pods"}
    }))
}

fn alice2() -> String {
    review(json!({"user": "alice2", "nonResourceAttributes": {"path": "/x", "verb": "get"}}))
}

fn bob() -> String {
    review(json!({"user": "bob", "nonResourceAttributes": {"path": "/x", "verb": "get"}}))
}

/// One AlwaysAllow entry named `wh1` behind `conditions`, failing closed (Deny) on errors.
fn guarded(conditions: &[&str], policy: &str) -> String {
    let mut s = String::from(
        "apiVersion: warrant.dev/v1alpha1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: AlwaysAllow\n  name: wh1\n",
    );
    s.push_str(&format!("  failurePolicy: {policy}\n"));
    if !conditions.is_empty() {
        s.push_str("  matchConditions:\n");
        for c in conditions {
            s.push_str(&format!(
                "  - expression: {}\n",
                serde_json::to_string(c).unwrap()
            ));
        }
    }
    s
}

const ALICE_TRUE: [&str; 8] = [
    "request.user == 'alice'",
    "request.uid == '1'",
    "'group1' in request.groups",
    "'key1' in request.extra",
    "!('key2' in request.extra)",
    "'a' in request.extra['key1']",
    "!('z' in request.extra['key1'])",
    "has(request.resourceAttributes) && request.resourceAttributes.namespace == 'kittensandponies'",
];

async fn answer(config: String, body: &str) -> Value {
    let w = Warrant::start(Options {
        config: Some(config),
        ..Options::default()
    })
    .await;
    let c = w.client();
    let (code, v) = post_review(&c, &w.url("/authorize"), body).await;
    assert_eq!(code, 200, "{v}");
    w.stop().await;
    v["status"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vector_17_18_no_or_true_conditions_reach_the_authorizer() {
    let s = answer(guarded(&[], "Deny"), &alice()).await;
    assert_eq!(s["allowed"], true);
    let s = answer(guarded(&ALICE_TRUE, "Deny"), &alice()).await;
    assert_eq!(s["allowed"], true, "{s}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vector_19_a_false_condition_excludes_without_error() {
    for replaced in ["'group3' in request.groups", "request.uid == '2'"] {
        let mut conds = ALICE_TRUE.to_vec();
        conds[2] = replaced;
        let s = answer(guarded(&conds, "Deny"), &alice()).await;
        assert_eq!(s["allowed"], false, "{s}");
        assert!(s.get("denied").is_none(), "no opinion expected: {s}");
        assert!(s.get("evaluationError").is_none(), "{s}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vector_22_25_errors_without_false_apply_the_failure_policy() {
    let conds = [
        "request.user == 'alice2'",
        "request.resourceAttributes.namespace == 'kittensandponies'",
    ];
    let s = answer(guarded(&conds, "NoOpinion"), &alice2()).await;
    assert_eq!(s["allowed"], false);
    assert!(s.get("denied").is_none(), "{s}");
    assert_eq!(
        s["evaluationError"],
        "wh1: cel evaluation error: expression 'request.resourceAttributes.namespace == 'kittensandponies'' resulted in error: no such key: resourceAttributes"
    );
    let s = answer(guarded(&conds, "Deny"), &alice2()).await;
    assert_eq!(s["denied"], true, "{s}");
    assert!(
        s["reason"]
            .as_str()
            .unwrap()
            .contains("no such key: resourceAttributes"),
        "{s}"
    );
    // 25: no user at all, same error.
    let empty = review(json!({"nonResourceAttributes": {"path": "/", "verb": "get"}}));
    let s = answer(
        guarded(&["request.resourceAttributes.verb == 'get'"], "NoOpinion"),
        &empty,
    )
    .await;
    assert!(
        s["evaluationError"]
            .as_str()
            .unwrap()
            .ends_with("no such key: resourceAttributes"),
        "{s}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vector_23_false_wins_over_an_earlier_error() {
    let conds = [
        "request.resourceAttributes.namespace == 'kittensandponies'",
        "request.user != 'alice2'",
    ];
    let s = answer(guarded(&conds, "Deny"), &alice2()).await;
    assert_eq!(s["allowed"], false);
    assert!(s.get("denied").is_none(), "{s}");
    assert!(s.get("evaluationError").is_none(), "{s}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vector_24_non_resource_conditions() {
    let s = answer(
        guarded(
            &[
                "request.user == 'bob'",
                "has(request.nonResourceAttributes) && request.nonResourceAttributes.verb == 'get'",
            ],
            "Deny",
        ),
        &bob(),
    )
    .await;
    assert_eq!(s["allowed"], true, "{s}");
    let s = answer(
        guarded(
            &["has(request.resourceAttributes) && request.resourceAttributes.verb == 'get'"],
            "Deny",
        ),
        &bob(),
    )
    .await;
    assert_eq!(s["allowed"], false);
    assert!(s.get("denied").is_none(), "{s}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vector_26_selectors_are_visible() {
    let body = review(json!({
        "user": "alice",
        "resourceAttributes": {
            "verb": "list", "resource": "pods", "namespace": "default",
            "fieldSelector": {"requirements": [{"key": "foo", "operator": "In", "values": ["bar"]}]},
            "labelSelector": {"requirements": [{"key": "baz", "operator": "In", "values": ["qux"]}]}
        }
    }));
    let conds = [
        "request.?resourceAttributes.fieldSelector.requirements.orValue([]).exists(r, r.key=='foo' && r.operator=='In' && ('bar' in r.values))",
        "request.?resourceAttributes.?labelSelector.requirements.orValue([]).exists(r, r.key=='baz' && r.operator=='In' && ('qux' in r.values))",
        "request.?resourceAttributes.labelSelector.?requirements.orValue([]).exists(r, r.key=='baz' && r.operator=='In' && ('qux' in r.values))",
    ];
    let s = answer(guarded(&conds, "Deny"), &body).await;
    assert_eq!(s["allowed"], true, "{s}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vector_27_match_condition_metrics() {
    let config = "apiVersion: warrant.dev/v1alpha1\nkind: AuthorizationConfiguration\nauthorizers:\n\
- type: AlwaysDeny\n  name: wh1.example.com\n  failurePolicy: NoOpinion\n  matchConditions:\n  - expression: \"request.user == 'alice'\"\n  - expression: \"request.resourceAttributes.verb == 'x'\"\n  - expression: \"request.resourceAttributes.name == 'x'\"\n\
- type: AlwaysAllow\n  name: wh2.example.com\n  matchConditions:\n  - expression: \"request.user == 'alice'\"\n";
    let w = Warrant::start(Options {
        config: Some(config.into()),
        ..Options::default()
    })
    .await;
    let c = w.client();
    // alice2 (non-resource): wh1 [false...] excluded, wh2 [false] excluded.
    let (_, v) = post_review(&c, &w.url("/authorize"), &alice2()).await;
    assert_eq!(v["status"]["allowed"], false);
    // A non-resource alice: wh1 [true, error, error] errors; wh2 [true] allows.
    let body =
        review(json!({"user": "alice", "nonResourceAttributes": {"path": "/", "verb": "get"}}));
    let (_, v) = post_review(&c, &w.url("/authorize"), &body).await;
    assert_eq!(v["status"]["allowed"], true, "{v}");
    let text = metrics_text(&c, &w).await;
    for line in [
        "warrant_match_condition_evaluation_errors_total{type=\"AlwaysDeny\",name=\"wh1.example.com\"} 1",
        "warrant_match_condition_exclusions_total{type=\"AlwaysDeny\",name=\"wh1.example.com\"} 1",
        "warrant_match_condition_exclusions_total{type=\"AlwaysAllow\",name=\"wh2.example.com\"} 1",
        "warrant_match_condition_evaluation_seconds_count{type=\"AlwaysAllow\",name=\"wh2.example.com\"} 2",
    ] {
        assert!(text.contains(line), "missing {line} in\n{text}");
    }
    assert!(!text.contains("warrant_match_condition_evaluation_errors_total{type=\"AlwaysAllow\""));
    w.stop().await;
}

/// Vectors 20, 21, 28 and 38: what a bad condition does to a configuration.
#[test]
fn vectors_20_21_28_38_bad_conditions_are_refused_at_load() {
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "request.user == 'alice'",
                "request.uid == '1'",
                "('group3' in request.group)",
            ],
            "authorizers[0].matchConditions[2].expression: Invalid value: \"('group3' in request.group)\": compilation failed: ERROR: <input>:1:21: undefined field 'group'",
        ),
        (&["request.user"], "must evaluate to bool but got string"),
        (
            &["request.nonResourceAttributes.verb == 2"],
            "found no matching overload for '_==_' applied to '(string, int)'",
        ),
        (&["request.time == 'now'"], "undefined field 'time'"),
        (&["request++'"], "compilation failed: ERROR: <input>:1:"),
        (&["x.user"], "undeclared reference to 'x'"),
        (
            &["  "],
            "authorizers[0].matchConditions[0].expression: Required value",
        ),
        (&["test"], "undeclared reference to 'test'"),
        (&["request.user = 'test'"], "compilation failed: ERROR"),
        (
            &["request.user == 'a'", "request.user == 'a'"],
            "authorizers[0].matchConditions[1].expression: Duplicate value",
        ),
    ];
    for (conds, want) in cases {
        let text = guarded(conds, "Deny");
        let err = warrant::config::parse("authz.yaml", text.as_bytes())
            .err()
            .unwrap_or_else(|| panic!("{conds:?} loaded"));
        let shown = err.to_string();
        assert!(shown.contains(want), "{conds:?}: {shown}");
    }
    let many: Vec<String> = (0..65).map(|i| format!("request.uid != '{i}'")).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    let err = warrant::config::parse("authz.yaml", guarded(&many, "Deny").as_bytes())
        .err()
        .unwrap();
    assert!(
        err.to_string()
            .contains("Too many: 65: must have at most 64 items"),
        "{err}"
    );
    let ok: Vec<&str> = many[..64].to_vec();
    assert!(warrant::config::parse("authz.yaml", guarded(&ok, "Deny").as_bytes()).is_ok());
}

fn policy(rules: &str, failure: &str) -> String {
    format!(
        "apiVersion: warrant.dev/v1alpha1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: Policy\n  name: cluster-rules\n  failurePolicy: {failure}\n  policy:\n    rules:\n{rules}"
    )
}

const RULES: &str = "    - name: secrets-need-selector
      effect: Deny
      expression: >-
        has(request.resourceAttributes) && request.resourceAttributes.resource == 'secrets' &&
        request.resourceAttributes.verb == 'list' &&
        request.?resourceAttributes.labelSelector.requirements.orValue([]).size() == 0
      message: listing secrets needs a label selector
      code: SECRETS_SELECTOR
    - name: team-a
      effect: Allow
      expression: \"'team-a' in request.groups\"
      message: team-a may act
    - name: extra-lookup
      effect: Deny
      expression: \"request.extra['warrant.dev/ticket'][0] == 'BAD'\"
      message: bad ticket
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn policy_deny_beats_allow_and_names_the_rule() {
    let w = Warrant::start(Options {
        config: Some(policy(RULES, "Deny")),
        audit: true,
        ..Options::default()
    })
    .await;
    let c = w.client();
    let list = |labels: Value| {
        review(json!({"user": "ann", "groups": ["team-a"],
            "extra": {"warrant.dev/ticket": ["OK"]},
            "resourceAttributes": {"verb": "list", "resource": "secrets", "namespace": "x",
                "labelSelector": labels}}))
    };
    let (_, v) = post_review(&c, &w.url("/authorize"), &list(json!(null))).await;
    assert_eq!(v["status"]["denied"], true, "{v}");
    assert_eq!(
        v["status"]["reason"],
        "cluster-rules/secrets-need-selector: listing secrets needs a label selector [SECRETS_SELECTOR]"
    );
    let with = list(json!({"requirements": [{"key": "app", "operator": "Exists"}]}));
    let (_, v) = post_review(&c, &w.url("/authorize"), &with).await;
    assert_eq!(v["status"]["allowed"], true, "{v}");
    assert_eq!(
        v["status"]["reason"],
        "cluster-rules/team-a: team-a may act"
    );
    // Nobody matches: no opinion.
    let other = review(
        json!({"user": "bob", "extra": {"warrant.dev/ticket": ["OK"]},
        "nonResourceAttributes": {"path": "/", "verb": "get"}}),
    );
    let (_, v) = post_review(&c, &w.url("/authorize"), &other).await;
    assert_eq!(v["status"]["allowed"], false);
    assert!(v["status"].get("denied").is_none(), "{v}");
    let text = metrics_text(&c, &w).await;
    assert!(text.contains("warrant_policy_rule_matches_total{authorizer=\"cluster-rules\",rule=\"secrets-need-selector\",effect=\"Deny\"} 1"), "{text}");
    assert!(text.contains("warrant_policy_rule_matches_total{authorizer=\"cluster-rules\",rule=\"team-a\",effect=\"Allow\"} 1"), "{text}");
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn policy_rule_errors_never_allow() {
    // No ticket: the Deny rule `extra-lookup` errors (no such key), so team-a's Allow must not win.
    let body = review(json!({"user": "ann", "groups": ["team-a"],
        "nonResourceAttributes": {"path": "/", "verb": "get"}}));
    let s = answer(policy(RULES, "Deny"), &body).await;
    assert_eq!(s["denied"], true, "{s}");
    assert!(
        s["reason"]
            .as_str()
            .unwrap()
            .contains("rule extra-lookup: cel evaluation error"),
        "{s}"
    );
    let s = answer(policy(RULES, "NoOpinion"), &body).await;
    assert_eq!(s["allowed"], false, "{s}");
    assert!(s.get("denied").is_none(), "{s}");
    assert!(
        s["evaluationError"]
            .as_str()
            .unwrap()
            .contains("no such key: warrant.dev/ticket"),
        "{s}"
    );
}

#[test]
fn policy_blocks_are_validated() {
    let bad = "    - name: a\n      effect: Maybe\n      expression: \"request.user\"\n      message: m\n      code: lower\n    - name: a\n      effect: Allow\n      expression: \"true\"\n      message: m\n";
    let err = warrant::config::parse("p.yaml", policy(bad, "Deny").as_bytes())
        .err()
        .unwrap()
        .to_string();
    for want in [
        "p.yaml:10: authorizers[0].policy.rules[0].effect: Unsupported value: \"Maybe\"",
        "authorizers[0].policy.rules[0].expression: Invalid value: \"request.user\": must evaluate to bool but got string",
        "authorizers[0].policy.rules[0].code: Invalid value: \"lower\"",
        "authorizers[0].policy.rules[1].name: Duplicate value: \"a\"",
    ] {
        assert!(err.contains(want), "missing {want} in\n{err}");
    }
    let upstream = "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: Policy\n  name: policy\n";
    let err = warrant::config::parse("u.yaml", upstream.as_bytes())
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("Unsupported value: \"Policy\""), "{err}");
}
