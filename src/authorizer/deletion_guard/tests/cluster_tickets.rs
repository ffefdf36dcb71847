//! Tickets from the cluster (`tickets.source: {cluster: {}}`): the DeletionTickets a watch
//! publishes, read by the guard: approvals counted from status (the requester's own never
//! counts), final phases refused, targets and requester as the scope, and a feed that has not
//! listed (or broke) failing the guard rather than answering from nothing.

use super::*;
use crate::authorizer::deletion_guard::tickets::TicketFeed;
use crate::tickets::DeletionTicket;
use serde_json::{Value, json};

const CLUSTER_SPEC: &str = r#"
apiVersion: warrant.dev/v1alpha1
kind: AuthorizationConfiguration
authorizers:
- type: DeletionGuard
  name: guard
  guard:
    businessHours: {days: [Sat], start: "00:00", end: "01:00"}
    protectedNamespaces: [{names: [production], level: critical}]
    tickets: {source: {cluster: {}}, requiredFor: [critical], approvals: {critical: 2}}
"#;

fn cluster_guard(feed: Arc<TicketFeed>) -> DeletionGuard {
    let loaded = crate::config::parse("authz.yaml", CLUSTER_SPEC.as_bytes()).unwrap();
    let AuthorizerSpec::DeletionGuard(spec) = &loaded.config.authorizers[0].spec else {
        panic!("not a guard");
    };
    DeletionGuard::new(
        GuardShared::new_in(spec, FailurePolicy::Deny, None, Some(feed)),
        &crate::names::AuthorizerName::new("guard").unwrap(),
        &Default::default(),
    )
}

/// A ticket `production/<name>` asked for by alice to delete configmap `x` in production.
fn ticket(name: &str, status: Value) -> DeletionTicket {
    serde_json::from_value(json!({
        "apiVersion": "warrant.dev/v1alpha1",
        "kind": "DeletionTicket",
        "metadata": {"name": name, "namespace": "production"},
        "spec": {
            "requestedBy": "alice",
            "targets": [{"resource": "configmaps", "namespace": "production", "name": "x"}],
            "expiresAt": "2027-01-01T00:00:00Z",
            "singleUse": name.starts_with("once"),
        },
        "status": status,
    }))
    .unwrap()
}

fn approved_by(users: &[&str]) -> Value {
    let approvals: Vec<Value> = users
        .iter()
        .map(|u| json!({"user": u, "time": "2026-12-01T00:00:00Z"}))
        .collect();
    json!({"phase": "Approved", "approvals": approvals})
}

#[track_caller]
fn code(g: &DeletionGuard, user: &str, presented: Option<&str>) -> (String, Option<String>) {
    let (_, _, code, ticket) = judged(
        g,
        &delete("production", "configmaps/x", user, &[], presented),
    );
    (code, ticket)
}

#[test]
fn a_feed_that_has_not_listed_fails_the_guard_instead_of_finding_no_ticket() {
    let feed = Arc::new(TicketFeed::new());
    let g = cluster_guard(feed.clone());
    let err = g
        .judge(&delete("production", "configmaps/x", "alice", &[], None))
        .unwrap_err();
    assert!(err.to_string().contains("has not listed them yet"), "{err}");
    feed.publish(&[ticket("drop-x", approved_by(&["bob", "carol"]))]);
    assert_eq!(code(&g, "alice", None).0, "ALLOW");
    feed.fail("the watch of DeletionTickets failed: connection refused");
    let err = g
        .judge(&delete("production", "configmaps/x", "alice", &[], None))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "ticket source unavailable: the watch of DeletionTickets failed: connection refused"
    );
}

#[test]
fn approvals_are_counted_from_status_and_the_ticket_covers_its_requester_and_targets() {
    let feed = Arc::new(TicketFeed::new());
    let g = cluster_guard(feed.clone());
    let id = Some("production/drop-x".to_owned());
    let rows: [(&str, Value, &str, Option<&str>, &str); 9] = [
        (
            "two approvals, the requester deleting",
            approved_by(&["bob", "carol"]),
            "alice",
            None,
            "ALLOW",
        ),
        (
            "presented by name",
            approved_by(&["bob", "carol"]),
            "alice",
            Some("drop-x"),
            "ALLOW",
        ),
        (
            "presented as namespace/name",
            approved_by(&["bob", "carol"]),
            "alice",
            Some("production/drop-x"),
            "ALLOW",
        ),
        (
            "one approval",
            approved_by(&["bob"]),
            "alice",
            Some("drop-x"),
            "INSUFFICIENT_APPROVALS",
        ),
        (
            "the requester's own approval does not count",
            approved_by(&["alice", "bob"]),
            "alice",
            Some("drop-x"),
            "INSUFFICIENT_APPROVALS",
        ),
        (
            "the same approver twice counts once",
            approved_by(&["bob", "bob"]),
            "alice",
            Some("drop-x"),
            "INSUFFICIENT_APPROVALS",
        ),
        (
            "someone else using alice's ticket",
            approved_by(&["bob", "carol"]),
            "dave",
            Some("drop-x"),
            "TICKET_SCOPE",
        ),
        (
            "rejected",
            json!({"phase": "Rejected", "rejection": {"user": "bob", "time": "2026-12-01T00:00:00Z"}}),
            "alice",
            Some("drop-x"),
            "TICKET_NOT_APPROVED",
        ),
        (
            "marked expired",
            json!({"phase": "Expired"}),
            "alice",
            Some("drop-x"),
            "TICKET_EXPIRED",
        ),
    ];
    for (name, status, user, presented, want) in rows {
        feed.publish(&[ticket("drop-x", status)]);
        let (got, used) = code(&g, user, presented);
        assert_eq!(got, want, "{name}");
        if want == "ALLOW" {
            assert_eq!(used, id, "{name}");
        }
    }
    // A ticket for another object does not cover x.
    let mut other = ticket("drop-y", approved_by(&["bob", "carol"]));
    other.spec.targets[0].name = "y".into();
    feed.publish(&[other]);
    assert_eq!(code(&g, "alice", Some("drop-y")).0, "TICKET_SCOPE");
    assert_eq!(code(&g, "alice", None).0, "MISSING_TICKET");
}

#[test]
fn a_single_use_ticket_is_spent_by_one_deletion() {
    let feed = Arc::new(TicketFeed::new());
    let g = cluster_guard(feed.clone());
    feed.publish(&[ticket("once-x", approved_by(&["bob", "carol"]))]);
    let v = g
        .judge(&delete("production", "configmaps/x", "alice", &[], None))
        .unwrap();
    let detail = v.detail.unwrap();
    assert_eq!(detail.single_use_ticket(), Some("production/once-x"));
    assert_eq!(detail.audit_value()["singleUseTicket"], true);
    // Used for another object's deletion: refused.
    let mut used = approved_by(&["bob", "carol"]);
    used["phase"] = json!("Used");
    used["usedAt"] = json!("2026-12-02T09:00:00Z");
    used["usedFor"] =
        json!({"resource": "configmaps", "namespace": "production", "name": "x", "uid": "old-uid"});
    feed.publish(&[ticket("once-x", used)]);
    let (code, message) = {
        let (d, m, c, _) = judged(
            &g,
            &delete("production", "configmaps/x", "alice", &[], Some("once-x")),
        );
        assert_eq!(d, Decision::Deny);
        (c, m)
    };
    assert_eq!(code, "TICKET_USED");
    assert!(
        message.starts_with("ticket once-x is single-use and was used for another deletion"),
        "{message}"
    );
}

/// At admission: a single-use ticket Used for this very object (the same deletion judged again,
/// as kube-apiserver does when its write lost a race) still covers it; Used for another object
/// (a different uid, even under the same name) it does not.
#[test]
fn a_used_ticket_covers_only_the_deletion_it_was_used_for() {
    use crate::authorizer::{Authorizer, Deadline};
    let loaded = crate::config::parse(
        "authz.yaml",
        CLUSTER_SPEC
            .replace(
                "protectedNamespaces: [{names: [production], level: critical}]",
                "protectionLabel: sre.example.com/protection-level",
            )
            .as_bytes(),
    )
    .unwrap();
    let AuthorizerSpec::DeletionGuard(spec) = &loaded.config.authorizers[0].spec else {
        panic!("not a guard");
    };
    let feed = Arc::new(TicketFeed::new());
    let g = DeletionGuard::new(
        GuardShared::new_in(spec, FailurePolicy::Deny, None, Some(feed.clone())),
        &crate::names::AuthorizerName::new("guard").unwrap(),
        &Default::default(),
    );
    let stored = json!({
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "uid": "o-1",
                     "labels": {"sre.example.com/protection-level": "critical"}},
    });
    let body = json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {
            "uid": "u-1", "operation": "DELETE", "userInfo": {"username": "alice"},
            "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
            "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
            "namespace": "shop", "name": "web", "oldObject": stored,
        }
    });
    let request = crate::admission::decode(body.to_string().as_bytes()).unwrap();
    let mapped = crate::admission::map(request, Arc::new(crate::object::EmptyCluster));
    let input = Input::new(mapped.review, at(NOW)).with_object(Arc::new(mapped.context.unwrap()));
    let used_on = |uid: &str| {
        let mut t = ticket(
            "once-web",
            json!({
                "phase": "Used",
                "approvals": [{"user": "bob", "time": "2026-12-01T00:00:00Z"}, {"user": "carol", "time": "2026-12-01T00:00:00Z"}],
                "usedAt": "2026-12-02T09:59:00Z",
                "usedFor": {"group": "apps", "resource": "deployments", "namespace": "shop", "name": "web", "uid": uid},
            }),
        );
        t.metadata.namespace = Some("shop".into());
        t.spec.targets[0] = crate::tickets::TicketTarget {
            group: "apps".into(),
            resource: "deployments".into(),
            namespace: "shop".into(),
            name: "web".into(),
            selector: None,
        };
        t
    };
    let code = |input: &Input| {
        let v = super::admission::block_on(
            g.authorize(input, Deadline::after(std::time::Duration::from_secs(5))),
        )
        .unwrap();
        v.reason.unwrap().code.unwrap().as_str().to_owned()
    };
    feed.publish(&[used_on("o-1")]);
    assert_eq!(code(&input), "ALLOW");
    feed.publish(&[used_on("o-0")]);
    assert_eq!(code(&input), "MISSING_TICKET");
}
