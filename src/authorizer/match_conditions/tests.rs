use super::*;
use crate::authorizer::AuthorizerError;
use crate::authorizer::test_input;
use crate::cel::{EvalError, Variables};
use std::error::Error as _;

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
    let (outcome, report) = conditions(&[MISSING_VERB]).evaluate(&test_input::healthz());
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
    let (outcome, _) =
        conditions(&[MISSING_VERB, "true", MISSING_NAMESPACE]).evaluate(&test_input::healthz());
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

/// matchConditions take no deadline, so once one has passed a false one
/// still excludes its authorizer and true ones still let it run (it is the authorizer that then
/// fails); `chain::tests::a_deadline_miss_never_fails_an_authorizer_that_does_not_apply` shows it through the chain.
#[tokio::test(start_paused = true)]
async fn conditions_are_evaluated_after_the_deadline() {
    let input = test_input::healthz();
    tokio::time::advance(Duration::from_secs(60)).await;
    let (outcome, report) = conditions(&["true", "false"]).evaluate(&input);
    assert_eq!(outcome, MatchOutcome::Excluded);
    assert!(!report.unwrap().errored);
    let (outcome, _) = conditions(&["true"]).evaluate(&input);
    assert_eq!(outcome, MatchOutcome::Matched);
}
