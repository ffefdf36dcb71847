//! The unusual-deletion gate in the guard's pipeline (authorization ring): each action, the
//! ticket a burst must present, the guard's own Observe mode, which requests count, and the
//! baselines carried over a reload.

use super::{NOW, at, guard_of, tickets_file};
use crate::authorizer::Input;
use crate::authorizer::deletion_guard::{DeletionGuard, GuardShared};
use crate::config::{AuthorizerSpec, FailurePolicy};
use crate::decision::Decision;
use chrono::Duration as Span;

/// `verb` of configmap `name` in namespace `team` by `user`, `secs` seconds after [`NOW`].
fn configmaps(verb: &str, name: &str, user: &str, secs: i64, ticket: Option<&str>) -> Input {
    let mut spec = serde_json::json!({
        "user": user,
        "resourceAttributes": {"verb": verb, "group": "", "resource": "configmaps", "name": name, "namespace": "team"},
    });
    if let Some(t) = ticket {
        spec["extra"] = serde_json::json!({"warrant.dev/ticket": [t]});
    }
    let body = serde_json::json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec});
    Input::new(
        crate::review::decode(body.to_string().as_bytes()).unwrap(),
        at(NOW) + Span::seconds(secs),
    )
}

/// (decision, code as audited, message, the assessment's `unusual` report).
#[track_caller]
fn judge(g: &DeletionGuard, input: &Input) -> (Decision, String, String, serde_json::Value) {
    let v = g.judge(input).unwrap();
    let reason = v.reason.unwrap();
    let detail = v.detail.unwrap().audit_value();
    (
        v.decision,
        detail["code"].as_str().unwrap().to_owned(),
        reason.message,
        detail.get("unusual").cloned().unwrap_or_default(),
    )
}

/// A guard counting configmaps with the default model (10 per window for a new principal).
fn guard(action: &str, extra: &str) -> DeletionGuard {
    guard_of(&format!(
        "    unusualDeletions: {{action: {action}, resources: [{{resource: configmaps}}]}}\n{extra}"
    ))
}

#[test]
fn deny_refuses_a_burst_and_the_next_window_passes_again() {
    let g = guard("Deny", "");
    for i in 0..10 {
        let (d, code, m, _) = judge(&g, &configmaps("delete", &format!("c{i}"), "ci", i, None));
        assert_eq!(
            (d, code.as_str()),
            (Decision::NoOpinion, "ALLOW"),
            "{i}: {m}"
        );
    }
    let (d, code, m, report) = judge(&g, &configmaps("delete", "c10", "ci", 10, None));
    assert_eq!(
        (d, code.as_str()),
        (Decision::Deny, "UNUSUAL_DELETION_RATE"),
        "{m}"
    );
    assert!(
        m.starts_with("unusual deletion rate: 11 configmaps deletions by ci in 600s, above 10x its usual 6.3/h (at most 10.5 per window)"),
        "{m}"
    );
    assert_eq!(report["action"], "Deny");
    assert_eq!(report["inWindow"], 11.0);
    assert_eq!(report["threshold"], 10.48);
    assert_eq!(report["baselinePerHour"], 6.29);
    // Another principal has a baseline of its own.
    let (_, code, _, _) = judge(&g, &configmaps("delete", "x", "ana", 11, None));
    assert_eq!(code, "ALLOW");
    // Refused attempts keep counting while the loop runs ...
    for i in 11..30 {
        let (_, code, _, _) = judge(&g, &configmaps("delete", "c", "ci", i, None));
        assert_eq!(code, "UNUSUAL_DELETION_RATE", "{i}");
    }
    // ... and two windows later the principal is back to normal.
    let (_, code, m, _) = judge(&g, &configmaps("delete", "c", "ci", 1300, None));
    assert_eq!(code, "ALLOW", "{m}");
}

#[test]
fn require_ticket_lets_a_ticketed_burst_through() {
    let dir = tempfile::tempdir().unwrap();
    tickets_file(
        dir.path(),
        "tickets:\n- {id: CHG-1, status: Approved, approvers: [a], expires: \"2027-01-01T00:00:00Z\"}\n",
    );
    let file = dir.path().join("tickets.yaml");
    let g = guard(
        "RequireTicket",
        &format!("    tickets: {{file: {}}}\n", file.display()),
    );
    for i in 0..10 {
        judge(&g, &configmaps("delete", "c", "ci", i, None));
    }
    let (d, code, m, _) = judge(&g, &configmaps("delete", "c", "ci", 10, None));
    assert_eq!(
        (d, code.as_str()),
        (Decision::Deny, "UNUSUAL_DELETION_RATE"),
        "{m}"
    );
    assert!(
        m.contains("a change ticket is required (present it as user extra warrant.dev/ticket)"),
        "{m}"
    );
    let (d, code, m, report) = judge(&g, &configmaps("delete", "c", "ci", 11, Some("CHG-1")));
    assert_eq!((d, code.as_str()), (Decision::NoOpinion, "ALLOW"), "{m}");
    assert_eq!(report["action"], "RequireTicket");
    let (_, code, _, _) = judge(&g, &configmaps("delete", "c", "ci", 12, Some("NOPE")));
    assert_eq!(code, "TICKET_NOT_FOUND");
}

#[test]
fn observe_records_a_burst_and_refuses_nothing() {
    let g = guard("Observe", "");
    for i in 0..10 {
        let (_, _, _, report) = judge(&g, &configmaps("delete", "c", "ci", i, None));
        assert!(report.is_null(), "{i}: {report}");
    }
    for i in 10..40 {
        let (d, code, _, report) = judge(&g, &configmaps("delete", "c", "ci", i, None));
        assert_eq!((d, code.as_str()), (Decision::NoOpinion, "ALLOW"), "{i}");
        assert_eq!(report["action"], "Observe", "{i}");
    }
}

#[test]
fn a_guard_in_observe_mode_shadows_the_refusal() {
    let g = guard("Deny", "    mode: Observe\n");
    for i in 0..10 {
        judge(&g, &configmaps("delete", "c", "ci", i, None));
    }
    let (d, code, m, _) = judge(&g, &configmaps("delete", "c", "ci", 10, None));
    assert_eq!(
        (d, code.as_str()),
        (Decision::Deny, "OBSERVED_UNUSUAL_DELETION_RATE")
    );
    assert!(
        m.starts_with("observed, not enforced: unusual deletion rate"),
        "{m}"
    );
}

#[test]
fn only_deletes_of_the_counted_kinds_count() {
    let g = guard("Deny", "    updateResources: [{resource: configmaps}]\n");
    // Updates, and deletes of other kinds, never count.
    for i in 0..50 {
        let (_, code, _, _) = judge(&g, &configmaps("update", "c", "ci", i, None));
        assert_ne!(code, "UNUSUAL_DELETION_RATE");
    }
    let secret = |i: i64| {
        let body = serde_json::json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
            "spec": {"user": "ci", "resourceAttributes": {"verb": "delete", "resource": "secrets", "name": "s", "namespace": "team"}}});
        Input::new(
            crate::review::decode(body.to_string().as_bytes()).unwrap(),
            at(NOW) + Span::seconds(i),
        )
    };
    for i in 0..50 {
        let (_, code, _, _) = judge(&g, &secret(i));
        assert_ne!(code, "UNUSUAL_DELETION_RATE");
    }
    // A collection delete counts like a delete.
    for i in 0..10 {
        let (_, code, _, _) = judge(&g, &configmaps("deletecollection", "", "ci", 50 + i, None));
        assert_eq!(code, "ALLOW");
    }
    let (_, code, _, _) = judge(&g, &configmaps("delete", "c", "ci", 60, None));
    assert_eq!(code, "UNUSUAL_DELETION_RATE");
}

#[test]
fn the_looking_ring_judges_without_counting() {
    // Under `rateLimitStage: Admission` the authorization ring only looks: no number of
    // can-i's makes a burst.
    let g = guard("Deny", "    rateLimitStage: Admission\n");
    for i in 0..50 {
        let (_, code, _, _) = judge(&g, &configmaps("delete", "c", "ci", i, None));
        assert_eq!(code, "ALLOW", "{i}");
    }
}

#[test]
fn a_cluster_baseline_without_a_cluster_fails_unless_observing() {
    let g = guard_of("    unusualDeletions: {action: Deny, scope: Cluster}\n");
    let err = g
        .judge(&configmaps("delete", "c", "ci", 0, None))
        .expect_err("a counting ring without its cluster baselines has failed");
    assert!(
        err.to_string().contains("cluster-scoped deletion baseline"),
        "{err}"
    );
    let g = guard_of("    unusualDeletions: {action: Observe, scope: Cluster}\n");
    let (_, code, _, _) = judge(&g, &configmaps("delete", "c", "ci", 0, None));
    assert_eq!(code, "ALLOW");
}

#[test]
fn baselines_survive_a_reload_that_changes_the_settings() {
    let parse = |factor: u32| {
        let yaml = format!(
            "apiVersion: warrant.dev/v1alpha1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: DeletionGuard\n  name: guard\n  guard:\n    unusualDeletions: {{action: Deny, factor: {factor}}}\n"
        );
        let loaded = crate::config::parse("guard.yaml", yaml.as_bytes()).unwrap();
        let AuthorizerSpec::DeletionGuard(spec) = loaded.config.authorizers[0].spec.clone() else {
            panic!("not a guard");
        };
        spec
    };
    let name = crate::names::AuthorizerName::new("guard").unwrap();
    let first = GuardShared::new(&parse(10), FailurePolicy::Deny);
    let g = DeletionGuard::new(first.clone(), &name, &Default::default());
    for i in 0..8 {
        judge(&g, &configmaps("delete", "c", "ci", i, None));
    }
    let second = GuardShared::reuse_or_new(
        Some(&first),
        &parse(5),
        FailurePolicy::Deny,
        Default::default(),
    );
    assert!(std::sync::Arc::ptr_eq(&first.baselines, &second.baselines));
    assert_eq!(second.baselines.len(), 1);
    // Factor 5: 5 per window; the 8 already counted make the ninth a burst.
    let g = DeletionGuard::new(second, &name, &Default::default());
    let (_, code, _, _) = judge(&g, &configmaps("delete", "c", "ci", 9, None));
    assert_eq!(code, "UNUSUAL_DELETION_RATE");
}
