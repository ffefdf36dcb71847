//! The risk report: names listed per kind, every object counted.

use super::*;

/// Review finding M6: the report lists at most ten names per kind, with the counts.
#[test]
fn the_report_lists_ten_names_per_kind_and_counts_them_all() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(dir.path(), "");
    let names = |prefix: &str| (0..25).map(|i| format!("shop/{prefix}-{i:02}")).collect();
    let view = Fixed {
        dependents: Dependents {
            running_pods: 25,
            ingress_pods: 25,
            services: names("svc"),
            ingresses: names("ing"),
            bound_volumes: names("pvc"),
        },
        ..Fixed::default()
    };
    let j = judge(
        &g,
        &Request::delete(web(Some("critical"), None)),
        &view,
        IN_HOURS,
    );
    let impact = &j.assessment["impact"];
    assert_eq!(impact["target"], "shop/deployments.apps/web");
    for (list, count) in [
        ("services", "serviceCount"),
        ("ingresses", "ingressCount"),
        ("boundVolumes", "boundVolumeCount"),
    ] {
        assert_eq!(impact[list].as_array().unwrap().len(), 10, "{list}");
        assert_eq!(impact[count], 25, "{count}");
    }
}
