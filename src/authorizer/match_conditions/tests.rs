use super::*;
use crate::authorizer::AuthorizerError;
use crate::cel::{EvalError, Variables};
use crate::review::{ApiVersion, Review};
use k8s_openapi::api::authorization::v1::{NonResourceAttributes, SubjectAccessReviewSpec};
use std::error::Error as _;

/// A non-resource review: `request.resourceAttributes` is absent, so reading it errors.
fn input() -> Input {
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

#[track_caller]
fn conditions(sources: &[&str]) -> MatchConditions {
    MatchConditions::new(
        sources
            .iter()
            .map(|s| Expression::compile(s, Variables::Request).unwrap())
            .collect(),
    )
}

const MISSING_VERB: &str = "request.resourceAttributes.verb == 'get'";
const MISSING_NAMESPACE: &str = "request.resourceAttributes.namespace == 'a'";

#[test]
fn one_error_renders_as_itself_and_keeps_its_cause() {
    let deadline = Deadline::after(Duration::from_secs(5));
    let (outcome, report) = conditions(&[MISSING_VERB]).evaluate(&input(), deadline);
    let MatchOutcome::Failed(errors) = outcome else {
        panic!("expected a failure, got {outcome:?}");
    };
    assert!(report.unwrap().errored);
    let want = format!(
        "cel evaluation error: expression '{MISSING_VERB}' resulted in error: no such key: resourceAttributes"
    );
    assert_eq!(errors.to_string(), want);
    let error = AuthorizerError::MatchConditions(errors.clone());
    assert_eq!(error.to_string(), want);
    // The chain of causes: aggregate -> the condition's error -> the evaluation failure.
    let condition = errors.source().unwrap();
    assert_eq!(condition.to_string(), want);
    let cause = condition.source().unwrap().downcast_ref::<EvalError>();
    assert_eq!(
        cause,
        Some(&EvalError::Failed("no such key: resourceAttributes".into()))
    );
    match errors.as_slice() {
        [ConditionError::Evaluation(e)] => assert_eq!(&*e.expression, MISSING_VERB),
        other => panic!("{other:?}"),
    }
}

#[test]
fn several_errors_render_as_upstream_aggregate() {
    let deadline = Deadline::after(Duration::from_secs(5));
    let (outcome, _) =
        conditions(&[MISSING_VERB, "true", MISSING_NAMESPACE]).evaluate(&input(), deadline);
    let MatchOutcome::Failed(errors) = outcome else {
        panic!("expected a failure, got {outcome:?}");
    };
    assert_eq!(errors.as_slice().len(), 2);
    assert_eq!(
        AuthorizerError::MatchConditions(errors.clone()).to_string(),
        format!(
            "[cel evaluation error: expression '{MISSING_VERB}' resulted in error: no such key: resourceAttributes, cel evaluation error: expression '{MISSING_NAMESPACE}' resulted in error: no such key: resourceAttributes]"
        )
    );
    assert!(errors.source().is_none());
}

/// Issue 15, finding 4: the deadline does not stop matchConditions; a false one still excludes
/// its authorizer, and true ones still let it run (it is the authorizer that then fails).
#[tokio::test(start_paused = true)]
async fn issue_15_4_conditions_are_evaluated_after_the_deadline() {
    let deadline = Deadline::after(Duration::from_millis(1));
    tokio::time::advance(Duration::from_millis(2)).await;
    let (outcome, report) = conditions(&["true", "false"]).evaluate(&input(), deadline);
    assert_eq!(outcome, MatchOutcome::Excluded);
    assert!(!report.unwrap().errored);
    let (outcome, _) = conditions(&["true"]).evaluate(&input(), deadline);
    assert_eq!(outcome, MatchOutcome::Matched);
}
