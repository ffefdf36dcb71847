use super::*;
use crate::authorizer::test_input;
use crate::cel::{EvalError, Expression, Variables};
use crate::config::model::{Effect, PolicyRule, PolicySpec};
use crate::decision::{Decision, Verdict};
use crate::names::RuleName;
use k8s_openapi::api::authorization::v1::SubjectAccessReviewSpec;
use std::error::Error as _;
use std::time::Duration;

#[track_caller]
fn rule(name: &str, effect: Effect, source: &str) -> PolicyRule {
    PolicyRule {
        name: RuleName::new(name).unwrap(),
        effect,
        expression: Expression::compile(source, Variables::RequestAndNow).unwrap(),
        message: format!("{name} matched"),
        code: None,
        mode: crate::config::Mode::Enforce,
        condition: None,
    }
}

#[track_caller]
fn shadow(name: &str, effect: Effect, source: &str) -> PolicyRule {
    PolicyRule {
        mode: crate::config::Mode::Observe,
        ..rule(name, effect, source)
    }
}

fn judge(rules: Vec<PolicyRule>) -> Result<Verdict, AuthorizerError> {
    let policy = Policy::new(
        &PolicySpec { rules },
        &crate::names::AuthorizerName::new("tenants").unwrap(),
        &Default::default(),
    );
    policy.judge(
        &test_input::healthz(),
        Deadline::after(Duration::from_secs(5)),
    )
}

/// A rule in Observe mode that matches is recorded and skipped; the enforcing rules
/// decide as if it were absent.
#[test]
fn a_shadow_rule_is_recorded_and_skipped() {
    let v = judge(vec![
        shadow("tighter", Effect::Deny, "request.user == 'jane'"),
        shadow("not-jane", Effect::Deny, "request.user == 'joe'"),
        rule("jane-ok", Effect::Allow, "request.user == 'jane'"),
    ])
    .unwrap();
    assert_eq!(v.decision, Decision::Allow);
    assert_eq!(
        v.reason.as_ref().unwrap().rule.as_ref().unwrap().as_str(),
        "jane-ok"
    );
    assert_eq!(v.shadows.len(), 1);
    assert_eq!(v.shadows[0].would, Decision::Deny);
    assert_eq!(v.shadows[0].would_label(), "Deny");
    assert_eq!(
        v.shadows[0].reason.rule.as_ref().unwrap().as_str(),
        "tighter"
    );
    // Without an enforcing match the policy stands aside, still reporting the shadow.
    let v = judge(vec![shadow(
        "allow-jane",
        Effect::Allow,
        "request.user == 'jane'",
    )])
    .unwrap();
    assert_eq!(v.decision, Decision::NoOpinion);
    assert_eq!(v.shadows[0].would, Decision::Allow);
}

/// A shadow rule that fails to evaluate never fails the policy: it is recorded with its error.
#[test]
fn a_failing_shadow_rule_never_fails_the_policy() {
    let v = judge(vec![
        shadow(
            "broken",
            Effect::Deny,
            "request.resourceAttributes.verb == 'delete'",
        ),
        rule("never", Effect::Deny, "false"),
    ])
    .unwrap();
    assert_eq!(v.decision, Decision::NoOpinion);
    assert_eq!(v.shadows[0].would_label(), "Error");
    assert!(
        v.shadows[0]
            .error
            .as_deref()
            .unwrap()
            .contains("no such key: resourceAttributes"),
        "{:?}",
        v.shadows
    );
}

#[test]
fn an_erroring_rule_is_named_and_keeps_its_cause() {
    const SOURCE: &str = "request.resourceAttributes.verb == 'delete'";
    let policy = Policy::new(
        &PolicySpec {
            rules: vec![
                rule("no-deletes", Effect::Deny, SOURCE),
                rule("never", Effect::Deny, "false"),
            ],
        },
        &crate::names::AuthorizerName::new("tenants").unwrap(),
        &Default::default(),
    );
    let error = policy
        .judge(
            &test_input::healthz(),
            Deadline::after(Duration::from_secs(5)),
        )
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "rule no-deletes: cel evaluation error: expression '{SOURCE}' resulted in error: no such key: resourceAttributes"
        )
    );
    let AuthorizerError::Rule { rule, error: cause } = &error else {
        panic!("{error:?}");
    };
    assert_eq!(rule.as_str(), "no-deletes");
    assert_eq!(&*cause.expression, SOURCE);
    let detail = error.source().and_then(|e| e.source());
    assert_eq!(
        detail.and_then(|e| e.downcast_ref::<EvalError>()),
        Some(&EvalError::Failed("no such key: resourceAttributes".into()))
    );
}

#[test]
fn the_index_evaluates_only_the_rules_that_can_match() {
    let mut rules = vec![
        rule(
            "d-delete",
            Effect::Deny,
            "has(request.resourceAttributes) && request.resourceAttributes.verb == 'delete'",
        ),
        rule("d-any", Effect::Deny, "request.user == 'mallory'"),
        rule(
            "d-nr",
            Effect::Deny,
            "has(request.nonResourceAttributes) && request.user == 'x'",
        ),
        rule(
            "a-pods",
            Effect::Allow,
            "request.resourceAttributes.resource in ['pods', 'secrets']",
        ),
        rule(
            "a-nr-get",
            Effect::Allow,
            "request.nonResourceAttributes.verb == 'get'",
        ),
        // A comprehension first may spend the budget: the verb after it is not used.
        rule(
            "a-spends",
            Effect::Allow,
            "request.groups.exists(g, g == 'x') && request.resourceAttributes.verb == 'delete'",
        ),
    ];
    rules.push(rule("a-team", Effect::Allow, "'team-a' in request.groups"));
    let policy = Policy::new(
        &PolicySpec { rules },
        &crate::names::AuthorizerName::new("tenants").unwrap(),
        &Default::default(),
    );
    let [deny, allow] = policy.index.as_ref().unwrap();
    let healthz = test_input::healthz();
    let spec = healthz.review.spec();
    assert_eq!(deny.candidates(spec).collect::<Vec<_>>(), [1, 2]);
    // On a non-resource review, reading resourceAttributes errors: a-pods must be evaluated.
    assert_eq!(allow.candidates(spec).collect::<Vec<_>>(), [0, 1, 2]);
    let get_pods: SubjectAccessReviewSpec = serde_json::from_value(serde_json::json!({
        "user": "u", "groups": ["team-a", "team-a"],
        "resourceAttributes": {"verb": "get", "resource": "pods"}
    }))
    .unwrap();
    assert_eq!(deny.candidates(&get_pods).collect::<Vec<_>>(), [1]);
    assert_eq!(
        allow.candidates(&get_pods).collect::<Vec<_>>(),
        [0, 1, 2, 3]
    );
}
