//! Cascades: workloads with replicas, custom resource definitions with objects, daemon sets running
//! pods.

use super::*;

#[test]
fn workloads_with_replicas_and_crds_with_objects_cascade() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(dir.path(), "    cascadeProtection: true\n");
    let view = Fixed::default();
    let scaled = object("Deployment", "web", json!({}), json!({}), 3);
    let j = judge(&g, &Request::delete(scaled.clone()), &view, OUT_OF_HOURS);
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::Deny, "CASCADE_BLOCKED")
    );
    assert!(
        j.message
            .starts_with("deployments web still has 3 replicas"),
        "{}",
        j.message
    );
    let ticketed = object(
        "Deployment",
        "web",
        json!({}),
        json!({ANNOTATION: "CHG-1"}),
        3,
    );
    let j = judge(&g, &Request::delete(ticketed), &view, OUT_OF_HOURS);
    assert_eq!(j.code, "ALLOW");
    let idle = object("Deployment", "web", json!({}), json!({}), 0);
    assert_eq!(
        judge(&g, &Request::delete(idle), &view, OUT_OF_HOURS).code,
        "ALLOW"
    );

    let crd = json!({"kind": "CustomResourceDefinition", "metadata": {"name": "widgets.example.com"},
                     "spec": {"group": "example.com", "names": {"plural": "widgets"}}});
    let crd_delete = Request {
        group: "apiextensions.k8s.io",
        resource: "customresourcedefinitions",
        namespace: "",
        name: "widgets.example.com",
        ..Request::delete(crd)
    };
    let with_objects = Fixed {
        remaining: 5,
        ..Fixed::default()
    };
    let j = judge(&g, &crd_delete, &with_objects, OUT_OF_HOURS);
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::Deny, "CASCADE_BLOCKED")
    );
    assert!(
        j.message
            .starts_with("custom resource definition widgets.example.com still has objects"),
        "{}",
        j.message
    );
    assert_eq!(judge(&g, &crd_delete, &view, OUT_OF_HOURS).code, "ALLOW");
    // Off by default.
    let off = guard(dir.path(), "");
    assert_eq!(
        judge(&off, &Request::delete(scaled), &view, OUT_OF_HOURS).code,
        "ALLOW"
    );
}

/// Review finding L4: a workload without replicas (a DaemonSet) cascades onto its pods.
#[test]
fn a_daemon_set_running_pods_cascades() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(dir.path(), "    cascadeProtection: true\n");
    let view = Fixed {
        dependents: Dependents {
            running_pods: 3,
            ..Dependents::default()
        },
        ..Fixed::default()
    };
    let ds = json!({"kind": "DaemonSet", "metadata": {"name": "web", "namespace": "shop"}});
    let request = Request {
        resource: "daemonsets",
        ..Request::delete(ds)
    };
    let j = judge(&g, &request, &view, IN_HOURS);
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::Deny, "CASCADE_BLOCKED")
    );
    assert!(j.message.contains("still runs 3 pods"), "{}", j.message);
}
