//! Where rate-limit tokens are spent: collection deletes judged object by object, `rateLimitStage`,
//! and label changes that spend nothing.

use super::*;

/// A collection delete arrives once per object with an empty name; the name comes from the
/// object, so protection by name applies to each object.
#[test]
fn each_object_of_a_collection_delete_is_judged_by_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(
        dir.path(),
        "    protectedResources: [{group: apps, resource: deployments, names: [checkout], level: critical}]\n",
    );
    let swept = |name: &'static str| Request {
        name: "",
        ..Request::delete(object("Deployment", name, json!({}), json!({}), 0))
    };
    // critical (+40) in business hours (+10): HIGH, a ticket is required.
    let j = judge(&g, &swept("checkout"), &Fixed::default(), IN_HOURS);
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::Deny, "MISSING_TICKET")
    );
    assert!(
        j.message
            .contains("critical: protected deployments.apps checkout +40")
    );
    let j = judge(&g, &swept("cart"), &Fixed::default(), IN_HOURS);
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::NoOpinion, "ALLOW")
    );
}

#[test]
fn with_rate_limit_stage_admission_only_admitted_real_deletes_spend() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(
        dir.path(),
        "    rateLimitStage: Admission\n    rateLimits: [{group: apps, resource: deployments, count: 2, per: 1h}]\n",
    );
    let view = Fixed::default();
    let now = OUT_OF_HOURS;
    // The authorization ring only checks: five can-i's spend nothing.
    for _ in 0..5 {
        let v = g.judge(&sar_delete(now)).unwrap();
        assert_eq!(v.reason.unwrap().code.unwrap().as_str(), "ALLOW");
    }
    // Dry runs and refused deletes spend nothing either.
    let dry = Request {
        dry_run: true,
        ..Request::delete(web(None, None))
    };
    let refused = Request::delete(object("Deployment", "web", json!({}), json!({}), 0));
    let refused_critical = Request::delete(web(Some("critical"), None));
    for _ in 0..3 {
        assert_eq!(judge(&g, &dry, &view, now).code, "ALLOW");
        let served = Fixed {
            dependents: served_by(25),
            ..Fixed::default()
        };
        assert_eq!(
            judge(&g, &refused_critical, &served, IN_HOURS).code,
            "MISSING_TICKET"
        );
    }
    // Label updates spend nothing.
    let lowered = Request::update(web(Some("high"), None), web(None, Some("CHG-1")));
    assert_eq!(judge(&g, &lowered, &view, now).code, "ALLOW");
    // Two admitted deletes use the budget; the third is limited, in both rings.
    assert_eq!(judge(&g, &refused, &view, now).code, "ALLOW");
    assert_eq!(judge(&g, &refused, &view, now).code, "ALLOW");
    let j = judge(&g, &refused, &view, now);
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::Deny, "RATE_LIMITED")
    );
    let v = g.judge(&sar_delete(now)).unwrap();
    assert_eq!(v.reason.unwrap().code.unwrap().as_str(), "RATE_LIMITED");
    // A dry run is checked against the empty bucket too (it would be refused for real).
    assert_eq!(judge(&g, &dry, &view, now).code, "RATE_LIMITED");
}

#[test]
fn with_rate_limit_stage_authorization_admission_leaves_the_buckets_alone() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(
        dir.path(),
        "    rateLimits: [{group: apps, resource: deployments, count: 2, per: 1h}]\n",
    );
    let view = Fixed::default();
    for _ in 0..5 {
        let j = judge(&g, &Request::delete(web(None, None)), &view, OUT_OF_HOURS);
        assert_eq!(j.code, "ALLOW");
    }
    let code = |g: &DeletionGuard| {
        let v = g.judge(&sar_delete(OUT_OF_HOURS)).unwrap();
        v.reason.unwrap().code.unwrap().as_str().to_owned()
    };
    assert_eq!(
        (code(&g), code(&g), code(&g)),
        ("ALLOW".into(), "ALLOW".into(), "RATE_LIMITED".into())
    );
}

/// Review finding L3: a label change is not a delete: an empty delete budget does not stop a
/// ticketed label change.
#[test]
fn a_label_change_neither_waits_on_nor_spends_a_delete_budget() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(
        dir.path(),
        "    rateLimitStage: Admission\n    rateLimits: [{group: apps, resource: deployments, count: 1, per: 1h}]\n",
    );
    let view = Fixed::default();
    let delete = Request::delete(web(None, None));
    assert_eq!(judge(&g, &delete, &view, IN_HOURS).code, "ALLOW");
    assert_eq!(judge(&g, &delete, &view, IN_HOURS).code, "RATE_LIMITED");
    let ticketed = Request::update(web(Some("high"), Some("CHG-1")), web(None, Some("CHG-1")));
    let j = judge(&g, &ticketed, &view, IN_HOURS);
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::NoOpinion, "ALLOW")
    );
}
