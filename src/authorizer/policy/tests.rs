use super::*;
use crate::authorizer::test_input;
use crate::cel::{EvalError, Expression, Variables};
use crate::config::model::{Effect, PolicyRule, PolicySpec};
use crate::names::RuleName;
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
    }
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
