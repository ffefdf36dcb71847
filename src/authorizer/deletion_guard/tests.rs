//! The guard's pipeline, gate by gate, on small configurations: the ticket rules applied once
//! for presented and pre-authorising tickets, the failure of an unreadable ticket source per
//! mode, and the reason and assessment shapes.

use super::tickets::{Rejection, Requirement, Scope, Status, Ticket};
use super::*;
use crate::authorizer::{AuthorizerError, Input};
use crate::config::{AuthorizerSpec, FailurePolicy};
use crate::decision::{Decision, Verdict};
use chrono::{DateTime, Utc};
use std::path::Path;
use std::sync::Arc;

const SPEC: &str = r#"
apiVersion: warrant.dev/v1alpha1
kind: AuthorizationConfiguration
authorizers:
- type: DeletionGuard
  name: guard
  guard:
    mode: MODE
    businessHours: {days: [Sat], start: "00:00", end: "01:00"}
    protectedNamespaces: [{names: [production], level: critical}, {names: [staging], level: high}]
    breakGlassGroups: [sre-break-glass]
    tickets: {file: TICKETS, requiredFor: [high, critical], approvals: {high: 1, critical: 2}}
    rateLimits: [{resource: namespaces, count: 1, per: 1h}]
"#;

/// 2026-12-02 is a Wednesday.
const NOW: &str = "2026-12-02T10:00:00Z";

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
}

/// A guard in `mode` whose tickets file is `tickets` (resolved against `dir`).
#[track_caller]
fn guard(mode: &str, dir: &Path, tickets: &str) -> DeletionGuard {
    let yaml = SPEC.replace("MODE", mode).replace("TICKETS", tickets);
    let file = dir.join("authz.yaml");
    let loaded = crate::config::parse(&file.to_string_lossy(), yaml.as_bytes()).unwrap();
    let AuthorizerSpec::DeletionGuard(spec) = &loaded.config.authorizers[0].spec else {
        panic!("not a guard: {:?}", loaded.config.authorizers[0].spec);
    };
    DeletionGuard::new(
        GuardShared::new(spec, FailurePolicy::Deny),
        &crate::names::AuthorizerName::new("guard").unwrap(),
        &Default::default(),
    )
}

/// A delete of `resource` (`deployments.apps/web`) in `namespace` by `user`, presenting
/// `ticket` when given.
#[track_caller]
fn delete(
    namespace: &str,
    resource: &str,
    user: &str,
    groups: &[&str],
    ticket: Option<&str>,
) -> Input {
    let (kind, name) = resource.split_once('/').unwrap();
    let (res, group) = kind.split_once('.').unwrap_or((kind, ""));
    let mut spec = serde_json::json!({
        "user": user, "groups": groups,
        "resourceAttributes": {"verb": "delete", "group": group, "resource": res, "name": name, "namespace": namespace},
    });
    if let Some(t) = ticket {
        spec["extra"] = serde_json::json!({"warrant.dev/ticket": [t]});
    }
    let body = serde_json::json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec});
    Input::new(
        crate::review::decode(body.to_string().as_bytes()).unwrap(),
        at(NOW),
    )
}

/// (decision, reason message, reason code, assessment ticket).
#[track_caller]
fn judged(g: &DeletionGuard, input: &Input) -> (Decision, String, String, Option<String>) {
    let v = g.judge(input).unwrap();
    let reason = v.reason.unwrap();
    // The assessment as the audit record shows it (the verdict carries it as an opaque detail).
    let detail = v.detail.unwrap();
    assert_eq!(detail.audit_key(), "guard");
    let detail = detail.audit_value();
    let audit_code = detail["code"].as_str().unwrap().to_owned();
    assert_eq!(
        Some(audit_code.as_str()),
        reason.code.as_ref().map(|c| c.as_str())
    );
    let ticket = detail
        .get("ticket")
        .and_then(|t| t.as_str())
        .map(str::to_owned);
    (v.decision, reason.message, audit_code, ticket)
}

fn tickets_file(dir: &Path, text: &str) {
    std::fs::write(dir.join("tickets.yaml"), text).unwrap();
}

const TICKETS: &str = r#"
tickets:
- {id: OK, status: Approved, approvers: [a, b], expires: "2027-01-01T00:00:00Z"}
- {id: PENDING, status: Pending, approvers: [a, b], expires: "2020-01-01T00:00:00Z"}
- {id: ONE, status: Approved, approvers: [a], expires: "2020-01-01T00:00:00Z"}
- {id: OLD, status: Approved, approvers: [a, b], expires: "2026-12-01T00:00:00Z", scope: {namespaces: [other]}}
- {id: ELSEWHERE, status: Approved, approvers: [a, b], expires: "2027-01-01T00:00:00Z", scope: {namespaces: [other]}}
- {id: FOR-BOB, status: Approved, approvers: [a, b], expires: "2027-01-01T00:00:00Z", scope: {requesters: [bob]}}
- {id: FOR-CAROL-EXPIRED, status: Approved, approvers: [a, b], expires: "2026-12-01T00:00:00Z", scope: {requesters: [carol]}}
"#;

#[test]
fn ticket_rules_apply_once_in_order() {
    let target = Target {
        verb: "delete",
        namespace: "production",
        group: "apps",
        resource: "deployments",
        name: "web",
        user: "alice",
        groups: &[],
    };
    let need = Requirement {
        level: Level::Critical,
        approvals: 2,
        now: at(NOW),
        object_uid: None,
        wildcard_targets: false,
        object_labels: None,
    };
    let ticket = |status, approvers: &[&str], expires: &str, namespaces: &[&str]| Ticket {
        id: "T".into(),
        status,
        approvers: approvers.iter().map(|a| a.to_string()).collect(),
        expires: at(expires),
        scope: Scope {
            namespaces: namespaces.iter().map(|n| n.to_string()).collect(),
            ..Scope::default()
        },
        targets: Vec::new(),
        single_use: false,
        used_for: None,
    };
    let rows: [(&str, Ticket, Result<&str, Rejection>); 5] = [
        (
            "valid",
            ticket(Status::Approved, &["a", "b"], "2027-01-01T00:00:00Z", &[]),
            Ok("T"),
        ),
        (
            "status before everything",
            ticket(Status::Rejected, &[], "2020-01-01T00:00:00Z", &["other"]),
            Err(Rejection::NotApproved(Status::Rejected)),
        ),
        (
            "approvals before expiry",
            ticket(Status::Approved, &["a"], "2020-01-01T00:00:00Z", &["other"]),
            Err(Rejection::InsufficientApprovals {
                approvers: 1,
                level: Level::Critical,
                needed: 2,
            }),
        ),
        (
            "expiry before scope",
            ticket(Status::Approved, &["a", "b"], NOW, &["other"]),
            Err(Rejection::Expired(at(NOW))),
        ),
        (
            "scope last",
            ticket(
                Status::Approved,
                &["a", "b"],
                "2027-01-01T00:00:00Z",
                &["other"],
            ),
            Err(Rejection::OutOfScope),
        ),
    ];
    for (name, ticket, want) in rows {
        assert_eq!(ticket.check(&need, &target), want, "{name}");
    }
    let r = Rejection::InsufficientApprovals {
        approvers: 1,
        level: Level::Critical,
        needed: 2,
    };
    assert_eq!(r.code(), GuardCode::InsufficientApprovals);
    assert_eq!(
        r.message("CHG-1"),
        "ticket CHG-1 has 1 approver(s), critical target needs 2"
    );
}

#[test]
fn ticket_targets_with_wildcards_match_only_where_the_profile_allows_them() {
    let target = Target {
        verb: "delete",
        namespace: "production",
        group: "apps",
        resource: "deployments",
        name: "web",
        user: "alice",
        groups: &[],
    };
    let naming = |namespace: &str, name: &str| Ticket {
        id: "T".into(),
        status: Status::Approved,
        approvers: vec!["a".into(), "b".into()],
        expires: at("2027-01-01T00:00:00Z"),
        scope: Scope::default(),
        targets: vec![crate::tickets::TicketTarget {
            group: "apps".into(),
            resource: "deployments".into(),
            namespace: namespace.into(),
            name: name.into(),
            selector: None,
        }],
        single_use: false,
        used_for: None,
    };
    let need = |wildcard_targets| Requirement {
        level: Level::Critical,
        approvals: 2,
        now: at(NOW),
        object_uid: None,
        wildcard_targets,
        object_labels: None,
    };
    // (ticket's namespace and name, covers when forbidden, covers when allowed)
    let rows = [
        (("production", "web"), true, true),
        (("production", "*"), false, true),
        (("production", "we*"), false, true),
        (("*", "web"), false, true),
        (("production", "api"), false, false),
        (("prod-*", "*"), false, false),
    ];
    for ((namespace, name), forbidden, allowed) in rows {
        let t = naming(namespace, name);
        for (wildcards, covers) in [(false, forbidden), (true, allowed)] {
            let got = t.check(&need(wildcards), &target);
            let want = if covers {
                Ok("T")
            } else {
                Err(Rejection::OutOfScope)
            };
            assert_eq!(got, want, "{namespace}/{name} with wildcards {wildcards}");
        }
    }
}

#[test]
fn a_selector_target_covers_the_objects_whose_labels_match_and_only_where_labels_are_seen() {
    let target = Target {
        verb: "delete",
        namespace: "production",
        group: "apps",
        resource: "deployments",
        name: "web",
        user: "alice",
        groups: &[],
    };
    let selecting = |selector: serde_json::Value| Ticket {
        id: "T".into(),
        status: Status::Approved,
        approvers: vec!["a".into(), "b".into()],
        expires: at("2027-01-01T00:00:00Z"),
        scope: Scope::default(),
        targets: vec![crate::tickets::TicketTarget {
            group: "apps".into(),
            resource: "deployments".into(),
            namespace: "production".into(),
            name: String::new(),
            selector: Some(serde_json::from_value(selector).unwrap()),
        }],
        single_use: false,
        used_for: None,
    };
    let web: std::collections::BTreeMap<String, String> = [
        ("app".into(), "web".into()),
        ("tier".into(), "front".into()),
    ]
    .into();
    let api: std::collections::BTreeMap<String, String> = [("app".into(), "api".into())].into();
    let need = |labels, wildcard_targets| Requirement {
        level: Level::Critical,
        approvals: 2,
        now: at(NOW),
        object_uid: None,
        wildcard_targets,
        object_labels: labels,
    };
    let app_web = selecting(serde_json::json!({"matchLabels": {"app": "web"}}));
    let everything = selecting(serde_json::json!({}));
    // (ticket, labels seen, wildcards allowed, covers)
    let rows = [
        (&app_web, Some(&web), false, true),
        (&app_web, Some(&api), false, false),
        // The authorization ring sees no labels: a selector covers nothing there.
        (&app_web, None, false, false),
        // An empty selector selects everything only where wildcards are allowed.
        (&everything, Some(&web), false, false),
        (&everything, Some(&web), true, true),
    ];
    for (i, (ticket, labels, wildcards, covers)) in rows.into_iter().enumerate() {
        let want = if covers {
            Ok("T")
        } else {
            Err(Rejection::OutOfScope)
        };
        assert_eq!(
            ticket.check(&need(labels, wildcards), &target),
            want,
            "row {i}"
        );
    }
}

/// A delete in `production` by `user` presenting `ticket` is judged `code` with `message`
/// (before the risk suffix), naming `used` as its ticket.
#[track_caller]
fn expect_ticket(
    g: &DeletionGuard,
    (user, ticket): (&str, Option<&str>),
    (code, message): (&str, &str),
    used: Option<&str>,
) {
    let (decision, got_message, got_code, got_used) =
        judged(g, &delete("production", "configmaps/x", user, &[], ticket));
    let want_decision = if code == "ALLOW" {
        Decision::NoOpinion
    } else {
        Decision::Deny
    };
    assert_eq!(decision, want_decision);
    assert_eq!(
        got_message,
        format!("{message} (risk=MEDIUM score=40: critical: protected namespace production +40)")
    );
    assert_eq!(got_code, code);
    assert_eq!(got_used.as_deref(), used);
}

#[test]
fn the_authorization_ring_does_not_ask_for_a_ticket_annotation_it_cannot_read() {
    // The authorization ring sees no object: its missing-ticket message names the extra key
    // and sends annotations to the validation ring instead of offering them as an equal way.
    let dir = tempfile::tempdir().unwrap();
    tickets_file(dir.path(), TICKETS);
    let yaml = SPEC
        .replace("MODE", "Enforce")
        .replace("TICKETS", "tickets.yaml")
        .replace(
            "    breakGlassGroups",
            "    ticketAnnotation: warrant.dev/ticket-id\n    breakGlassGroups",
        );
    let file = dir.path().join("authz.yaml");
    let loaded = crate::config::parse(&file.to_string_lossy(), yaml.as_bytes()).unwrap();
    let AuthorizerSpec::DeletionGuard(spec) = &loaded.config.authorizers[0].spec else {
        panic!("not a guard");
    };
    let g = DeletionGuard::new(
        GuardShared::new(spec, FailurePolicy::Deny),
        &crate::names::AuthorizerName::new("guard").unwrap(),
        &Default::default(),
    );
    let (decision, message, code, _) = judged(
        &g,
        &delete("production", "configmaps/x", "alice", &[], None),
    );
    assert_eq!(
        (decision, code.as_str()),
        (Decision::Deny, "MISSING_TICKET")
    );
    assert!(
        message.starts_with(
            "a change ticket is required (present it as user extra warrant.dev/ticket; the \
             annotation warrant.dev/ticket-id on the object is read only at admission"
        ),
        "{message}"
    );
    assert!(!message.contains("or annotation"), "{message}");
}

#[test]
fn scaling_a_kind_whose_updates_are_guarded_is_guarded_like_patching_it() {
    let dir = tempfile::tempdir().unwrap();
    tickets_file(dir.path(), TICKETS);
    let yaml = SPEC
        .replace("MODE", "Enforce")
        .replace("TICKETS", "tickets.yaml")
        .replace(
            "    breakGlassGroups",
            "    updateResources: [{group: apps, resource: statefulsets}]\n    breakGlassGroups",
        );
    let file = dir.path().join("authz.yaml");
    let loaded = crate::config::parse(&file.to_string_lossy(), yaml.as_bytes()).unwrap();
    let AuthorizerSpec::DeletionGuard(spec) = &loaded.config.authorizers[0].spec else {
        panic!("not a guard");
    };
    let g = DeletionGuard::new(
        GuardShared::new(spec, FailurePolicy::Deny),
        &crate::names::AuthorizerName::new("guard").unwrap(),
        &Default::default(),
    );
    let ask = |verb: &str, subresource: &str| {
        let body = serde_json::json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
            "spec": {"user": "alice", "groups": [], "resourceAttributes": {"verb": verb, "group": "apps",
              "resource": "statefulsets", "subresource": subresource, "name": "db", "namespace": "production"}}});
        let input = Input::new(
            crate::review::decode(body.to_string().as_bytes()).unwrap(),
            at(NOW),
        );
        g.judge(&input).unwrap().decision
    };
    assert_eq!(ask("patch", ""), Decision::Deny);
    assert_eq!(ask("patch", "scale"), Decision::Deny);
    assert_eq!(ask("update", "scale"), Decision::Deny);
    // Other subresources are not the object.
    assert_eq!(ask("patch", "status"), Decision::NoOpinion);
    assert_eq!(ask("get", "scale"), Decision::NoOpinion);
}

#[test]
fn presented_and_pre_authorising_tickets_follow_the_same_rules() {
    let dir = tempfile::tempdir().unwrap();
    tickets_file(dir.path(), TICKETS);
    let g = guard("Enforce", dir.path(), "tickets.yaml");
    let missing = "a change ticket is required (present it as user extra warrant.dev/ticket)";

    // Presented tickets: every finding names the ticket.
    let alice = |t| ("alice", Some(t));
    expect_ticket(&g, alice("OK"), ("ALLOW", "checks passed"), Some("OK"));
    let not_found = ("TICKET_NOT_FOUND", "ticket NOPE not found");
    expect_ticket(&g, alice("NOPE"), not_found, Some("NOPE"));
    let pending = (
        "TICKET_NOT_APPROVED",
        "ticket PENDING is Pending, not Approved",
    );
    expect_ticket(&g, alice("PENDING"), pending, Some("PENDING"));
    let one = (
        "INSUFFICIENT_APPROVALS",
        "ticket ONE has 1 approver(s), critical target needs 2",
    );
    expect_ticket(&g, alice("ONE"), one, Some("ONE"));
    let old = (
        "TICKET_EXPIRED",
        "ticket OLD expired at 2026-12-01T00:00:00+00:00",
    );
    expect_ticket(&g, alice("OLD"), old, Some("OLD"));
    let elsewhere = (
        "TICKET_SCOPE",
        "ticket ELSEWHERE does not cover this request",
    );
    expect_ticket(&g, alice("ELSEWHERE"), elsewhere, Some("ELSEWHERE"));

    // None presented: only a valid ticket naming the requester pre-authorises.
    let passed = ("ALLOW", "checks passed");
    expect_ticket(&g, ("bob", None), passed, Some("FOR-BOB"));
    expect_ticket(&g, ("alice", None), ("MISSING_TICKET", missing), None);
    expect_ticket(&g, ("carol", None), ("MISSING_TICKET", missing), None);
}

#[test]
fn an_unreadable_ticket_source_fails_in_enforce_and_is_observed_in_observe() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.yaml");
    let input = delete("production", "configmaps/x", "alice", &[], Some("OK"));
    let err = guard("Enforce", dir.path(), "missing.yaml")
        .judge(&input)
        .unwrap_err();
    assert!(matches!(
        &err,
        AuthorizerError::Guard(GuardError::TicketsUnreadable { path, .. }) if *path == missing
    ));
    let io = std::fs::read_to_string(&missing).unwrap_err();
    let rendered = err.to_string();
    assert_eq!(
        rendered,
        format!(
            "ticket source unavailable: cannot read {}: {io}",
            missing.display()
        )
    );
    assert_eq!(err.clone(), err);

    let (decision, message, code, ticket) =
        judged(&guard("Observe", dir.path(), "missing.yaml"), &input);
    // The guard answers what it would enforce; its entry's shadow mode keeps it out of the
    // chain's answer (see the chain's tests).
    assert_eq!(decision, Decision::Deny);
    assert_eq!(code, "OBSERVED_TICKET_SOURCE_UNAVAILABLE");
    assert_eq!(ticket, None);
    assert_eq!(
        message,
        format!(
            "observed, not enforced: {rendered} (risk=MEDIUM score=40: critical: protected namespace production +40)"
        )
    );
}

#[test]
fn an_invalid_tickets_file_renders_path_then_yaml_error() {
    let dir = tempfile::tempdir().unwrap();
    tickets_file(dir.path(), "tickets: [{id: X, colour: red}]\n");
    let input = delete("production", "configmaps/x", "alice", &[], Some("X"));
    let err = guard("Enforce", dir.path(), "tickets.yaml")
        .judge(&input)
        .unwrap_err();
    let AuthorizerError::Guard(GuardError::TicketsInvalid { path, source }) = &err else {
        panic!("{err:?}");
    };
    assert_eq!(
        err.to_string(),
        format!("ticket source unavailable: {}: {source}", path.display())
    );
    assert_ne!(
        err,
        AuthorizerError::Guard(GuardError::TicketsUnreadable {
            path: path.clone(),
            source: Arc::new(std::io::Error::other("x")),
        })
    );
}

#[test]
fn reasons_carry_the_observe_prefix_and_the_risk_suffix() {
    let dir = tempfile::tempdir().unwrap();
    tickets_file(dir.path(), TICKETS);
    let enforce = guard("Enforce", dir.path(), "tickets.yaml");
    let observe = guard("Observe", dir.path(), "tickets.yaml");

    // Out of scope (not destructive): no reason at all.
    let v = enforce
        .judge(&Input::new(
            crate::review::decode(
                br#"{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":"alice","resourceAttributes":{"verb":"get","resource":"pods","namespace":"default"}}}"#,
            )
            .unwrap(),
            at(NOW),
        ))
        .unwrap();
    assert_eq!(v, Verdict::bare(Decision::NoOpinion));

    // Excluded (the nodes' group): NoOpinion, with a reason naming the exclusion.
    let v = enforce
        .judge(&delete(
            "default",
            "pods/p",
            "alice",
            &["system:nodes"],
            None,
        ))
        .unwrap();
    let reason = v.reason.unwrap();
    assert_eq!(v.decision, Decision::NoOpinion);
    assert_eq!(
        (
            reason.message.as_str(),
            reason.code.as_ref().map(|c| c.as_str())
        ),
        ("group system:nodes is excluded", Some("EXCLUDED"))
    );

    // Not protected, no score: the suffix has no reasons.
    let got = judged(
        &enforce,
        &delete("default", "configmaps/x", "alice", &[], None),
    );
    assert_eq!(got.1, "target not protected (risk=LOW score=0)");
    assert_eq!(got.2, "ALLOW");

    // Break-glass is not a denial: no prefix in Observe mode either.
    let input = delete(
        "production",
        "configmaps/x",
        "alice",
        &["sre-break-glass"],
        None,
    );
    let got = judged(&observe, &input);
    assert_eq!(
        got.1,
        "break-glass: the guard stands aside (risk=MEDIUM score=40: critical: protected namespace production +40)"
    );
    assert_eq!(got.2, "BREAK_GLASS");

    // A would-be denial.
    let input = delete("staging", "configmaps/x", "alice", &[], None);
    let got = judged(&observe, &input);
    assert_eq!(got.0, Decision::Deny);
    assert_eq!(
        got.1,
        "observed, not enforced: a change ticket is required (present it as user extra warrant.dev/ticket) (risk=LOW score=20: high: protected namespace staging +20)"
    );
    assert_eq!(got.2, "OBSERVED_MISSING_TICKET");
    let got = judged(&enforce, &input);
    assert_eq!(got.0, Decision::Deny);
    assert_eq!(got.2, "MISSING_TICKET");

    // Rate limits apply to unprotected targets too: one namespace delete per hour.
    let ns = delete("", "namespaces/scratch", "alice", &[], None);
    assert_eq!(judged(&enforce, &ns).2, "ALLOW");
    let got = judged(&enforce, &ns);
    assert_eq!(
        (got.0, got.1.as_str(), got.2.as_str()),
        (
            Decision::Deny,
            "rate limit of 1 namespaces deletions per 3600s for alice exceeded (risk=LOW score=0)",
            "RATE_LIMITED"
        )
    );
}

/// A guard from a `guard:` block, in a chain file of its own.
#[track_caller]
fn guard_of(block: &str) -> DeletionGuard {
    let yaml = format!(
        "apiVersion: warrant.dev/v1alpha1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: DeletionGuard\n  name: guard\n  guard:\n{block}"
    );
    let loaded = crate::config::parse("guard.yaml", yaml.as_bytes()).unwrap();
    let AuthorizerSpec::DeletionGuard(spec) = &loaded.config.authorizers[0].spec else {
        panic!("not a guard");
    };
    DeletionGuard::new(
        GuardShared::new(spec, FailurePolicy::Deny),
        &crate::names::AuthorizerName::new("guard").unwrap(),
        &Default::default(),
    )
}

/// A `verb` of apps/deployments `name` (empty: the collection) in namespace `shop` by `user`.
#[track_caller]
fn deployments(verb: &str, name: &str, user: &str) -> Input {
    let body = serde_json::json!({
        "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
        "spec": {"user": user, "resourceAttributes": {
            "verb": verb, "group": "apps", "resource": "deployments", "name": name, "namespace": "shop"}},
    });
    Input::new(
        crate::review::decode(body.to_string().as_bytes()).unwrap(),
        at(NOW),
    )
}

/// A collection delete sweeps the named objects too, so it is judged at the
/// highest level the names of its kind carry, not "target not protected".
#[test]
fn deletecollection_is_judged_at_the_level_of_named_objects() {
    let g = guard_of(
        "    protectedResources: [{group: apps, resource: deployments, names: [checkout], level: critical}]\n",
    );
    let (decision, message, code, _) = judged(&g, &deployments("delete", "checkout", "jane"));
    assert_eq!(
        (decision, code.as_str()),
        (Decision::Deny, "MISSING_TICKET")
    );
    assert!(
        message.contains("critical: protected deployments.apps checkout +40"),
        "{message}"
    );
    let (decision, message, code, _) = judged(&g, &deployments("deletecollection", "", "jane"));
    assert_eq!(
        (decision, code.as_str()),
        (Decision::Deny, "MISSING_TICKET"),
        "{message}"
    );
    assert!(
        message.contains("critical: protected deployments.apps +40"),
        "{message}"
    );
    assert!(message.contains("deletecollection +20"), "{message}");
    // An object the names do not protect is still not protected on its own.
    let (decision, message, code, _) = judged(&g, &deployments("delete", "cart", "jane"));
    assert_eq!((decision, code.as_str()), (Decision::NoOpinion, "ALLOW"));
    assert!(message.starts_with("target not protected"), "{message}");
}

/// A denied (or, in Observe mode, would-be-denied) request spends no
/// rate-limit token; only requests the guard lets through do.
#[test]
fn denied_requests_spend_no_rate_limit_token() {
    for mode in ["Enforce", "Observe"] {
        let g = guard_of(&format!(
            "    mode: {mode}\n    protectedResources: [{{group: apps, resource: deployments, names: [checkout], level: critical}}]\n    rateLimits: [{{group: apps, resource: deployments, count: 2, per: 1h}}]\n"
        ));
        let refused = if mode == "Enforce" {
            "MISSING_TICKET"
        } else {
            "OBSERVED_MISSING_TICKET"
        };
        // Five refusals (a can-i or a real attempt look the same) leave the budget of 2 intact.
        for _ in 0..5 {
            let (_, message, code, _) = judged(&g, &deployments("delete", "checkout", "jane"));
            assert_eq!(code, refused, "{mode}: {message}");
        }
        for _ in 0..2 {
            let (_, message, code, _) = judged(&g, &deployments("delete", "cart", "jane"));
            assert_eq!(code, "ALLOW", "{mode}: {message}");
        }
        let (_, message, code, _) = judged(&g, &deployments("delete", "cart", "jane"));
        let limited = if mode == "Enforce" {
            "RATE_LIMITED"
        } else {
            "OBSERVED_RATE_LIMITED"
        };
        assert_eq!(code, limited, "{mode}: {message}");
        // Another user's budget is untouched.
        let (_, _, code, _) = judged(&g, &deployments("delete", "cart", "joe"));
        assert_eq!(code, "ALLOW", "{mode}");
    }
}

/// With `rateLimitStage: Admission` the authorization ring only looks at a
/// `scope: Cluster` bucket, and without a cluster connection (the authorization ring beside
/// kube-apiserver usually has none) it leaves the limit to the validation ring, which spends and
/// enforces; with `rateLimitStage: Authorization` the same guard has failed (its failure
/// policy), never a pass.
#[test]
fn cluster_limit_without_a_cluster_is_left_to_the_spending_ring() {
    let limit = "    rateLimits: [{group: apps, resource: deployments, count: 1, per: 1h, scope: Cluster}]\n";
    let advisory = guard_of(&format!("    rateLimitStage: Admission\n{limit}"));
    for _ in 0..3 {
        let (decision, message, code, _) =
            judged(&advisory, &deployments("delete", "cart", "jane"));
        assert_eq!(
            (decision, code.as_str()),
            (Decision::NoOpinion, "ALLOW"),
            "{message}"
        );
    }
    let spending = guard_of(&format!("    rateLimitStage: Authorization\n{limit}"));
    let err = spending
        .judge(&deployments("delete", "cart", "jane"))
        .expect_err("a spending ring without its cluster buckets has failed");
    assert!(err.to_string().contains("no cluster connection"), "{err}");
}

mod admission;
mod cluster_tickets;
mod rescore;
mod unusual;
