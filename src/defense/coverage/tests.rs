//! Which objects are gaps: from saved cluster state, a Deployment whose 20 running pods sit
//! behind an Ingress and mount a bound claim (HIGH by the risk model), in namespaces labelled
//! below, at and above that level, and in one unlabelled.

use super::*;
use crate::cluster::FileView;
use serde_json::{Value, json};

const LABEL: &str = "sre.example.com/protection-level";

/// `name` with its uid, namespace and owner.
fn meta(ns: &str, name: &str, owner: Option<(&str, &str)>, labels: Value) -> Value {
    let mut m =
        json!({"name": name, "namespace": ns, "uid": format!("uid-{ns}-{name}"), "labels": labels});
    if let Some((kind, of)) = owner {
        m["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": kind, "name": of,
            "uid": format!("uid-{ns}-{of}"), "controller": true}]);
    }
    m
}

/// Namespace `ns` (labelled `level` when given) holding the web Deployment `web`: 20 running
/// pods behind a Service and an Ingress, mounting the bound claim `shared`.
fn web(ns: &str, level: Option<&str>) -> Vec<Value> {
    let labels = level.map_or(json!({}), |l| json!({LABEL: l}));
    let mut out = vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "uid": format!("uid-{ns}"), "labels": labels}}),
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta(ns, "web", None, json!({}))}),
        json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": meta(ns, "web-1", Some(("Deployment", "web")), json!({}))}),
        json!({"apiVersion": "v1", "kind": "Service", "metadata": meta(ns, "web", None, json!({})), "spec": {"selector": {"app": "web"}}}),
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": meta(ns, "web", None, json!({})),
               "spec": {"rules": [{"http": {"paths": [{"path": "/", "pathType": "Prefix",
                   "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]}}),
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta(ns, "shared", None, json!({})), "status": {"phase": "Bound"}}),
    ];
    for i in 0..20 {
        out.push(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": meta(ns, &format!("web-1-{i}"), Some(("ReplicaSet", "web-1")), json!({"app": "web"})),
            "spec": {"containers": [{"name": "c", "image": "nginx"}],
                     "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "shared"}}]},
            "status": {"phase": "Running"}}));
    }
    out
}

fn spec() -> GuardSpec {
    let yaml = format!(
        "apiVersion: warrant.dev/v1alpha1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: DeletionGuard\n  name: guard\n  guard:\n    protectionLabel: {LABEL}\n    riskWeights: {{businessHours: 0}}\n"
    );
    let loaded = crate::config::parse("guard.yaml", yaml.as_bytes()).unwrap();
    loaded.config.deletion_guards().next().unwrap().1.clone()
}

/// The gaps of the saved `objects` under `criteria` (MEDIUM, no names by default).
async fn gaps_of(objects: Vec<Value>) -> Vec<Gap> {
    let dir = tempfile::tempdir().unwrap();
    let list = json!({"apiVersion": "v1", "kind": "List", "items": objects});
    std::fs::write(dir.path().join("state.json"), list.to_string()).unwrap();
    let view = FileView::load(dir.path()).unwrap();
    let inventory = view.index().inventory();
    let criteria = Criteria {
        min_level: RiskLevel::Medium,
        critical_names: Vec::new(),
    };
    gaps(&spec(), inventory, Arc::new(view), Utc::now(), &criteria)
        .await
        .unwrap()
}

fn rows(gaps: &[Gap]) -> Vec<String> {
    gaps.iter()
        .map(|g| {
            format!(
                "{} {}/{} {} {} {}->{}",
                g.kind,
                g.namespace,
                g.name,
                g.score,
                g.level.as_str(),
                g.current.map_or("none", |l| l.as_str()),
                g.wanted.as_str()
            )
        })
        .collect()
}

#[tokio::test]
async fn an_object_protected_below_its_risk_is_a_gap_and_one_protected_at_or_above_is_not() {
    let mut objects = web("below", Some("standard"));
    objects.extend(web("at", Some("high")));
    objects.extend(web("above", Some("critical")));
    objects.extend(web("bare", None));
    let found = gaps_of(objects).await;
    // The Deployment, its claim and their Namespace each score 20 (20 running pods) + 15 (an
    // Ingress) + 20 (a bound claim): HIGH, whatever the namespace's label adds.
    assert_eq!(
        rows(&found),
        [
            "Namespace /bare 55 HIGH none->high",
            "Namespace /below 55 HIGH standard->high",
            "PersistentVolumeClaim bare/shared 55 HIGH none->high",
            "Deployment bare/web 55 HIGH none->high",
            "PersistentVolumeClaim below/shared 55 HIGH standard->high",
            "Deployment below/web 55 HIGH standard->high",
        ],
        "{found:#?}"
    );
    let below = &found[5];
    assert_eq!(
        below.patch(LABEL),
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": "web", "namespace": "below", "labels": {LABEL: "high"}}})
    );
    assert!(
        below.reasons.iter().all(|r| !r.starts_with("standard")),
        "the protection it has is no reason: {:?}",
        below.reasons
    );
}

#[tokio::test]
async fn a_name_alone_asks_for_standard_protection_and_only_when_there_is_none() {
    let objects = vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "payments-prod", "uid": "u1"}}),
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "billing-prod", "uid": "u2", "labels": {LABEL: "standard"}}}),
    ];
    let dir = tempfile::tempdir().unwrap();
    let list = json!({"apiVersion": "v1", "kind": "List", "items": objects});
    std::fs::write(dir.path().join("state.json"), list.to_string()).unwrap();
    let view = FileView::load(dir.path()).unwrap();
    let criteria = Criteria {
        min_level: RiskLevel::Medium,
        critical_names: vec![Pattern::new("*prod*")],
    };
    let found = gaps(
        &spec(),
        view.index().inventory(),
        Arc::new(view),
        Utc::now(),
        &criteria,
    )
    .await
    .unwrap();
    assert_eq!(
        rows(&found),
        ["Namespace /payments-prod 0 LOW none->standard"]
    );
    assert_eq!(found[0].reasons, ["name matches *prod*"]);
    assert_eq!(found[0].api_version, "v1");
}

#[test]
fn the_risk_levels_call_for_the_protection_levels_of_the_same_rank() {
    assert_eq!(protection_for(RiskLevel::Low), None);
    assert_eq!(protection_for(RiskLevel::Medium), Some(Level::Standard));
    assert_eq!(protection_for(RiskLevel::High), Some(Level::High));
    assert_eq!(protection_for(RiskLevel::Critical), Some(Level::Critical));
}
