//! The protection has two sides that add up: the namespace's and the object's, each counted once at
//! its highest level.

use super::*;

/// The protection has two sides that add up (the merge of the rings): the namespace's
/// (protected namespace rules, the namespace's label: the higher wins) and the object's
/// (protected resource rules, the object's label: the higher wins); the target's level is the
/// higher side.
#[test]
fn each_side_counts_once_at_its_highest_level_and_the_sides_add_up() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(
        dir.path(),
        "    protectedNamespaces: [{names: [shop], level: high}]\n",
    );
    let w = RiskWeights::default();
    let critical_ns = Fixed {
        namespace_level: Some("critical"),
        ..Fixed::default()
    };
    let object_label = |l: &str| format!("{l}: label {LABEL}={l} on deployments.apps web");
    let rows = [
        // The namespace's label (critical) beats its rule (high); the object adds its standard.
        (
            Some("standard"),
            &critical_ns,
            vec![
                (
                    format!("critical: label {LABEL}=critical on namespace shop"),
                    w.critical,
                ),
                (object_label("standard"), 0),
            ],
            "critical",
        ),
        // Without the namespace label, the rule (high) is the namespace side.
        (
            Some("standard"),
            &Fixed::default(),
            vec![
                ("high: protected namespace shop".to_owned(), w.high),
                (object_label("standard"), 0),
            ],
            "high",
        ),
        // Both sides protected: they add up; the target is at the higher one.
        (
            Some("high"),
            &critical_ns,
            vec![
                (
                    format!("critical: label {LABEL}=critical on namespace shop"),
                    w.critical,
                ),
                (object_label("high"), w.high),
            ],
            "critical",
        ),
    ];
    for (label, view, parts, protection) in rows {
        let j = judge(&g, &Request::delete(web(label, None)), view, OUT_OF_HOURS);
        let score: u32 = parts.iter().map(|(_, p)| p).sum();
        assert_eq!(j.assessment["riskReasons"], json!(reasons(&parts)));
        assert_eq!(j.assessment["riskScore"], score);
        assert_eq!(j.assessment["protection"], protection);
    }
}

/// A Namespace's own label is the namespace side of its protection (the protection label on
/// the namespace), so with a protected namespace rule naming it the higher wins: the same
/// namespace is not counted twice.
#[test]
fn a_namespace_label_and_a_rule_naming_that_namespace_count_once() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(
        dir.path(),
        "    protectedNamespaces: [{names: [shop], level: high}]\n",
    );
    let w = RiskWeights::default();
    let j = judge(
        &g,
        &namespace_delete(Some("critical"), None),
        &Fixed::default(),
        OUT_OF_HOURS,
    );
    let parts = [
        (
            format!("critical: label {LABEL}=critical on namespace shop"),
            w.critical,
        ),
        ("namespace deletion".to_owned(), w.namespace_deletion),
    ];
    assert_eq!(j.assessment["riskReasons"], json!(reasons(&parts)));
    assert_eq!(j.assessment["riskScore"], w.critical + w.namespace_deletion);
    // Lowering that label is judged at the namespace's old level, once, too.
    let lowered = Request {
        new: Some(namespace_object(Some("standard"), None)),
        operation: "UPDATE",
        ..namespace_delete(Some("critical"), None)
    };
    let j = judge(&g, &lowered, &Fixed::default(), OUT_OF_HOURS);
    assert_eq!(j.code, "MISSING_TICKET");
    assert_eq!(
        j.assessment["riskReasons"],
        json!([format!("critical: label {LABEL} lowered +{}", w.critical)])
    );
}
