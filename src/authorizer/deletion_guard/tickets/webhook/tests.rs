//! The ticket webhook's contract: what warrant sends, and which answers it accepts as a ticket,
//! as "not found", or refuses (the failure policy's business).

use super::contract::{API_VERSION, ContractError, Looked, TicketReview, decode};
use crate::authorizer::deletion_guard::scope::Target;
use crate::authorizer::deletion_guard::tickets::Status;
use serde_json::json;

fn target<'a>(groups: &'a [String]) -> Target<'a> {
    Target {
        verb: "delete",
        namespace: "production",
        group: "apps",
        resource: "deployments",
        name: "web",
        user: "alice",
        groups,
    }
}

#[track_caller]
fn found(answer: serde_json::Value) -> crate::authorizer::deletion_guard::tickets::Ticket {
    match decode("CHG-1", "alice", answer.to_string().as_bytes()) {
        Ok(Looked::Found(t)) => *t,
        other => panic!("expected a ticket, got {other:?}"),
    }
}

#[track_caller]
fn refused(answer: &str) -> ContractError {
    match decode("CHG-1", "alice", answer.as_bytes()) {
        Err(e) => e,
        Ok(other) => panic!("expected a refusal, got {other:?}"),
    }
}

fn approved() -> serde_json::Value {
    json!({
        "apiVersion": API_VERSION,
        "kind": "TicketReview",
        "status": {
            "found": true,
            "phase": "Approved",
            "approvers": [
                {"identity": "jira:bob", "name": "Bob", "approvedAt": "2026-12-01T09:00:00Z"},
                {"identity": "jira:carol"},
            ],
            "expiresAt": "2026-12-31T00:00:00Z",
            "scope": {"namespaces": ["production"], "resources": ["deployments.apps"]},
            "targets": [{"group": "apps", "resource": "deployments", "namespace": "production", "name": "web"}],
        },
    })
}

#[test]
fn the_request_names_the_ticket_the_target_and_the_requester() {
    let groups = vec!["devs".to_owned()];
    let body = TicketReview::new("CHG-1", &target(&groups)).to_body();
    let sent: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        sent,
        json!({
            "apiVersion": "tickets.warrant.dev/v1",
            "kind": "TicketReview",
            "spec": {
                "ticket": "CHG-1",
                "target": {"verb": "delete", "group": "apps", "resource": "deployments", "namespace": "production", "name": "web"},
                "requester": {"username": "alice", "groups": ["devs"]},
            },
        })
    );
}

#[test]
fn an_approved_answer_is_a_ticket_with_its_approvers_expiry_scope_and_targets() {
    let t = found(approved());
    assert_eq!(t.id, "CHG-1");
    assert_eq!(t.status, Status::Approved);
    assert_eq!(t.approvers, vec!["jira:bob", "jira:carol"]);
    assert_eq!(t.expires.to_rfc3339(), "2026-12-31T00:00:00+00:00");
    assert_eq!(t.scope.namespaces, vec!["production"]);
    assert_eq!(t.scope.resources, vec!["deployments.apps"]);
    assert_eq!(t.targets.len(), 1);
    assert_eq!(t.targets[0].name, "web");
    assert!(!t.single_use);
}

#[test]
fn each_phase_reads_as_its_status() {
    for (phase, status) in [
        ("Approved", Status::Approved),
        ("Pending", Status::Pending),
        ("Rejected", Status::Rejected),
        ("Expired", Status::Expired),
    ] {
        let mut a = approved();
        a["status"]["phase"] = json!(phase);
        assert_eq!(found(a).status, status, "{phase}");
    }
}

#[test]
fn approvers_count_once_each_and_never_the_requester() {
    let mut a = approved();
    a["status"]["approvers"] = json!([
        {"identity": "jira:bob"},
        {"identity": "jira:bob"},
        {"identity": "alice"},
    ]);
    assert_eq!(found(a).approvers, vec!["jira:bob"]);
}

#[test]
fn found_false_is_not_found() {
    let a = json!({"apiVersion": API_VERSION, "kind": "TicketReview", "status": {"found": false}});
    assert!(matches!(
        decode("CHG-1", "alice", a.to_string().as_bytes()),
        Ok(Looked::NotFound)
    ));
}

#[test]
fn answers_outside_the_contract_are_refused() {
    let mut wrong_version = approved();
    wrong_version["apiVersion"] = json!("tickets.warrant.dev/v2");
    let mut wrong_kind = approved();
    wrong_kind["kind"] = json!("Ticket");
    let mut no_phase = approved();
    no_phase["status"].as_object_mut().unwrap().remove("phase");
    let mut no_expiry = approved();
    no_expiry["status"]
        .as_object_mut()
        .unwrap()
        .remove("expiresAt");
    let mut bad_time = approved();
    bad_time["status"]["expiresAt"] = json!("tomorrow");
    let mut unknown_field = approved();
    unknown_field["status"]["target"] = json!([]);
    let mut used = approved();
    used["status"]["phase"] = json!("Used");
    let mut empty_identity = approved();
    empty_identity["status"]["approvers"] = json!([{"identity": ""}]);
    let rows: [(&str, String, &str); 10] = [
        ("not JSON", "<html>".into(), "not a TicketReview"),
        ("an array", "[]".into(), "not a TicketReview"),
        (
            "wrong apiVersion",
            wrong_version.to_string(),
            "apiVersion is \"tickets.warrant.dev/v2\"",
        ),
        ("wrong kind", wrong_kind.to_string(), "kind is \"Ticket\""),
        (
            "no status",
            json!({"apiVersion": API_VERSION, "kind": "TicketReview"}).to_string(),
            "has no status",
        ),
        ("no phase", no_phase.to_string(), "has no status.phase"),
        (
            "no expiry",
            no_expiry.to_string(),
            "has no status.expiresAt",
        ),
        (
            "bad time",
            bad_time.to_string(),
            "\"tomorrow\" is not an RFC 3339 time",
        ),
        (
            "a misspelled field",
            unknown_field.to_string(),
            "unknown field `target`",
        ),
        (
            "an empty identity",
            empty_identity.to_string(),
            "approvers[0].identity is empty",
        ),
    ];
    for (row, body, says) in rows {
        let e = refused(&body);
        assert!(e.to_string().contains(says), "{row}: {e}");
    }
    assert!(
        refused(&used.to_string())
            .to_string()
            .contains("unknown variant `Used`")
    );
}
