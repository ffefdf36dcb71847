//! The ticket write rules as tables, and the judgement of admission requests with a scripted
//! access review (the only fake: the real one asks kube-apiserver, in the tier tests).

use super::code::TicketCode;
use super::judge::TicketJudge;
use super::resource::{DeletionTicket, Phase, Signoff, TicketStatus};
use super::rules::{self, Change, Ruling, Wildcards, Writer};
use crate::admission::decode;
use crate::object::{AccessAnswer, AccessFuture, AccessQuestion, AccessReview, AccessReviewError};
use chrono::{DateTime, TimeZone, Utc};
use serde_json::{Value, json};
use std::sync::Mutex;
use std::time::Duration;

fn at(hour: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 4, hour, 0, 0).unwrap()
}

fn ticket_json(status: Value) -> Value {
    json!({
        "apiVersion": "warrant.dev/v1alpha1",
        "kind": "DeletionTicket",
        "metadata": {"name": "drop-db", "namespace": "shop"},
        "spec": {
            "requestedBy": "requester",
            "targets": [{"group": "apps", "resource": "statefulsets", "namespace": "shop", "name": "db"}],
            "reason": "retire the old database",
            "expiresAt": "2026-12-04T12:00:00Z",
            "singleUse": true
        },
        "status": status
    })
}

fn ticket(status: Value) -> DeletionTicket {
    serde_json::from_value(ticket_json(status)).unwrap()
}

fn approval(user: &str) -> Value {
    json!({"user": user, "time": "2026-12-04T10:00:00Z", "comment": "ok"})
}

fn used_for() -> Value {
    json!({"group": "apps", "resource": "statefulsets", "namespace": "shop", "name": "db", "uid": "u-db"})
}

fn writer(user: &str) -> Writer<'_> {
    Writer { user, own: false }
}

#[track_caller]
fn refused(result: Result<Ruling, super::Refusal>, code: TicketCode) {
    match result {
        Err(r) => assert_eq!(r.code, code, "{}", r.message),
        Ok(ruling) => panic!("admitted as {ruling:?}, want {}", code.as_str()),
    }
}

#[test]
fn a_ticket_reads_and_writes_as_the_crd_spells_it() {
    let t = ticket(json!({"phase": "Approved", "approvals": [approval("a1")]}));
    assert_eq!(t.spec.expires_at, at(12));
    assert!(t.spec.single_use);
    assert_eq!(t.status.as_ref().unwrap().phase(), Phase::Approved);
    let back = serde_json::to_value(&t).unwrap();
    assert_eq!(back["spec"]["expiresAt"], "2026-12-04T12:00:00Z");
    assert_eq!(
        back["status"]["approvals"][0]["time"],
        "2026-12-04T10:00:00Z"
    );
    assert_eq!(back["apiVersion"], "warrant.dev/v1alpha1");
    assert!(back["status"].get("rejection").is_none());
    // A ticket with no status is Pending.
    let bare: DeletionTicket = serde_json::from_value({
        let mut v = ticket_json(Value::Null);
        v.as_object_mut().unwrap().remove("status");
        v
    })
    .unwrap();
    assert_eq!(super::resource::status_of(&bare).phase(), Phase::Pending);
}

#[test]
fn a_ticket_names_its_creator_and_is_not_born_expired() {
    let t = ticket(json!({}));
    assert_eq!(
        rules::create(&t, writer("requester"), at(10), Wildcards::Forbidden),
        Ok(Ruling::Admit(Change::Created))
    );
    refused(
        rules::create(&t, writer("mallory"), at(10), Wildcards::Forbidden),
        TicketCode::TicketRequesterMismatch,
    );
    refused(
        rules::create(&t, writer("requester"), at(12), Wildcards::Forbidden),
        TicketCode::TicketExpiresInPast,
    );
}

/// A ticket whose targets are `targets`.
fn targeting(targets: Value) -> DeletionTicket {
    let mut v = ticket_json(json!({}));
    v["spec"]["targets"] = targets;
    serde_json::from_value(v).unwrap()
}

#[test]
fn selector_targets_are_checked_at_create_as_kubernetes_checks_selectors() {
    let sts = |target: Value| {
        let mut t = json!({"group": "apps", "resource": "statefulsets", "namespace": "shop"});
        t.as_object_mut()
            .unwrap()
            .extend(target.as_object().unwrap().clone());
        targeting(json!([t]))
    };
    // (row, target, code when forbidden, code when allowed, what the message says)
    let refused = |code| Some(code);
    let rows = [
        (
            "labels",
            sts(json!({"selector": {"matchLabels": {"app": "db"}}})),
            None,
            None,
            "",
        ),
        (
            "expression",
            sts(
                json!({"selector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["db"]}]}}),
            ),
            None,
            None,
            "",
        ),
        (
            "empty",
            sts(json!({"selector": {}})),
            refused(TicketCode::TicketWildcardTarget),
            None,
            "spec.targets[0].selector is empty and would cover every statefulsets in its namespace",
        ),
        (
            "both",
            sts(json!({"name": "db", "selector": {"matchLabels": {"app": "db"}}})),
            refused(TicketCode::TicketMalformed),
            refused(TicketCode::TicketMalformed),
            "spec.targets[0] has both name and selector",
        ),
        (
            "neither",
            sts(json!({})),
            refused(TicketCode::TicketMalformed),
            refused(TicketCode::TicketMalformed),
            "spec.targets[0] has neither name nor selector",
        ),
        (
            "In without values",
            sts(json!({"selector": {"matchExpressions": [{"key": "app", "operator": "In"}]}})),
            refused(TicketCode::TicketMalformed),
            refused(TicketCode::TicketMalformed),
            "spec.targets[0].selector.matchExpressions[0]: must have values with In and NotIn",
        ),
    ];
    for (row, t, forbidden, allowed, says) in rows {
        for (wildcards, want) in [
            (Wildcards::Forbidden, forbidden),
            (Wildcards::Allowed, allowed),
        ] {
            match (
                rules::create(&t, writer("requester"), at(10), wildcards),
                want,
            ) {
                (Ok(r), None) => assert_eq!(r, Ruling::Admit(Change::Created), "{row}"),
                (Err(r), Some(code)) => {
                    assert_eq!(r.code, code, "{row}");
                    assert!(r.message.contains(says), "{row}: {}", r.message);
                }
                (got, _) => panic!("{row} with {wildcards:?}: {got:?}"),
            }
        }
    }
}

#[test]
fn wildcard_targets_are_refused_at_create_unless_the_profile_allows_them() {
    let sts = |namespace: &str, name: &str| json!([{"group": "apps", "resource": "statefulsets", "namespace": namespace, "name": name}]);
    // (row, targets, refused when forbidden, refused when allowed, what the message says)
    let rows = [
        ("exact", sts("shop", "db"), false, false, ""),
        (
            "name *",
            sts("shop", "*"),
            true,
            false,
            "spec.targets[0].name is \"*\"",
        ),
        (
            "name pattern",
            sts("shop", "db-*"),
            true,
            false,
            "spec.targets[0].name is \"db-*\"",
        ),
        (
            "namespace *",
            sts("*", "db"),
            true,
            false,
            "spec.targets[0].namespace is \"*\"",
        ),
        ("no targets", json!([]), true, true, "spec.targets is empty"),
        (
            "resource *",
            json!([{"group": "apps", "resource": "*", "namespace": "shop", "name": "db"}]),
            true,
            true,
            "spec.targets[0].resource is \"*\"",
        ),
        (
            "group *",
            json!([{"group": "*", "resource": "statefulsets", "namespace": "shop", "name": "db"}]),
            true,
            true,
            "spec.targets[0].group is \"*\"",
        ),
        (
            "second target",
            json!([{"resource": "pods", "namespace": "shop", "name": "a"}, {"resource": "pods", "namespace": "shop", "name": "*"}]),
            true,
            false,
            "spec.targets[1].name",
        ),
    ];
    for (row, targets, forbidden, allowed, says) in rows {
        let t = targeting(targets);
        for (wildcards, refuse) in [
            (Wildcards::Forbidden, forbidden),
            (Wildcards::Allowed, allowed),
        ] {
            let got = rules::create(&t, writer("requester"), at(10), wildcards);
            match (got, refuse) {
                (Ok(r), false) => assert_eq!(r, Ruling::Admit(Change::Created), "{row}"),
                (Err(r), true) => {
                    assert_eq!(r.code, TicketCode::TicketWildcardTarget, "{row}");
                    assert!(r.message.contains(says), "{row}: {}", r.message);
                }
                (got, _) => panic!("{row} with {wildcards:?}: {got:?}"),
            }
        }
    }
    let refusal = rules::create(
        &targeting(sts("shop", "*")),
        writer("requester"),
        at(10),
        Wildcards::Forbidden,
    )
    .unwrap_err();
    assert_eq!(
        refusal.to_string(),
        "spec.targets[0].name is \"*\": this cluster's tickets name each object exactly (tickets.allowWildcardTargets is false); list the objects one by one [TICKET_WILDCARD_TARGET]"
    );
}

#[test]
fn the_spec_never_changes() {
    let old = ticket(json!({}));
    let mut new = old.clone();
    new.metadata.labels = Some([("team".to_owned(), "shop".to_owned())].into());
    assert_eq!(
        rules::update(&old, &new),
        Ok(Ruling::Admit(Change::Updated))
    );
    new.spec.requested_by = "approver1".into();
    refused(rules::update(&old, &new), TicketCode::TicketSpecImmutable);
    let mut new = old.clone();
    new.spec.targets[0].name = "other".into();
    refused(rules::update(&old, &new), TicketCode::TicketSpecImmutable);
}

/// Status writes: (name, stored status, written status, writer, own identity, now, expected).
#[test]
fn status_writes_follow_the_phase_rules() {
    type Want = Result<Ruling, TicketCode>;
    let admit = |c| Ok(Ruling::Admit(c));
    let if_approver = |c| Ok(Ruling::IfApprover(c));
    let rows: Vec<(&str, Value, Value, &str, bool, u32, Want)> = vec![
        (
            "first approval",
            json!({}),
            json!({"approvals": [approval("a1")]}),
            "a1",
            false,
            10,
            if_approver(Change::Approved),
        ),
        (
            "first approval sets Approved",
            json!({}),
            json!({"phase": "Approved", "approvals": [approval("a1")]}),
            "a1",
            false,
            10,
            if_approver(Change::Approved),
        ),
        (
            "second approval",
            json!({"phase": "Approved", "approvals": [approval("a1")]}),
            json!({"phase": "Approved", "approvals": [approval("a1"), approval("a2")]}),
            "a2",
            false,
            10,
            if_approver(Change::Approved),
        ),
        (
            "self approval",
            json!({}),
            json!({"approvals": [approval("requester")]}),
            "requester",
            false,
            10,
            Err(TicketCode::TicketSelfApproval),
        ),
        (
            "forged approver",
            json!({}),
            json!({"approvals": [approval("a2")]}),
            "a1",
            false,
            10,
            Err(TicketCode::TicketApproverForged),
        ),
        (
            "requester forging an approver",
            json!({}),
            json!({"approvals": [approval("a1")]}),
            "requester",
            false,
            10,
            Err(TicketCode::TicketApproverForged),
        ),
        (
            "approving twice",
            json!({"approvals": [approval("a1")]}),
            json!({"approvals": [approval("a1"), approval("a1")]}),
            "a1",
            false,
            10,
            Err(TicketCode::TicketAlreadyApproved),
        ),
        (
            "two approvals at once",
            json!({}),
            json!({"approvals": [approval("a1"), approval("a2")]}),
            "a1",
            false,
            10,
            Err(TicketCode::TicketApprovalsRewritten),
        ),
        (
            "an approval removed",
            json!({"approvals": [approval("a1")]}),
            json!({}),
            "a2",
            false,
            10,
            Err(TicketCode::TicketApprovalsRewritten),
        ),
        (
            "an approval replaced",
            json!({"approvals": [approval("a1")]}),
            json!({"approvals": [approval("a2")]}),
            "a2",
            false,
            10,
            Err(TicketCode::TicketApprovalsRewritten),
        ),
        (
            "approving an expired ticket",
            json!({}),
            json!({"approvals": [approval("a1")]}),
            "a1",
            false,
            13,
            Err(TicketCode::TicketExpired),
        ),
        (
            "approving and rejecting at once",
            json!({}),
            json!({"phase": "Rejected", "approvals": [approval("a1")]}),
            "a1",
            false,
            10,
            Err(TicketCode::TicketPhaseTransition),
        ),
        (
            "approving back to Pending",
            json!({"phase": "Approved", "approvals": [approval("a1")]}),
            json!({"phase": "Pending", "approvals": [approval("a1"), approval("a2")]}),
            "a2",
            false,
            10,
            Err(TicketCode::TicketPhaseTransition),
        ),
        (
            "Approved without an approval",
            json!({}),
            json!({"phase": "Approved"}),
            "a1",
            false,
            10,
            Err(TicketCode::TicketPhaseTransition),
        ),
        (
            "rejection",
            json!({}),
            json!({"phase": "Rejected", "rejection": approval("a1")}),
            "a1",
            false,
            10,
            if_approver(Change::Rejected),
        ),
        (
            "withdrawal by the requester",
            json!({}),
            json!({"phase": "Rejected", "rejection": approval("requester")}),
            "requester",
            false,
            10,
            admit(Change::Withdrawn),
        ),
        (
            "forged rejection",
            json!({}),
            json!({"phase": "Rejected", "rejection": approval("a2")}),
            "a1",
            false,
            10,
            Err(TicketCode::TicketApproverForged),
        ),
        (
            "Rejected without a rejection",
            json!({}),
            json!({"phase": "Rejected"}),
            "a1",
            false,
            10,
            Err(TicketCode::TicketPhaseTransition),
        ),
        (
            "Used by warrant",
            json!({"phase": "Approved", "approvals": [approval("a1")]}),
            json!({"phase": "Used", "approvals": [approval("a1")], "usedAt": "2026-12-04T11:00:00Z", "usedFor": used_for()}),
            "warrant",
            true,
            11,
            admit(Change::Used),
        ),
        (
            "Used without usedFor",
            json!({"phase": "Approved", "approvals": [approval("a1")]}),
            json!({"phase": "Used", "approvals": [approval("a1")], "usedAt": "2026-12-04T11:00:00Z"}),
            "warrant",
            true,
            11,
            Err(TicketCode::TicketPhaseTransition),
        ),
        (
            "Used by anyone else",
            json!({"phase": "Approved", "approvals": [approval("a1")]}),
            json!({"phase": "Used", "approvals": [approval("a1")], "usedAt": "2026-12-04T11:00:00Z"}),
            "a1",
            false,
            11,
            Err(TicketCode::TicketPhaseTransition),
        ),
        (
            "Used without usedAt",
            json!({"phase": "Approved"}),
            json!({"phase": "Used"}),
            "warrant",
            true,
            11,
            Err(TicketCode::TicketPhaseTransition),
        ),
        (
            "Expired after expiresAt",
            json!({}),
            json!({"phase": "Expired"}),
            "anyone",
            false,
            12,
            admit(Change::Expired),
        ),
        (
            "Expired before expiresAt",
            json!({}),
            json!({"phase": "Expired"}),
            "anyone",
            false,
            11,
            Err(TicketCode::TicketPhaseTransition),
        ),
        (
            "a used ticket stays used",
            json!({"phase": "Used", "usedAt": "2026-12-04T11:00:00Z"}),
            json!({"phase": "Approved", "usedAt": "2026-12-04T11:00:00Z"}),
            "warrant",
            true,
            11,
            Err(TicketCode::TicketClosed),
        ),
        (
            "no approval after rejection",
            json!({"phase": "Rejected", "rejection": approval("a1")}),
            json!({"phase": "Rejected", "rejection": approval("a1"), "approvals": [approval("a2")]}),
            "a2",
            false,
            10,
            Err(TicketCode::TicketClosed),
        ),
        (
            "unchanged status of a closed ticket",
            json!({"phase": "Used", "usedAt": "2026-12-04T11:00:00Z"}),
            json!({"phase": "Used", "usedAt": "2026-12-04T11:00:00Z"}),
            "a1",
            false,
            10,
            admit(Change::Unchanged),
        ),
        (
            "no phase is Pending",
            json!({}),
            json!({"phase": "Pending"}),
            "a1",
            false,
            10,
            admit(Change::Unchanged),
        ),
    ];
    for (name, before, after, user, own, hour, want) in rows {
        let got = rules::status(
            &ticket(before),
            &ticket(after),
            Writer { user, own },
            at(hour),
        )
        .map_err(|r| r.code);
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn every_refusal_message_reads_as_a_sentence_with_its_code() {
    let r = rules::status(
        &ticket(json!({})),
        &ticket(json!({"approvals": [approval("requester")]})),
        writer("requester"),
        at(10),
    )
    .unwrap_err();
    assert_eq!(
        r.to_string(),
        "\"requester\" requested this ticket and cannot approve it [TICKET_SELF_APPROVAL]"
    );
}

/// An access review answering from a script, recording the questions asked.
#[derive(Debug)]
struct Scripted {
    answer: Result<AccessAnswer, AccessReviewError>,
    delay: Duration,
    asked: Mutex<Vec<AccessQuestion>>,
}

impl Scripted {
    fn new(answer: Result<AccessAnswer, AccessReviewError>) -> Self {
        Self {
            answer,
            delay: Duration::ZERO,
            asked: Mutex::new(Vec::new()),
        }
    }
}

impl AccessReview for Scripted {
    fn review<'a>(&'a self, question: &'a AccessQuestion) -> AccessFuture<'a> {
        self.asked.lock().unwrap().push(question.clone());
        Box::pin(async move {
            tokio::time::sleep(self.delay).await;
            self.answer.clone()
        })
    }
}

fn review(operation: &str, sub_resource: &str, old: Value, new: Value, user: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "u-1",
            "kind": {"group": "warrant.dev", "version": "v1alpha1", "kind": "DeletionTicket"},
            "resource": {"group": "warrant.dev", "version": "v1alpha1", "resource": "deletiontickets"},
            "subResource": sub_resource,
            "name": "drop-db",
            "namespace": "shop",
            "operation": operation,
            "userInfo": {"username": user, "uid": "uid-1", "groups": ["sre", "system:authenticated"], "extra": {"scopes": ["x"]}},
            "object": new,
            "oldObject": old,
        }
    }))
    .unwrap()
}

async fn judge(access: &Scripted, body: &[u8], hour: u32) -> super::Judgement {
    let request = decode(body).unwrap();
    assert!(super::is_ticket_request(&request));
    let own = ["system:serviceaccount:warrant-system:warrant".to_owned()];
    TicketJudge {
        access,
        own: &own,
        now: at(hour),
        budget: Duration::from_millis(200),
        wildcards: Wildcards::Forbidden,
    }
    .judge(&request)
    .await
}

#[tokio::test]
async fn an_approval_asks_the_cluster_with_the_writers_identity_never_the_body() {
    let allowed = Scripted::new(Ok(AccessAnswer::Allowed));
    let before = ticket_json(json!({}));
    let after = ticket_json(json!({"approvals": [approval("approver1")]}));
    let body = review(
        "UPDATE",
        "status",
        before.clone(),
        after.clone(),
        "approver1",
    );
    assert_eq!(judge(&allowed, &body, 10).await, Ok(Change::Approved));
    let asked = allowed.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    let q = &asked[0];
    assert_eq!(
        (
            q.user.as_str(),
            q.verb.as_str(),
            q.group.as_str(),
            q.resource.as_str()
        ),
        ("approver1", "approve", "warrant.dev", "deletiontickets")
    );
    assert_eq!((q.namespace.as_str(), q.name.as_str()), ("shop", "drop-db"));
    assert_eq!(q.groups, ["sre", "system:authenticated"]);
    assert_eq!(q.uid.as_deref(), Some("uid-1"));
    assert_eq!(q.extra["scopes"], ["x"]);

    let denied = Scripted::new(Ok(AccessAnswer::NotAllowed {
        reason: "no RBAC rule".into(),
    }));
    let r = judge(&denied, &body, 10).await.unwrap_err();
    assert_eq!(r.code, TicketCode::TicketApproverNotAuthorized);
    assert!(r.message.ends_with(": no RBAC rule"), "{}", r.message);

    // A forged approval is refused before the cluster is asked.
    let forged = review("UPDATE", "status", before, after, "bystander");
    let unasked = Scripted::new(Ok(AccessAnswer::Allowed));
    let r = judge(&unasked, &forged, 10).await.unwrap_err();
    assert_eq!(r.code, TicketCode::TicketApproverForged);
    assert!(unasked.asked.lock().unwrap().is_empty());
}

#[tokio::test]
async fn an_approval_the_cluster_cannot_verify_is_refused() {
    let body = review(
        "UPDATE",
        "status",
        ticket_json(json!({})),
        ticket_json(json!({"approvals": [approval("approver1")]})),
        "approver1",
    );
    let broken = Scripted::new(Err(AccessReviewError::NoCluster));
    let r = judge(&broken, &body, 10).await.unwrap_err();
    assert_eq!(r.code, TicketCode::TicketApproverUnverified);
    let mut slow = Scripted::new(Ok(AccessAnswer::Allowed));
    slow.delay = Duration::from_secs(5);
    let r = judge(&slow, &body, 10).await.unwrap_err();
    assert_eq!(r.code, TicketCode::TicketApproverUnverified);
    assert!(r.message.contains("no answer within"), "{}", r.message);
}

#[tokio::test]
async fn creates_updates_and_warrants_own_marks_are_judged_without_asking() {
    let never = Scripted::new(Err(AccessReviewError::NoCluster));
    let created = review(
        "CREATE",
        "",
        Value::Null,
        ticket_json(json!({})),
        "requester",
    );
    assert_eq!(judge(&never, &created, 10).await, Ok(Change::Created));
    let by_other = review("CREATE", "", Value::Null, ticket_json(json!({})), "mallory");
    assert_eq!(
        judge(&never, &by_other, 10).await.unwrap_err().code,
        TicketCode::TicketRequesterMismatch
    );
    let mut changed = ticket_json(json!({}));
    changed["spec"]["expiresAt"] = json!("2027-01-01T00:00:00Z");
    let update = review("UPDATE", "", ticket_json(json!({})), changed, "requester");
    assert_eq!(
        judge(&never, &update, 10).await.unwrap_err().code,
        TicketCode::TicketSpecImmutable
    );
    let used = review(
        "UPDATE",
        "status",
        ticket_json(json!({"phase": "Approved", "approvals": [approval("a1"), approval("a2")]})),
        ticket_json(
            json!({"phase": "Used", "approvals": [approval("a1"), approval("a2")], "usedAt": "2026-12-04T11:00:00Z", "usedFor": {"group": "apps", "resource": "statefulsets", "namespace": "shop", "name": "db", "uid": "u-db"}}),
        ),
        "system:serviceaccount:warrant-system:warrant",
    );
    assert_eq!(judge(&never, &used, 11).await, Ok(Change::Used));
    let mut malformed = ticket_json(json!({}));
    malformed["spec"]["expiresAt"] = json!("tomorrow");
    let bad = review("CREATE", "", Value::Null, malformed, "requester");
    assert_eq!(
        judge(&never, &bad, 10).await.unwrap_err().code,
        TicketCode::TicketMalformed
    );
    assert!(never.asked.lock().unwrap().is_empty());
    let status: TicketStatus = TicketStatus {
        phase: Some(Phase::Used),
        approvals: vec![Signoff {
            user: "a1".into(),
            time: at(10),
            comment: String::new(),
        }],
        ..Default::default()
    };
    assert!(status.phase().is_final());
}
