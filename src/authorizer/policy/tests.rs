use super::*;
use crate::cel::{EvalError, Expression, Variables};
use crate::config::model::{Effect, PolicyRule, PolicySpec};
use crate::names::RuleName;
use crate::review::{ApiVersion, Review};
use k8s_openapi::api::authorization::v1::{NonResourceAttributes, SubjectAccessReviewSpec};
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

fn non_resource_review() -> Input {
    let spec = SubjectAccessReviewSpec {
        user: Some("jane".into()),
        non_resource_attributes: Some(NonResourceAttributes {
            path: Some("/healthz".into()),
            verb: Some("get".into()),
        }),
        ..Default::default()
    };
    Input {
        review: Review::new(ApiVersion::V1, spec).unwrap(),
        now: chrono::Utc::now(),
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
            &non_resource_review(),
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
