//! The risk model point for point: every factor alone, the thresholds that grade the score, and
//! configured weights replacing the model.

use super::*;

#[test]
fn the_risk_model_point_for_point() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(dir.path(), "");
    let w = RiskWeights::default();
    let view = Fixed {
        dependents: served_by(25),
        ..Fixed::default()
    };
    let j = judge(
        &g,
        &Request::delete(web(Some("critical"), None)),
        &view,
        IN_HOURS,
    );
    let qps = 25 * w.qps_per_pod;
    let parts = [
        (
            format!("critical: label {LABEL}=critical on deployments.apps web"),
            w.critical,
        ),
        ("25 running pods affected".to_owned(), w.many_pods),
        (
            format!("ingress shop/web reaches the target (~{qps} QPS)"),
            w.ingress,
        ),
        ("1 bound volumes affected".to_owned(), w.bound_volumes),
        ("business hours".to_owned(), w.business_hours),
    ];
    let score: u32 = parts.iter().map(|(_, p)| p).sum();
    assert_eq!(grade(score), "CRITICAL");
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::Deny, "MISSING_TICKET")
    );
    assert_eq!(j.assessment["riskScore"], score);
    assert_eq!(j.assessment["riskLevel"], "CRITICAL");
    assert_eq!(j.assessment["protection"], "critical");
    assert_eq!(j.assessment["riskReasons"], json!(reasons(&parts)));
    assert_eq!(
        j.assessment["impact"],
        json!({"target": "shop/deployments.apps/web", "runningPods": 25,
               "services": ["shop/web"], "serviceCount": 1, "ingresses": ["shop/web"],
               "ingressCount": 1, "boundVolumes": ["shop/data"], "boundVolumeCount": 1,
               "estimatedQps": qps,
               "traffic": {"source": "estimate", "requestsPerSecond": f64::from(qps)}})
    );
    assert!(
        j.message.ends_with(&format!(
            "(risk=CRITICAL score={score}: {})",
            reasons(&parts).join(", ")
        )),
        "{}",
        j.message
    );
    // The admission response's auditAnnotations carry the whole report.
    assert_eq!(j.annotations["code"], "MISSING_TICKET");
    assert_eq!(j.annotations["risk-level"], "CRITICAL");
    assert_eq!(j.annotations["risk-score"], score.to_string());
    let report: Value = serde_json::from_str(&j.annotations["report"]).unwrap();
    assert_eq!(report, j.assessment);
    assert!(!j.observed);
}

#[test]
fn each_factor_alone() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(dir.path(), "");
    let w = RiskWeights::default();
    let pods = |n: u32| Dependents {
        running_pods: n,
        ..Dependents::default()
    };
    let label = |l: &str| format!("{l}: label {LABEL}={l} on deployments.apps web");
    type Row = (
        &'static str,
        Option<&'static str>,
        Dependents,
        &'static str,
        Vec<(String, u32)>,
    );
    let rows: Vec<Row> = vec![
        ("nothing", None, pods(0), OUT_OF_HOURS, vec![]),
        (
            "standard label",
            Some("standard"),
            pods(0),
            OUT_OF_HOURS,
            vec![(label("standard"), 0)],
        ),
        (
            "high label",
            Some("high"),
            pods(0),
            OUT_OF_HOURS,
            vec![(label("high"), w.high)],
        ),
        (
            "critical label",
            Some("critical"),
            pods(0),
            OUT_OF_HOURS,
            vec![(label("critical"), w.critical)],
        ),
        // An unknown value still protects, at the lowest level; the value is reported as written.
        (
            "unknown label",
            Some("gold"),
            pods(0),
            OUT_OF_HOURS,
            vec![(
                format!("standard: label {LABEL}=gold on deployments.apps web"),
                0,
            )],
        ),
        (
            "one pod",
            None,
            pods(1),
            OUT_OF_HOURS,
            vec![("1 running pods affected".into(), w.some_pods)],
        ),
        (
            "just under many",
            None,
            pods(w.many_pods_at - 1),
            OUT_OF_HOURS,
            vec![(
                format!("{} running pods affected", w.many_pods_at - 1),
                w.some_pods,
            )],
        ),
        (
            "many pods",
            None,
            pods(w.many_pods_at),
            OUT_OF_HOURS,
            vec![(
                format!("{} running pods affected", w.many_pods_at),
                w.many_pods,
            )],
        ),
        (
            "an ingress, no pods",
            None,
            Dependents {
                ingresses: vec!["shop/a".into(), "shop/b".into()],
                ..Dependents::default()
            },
            OUT_OF_HOURS,
            vec![(
                "ingress shop/a and 1 more reaches the target (~0 QPS)".into(),
                w.ingress,
            )],
        ),
        (
            "bound volumes",
            None,
            Dependents {
                bound_volumes: vec!["shop/a".into(), "shop/b".into()],
                ..Dependents::default()
            },
            OUT_OF_HOURS,
            vec![("2 bound volumes affected".into(), w.bound_volumes)],
        ),
        (
            "business hours",
            None,
            pods(0),
            IN_HOURS,
            vec![("business hours".into(), w.business_hours)],
        ),
    ];
    for (name, level, dependents, now, parts) in rows {
        let view = Fixed {
            dependents,
            ..Fixed::default()
        };
        let j = judge(&g, &Request::delete(web(level, None)), &view, now);
        let score: u32 = parts.iter().map(|(_, p)| p).sum();
        assert_eq!(j.assessment["riskScore"], score, "{name}");
        assert_eq!(j.assessment["riskLevel"], grade(score), "{name}");
        assert_eq!(
            j.assessment["riskReasons"],
            json!(reasons(&parts)),
            "{name}"
        );
        // Below HIGH nothing asks for a ticket: the guard stands aside.
        assert_eq!(
            (j.decision, j.code.as_str()),
            (Decision::NoOpinion, "ALLOW"),
            "{name}"
        );
    }
}

#[test]
fn the_thresholds_grade_the_score() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(dir.path(), "");
    let w = RiskWeights::default();
    // high label + some pods + business hours, then + ingress, then + bound volumes.
    let rows = [
        (
            Dependents {
                running_pods: 1,
                ..Dependents::default()
            },
            w.high + w.some_pods + w.business_hours,
        ),
        (
            Dependents {
                running_pods: 1,
                ingress_pods: 1,
                ingresses: vec!["shop/i".into()],
                ..Dependents::default()
            },
            w.high + w.some_pods + w.ingress + w.business_hours,
        ),
        (
            Dependents {
                running_pods: 1,
                ingress_pods: 1,
                ingresses: vec!["shop/i".into()],
                bound_volumes: vec!["shop/v".into()],
                ..Dependents::default()
            },
            w.high + w.some_pods + w.ingress + w.bound_volumes + w.business_hours,
        ),
    ];
    for (dependents, score) in rows {
        let view = Fixed {
            dependents,
            ..Fixed::default()
        };
        let j = judge(
            &g,
            &Request::delete(web(Some("high"), None)),
            &view,
            IN_HOURS,
        );
        assert_eq!(j.assessment["riskScore"], score);
        let level = grade(score);
        assert_eq!(j.assessment["riskLevel"], level, "{score}");
        // HIGH and CRITICAL ask for a ticket; below that the guard stands aside.
        let want = if level == "HIGH" || level == "CRITICAL" {
            "MISSING_TICKET"
        } else {
            "ALLOW"
        };
        assert_eq!(j.code, want, "{score} {level}");
    }
}

#[test]
fn configured_weights_replace_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(
        dir.path(),
        "    riskWeights: {critical: 50, manyPods: 25, manyPodsAt: 5, ingress: 5, boundVolumes: 1, businessHours: 0, qpsPerPod: 7}\n",
    );
    let view = Fixed {
        dependents: served_by(6),
        ..Fixed::default()
    };
    let j = judge(
        &g,
        &Request::delete(web(Some("critical"), None)),
        &view,
        IN_HOURS,
    );
    assert_eq!(j.assessment["riskScore"], 50 + 25 + 5 + 1);
    assert_eq!(j.assessment["impact"]["estimatedQps"], 6 * 7);
    assert_eq!(
        j.assessment["riskReasons"][2],
        "ingress shop/web reaches the target (~42 QPS) +5"
    );
}

#[test]
fn the_traffic_weight_applies_from_its_threshold() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(
        dir.path(),
        "    riskWeights: {highTraffic: 12, highTrafficAt: 720, businessHours: 0}\n",
    );
    let w = RiskWeights::default();
    // 6 pods behind the Ingress: 720 req/s estimated, at the threshold; 5 pods: 600, under it.
    for (pods, weighed) in [(6, true), (5, false)] {
        let view = Fixed {
            dependents: served_by(pods),
            ..Fixed::default()
        };
        let j = judge(&g, &Request::delete(web(None, None)), &view, IN_HOURS);
        let qps = pods * w.qps_per_pod;
        let mut parts = vec![
            (format!("{pods} running pods affected"), w.some_pods),
            (
                format!("ingress shop/web reaches the target (~{qps} QPS)"),
                w.ingress,
            ),
        ];
        if weighed {
            parts.push((format!("traffic ~{qps} QPS >= 720 req/s"), 12));
        }
        parts.push(("1 bound volumes affected".to_owned(), w.bound_volumes));
        parts.push(("business hours".to_owned(), 0));
        assert_eq!(
            j.assessment["riskReasons"],
            json!(reasons(&parts)),
            "{pods}"
        );
        let score: u32 = parts.iter().map(|(_, p)| p).sum();
        assert_eq!(j.assessment["riskScore"], score, "{pods}");
        assert_eq!(j.assessment["impact"]["traffic"]["source"], "estimate");
    }
}

#[test]
fn a_live_query_naming_a_missing_label_falls_back_to_the_estimate() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(
        dir.path(),
        "    liveTraffic:\n      prometheus: {url: 'http://127.0.0.1:9'}\n      queries:\n      - {group: apps, resource: deployments, query: 'sum(rate(x{app=\"${label:app}\"}[2m]))'}\n",
    );
    let view = Fixed {
        dependents: served_by(2),
        ..Fixed::default()
    };
    let j = judge(&g, &Request::delete(web(None, None)), &view, IN_HOURS);
    assert_eq!(
        j.assessment["impact"]["traffic"],
        json!({"source": "estimate", "requestsPerSecond": 240.0,
               "fallback": {"reason": "missing_label", "message": "the target has no label \"app\""}})
    );
}
