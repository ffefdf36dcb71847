//! Tickets annotated on the object, and label tampering: lowering or removing the protection label
//! needs a ticket for the old level.

use super::*;

#[test]
fn a_ticket_annotated_on_the_object_is_checked_like_a_presented_one() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(dir.path(), "");
    let view = Fixed {
        dependents: served_by(25),
        ..Fixed::default()
    };
    let j = judge(
        &g,
        &Request::delete(web(Some("critical"), Some("CHG-1"))),
        &view,
        IN_HOURS,
    );
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::NoOpinion, "ALLOW_WITH_COOLDOWN")
    );
    assert_eq!(j.assessment["ticket"], "CHG-1");
    assert_eq!(j.annotations["code"], "ALLOW_WITH_COOLDOWN");

    let j = judge(
        &g,
        &Request::delete(web(Some("critical"), Some("CHG-PENDING"))),
        &view,
        IN_HOURS,
    );
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::Deny, "TICKET_NOT_APPROVED")
    );
    let j = judge(
        &g,
        &Request::delete(web(Some("critical"), Some("NOPE"))),
        &view,
        IN_HOURS,
    );
    assert_eq!(j.code, "TICKET_NOT_FOUND");
    // The user's extra key comes first.
    let presented = Request {
        extra_ticket: Some("CHG-1"),
        ..Request::delete(web(Some("critical"), Some("NOPE")))
    };
    assert_eq!(
        judge(&g, &presented, &view, IN_HOURS).code,
        "ALLOW_WITH_COOLDOWN"
    );
    // A missing ticket names both ways to present one.
    let j = judge(
        &g,
        &Request::delete(web(Some("critical"), None)),
        &view,
        IN_HOURS,
    );
    assert!(
        j.message.starts_with(&format!(
            "a change ticket is required (present it as user extra warrant.dev/ticket or annotation {ANNOTATION} on the object)"
        )),
        "{}",
        j.message
    );
}

#[test]
fn lowering_or_removing_the_label_needs_a_ticket_for_the_old_level() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(dir.path(), "");
    let view = Fixed::default();
    let rows = [
        (Some("standard"), "critical -> standard"),
        (Some("high"), "critical -> high"),
        (None, "critical -> removed"),
    ];
    for (to, says) in rows {
        let update = Request::update(web(Some("critical"), None), web(to, None));
        let j = judge(&g, &update, &view, OUT_OF_HOURS);
        assert_eq!(
            (j.decision, j.code.as_str()),
            (Decision::Deny, "MISSING_TICKET"),
            "{says}"
        );
        assert!(
            j.message.starts_with(&format!(
                "lowering the protection label ({says}) needs a change ticket for critical"
            )),
            "{}",
            j.message
        );
        assert_eq!(j.assessment["protection"], "critical");
    }
    // A valid ticket annotated in the same update covers it.
    let update = Request::update(web(Some("critical"), None), web(None, Some("CHG-1")));
    let j = judge(&g, &update, &view, OUT_OF_HOURS);
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::NoOpinion, "ALLOW")
    );
    assert_eq!(j.assessment["ticket"], "CHG-1");
}

/// An UPDATE that keeps or raises the label is none of the ring's business: it is not judged,
/// and the cluster view is not asked (a cache that is not ready does not block it).
#[test]
fn updates_that_keep_or_raise_the_label_are_not_judged() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(dir.path(), "");
    let broken = Fixed {
        not_ready: Some("pods not listed"),
        ..Fixed::default()
    };
    let rows = [
        (Some("critical"), Some("critical")),
        (Some("high"), Some("critical")),
        (None, Some("standard")),
        (None, None),
    ];
    for (from, to) in rows {
        let input = Request::update(web(from, None), web(to, None)).input(&broken, IN_HOURS);
        let got = block_on(try_judge(&g, &input)).unwrap();
        assert!(got.is_none(), "{from:?} -> {to:?}: {got:?}");
    }
}

/// Lowering a Namespace's own label is an update, not a deletion: the namespace-deletion
/// weight does not apply to it.
#[test]
fn lowering_a_namespace_label_is_not_a_namespace_deletion() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(dir.path(), "");
    let w = RiskWeights::default();
    let update = Request {
        new: Some(namespace_object(None, None)),
        operation: "UPDATE",
        ..namespace_delete(Some("high"), None)
    };
    let j = judge(&g, &update, &Fixed::default(), OUT_OF_HOURS);
    assert_eq!(j.code, "MISSING_TICKET");
    assert_eq!(
        j.assessment["riskReasons"],
        json!([format!("high: label {LABEL} lowered +{}", w.high)])
    );
    // The deletion of the same namespace carries it.
    let j = judge(
        &g,
        &namespace_delete(Some("high"), None),
        &Fixed::default(),
        OUT_OF_HOURS,
    );
    assert_eq!(
        j.assessment["riskReasons"][1],
        format!("namespace deletion +{}", w.namespace_deletion)
    );
}

/// Review finding H3: an UPDATE through `/status` keeps metadata changes for most kinds, so a
/// label lowered there is judged like one lowered on the object.
#[test]
fn lowering_the_label_through_the_status_subresource_needs_a_ticket() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(dir.path(), "");
    let view = Fixed::default();
    let request = Request::update(web(Some("critical"), None), web(None, None));
    let mut input = request.input(&view, IN_HOURS);
    let mut spec = input.review.spec().clone();
    if let Some(ra) = spec.resource_attributes.as_mut() {
        ra.subresource = Some("status".into());
    }
    input.review = crate::review::Review::new(input.review.version(), spec).unwrap();
    let j = block_on(try_judge(&g, &input)).unwrap().unwrap();
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::Deny, "MISSING_TICKET")
    );
}
