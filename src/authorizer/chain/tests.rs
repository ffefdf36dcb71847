use super::*;
use crate::authorizer::BoxFuture;
use crate::authorizer::metrics::EntryMetrics;
use crate::authorizer::test_input;
use crate::authorizer::{Authorizer, AuthorizerError, Deadline, Input, MatchConditions};
use crate::config::{AuthorizerType, FailurePolicy, Mode};
use crate::decision::{Decision, Reason, Verdict};
use crate::names::{AuthorizerName, Code, RuleName};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// A scripted authorizer: a fixed verdict, or one that never answers; counts its calls.
#[derive(Debug)]
struct Fake {
    verdict: Option<Verdict>,
    calls: Arc<AtomicUsize>,
}

impl Authorizer for Fake {
    fn authorize<'a>(
        &'a self,
        _input: &'a Input,
        _deadline: Deadline,
    ) -> BoxFuture<'a, Result<Verdict, AuthorizerError>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        match &self.verdict {
            Some(v) => Box::pin(std::future::ready(Ok(v.clone()))),
            None => Box::pin(std::future::pending()),
        }
    }
}

fn entry(name: &str, verdict: Option<Verdict>, policy: FailurePolicy) -> (Entry, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    (
        Entry {
            name: AuthorizerName::new(name).unwrap(),
            authorizer_type: AuthorizerType::AlwaysAllow,
            failure_policy: policy,
            mode: Mode::Enforce,
            authorizer: Box::new(Fake {
                verdict,
                calls: calls.clone(),
            }),
            match_conditions: Default::default(),
            metrics: EntryMetrics::unregistered(
                AuthorizerType::AlwaysAllow,
                &AuthorizerName::new(name).unwrap(),
            ),
            conditions: None,
            catalog: Default::default(),
        },
        calls,
    )
}

fn no_opinion(msg: &str) -> Option<Verdict> {
    Some(Verdict::new(Decision::NoOpinion, Reason::message(msg)))
}

#[tokio::test]
async fn first_final_decision_wins_and_later_entries_are_not_called() {
    let (a, a_calls) = entry("a", no_opinion("not mine"), FailurePolicy::Deny);
    let deny = Reason {
        rule: Some(RuleName::new("r1").unwrap()),
        message: "no".into(),
        code: Some(Code::new("NOPE").unwrap()),
    };
    let (b, b_calls) = entry(
        "b",
        Some(Verdict::new(Decision::Deny, deny)),
        FailurePolicy::Deny,
    );
    let (c, c_calls) = entry(
        "c",
        Some(Verdict::bare(Decision::Allow)),
        FailurePolicy::Deny,
    );
    let chain = Chain::new(vec![a, b, c]).unwrap();
    let answer = chain
        .authorize(
            &test_input::healthz(),
            Deadline::after(Duration::from_secs(1)),
        )
        .await;
    assert_eq!(answer.decision, Decision::Deny);
    assert_eq!(answer.decided_by.as_ref().unwrap().as_str(), "b");
    assert_eq!(answer.reason, "b/r1: no [NOPE]");
    assert_eq!(answer.code.as_ref().unwrap().as_str(), "NOPE");
    assert_eq!(answer.trace.len(), 2);
    assert_eq!(
        (
            a_calls.load(Ordering::SeqCst),
            b_calls.load(Ordering::SeqCst),
            c_calls.load(Ordering::SeqCst)
        ),
        (1, 1, 0)
    );
    let status = answer.status();
    assert!(!status.allowed);
    assert_eq!(status.denied, Some(true));
    assert_eq!(status.evaluation_error, None);
}

#[tokio::test]
async fn all_no_opinion_joins_reasons() {
    let (a, _) = entry("a", no_opinion("first"), FailurePolicy::Deny);
    let (b, _) = entry(
        "b",
        Some(Verdict::bare(Decision::NoOpinion)),
        FailurePolicy::Deny,
    );
    let (c, _) = entry("c", no_opinion("third"), FailurePolicy::Deny);
    let chain = Chain::new(vec![a, b, c]).unwrap();
    let answer = chain
        .authorize(
            &test_input::healthz(),
            Deadline::after(Duration::from_secs(1)),
        )
        .await;
    assert_eq!(answer.decision, Decision::NoOpinion);
    assert_eq!(answer.decided_by, None);
    assert_eq!(answer.reason, "a: first\nc: third");
    let status = answer.status();
    assert!(!status.allowed);
    assert_eq!(status.denied, None);
}

#[tokio::test(start_paused = true)]
async fn failure_policy_no_opinion_continues_and_keeps_the_error() {
    let (a, _) = entry("hangs", None, FailurePolicy::NoOpinion);
    let (b, _) = entry("hangs-too", None, FailurePolicy::NoOpinion);
    let (c, c_calls) = entry(
        "allows",
        Some(Verdict::bare(Decision::Allow)),
        FailurePolicy::Deny,
    );
    let chain = Chain::new(vec![a, b, c]).unwrap();
    let answer = chain
        .authorize(
            &test_input::healthz(),
            Deadline::after(Duration::from_millis(50)),
        )
        .await;
    // Both hanging authorizers used up the deadline; the third ran after it and still answered
    // because it answers at once.
    assert_eq!(c_calls.load(Ordering::SeqCst), 1);
    assert_eq!(answer.decision, Decision::Allow);
    // As union.go: the deciding authorizer's own (absent) error is returned, not earlier ones.
    assert_eq!(answer.evaluation_error(), None);
    assert_eq!(answer.trace.len(), 3);

    // When nobody decides, every error is kept and aggregated.
    let (a, _) = entry("hangs", None, FailurePolicy::NoOpinion);
    let (b, _) = entry("hangs-too", None, FailurePolicy::NoOpinion);
    let chain2 = Chain::new(vec![a, b]).unwrap();
    let none = chain2
        .authorize(
            &test_input::healthz(),
            Deadline::after(Duration::from_millis(50)),
        )
        .await;
    assert_eq!(none.decision, Decision::NoOpinion);
    assert_eq!(
        none.evaluation_error().unwrap(),
        "[hangs: no answer within the review deadline (50 ms), hangs-too: no answer within the review deadline (50 ms)]"
    );
    assert!(matches!(
        answer.trace[0].outcome,
        StepOutcome::Failed {
            policy: FailurePolicy::NoOpinion,
            ..
        }
    ));
}

#[tokio::test(start_paused = true)]
async fn failure_policy_deny_stops_with_a_reason_that_says_what_failed() {
    let (a, _) = entry("guard", None, FailurePolicy::Deny);
    let (b, b_calls) = entry(
        "allows",
        Some(Verdict::bare(Decision::Allow)),
        FailurePolicy::Deny,
    );
    let chain = Chain::new(vec![a, b]).unwrap();
    let answer = chain
        .authorize(
            &test_input::healthz(),
            Deadline::after(Duration::from_millis(20)),
        )
        .await;
    assert_eq!(b_calls.load(Ordering::SeqCst), 0);
    assert_eq!(answer.decision, Decision::Deny);
    assert_eq!(
        answer.reason,
        "guard: no answer within the review deadline (20 ms)"
    );
    assert_eq!(
        answer.status().evaluation_error.as_deref(),
        Some("guard: no answer within the review deadline (20 ms)")
    );
    assert_eq!(answer.trace[0].decision(), Decision::Deny);
}

#[test]
fn names_are_checked_once_at_build() {
    let (a, _) = entry("same", None, FailurePolicy::Deny);
    let (b, _) = entry("same", None, FailurePolicy::Deny);
    assert_eq!(
        Chain::new(vec![a, b]).unwrap_err(),
        BuildError::DuplicateName(AuthorizerName::new("same").unwrap())
    );
    assert_eq!(Chain::new(vec![]).unwrap_err(), BuildError::Empty);
}

/// Once an earlier authorizer has used up the review deadline, an
/// authorizer whose matchConditions exclude the request is skipped, not failed: it never answers
/// (let alone denies) for a request it does not apply to.
#[tokio::test(start_paused = true)]
async fn a_deadline_miss_never_fails_an_authorizer_that_does_not_apply() {
    use crate::cel::{Expression, Variables};
    let condition = |source: &str| {
        MatchConditions::new(vec![
            Expression::compile(source, Variables::Request).unwrap(),
        ])
    };
    let (hangs, _) = entry("hangs", None, FailurePolicy::NoOpinion);
    let (mut elsewhere, elsewhere_calls) = entry(
        "elsewhere",
        Some(Verdict::bare(Decision::Deny)),
        FailurePolicy::Deny,
    );
    elsewhere.match_conditions = condition("has(request.resourceAttributes)");
    let (mut applies, applies_calls) = entry(
        "applies",
        Some(Verdict::bare(Decision::Allow)),
        FailurePolicy::Deny,
    );
    applies.match_conditions = condition("has(request.nonResourceAttributes)");
    let chain = Chain::new(vec![hangs, elsewhere, applies]).unwrap();
    let answer = chain
        .authorize(
            &test_input::healthz(),
            Deadline::after(Duration::from_secs(1)),
        )
        .await;
    assert_eq!(answer.trace[1].outcome, StepOutcome::Excluded);
    assert_eq!(elsewhere_calls.load(Ordering::SeqCst), 0);
    // The authorizer that applies is still asked: this fake answers at once and ignores the
    // deadline (a real one checks it, as Policy does, or is cut off by the chain's timeout).
    assert_eq!(applies_calls.load(Ordering::SeqCst), 1);
    assert_eq!(answer.decision, Decision::Allow);
    assert_eq!(answer.decided_by.as_ref().unwrap().as_str(), "applies");
}

/// The OpenMetrics text of a registry.
fn text(registry: &prometheus_client::registry::Registry) -> String {
    let mut out = String::new();
    prometheus_client::encoding::text::encode(&mut out, registry).unwrap();
    out
}

/// `entry`, in shadow mode, recording into `families`.
fn shadow_entry(
    families: &crate::authorizer::metrics::Families,
    name: &str,
    verdict: Option<Verdict>,
    policy: FailurePolicy,
) -> Entry {
    let (mut e, _) = entry(name, verdict, policy);
    e.mode = Mode::Observe;
    e.metrics = families.entry(AuthorizerType::AlwaysAllow, &e.name);
    e
}

fn rule_reason(rule: &str, code: &str) -> Reason {
    Reason {
        rule: Some(RuleName::new(rule).unwrap()),
        message: format!("{rule} says so"),
        code: Some(Code::new(code).unwrap()),
    }
}

/// Shadow mode: an entry in Observe is evaluated where it stands, its would-be Deny
/// is kept in the trace and counted (and counted as a disagreement with the chain's Allow), and
/// the chain answers as if it had said NoOpinion: no reason of it in the answer.
#[tokio::test]
async fn a_shadow_entry_is_evaluated_recorded_and_never_the_answer() {
    let mut registry = prometheus_client::registry::Registry::default();
    let families = crate::authorizer::metrics::Families::register(&mut registry);
    let shadow = shadow_entry(
        &families,
        "candidate",
        Some(Verdict::new(
            Decision::Deny,
            rule_reason("no-secrets", "NO_SECRETS"),
        )),
        FailurePolicy::Deny,
    );
    let (allows, allows_calls) = entry(
        "allows",
        Some(Verdict::new(Decision::Allow, Reason::message("fine"))),
        FailurePolicy::Deny,
    );
    let chain = Chain::new(vec![shadow, allows]).unwrap();
    let answer = chain
        .authorize(
            &test_input::healthz(),
            Deadline::after(Duration::from_secs(1)),
        )
        .await;
    assert_eq!(answer.decision, Decision::Allow);
    assert_eq!(answer.reason, "allows: fine");
    assert_eq!(allows_calls.load(Ordering::SeqCst), 1);
    let step = &answer.trace[0];
    assert!(step.is_shadow());
    assert_eq!(step.decision(), Decision::NoOpinion);
    assert_eq!(step.would_have(), Decision::Deny);
    let out = text(&registry);
    assert!(
        out.contains(
            "warrant_shadow_decisions_total{authorizer=\"candidate\",rule=\"no-secrets\",would=\"Deny\"} 1"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "warrant_shadow_disagreements_total{authorizer=\"candidate\",rule=\"no-secrets\",would=\"Deny\",chain=\"Allow\"} 1"
        ),
        "{out}"
    );
    // The shadow's Deny is not counted as a decision of the entry.
    assert!(
        !out.contains("name=\"candidate\",decision=\"denied\""),
        "{out}"
    );
}

/// A shadow Webhook's downstream failure never changes the answer: with failurePolicy Deny it
/// would have denied (recorded), yet the chain goes on and keeps no evaluationError of it.
#[tokio::test(start_paused = true)]
async fn a_failing_shadow_never_changes_the_answer() {
    let mut registry = prometheus_client::registry::Registry::default();
    let families = crate::authorizer::metrics::Families::register(&mut registry);
    let hangs = shadow_entry(&families, "downstream", None, FailurePolicy::Deny);
    let chain = Chain::new(vec![hangs]).unwrap();
    let answer = chain
        .authorize(
            &test_input::healthz(),
            Deadline::after(Duration::from_millis(20)),
        )
        .await;
    assert_eq!(answer.decision, Decision::NoOpinion);
    assert_eq!(answer.evaluation_error(), None);
    assert_eq!(answer.reason, "");
    assert_eq!(answer.trace[0].would_have(), Decision::Deny);
    let out = text(&registry);
    assert!(
        out.contains(
            "warrant_shadow_decisions_total{authorizer=\"downstream\",rule=\"\",would=\"Deny\"} 1"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "warrant_shadow_disagreements_total{authorizer=\"downstream\",rule=\"\",would=\"Deny\",chain=\"NoOpinion\"} 1"
        ),
        "{out}"
    );
}

/// Shadow rules reported by an enforcing entry's verdict are counted against the chain's final
/// answer; a shadow that agrees with it is no disagreement, and an excluded shadow entry is not
/// counted at all.
#[tokio::test]
async fn shadow_rules_of_a_verdict_are_counted_against_the_final_answer() {
    use crate::decision::Shadow;
    let mut registry = prometheus_client::registry::Registry::default();
    let families = crate::authorizer::metrics::Families::register(&mut registry);
    let mut excluded = shadow_entry(&families, "elsewhere", None, FailurePolicy::Deny);
    excluded.match_conditions = MatchConditions::new(vec![
        crate::cel::Expression::compile(
            "has(request.resourceAttributes)",
            crate::cel::Variables::Request,
        )
        .unwrap(),
    ]);
    let verdict = Verdict::new(Decision::Allow, rule_reason("ops", "OPS")).with_shadows(vec![
        Shadow {
            would: Decision::Deny,
            reason: rule_reason("tighter", "TIGHTER"),
            error: None,
        },
        Shadow {
            would: Decision::Allow,
            reason: rule_reason("agrees", "AGREES"),
            error: None,
        },
        Shadow {
            would: Decision::NoOpinion,
            reason: rule_reason("broken", "BROKEN"),
            error: Some("no such key".into()),
        },
    ]);
    let (mut policy, _) = entry("policy", Some(verdict), FailurePolicy::Deny);
    policy.metrics = families.entry(AuthorizerType::Policy, &policy.name);
    let chain = Chain::new(vec![excluded, policy]).unwrap();
    let answer = chain
        .authorize(
            &test_input::healthz(),
            Deadline::after(Duration::from_secs(1)),
        )
        .await;
    assert_eq!(answer.decision, Decision::Allow);
    assert!(!answer.trace[0].is_shadow());
    let out = text(&registry);
    for line in [
        "warrant_shadow_decisions_total{authorizer=\"policy\",rule=\"tighter\",would=\"Deny\"} 1",
        "warrant_shadow_decisions_total{authorizer=\"policy\",rule=\"agrees\",would=\"Allow\"} 1",
        "warrant_shadow_decisions_total{authorizer=\"policy\",rule=\"broken\",would=\"Error\"} 1",
        "warrant_shadow_disagreements_total{authorizer=\"policy\",rule=\"tighter\",would=\"Deny\",chain=\"Allow\"} 1",
    ] {
        assert!(out.contains(line), "{line} not in {out}");
    }
    assert!(
        !out.contains("rule=\"agrees\",would=\"Allow\",chain"),
        "{out}"
    );
    assert!(
        !out.contains("rule=\"broken\",would=\"Error\",chain"),
        "{out}"
    );
    assert!(!out.contains("authorizer=\"elsewhere\""), "{out}");
}
