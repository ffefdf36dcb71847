//! The buffer ring's entry points (`rescore`): the protection the finalizer rule reads, and a
//! deletion's risk scored exactly as the validation ring scores it (same score, level and
//! reasons for the same object and cluster).

use super::admission::{
    Fixed, IN_HOURS, LABEL, Request, at, block_on, guard, judge, served_by, web,
};
use crate::authorizer::deletion_guard::rescore;
use crate::config::AuthorizerSpec;
use crate::config::model::guard::{GuardSpec, Level};
use crate::object::Subject;
use serde_json::json;
use std::path::Path;
use std::sync::Arc;

/// The validated spec of a guard whose `guard:` block adds `block` (as `guard` builds it).
fn spec(dir: &Path, block: &str) -> GuardSpec {
    let yaml = format!(
        "apiVersion: warrant.dev/v1alpha1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: DeletionGuard\n  name: guard\n  guard:\n    protectionLabel: {LABEL}\n    ticketAnnotation: sre.example.com/ticket\n    tickets: {{file: tickets.yaml, approvals: {{high: 1, critical: 2}}}}\n{block}"
    );
    let file = dir.join("authz.yaml");
    let loaded = crate::config::parse(&file.to_string_lossy(), yaml.as_bytes()).unwrap();
    let AuthorizerSpec::DeletionGuard(spec) = &loaded.config.authorizers[0].spec else {
        panic!("not a guard");
    };
    spec.as_ref().clone()
}

#[test]
fn a_deletion_is_rescored_as_the_validation_ring_scores_it() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(dir.path(), "");
    let spec = spec(dir.path(), "");
    let view = Fixed {
        dependents: served_by(25),
        ..Fixed::default()
    };
    let object = web(Some("critical"), None);
    let judged = judge(&g, &Request::delete(object.clone()), &view, IN_HOURS);
    let risk = block_on(rescore::deletion_risk(
        &spec,
        "apps",
        "deployments",
        &Subject::new(object),
        Arc::new(view),
        at(IN_HOURS),
    ))
    .unwrap();
    assert_eq!(judged.assessment["riskScore"], risk.score);
    assert_eq!(judged.assessment["riskLevel"], risk.level.as_str());
    assert_eq!(judged.assessment["riskReasons"], json!(risk.reasons));
}

#[test]
fn an_unanswerable_view_is_an_error_not_a_low_risk() {
    let dir = tempfile::tempdir().unwrap();
    let spec = spec(dir.path(), "");
    let view = Fixed {
        not_ready: Some("watch has not listed"),
        ..Fixed::default()
    };
    let r = block_on(rescore::deletion_risk(
        &spec,
        "apps",
        "deployments",
        &Subject::new(web(Some("critical"), None)),
        Arc::new(view),
        at(IN_HOURS),
    ));
    assert!(r.is_err(), "{r:?}");
}

#[test]
fn the_object_protection_is_its_label_or_a_rule_naming_it_never_its_namespace() {
    let dir = tempfile::tempdir().unwrap();
    let spec = spec(
        dir.path(),
        "    protectedNamespaces: [{names: [shop], level: critical}]\n    protectedResources: [{group: apps, resource: deployments, names: [web], level: critical}]\n",
    );
    let level = |name: &str, label: Option<&str>| {
        let labels = label.map_or(json!({}), |l| json!({LABEL: l}));
        let o = json!({"metadata": {"name": name, "namespace": "shop", "labels": labels}});
        rescore::object_protection(&spec, "apps", "deployments", &Subject::new(o))
    };
    assert_eq!(level("web", None), Some(Level::Critical));
    assert_eq!(level("api", Some("high")), Some(Level::High));
    assert_eq!(level("api", Some("HIGH")), Some(Level::High));
    assert_eq!(level("api", None), None);
    assert_eq!(level("web", Some("standard")), Some(Level::Critical));
}
