//! The buffer ring's guarded UPDATEs: the requester annotation is warrant's, a confirmation needs a
//! terminating object, a second person and a ticket, and removing the finalizer by hand needs a
//! ticket or break-glass.

use super::*;

const FINALIZER: &str = "warrant.dev/deletion-cooldown";
const CONFIRMATION: &str = "warrant.dev/deletion-confirmed";
const REQUESTER: &str = "warrant.dev/deletion-requested-by";
const OWN: &str = "system:serviceaccount:warrant-system:warrant";

/// A guard with a buffer block (defaults: deployments among the kinds, finalizeAt high).
fn buffered_guard(dir: &Path, extra: &str) -> DeletionGuard {
    guard(dir, &format!("    buffer: {{finalizeAt: high}}\n{extra}"))
}

/// `web` at `level` carrying the finalizer (when `finalized`), Terminating when `terminating`,
/// with `annotations`.
fn held(level: &str, finalized: bool, terminating: bool, annotations: Value) -> Value {
    let mut o = object("Deployment", "web", json!({LABEL: level}), annotations, 0);
    if finalized {
        o["metadata"]["finalizers"] = json!(["kubernetes.io/other", FINALIZER]);
    }
    if terminating {
        o["metadata"]["deletionTimestamp"] = json!("2026-12-02T22:59:00Z");
    }
    o
}

/// `o` with annotation `key` set to `value` (removed when `None`).
fn annotated(mut o: Value, key: &str, value: Option<&str>) -> Value {
    match value {
        Some(v) => o["metadata"]["annotations"][key] = json!(v),
        None => {
            if let Some(m) = o["metadata"]["annotations"].as_object_mut() {
                m.remove(key);
            }
        }
    }
    o
}

fn update_by(user: &'static str, old: Value, new: Value) -> Request {
    Request {
        user,
        ..Request::update(old, new)
    }
}

/// Only warrant's own service account sets, changes or removes the requester annotation:
/// anyone else is refused, break-glass included; on a kind outside `buffer.resources` the
/// annotation is nobody's business.
#[test]
fn the_requester_annotation_is_warrants_to_write() {
    let dir = tempfile::tempdir().unwrap();
    let g = buffered_guard(dir.path(), "    breakGlassGroups: [sre-break-glass]\n");
    let view = Fixed::default();
    let bare = held("critical", true, false, json!({}));
    let by_jane = annotated(bare.clone(), REQUESTER, Some("jane"));
    let rows = [
        ("set", bare.clone(), by_jane.clone()),
        (
            "changed",
            by_jane.clone(),
            annotated(bare.clone(), REQUESTER, Some("bob")),
        ),
        ("removed", by_jane.clone(), bare.clone()),
    ];
    for (what, old, new) in rows {
        for groups in [vec!["dev"], vec!["sre-break-glass"]] {
            let r = Request {
                groups,
                ..update_by("mallory", old.clone(), new.clone())
            };
            let j = judge(&g, &r, &view, OUT_OF_HOURS);
            assert_eq!(
                (j.decision, j.code.as_str()),
                (Decision::Deny, "REQUESTER_ANNOTATION_RESERVED"),
                "{what}: {}",
                j.message
            );
            assert!(
                j.message.contains(REQUESTER) && j.message.contains(OWN),
                "{}",
                j.message
            );
        }
    }
    // warrant's own account writes it (excluded from the rest of the guard).
    let own = update_by(OWN, bare.clone(), by_jane.clone());
    assert_eq!(judge(&g, &own, &view, OUT_OF_HOURS).code, "EXCLUDED");
    // The same annotation kept, or on a Service (not a buffer kind): not judged.
    let kept = update_by("mallory", by_jane.clone(), by_jane.clone());
    let input = kept.input(&view, OUT_OF_HOURS);
    assert!(block_on(try_judge(&g, &input)).unwrap().is_none());
    let service = Request {
        resource: "services",
        group: "",
        ..update_by("mallory", bare, by_jane)
    };
    let input = service.input(&view, OUT_OF_HOURS);
    assert!(block_on(try_judge(&g, &input)).unwrap().is_none());
}

/// A confirmation: refused on an object not Terminating, without a recorded requester, by the
/// requester, with an empty value or a ticket failing the checks for the object's level
/// (critical: two approvers); admitted for a second person with a valid ticket, naming it.
#[test]
fn a_confirmation_needs_a_terminating_object_a_second_person_and_a_ticket() {
    let dir = tempfile::tempdir().unwrap();
    let g = buffered_guard(dir.path(), "    breakGlassGroups: [sre-break-glass]\n");
    let view = Fixed::default();
    let requested = json!({REQUESTER: "jane"});
    let terminating = held("critical", true, true, requested.clone());
    let confirm = |old: &Value, user, ticket| {
        update_by(
            user,
            old.clone(),
            annotated(old.clone(), CONFIRMATION, Some(ticket)),
        )
    };
    let rows = [
        (
            confirm(
                &held("critical", true, false, requested.clone()),
                "bob",
                "CHG-1",
            ),
            "NOT_TERMINATING",
        ),
        (
            confirm(&held("critical", true, true, json!({})), "bob", "CHG-1"),
            "REQUESTER_UNKNOWN",
        ),
        (
            confirm(&terminating, "jane", "CHG-1"),
            "CONFIRMATION_BY_REQUESTER",
        ),
        (confirm(&terminating, "bob", ""), "MISSING_TICKET"),
        (confirm(&terminating, "bob", "CHG-NOPE"), "TICKET_NOT_FOUND"),
        (
            confirm(&terminating, "bob", "CHG-PENDING"),
            "TICKET_NOT_APPROVED",
        ),
        (
            confirm(&terminating, "bob", "CHG-ONE"),
            "INSUFFICIENT_APPROVALS",
        ),
    ];
    for (r, code) in rows {
        let j = judge(&g, &r, &view, OUT_OF_HOURS);
        assert_eq!(
            (j.decision, j.code.as_str()),
            (Decision::Deny, code),
            "{}",
            j.message
        );
    }
    // The requester is refused even as a break-glass member: break-glass removes the finalizer
    // instead of confirming.
    let glass = Request {
        groups: vec!["sre-break-glass"],
        ..confirm(&terminating, "jane", "CHG-1")
    };
    assert_eq!(
        judge(&g, &glass, &view, OUT_OF_HOURS).code,
        "CONFIRMATION_BY_REQUESTER"
    );
    // A high object needs one approver: CHG-ONE confirms it.
    let high = held("high", true, true, requested.clone());
    let j = judge(&g, &confirm(&high, "bob", "CHG-ONE"), &view, OUT_OF_HOURS);
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::NoOpinion, "ALLOW"),
        "{}",
        j.message
    );
    // The second person with a valid ticket.
    let j = judge(
        &g,
        &confirm(&terminating, "bob", "CHG-1"),
        &view,
        OUT_OF_HOURS,
    );
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::NoOpinion, "ALLOW"),
        "{}",
        j.message
    );
    assert_eq!(j.assessment["ticket"], "CHG-1");
    // Keeping the same confirmation (another field changed) is not a new confirmation.
    let confirmed = annotated(terminating, CONFIRMATION, Some("CHG-1"));
    let again = update_by(
        "jane",
        confirmed.clone(),
        annotated(confirmed, "x", Some("y")),
    );
    let input = again.input(&view, OUT_OF_HOURS);
    assert!(block_on(try_judge(&g, &input)).unwrap().is_none());
}

/// Removing the finalizer from an object protected at finalizeAt or above needs a ticket (the
/// object's ticket annotation or the user extra) or break-glass; below it, or by warrant's own
/// account, it is not judged.
#[test]
fn removing_the_finalizer_by_hand_needs_a_ticket_or_break_glass() {
    let dir = tempfile::tempdir().unwrap();
    let g = buffered_guard(dir.path(), "    breakGlassGroups: [sre-break-glass]\n");
    let view = Fixed::default();
    let removal = |level, ticket: Option<&str>| {
        let old = held(level, true, true, json!({REQUESTER: "jane"}));
        let mut new = held(level, false, true, json!({REQUESTER: "jane"}));
        if let Some(t) = ticket {
            new = annotated(new, ANNOTATION, Some(t));
        }
        update_by("bob", old, new)
    };
    let j = judge(&g, &removal("critical", None), &view, OUT_OF_HOURS);
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::Deny, "MISSING_TICKET")
    );
    assert!(
        j.message.starts_with(&format!(
            "removing finalizer {FINALIZER} from an object protected at critical needs a change ticket for critical"
        )),
        "{}",
        j.message
    );
    let j = judge(&g, &removal("critical", Some("CHG-1")), &view, OUT_OF_HOURS);
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::NoOpinion, "ALLOW"),
        "{}",
        j.message
    );
    assert_eq!(j.assessment["ticket"], "CHG-1");
    let j = judge(
        &g,
        &removal("critical", Some("CHG-PENDING")),
        &view,
        OUT_OF_HOURS,
    );
    assert_eq!(j.code, "TICKET_NOT_APPROVED");
    let extra = Request {
        extra_ticket: Some("CHG-1"),
        ..removal("high", None)
    };
    assert_eq!(judge(&g, &extra, &view, OUT_OF_HOURS).code, "ALLOW");
    let glass = Request {
        groups: vec!["sre-break-glass"],
        ..removal("critical", None)
    };
    assert_eq!(judge(&g, &glass, &view, OUT_OF_HOURS).code, "BREAK_GLASS");
    let own = Request {
        user: OWN,
        ..removal("critical", None)
    };
    assert_eq!(judge(&g, &own, &view, OUT_OF_HOURS).code, "EXCLUDED");
    // Below finalizeAt (standard < high): the finalizer is not guarded.
    let input = removal("standard", None).input(&view, OUT_OF_HOURS);
    assert!(block_on(try_judge(&g, &input)).unwrap().is_none());
    // Without a buffer block, removing that finalizer is no business of the guard's.
    let plain = guard(dir.path(), "");
    let input = removal("critical", None).input(&view, OUT_OF_HOURS);
    assert!(block_on(try_judge(&plain, &input)).unwrap().is_none());
}
