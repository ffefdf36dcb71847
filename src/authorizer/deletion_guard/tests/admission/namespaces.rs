//! Deleting a namespace: judged at the level of the labelled objects it holds, with its own weight,
//! cascading with its running pods.

use super::*;

/// `(value, object, count)` as the view lists the labelled objects of a namespace.
fn holding(values: &[(&str, &str, u32)]) -> Fixed {
    let values = values
        .iter()
        .map(|(value, object, count)| LabelValue {
            value: (*value).to_owned(),
            object: (*object).to_owned(),
            count: *count,
        })
        .collect();
    Fixed {
        labelled: LabelValues {
            values,
            truncated: false,
        },
        ..Fixed::default()
    }
}

/// Deleting a Namespace deletes what it holds: an unlabelled namespace holding a Deployment
/// labelled critical (no replicas, no pods) is judged critical on its object side, naming the
/// Deployment, and needs a ticket for critical.
#[test]
fn a_namespace_holding_a_labelled_object_is_judged_at_its_level() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(dir.path(), "");
    let w = RiskWeights::default();
    let view = holding(&[
        ("critical", "deployments.apps/checkout", 1),
        ("high", "services/web", 2),
        ("gold", "persistentvolumeclaims/data", 1),
    ]);
    let j = judge(&g, &namespace_delete(None, None), &view, IN_HOURS);
    let parts = [
        (
            format!(
                "critical: namespace holds deployments.apps/checkout labelled {LABEL}=critical"
            ),
            w.critical,
        ),
        ("namespace deletion".to_owned(), w.namespace_deletion),
        ("business hours".to_owned(), w.business_hours),
    ];
    let score: u32 = parts.iter().map(|(_, p)| p).sum();
    assert_eq!(j.assessment["riskReasons"], json!(reasons(&parts)));
    assert_eq!(j.assessment["riskScore"], score);
    assert_eq!(j.assessment["riskLevel"], grade(score));
    assert_eq!(j.assessment["protection"], "critical");
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::Deny, "MISSING_TICKET")
    );
    assert!(
        j.message
            .contains("namespace holds deployments.apps/checkout"),
        "{}",
        j.message
    );
    // A ticket approved for critical, annotated on the namespace, lets it through.
    let j = judge(&g, &namespace_delete(None, Some("CHG-1")), &view, IN_HOURS);
    assert_eq!(j.decision, Decision::NoOpinion, "{}", j.message);
    assert_eq!(j.assessment["ticket"], "CHG-1");
    // The namespace's own label is the other side: both add up.
    let j = judge(
        &g,
        &namespace_delete(Some("high"), None),
        &view,
        OUT_OF_HOURS,
    );
    assert_eq!(
        j.assessment["riskScore"],
        w.high + w.critical + w.namespace_deletion
    );
    assert_eq!(
        j.assessment["riskReasons"][0],
        format!("high: label {LABEL}=high on namespace shop +{}", w.high)
    );
}

/// Values read as levels case-insensitively, unknown ones as standard; several objects with the
/// highest value are counted; more values than the view lists are judged critical.
#[test]
fn the_highest_held_label_wins_and_too_many_values_read_as_critical() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(dir.path(), "");
    let w = RiskWeights::default();
    let reason = |view: &Fixed| {
        let j = judge(&g, &namespace_delete(None, None), view, OUT_OF_HOURS);
        j.assessment["riskReasons"][0].as_str().unwrap().to_owned()
    };
    let view = holding(&[
        ("High", "deployments.apps/a", 3),
        ("gold", "deployments.apps/b", 1),
        ("high", "services/c", 1),
    ]);
    assert_eq!(
        reason(&view),
        format!(
            "high: namespace holds deployments.apps/a and 2 more labelled {LABEL}=High +{}",
            w.high
        )
    );
    let unknown = holding(&[("gold", "jobs.batch/b", 1)]);
    assert_eq!(
        reason(&unknown),
        format!(
            "standard: namespace holds jobs.batch/b labelled {LABEL}=gold +{}",
            w.level(crate::config::model::guard::Level::Standard)
        )
    );
    let mut many = holding(&[("standard", "pods/p", 1)]);
    many.labelled.truncated = true;
    assert_eq!(
        reason(&many),
        format!(
            "critical: namespace holds objects with more than {MAX_LABEL_VALUES} values of label {LABEL} (not all read) +{}",
            w.critical
        )
    );
    // Lowering the namespace's own label is an update: its contents are not asked about.
    let lowered = Request {
        new: Some(namespace_object(None, None)),
        operation: "UPDATE",
        ..namespace_delete(Some("high"), None)
    };
    let j = judge(&g, &lowered, &view, OUT_OF_HOURS);
    assert_eq!(
        j.assessment["riskReasons"],
        json!([format!("high: label {LABEL} lowered +{}", w.high)])
    );
}

#[test]
fn a_namespace_deletion_adds_its_weight_and_cascades_with_running_pods() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(dir.path(), "    cascadeProtection: true\n");
    let w = RiskWeights::default();
    let empty = Fixed::default();
    let j = judge(&g, &namespace_delete(None, None), &empty, OUT_OF_HOURS);
    assert_eq!(
        j.assessment["riskReasons"],
        json!([format!("namespace deletion +{}", w.namespace_deletion)])
    );
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::NoOpinion, "ALLOW")
    );

    let busy = Fixed {
        dependents: Dependents {
            running_pods: 3,
            ..Dependents::default()
        },
        ..Fixed::default()
    };
    let j = judge(&g, &namespace_delete(None, None), &busy, OUT_OF_HOURS);
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::Deny, "CASCADE_BLOCKED")
    );
    assert!(
        j.message.starts_with(
            "namespace shop still holds 3 running pods: deleting it cascades, a change ticket is required"
        ),
        "{}",
        j.message
    );
    assert_eq!(
        j.assessment["riskScore"],
        w.namespace_deletion + w.some_pods
    );
    // A valid ticket on the object lets it through.
    let j = judge(
        &g,
        &namespace_delete(None, Some("CHG-1")),
        &busy,
        OUT_OF_HOURS,
    );
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::NoOpinion, "ALLOW")
    );
    assert_eq!(j.assessment["ticket"], "CHG-1");
    // Without cascadeProtection, running pods only add to the score.
    let off = guard(dir.path(), "");
    let j = judge(&off, &namespace_delete(None, None), &busy, OUT_OF_HOURS);
    assert_eq!(j.code, "ALLOW");
}
