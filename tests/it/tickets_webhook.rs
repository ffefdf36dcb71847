//! A deletion guard whose tickets come from an external ticket system
//! (`tickets.source.webhook`), against a scripted HTTPS server on loopback that requires a client
//! certificate: the contract's answers as the guard's codes, approvers counted per level, the
//! TTLs of kept answers, identical lookups sharing one call, and every way the system can fail
//! to answer ending in the failure policy (reason, metric), never in a ticket.

use crate::support::*;
use crate::webhook::fault::{Behaviour, FaultServer};
use crate::webhook::{Kube, sample, write_kubeconfig};
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

/// The guard: `production` critical (2 approvals), `staging` high (1); `settings` are extra
/// lines of the webhook block, indented by 10.
fn config(kubeconfig: &Path, settings: &str) -> String {
    format!(
        "apiVersion: warrant.dev/v1alpha1
kind: AuthorizationConfiguration
authorizers:
- type: DeletionGuard
  name: guard
  failurePolicy: Deny
  guard:
    protectedNamespaces:
    - {{names: [production], level: critical}}
    - {{names: [staging], level: high}}
    tickets:
      requiredFor: [critical, high]
      approvals: {{critical: 2, high: 1}}
      source:
        webhook:
          kubeConfigFile: {}
{settings}- type: AlwaysAllow
  name: allow
",
        kubeconfig.display()
    )
}

struct Setup {
    system: FaultServer,
    w: Warrant,
    _dir: tempfile::TempDir,
}

/// The ticket system (client certificate required, bearer token expected) and a warrant asking
/// it with `settings`.
async fn setup(settings: &str, review_timeout: Option<Duration>) -> Setup {
    let client_ca = Ca::new("ticket-clients");
    let system = FaultServer::start(Some(&client_ca)).await;
    let leaf = client_ca.client("warrant");
    let dir = tempfile::tempdir().unwrap();
    let kc = write_kubeconfig(
        dir.path(),
        "tickets.yaml",
        &Kube {
            extra_user: "    token: s3cret-token\n",
            ..Kube::new(system.url("/tickets"), &system.ca.cert_pem).client(&leaf)
        },
    );
    let w = Warrant::start(Options {
        config: Some(config(&kc, settings)),
        review_timeout,
        ..Options::default()
    })
    .await;
    Setup {
        system,
        w,
        _dir: dir,
    }
}

/// A delete of Deployment `web` in `namespace` by alice, presenting `ticket`.
fn delete(namespace: &str, ticket: &str) -> String {
    json!({
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {
            "user": "alice",
            "groups": ["developers"],
            "extra": {"warrant.dev/ticket": [ticket]},
            "resourceAttributes": {"namespace": namespace, "verb": "delete", "group": "apps",
                "resource": "deployments", "name": "web"}
        }
    })
    .to_string()
}

/// An answer for a found ticket.
fn ticket(phase: &str, approvers: &[&str], expires_in: chrono::Duration) -> Behaviour {
    let approvers: Vec<Value> = approvers.iter().map(|a| json!({"identity": a})).collect();
    Behaviour::json(
        200,
        &json!({
            "apiVersion": "tickets.warrant.dev/v1",
            "kind": "TicketReview",
            "status": {
                "found": true,
                "phase": phase,
                "approvers": approvers,
                "expiresAt": (chrono::Utc::now() + expires_in).to_rfc3339(),
                "targets": [
                    {"group": "apps", "resource": "deployments", "namespace": "production", "name": "web"},
                    {"group": "apps", "resource": "deployments", "namespace": "staging", "name": "web"},
                ],
            }
        })
        .to_string(),
    )
}

fn day() -> chrono::Duration {
    chrono::Duration::days(1)
}

/// Asks `s` with the system answering `b`: the review's status and how many calls it made.
async fn ask_with(s: &Setup, body: &str, b: Behaviour) -> (Value, usize) {
    s.system.take_calls();
    s.system.always(b);
    let (code, v) = post_review(&s.w.client(), &s.w.url("/authorize"), body).await;
    assert_eq!(code, 200, "{v}");
    (v["status"].clone(), s.system.take_calls())
}

#[track_caller]
fn allowed(st: &Value) {
    assert_eq!(st["allowed"], true, "{st}");
}

#[track_caller]
fn refused(st: &Value, says: &str) {
    assert_eq!(st["allowed"], false, "{st}");
    assert_eq!(st["denied"], true, "{st}");
    assert!(st.to_string().contains(says), "wanted {says:?} in {st}");
}

async fn lookups(w: &Warrant, result: &str) -> f64 {
    sample(
        w,
        &format!("warrant_ticket_webhook_lookups_total{{name=\"guard\",result=\"{result}\"}}"),
    )
    .await
}

async fn cache(w: &Warrant, result: &str) -> f64 {
    sample(
        w,
        &format!(
            "warrant_ticket_webhook_cache_requests_total{{name=\"guard\",result=\"{result}\"}}"
        ),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approved_external_ticket_lets_the_delete_through_and_the_request_follows_the_contract()
{
    let s = setup("", None).await;
    let (st, calls) = ask_with(
        &s,
        &delete("production", "CHG-1"),
        ticket("Approved", &["jira:bob", "jira:carol"], day()),
    )
    .await;
    allowed(&st);
    assert_eq!(calls, 1);
    let (st, calls) = ask_with(&s, &delete("production", "CHG-1"), Behaviour::text(500, "")).await;
    allowed(&st);
    assert_eq!(calls, 0, "an Approved answer is kept");
    // What was sent: the contract's request, with the kubeconfig's token, to the exact URL.
    let (st, _) = ask_with(
        &s,
        &delete("production", "CHG-3"),
        ticket("Approved", &["a", "b"], day()),
    )
    .await;
    allowed(&st);
    s.system.take_calls();
    s.system.always(Behaviour::text(500, ""));
    let (code, _) = post_review(
        &s.w.client(),
        &s.w.url("/authorize"),
        &delete("production", "CHG-4"),
    )
    .await;
    assert_eq!(code, 200);
    let received = s.system.received();
    assert_eq!(received.len(), 1);
    let head = received[0].head.to_ascii_lowercase();
    assert!(head.starts_with("post /tickets http/1.1\r\n"), "{head}");
    assert!(
        head.contains("authorization: bearer s3cret-token\r\n"),
        "{head}"
    );
    assert!(
        head.contains("content-type: application/json\r\n"),
        "{head}"
    );
    let body: Value = serde_json::from_str(&received[0].body).unwrap();
    assert_eq!(
        body,
        json!({
            "apiVersion": "tickets.warrant.dev/v1",
            "kind": "TicketReview",
            "spec": {
                "ticket": "CHG-4",
                "target": {"verb": "delete", "group": "apps", "resource": "deployments",
                    "namespace": "production", "name": "web"},
                "requester": {"username": "alice", "groups": ["developers"]},
            }
        })
    );
    assert_eq!(lookups(&s.w, "approved").await, 2.0);
    assert_eq!(lookups(&s.w, "http_error").await, 1.0);
    assert_eq!(cache(&s.w, "hit").await, 1.0);
    s.w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvers_are_counted_against_the_approvals_of_the_targets_level() {
    let s = setup("          approvedTTL: 0s\n", None).await;
    let one = ticket("Approved", &["jira:bob"], day());
    // critical needs 2: one approver is not enough, wherever it comes from.
    let (st, _) = ask_with(&s, &delete("production", "CHG-1"), one.clone()).await;
    refused(&st, "INSUFFICIENT_APPROVALS");
    refused(
        &st,
        "ticket CHG-1 has 1 approver(s), critical target needs 2",
    );
    // high needs 1.
    let (st, _) = ask_with(&s, &delete("staging", "CHG-1"), one).await;
    allowed(&st);
    // The same identity twice, or the requester approving, does not make a second approver.
    let (st, _) = ask_with(
        &s,
        &delete("production", "CHG-1"),
        ticket("Approved", &["jira:bob", "jira:bob", "alice"], day()),
    )
    .await;
    refused(&st, "has 1 approver(s)");
    let (st, _) = ask_with(
        &s,
        &delete("production", "CHG-1"),
        ticket("Approved", &["jira:bob", "jira:carol"], day()),
    )
    .await;
    allowed(&st);
    s.w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rejected_pending_expired_and_unknown_tickets_are_refused_with_their_codes() {
    let s = setup(
        "          unapprovedTTL: 0s\n          approvedTTL: 0s\n",
        None,
    )
    .await;
    let two = ["jira:bob", "jira:carol"];
    let not_found = Behaviour::json(
        200,
        r#"{"apiVersion":"tickets.warrant.dev/v1","kind":"TicketReview","status":{"found":false}}"#,
    );
    let rows = [
        (
            ticket("Rejected", &two, day()),
            "TICKET_NOT_APPROVED",
            "ticket CHG-1 is Rejected, not Approved",
        ),
        (
            ticket("Pending", &[], day()),
            "TICKET_NOT_APPROVED",
            "is Pending",
        ),
        (
            ticket("Expired", &two, day()),
            "TICKET_EXPIRED",
            "ticket CHG-1 expired at",
        ),
        (
            ticket("Approved", &two, chrono::Duration::hours(-1)),
            "TICKET_EXPIRED",
            "ticket CHG-1 expired at",
        ),
        (not_found, "TICKET_NOT_FOUND", "ticket CHG-1 not found"),
    ];
    for (answer, code, says) in rows {
        let (st, calls) = ask_with(&s, &delete("production", "CHG-1"), answer).await;
        refused(&st, code);
        refused(&st, says);
        assert_eq!(calls, 1, "{code}");
    }
    // A ticket for another object is out of scope.
    let other = json!({"group": "apps", "resource": "deployments", "namespace": "production", "name": "api"});
    let mut answer = json!({"apiVersion": "tickets.warrant.dev/v1", "kind": "TicketReview",
        "status": {"found": true, "phase": "Approved", "approvers": [{"identity": "a"}, {"identity": "b"}],
            "expiresAt": (chrono::Utc::now() + day()).to_rfc3339(), "targets": [other]}});
    let (st, _) = ask_with(
        &s,
        &delete("production", "CHG-1"),
        Behaviour::json(200, &answer.to_string()),
    )
    .await;
    refused(&st, "TICKET_SCOPE");
    answer["status"]["targets"] = json!([]);
    answer["status"]["scope"] = json!({"namespaces": ["staging"]});
    let (st, _) = ask_with(
        &s,
        &delete("production", "CHG-1"),
        Behaviour::json(200, &answer.to_string()),
    )
    .await;
    refused(&st, "TICKET_SCOPE");
    assert_eq!(lookups(&s.w, "rejected").await, 1.0);
    assert_eq!(lookups(&s.w, "pending").await, 1.0);
    assert_eq!(lookups(&s.w, "expired").await, 1.0);
    assert_eq!(lookups(&s.w, "not_found").await, 1.0);
    s.w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_are_kept_for_their_own_ttls_and_failures_never() {
    let s = setup(
        "          approvedTTL: 1h\n          unapprovedTTL: 3s\n",
        None,
    )
    .await;
    let pending = ticket("Pending", &[], day());
    let approved = ticket("Approved", &["jira:bob", "jira:carol"], day());
    // Negative answers: kept for unapprovedTTL, then asked again.
    let (st, calls) = ask_with(&s, &delete("production", "CHG-1"), pending.clone()).await;
    refused(&st, "is Pending");
    assert_eq!(calls, 1);
    let (st, calls) = ask_with(&s, &delete("production", "CHG-1"), approved.clone()).await;
    refused(&st, "is Pending");
    assert_eq!(calls, 0, "a Pending answer is kept for unapprovedTTL");
    tokio::time::sleep(Duration::from_millis(3100)).await;
    let (st, calls) = ask_with(&s, &delete("production", "CHG-1"), approved).await;
    allowed(&st);
    assert_eq!(calls, 1, "after unapprovedTTL the system is asked again");
    // Positive answers: kept for approvedTTL, even while the system fails.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (st, calls) = ask_with(
        &s,
        &delete("production", "CHG-1"),
        Behaviour::text(503, "down"),
    )
    .await;
    allowed(&st);
    assert_eq!(calls, 0, "an Approved answer is kept for approvedTTL");
    // Another question (another target) is another key; failures are asked again every time.
    for _ in 0..2 {
        let (st, calls) = ask_with(
            &s,
            &delete("staging", "CHG-1"),
            Behaviour::text(503, "down"),
        )
        .await;
        refused(&st, "the ticket webhook answered HTTP 503: down");
        assert_eq!(calls, 1, "a failure is never kept");
    }
    assert_eq!(cache(&s.w, "hit").await, 2.0);
    assert_eq!(cache(&s.w, "miss").await, 4.0);
    s.w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identical_concurrent_lookups_share_one_call() {
    let s = setup(
        "          unapprovedTTL: 0s\n          approvedTTL: 0s\n",
        None,
    )
    .await;
    s.system.take_calls();
    s.system.always(
        ticket("Approved", &["jira:bob", "jira:carol"], day()).after(Duration::from_millis(400)),
    );
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let (c, url) = (s.w.client(), s.w.url("/authorize"));
        tasks.push(tokio::spawn(async move {
            post_review(&c, &url, &delete("production", "CHG-1")).await
        }));
    }
    for t in tasks {
        let (code, v) = t.await.unwrap();
        assert_eq!(code, 200);
        allowed(&v["status"]);
    }
    assert_eq!(s.system.take_calls(), 1);
    assert_eq!(cache(&s.w, "coalesced").await, 7.0);
    s.w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_system_that_cannot_answer_gets_the_failure_policy_with_reason_and_metric() {
    let s = setup(
        "          timeout: 300ms\n          unapprovedTTL: 1h\n",
        Some(Duration::from_secs(3)),
    )
    .await;
    let answer = |body: Value| Behaviour::json(200, &body.to_string());
    let wrong_version = json!({"apiVersion": "tickets.warrant.dev/v2", "kind": "TicketReview",
        "status": {"found": true, "phase": "Approved", "approvers": [{"identity": "a"}, {"identity": "b"}],
            "expiresAt": (chrono::Utc::now() + day()).to_rfc3339()}});
    let misspelled = {
        let mut m = wrong_version.clone();
        m["apiVersion"] = json!("tickets.warrant.dev/v1");
        m["status"]["target"] = json!([]);
        m
    };
    let rows: Vec<(Behaviour, &str, &str)> = vec![
        (
            Behaviour::text(500, "boom"),
            "the ticket webhook answered HTTP 500: boom",
            "http_error",
        ),
        (
            Behaviour::json(404, "{}"),
            "the ticket webhook answered HTTP 404",
            "http_error",
        ),
        (
            Behaviour::json(200, "{not json"),
            "the ticket webhook's answer is malformed",
            "malformed",
        ),
        (
            answer(wrong_version),
            "apiVersion is \\\"tickets.warrant.dev/v2\\\"",
            "malformed",
        ),
        (answer(misspelled), "unknown field `target`", "malformed"),
        (
            ticket("Approved", &["a", "b"], day()).after(Duration::from_secs(2)),
            "the ticket webhook did not answer within 300 ms",
            "timeout",
        ),
        (
            Behaviour::Reset,
            "the ticket webhook is unreachable",
            "unreachable",
        ),
    ];
    for (i, (b, says, result)) in rows.into_iter().enumerate() {
        let id = format!("CHG-{i}");
        let before = lookups(&s.w, result).await;
        let (st, _) = ask_with(&s, &delete("production", &id), b).await;
        refused(&st, &format!("ticket source unavailable: ticket {id}: "));
        refused(&st, says);
        assert_eq!(lookups(&s.w, result).await, before + 1.0, "{says}");
    }
    assert_eq!(lookups(&s.w, "http_error").await, 2.0);
    assert_eq!(lookups(&s.w, "malformed").await, 3.0);
    assert_eq!(lookups(&s.w, "timeout").await, 1.0);
    assert_eq!(lookups(&s.w, "unreachable").await, 1.0);
    // A request that needs no ticket never asks.
    let (st, calls) = ask_with(&s, &delete("dev", "CHG-9"), Behaviour::text(500, "")).await;
    allowed(&st);
    assert_eq!(calls, 0);
    s.w.stop().await;
    // The system gone altogether: connection refused.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let dir = tempfile::tempdir().unwrap();
    let ca = Ca::new("nobody");
    let kc = write_kubeconfig(
        dir.path(),
        "gone.yaml",
        &Kube::new(format!("https://127.0.0.1:{port}/"), &ca.cert_pem),
    );
    let w = Warrant::start(Options {
        config: Some(config(&kc, "")),
        ..Options::default()
    })
    .await;
    let (code, v) = post_review(
        &w.client(),
        &w.url("/authorize"),
        &delete("production", "CHG-1"),
    )
    .await;
    assert_eq!(code, 200);
    refused(
        &v["status"],
        "the ticket webhook is unreachable: cannot connect",
    );
    assert_eq!(lookups(&w, "unreachable").await, 1.0);
    w.stop().await;
}
