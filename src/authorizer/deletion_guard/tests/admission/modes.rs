//! Observe mode, an unanswerable cluster view, break-glass, trusted and excluded requesters at
//! admission.

use super::*;

#[test]
fn observe_mode_admits_and_records_what_it_would_refuse() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(
        dir.path(),
        "    mode: Observe\n    cascadeProtection: true\n",
    );
    let view = Fixed {
        dependents: served_by(25),
        ..Fixed::default()
    };
    let j = judge(
        &g,
        &Request::delete(web(Some("critical"), None)),
        &view,
        IN_HOURS,
    );
    // The guard answers what it would enforce, marked observed; its entry's shadow mode (one
    // setting with guard.mode) keeps that out of the chain's answer, which admits.
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::Deny, "OBSERVED_MISSING_TICKET")
    );
    assert!(
        j.message
            .starts_with("observed, not enforced: a change ticket is required"),
        "{}",
        j.message
    );
    assert!(j.observed);
    assert_eq!(j.annotations["code"], "OBSERVED_MISSING_TICKET");
    let scaled = object("Deployment", "web", json!({}), json!({}), 2);
    let j = judge(&g, &Request::delete(scaled), &view, IN_HOURS);
    assert_eq!(j.code, "OBSERVED_CASCADE_BLOCKED");
    // What would pass is no observation.
    let j = judge(
        &g,
        &Request::delete(web(Some("critical"), Some("CHG-1"))),
        &view,
        IN_HOURS,
    );
    assert_eq!(j.code, "ALLOW_WITH_COOLDOWN");
    assert!(!j.observed);
}

#[test]
fn an_unanswerable_view_is_a_failure_in_enforce_and_an_observation_in_observe() {
    let dir = tempfile::tempdir().unwrap();
    let broken = Fixed {
        not_ready: Some("watch on pods has not listed"),
        ..Fixed::default()
    };
    let input = Request::delete(web(Some("critical"), None)).input(&broken, IN_HOURS);
    let enforce = guard(dir.path(), "");
    let err = block_on(try_judge(&enforce, &input)).unwrap_err();
    assert_eq!(
        err,
        AuthorizerError::Guard(GuardError::Cluster(ViewError::NotReady(
            "watch on pods has not listed".into()
        )))
    );
    assert_eq!(
        err.to_string(),
        "cluster cache not ready: watch on pods has not listed"
    );
    let observe = guard(dir.path(), "    mode: Observe\n");
    let j = block_on(try_judge(&observe, &input)).unwrap().unwrap();
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::Deny, "OBSERVED_CLUSTER_UNAVAILABLE")
    );
    assert!(j.observed);
    assert!(
        j.message.starts_with(
            "observed, not enforced: cluster cache not ready: watch on pods has not listed"
        ),
        "{}",
        j.message
    );
}

#[test]
fn break_glass_trusted_and_excluded_requesters_at_admission() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(
        dir.path(),
        "    breakGlassGroups: [sre-break-glass]\n    trusted: [{users: [deployer], maxLevel: critical}]\n",
    );
    let view = Fixed {
        dependents: served_by(25),
        ..Fixed::default()
    };
    let glass = Request {
        groups: vec!["sre-break-glass"],
        ..Request::delete(web(Some("critical"), None))
    };
    assert_eq!(judge(&g, &glass, &view, IN_HOURS).code, "BREAK_GLASS");
    let trusted = Request {
        user: "deployer",
        ..Request::delete(web(Some("critical"), None))
    };
    assert_eq!(judge(&g, &trusted, &view, IN_HOURS).code, "ALLOW");
    // The control plane is excluded: not judged, with a trace (EXCLUDED) and no annotations.
    let gc = Request {
        user: "system:serviceaccount:kube-system:generic-garbage-collector",
        ..Request::delete(web(Some("critical"), None))
    };
    let j = judge(&g, &gc, &view, IN_HOURS);
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::NoOpinion, "EXCLUDED")
    );
    assert!(j.annotations.is_empty());
}

/// Through the chain, a guard in Observe is a shadow entry: its would-be refusal is
/// recorded (`wouldHave` Deny), the validation ring admits, and the observed detail stays on
/// the step for the admission warnings.
#[test]
fn observe_mode_through_the_chain_admits() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tickets.yaml"), TICKETS).unwrap();
    let yaml = format!(
        "apiVersion: warrant.dev/v1alpha1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: DeletionGuard\n  name: guard\n  guard:\n    mode: Observe\n    protectionLabel: {LABEL}\n    tickets: {{file: tickets.yaml}}\n"
    );
    let file = dir.path().join("authz.yaml");
    let loaded = crate::config::parse(&file.to_string_lossy(), yaml.as_bytes()).unwrap();
    let chain = crate::authorizer::Chain::build(&loaded.config).unwrap();
    let view = Fixed {
        dependents: served_by(25),
        ..Fixed::default()
    };
    let input = Request::delete(web(Some("critical"), None)).input(&view, IN_HOURS);
    let answer = block_on(chain.admit(&input, Deadline::after(Duration::from_secs(5))));
    assert_eq!(answer.decision, Decision::NoOpinion);
    let step = &answer.trace[0];
    assert!(step.is_shadow());
    assert_eq!(
        (step.decision(), step.would_have()),
        (Decision::NoOpinion, Decision::Deny)
    );
    let crate::authorizer::StepOutcome::Verdict(v) = &step.outcome else {
        panic!("{:?}", step.outcome)
    };
    assert!(v.detail.as_ref().unwrap().observed_denial());
    assert_eq!(
        v.reason.as_ref().unwrap().code.as_ref().unwrap().as_str(),
        "OBSERVED_MISSING_TICKET"
    );
}

/// Review finding H2: break-glass (and a principal trusted at every level) needs no fact about
/// the object, so it stands aside even while the cluster view cannot answer.
#[test]
fn break_glass_stands_aside_while_the_view_cannot_answer() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(
        dir.path(),
        "    breakGlassGroups: [sre-break-glass]\n    trusted: [{users: [deployer], maxLevel: critical}, {users: [ci], maxLevel: high}]\n",
    );
    let broken = Fixed {
        not_ready: Some("watch on pods has not listed"),
        ..Fixed::default()
    };
    let glass = Request {
        groups: vec!["sre-break-glass"],
        ..Request::delete(web(Some("critical"), None))
    };
    assert_eq!(judge(&g, &glass, &broken, IN_HOURS).code, "BREAK_GLASS");
    let trusted = Request {
        user: "deployer",
        ..Request::delete(web(Some("critical"), None))
    };
    assert_eq!(judge(&g, &trusted, &broken, IN_HOURS).code, "ALLOW");
    // Trusted only up to high: whether it covers the target depends on the object's facts.
    let ci = Request {
        user: "ci",
        ..Request::delete(web(Some("critical"), None))
    };
    let err = block_on(try_judge(&g, &ci.input(&broken, IN_HOURS))).unwrap_err();
    assert!(err.to_string().contains("not listed"), "{err}");
}
