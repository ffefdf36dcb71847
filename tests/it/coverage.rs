//! `warrant coverage` against a real kube-apiserver (and etcd): a StatefulSet with running pods
//! and a bound claim, its claim, their Namespace and a Namespace named like production are
//! listed as unprotected; the same kinds in a Namespace protected by its label, and an idle
//! Deployment, are not; a custom resource's object owning such a StatefulSet is listed by what
//! it owns, and one owning nothing is not; the exit status says whether there are gaps; the
//! label patches of `-o yaml`, applied by kubectl as printed, leave none. The
//! leader's series (`warrant_coverage_unprotected_objects`) count the same gaps of the kinds its
//! cache holds from a cache watching the same cluster, and drop a namespace's once it is
//! labelled. Skipped when `KUBE_BIN_DIR` is not set.

use super::cluster_apiserver::{Logs, control_plane, create, owner, until};
use super::support::BIN;
use k8s_openapi::api::apps::v1::{Deployment, StatefulSet};
use k8s_openapi::api::core::v1::{Namespace, PersistentVolumeClaim, Pod};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::ApiResource;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;
use warrant::cluster::{Cache, CacheOptions, Source};
use warrant::config::AuthorizerSpec;
use warrant::defense::coverage_export::CoverageExport;
use warrant::object::ClusterView;

const CONFIG: &str = "apiVersion: warrant.dev/v1alpha1
kind: AuthorizationConfiguration
authorizers:
- type: DeletionGuard
  name: guard
  guard:
    protectionLabel: sre.example.com/protection-level
    riskWeights: {businessHours: 0}
";

/// Runs `warrant coverage` with `args`: (exit code, stdout).
fn coverage(config: &Path, kubeconfig: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(BIN)
        .arg("coverage")
        .arg("--config")
        .arg(config)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.is_empty() || out.status.code() != Some(2),
        "{stderr}"
    );
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
    )
}

/// A StatefulSet `db` with `n` running pods mounting the bound claim `data-db-0`, in `ns`.
async fn database(client: &kube::Client, ns: &str, n: usize) {
    let sets: Api<StatefulSet> = Api::namespaced(client.clone(), ns);
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), ns);
    let template = json!({"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"name": "c", "image": "postgres"}]}});
    let set = create(&sets, json!({"metadata": {"name": "db"},
        "spec": {"replicas": n, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}}, "template": template}})).await;
    let uid = set.metadata.uid.clone().unwrap();
    create(
        &claims,
        json!({"metadata": {"name": "data-db-0"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}),
    )
    .await;
    claims
        .patch_status(
            "data-db-0",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Bound"}})),
        )
        .await
        .unwrap();
    for i in 0..n {
        let name = format!("db-{i}");
        create(&pods, json!({"metadata": {"name": name, "labels": {"app": "db"}, "ownerReferences": owner("StatefulSet", "db", &uid)},
            "spec": {"containers": [{"name": "c", "image": "postgres"}],
                     "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data-db-0"}}]}})).await;
        pods.patch_status(
            &name,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Running"}})),
        )
        .await
        .unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn coverage_lists_unprotected_critical_objects_of_a_real_cluster() {
    let Some(bins) = std::env::var_os("KUBE_BIN_DIR").map(PathBuf::from) else {
        eprintln!("KUBE_BIN_DIR is not set: skipped");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (_etcd, _apiserver, kubeconfig) = control_plane(&bins, dir.path());
    let _logs = Logs(dir.path());
    let client = Source::Kubeconfig(kubeconfig.clone())
        .client()
        .await
        .unwrap();
    until("kube-apiserver", Duration::from_secs(90), async || {
        let ns: Api<Namespace> = Api::all(client.clone());
        ns.get("default").await.ok()
    })
    .await;
    let config = dir.path().join("authz.yaml");
    std::fs::write(&config, CONFIG).unwrap();

    let namespaces: Api<Namespace> = Api::all(client.clone());
    create(&namespaces, json!({"metadata": {"name": "scratch"}})).await;
    create(&namespaces, json!({"metadata": {"name": "shop", "labels": {"sre.example.com/protection-level": "high"}}})).await;
    create(&namespaces, json!({"metadata": {"name": "payments-prod"}})).await;
    database(&client, "scratch", 3).await;
    database(&client, "shop", 3).await;
    let idle: Api<Deployment> = Api::namespaced(client.clone(), "scratch");
    create(&idle, json!({"metadata": {"name": "idle"},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "idle"}},
                 "template": {"metadata": {"labels": {"app": "idle"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})).await;

    // A custom resource: `data/orders` owns a StatefulSet like scratch's; `data/idle` owns
    // nothing.
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    create(&crds, json!({"metadata": {"name": "databases.example.com"}, "spec": {"group": "example.com", "scope": "Namespaced",
        "names": {"kind": "Database", "plural": "databases", "singular": "database", "listKind": "DatabaseList"},
        "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}})).await;
    create(&namespaces, json!({"metadata": {"name": "data"}})).await;
    let databases: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        "data",
        &ApiResource {
            group: "example.com".into(),
            version: "v1".into(),
            api_version: "example.com/v1".into(),
            kind: "Database".into(),
            plural: "databases".into(),
        },
    );
    let mut uids = Vec::new();
    for name in ["orders", "idle"] {
        let o: DynamicObject = serde_json::from_value(
            json!({"apiVersion": "example.com/v1", "kind": "Database", "metadata": {"name": name}}),
        )
        .unwrap();
        let made = until("the CRD served", Duration::from_secs(20), async || {
            databases.create(&PostParams::default(), &o).await.ok()
        })
        .await;
        uids.push(made.metadata.uid.unwrap());
    }
    database(&client, "data", 2).await;
    let sets: Api<StatefulSet> = Api::namespaced(client.clone(), "data");
    sets.patch(
        "db",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"ownerReferences": [
            {"apiVersion": "example.com/v1", "kind": "Database", "name": "orders", "uid": uids[0]}]}})),
    )
    .await
    .unwrap();

    let (status, out) = coverage(&config, &kubeconfig, &["-o", "json"]);
    assert_eq!(status, 1, "gaps exit 1: {out}");
    let gaps: Vec<Value> = serde_json::from_str(&out).unwrap();
    let listed: Vec<(String, String, String, u64)> = gaps
        .iter()
        .map(|g| {
            (
                g["kind"].as_str().unwrap().to_owned(),
                g["namespace"].as_str().unwrap().to_owned(),
                g["name"].as_str().unwrap().to_owned(),
                g["score"].as_u64().unwrap(),
            )
        })
        .collect();
    let row = |k: &str, ns: &str, n: &str, s: u64| (k.to_owned(), ns.to_owned(), n.to_owned(), s);
    // Riskiest first: the running pods (+10) and the bound claim (+20) of each; the production
    // namespace by its name alone.
    assert_eq!(
        listed,
        vec![
            row("Namespace", "", "data", 30),
            row("Namespace", "", "scratch", 30),
            row("PersistentVolumeClaim", "data", "data-db-0", 30),
            row("StatefulSet", "data", "db", 30),
            row("Database", "data", "orders", 30),
            row("PersistentVolumeClaim", "scratch", "data-db-0", 30),
            row("StatefulSet", "scratch", "db", 30),
            row("Namespace", "", "payments-prod", 0),
        ],
        "{out}"
    );
    let orders = gaps.iter().find(|g| g["name"] == "orders").unwrap();
    assert_eq!(
        (&orders["group"], &orders["resource"], &orders["level"]),
        (&json!("example.com"), &json!("databases"), &json!("MEDIUM")),
        "{orders}"
    );
    assert_eq!(
        orders["reasons"],
        json!([
            "2 running pods affected +10",
            "1 bound volumes affected +20"
        ]),
        "{orders}"
    );
    let db = gaps.iter().find(|g| g["name"] == "db").unwrap();
    assert_eq!(db["level"], "MEDIUM");
    let reasons: Vec<&str> = db["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert!(
        reasons.iter().any(|r| r.contains("running pods")),
        "{reasons:?}"
    );
    assert!(reasons.iter().any(|r| r.contains("bound")), "{reasons:?}");
    let prod = gaps.iter().find(|g| g["name"] == "payments-prod").unwrap();
    assert_eq!(prod["reasons"], json!(["name matches *prod*"]));

    // The table says the same; a stricter bar leaves no gap, and exit 0.
    let (status, table) = coverage(&config, &kubeconfig, &[]);
    eprintln!("{table}");
    assert_eq!(status, 1);
    assert!(
        table.contains("StatefulSet")
            && table.contains("scratch/db")
            && table.contains("Database")
            && table.ends_with("8 unprotected critical objects\n"),
        "{table}"
    );
    let (status, table) = coverage(
        &config,
        &kubeconfig,
        &["--min-level", "high", "--critical-names", "nothing-matches"],
    );
    assert_eq!(
        (status, table.as_str()),
        (0, "no unprotected critical objects\n")
    );

    // The leader's series: the same gaps, counted by kind and namespace from the cache the
    // validation ring keeps, then fewer once a namespace is protected by its label.
    let cache = Arc::new(Cache::new(CacheOptions::default()));
    let _watches = warrant::cluster::start(&cache, client.clone());
    until("the cache", Duration::from_secs(60), async || {
        cache.ready().ok()
    })
    .await;
    let loaded = warrant::config::load_file(&config).unwrap();
    let AuthorizerSpec::DeletionGuard(spec) = &loaded.config.authorizers[0].spec else {
        panic!("not a guard");
    };
    let mut registry = prometheus_client::registry::Registry::default();
    let export = CoverageExport::register(&mut registry);
    let series = |counts: &std::collections::BTreeMap<(String, String), i64>| {
        counts
            .iter()
            .map(|((k, ns), n)| format!("{k} {ns} {n}"))
            .collect::<Vec<_>>()
    };
    let counts = export.refresh(spec, &cache).await.unwrap();
    assert_eq!(
        series(&counts),
        [
            "Namespace data 1",
            "Namespace payments-prod 1",
            "Namespace scratch 1",
            "PersistentVolumeClaim data 1",
            "PersistentVolumeClaim scratch 1",
            "StatefulSet data 1",
            "StatefulSet scratch 1",
        ]
    );
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
    assert!(
        text.contains(
            r#"warrant_coverage_unprotected_objects{kind="StatefulSet",namespace="scratch"} 1"#
        ),
        "{text}"
    );
    assert!(!text.contains(r#"namespace="shop""#), "{text}");
    namespaces
        .patch(
            "scratch",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"metadata": {"labels": {"sre.example.com/protection-level": "high"}}}),
            ),
        )
        .await
        .unwrap();
    let counts = until("scratch protected", Duration::from_secs(30), async || {
        let c = export.refresh(spec, &cache).await.unwrap();
        (c.len() == 4).then_some(c)
    })
    .await;
    // The custom resource's object is not in the cache: the leader does not count it.
    assert_eq!(
        series(&counts),
        [
            "Namespace data 1",
            "Namespace payments-prod 1",
            "PersistentVolumeClaim data 1",
            "StatefulSet data 1",
        ]
    );
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
    assert!(!text.contains(r#"namespace="scratch""#), "{text}");
    assert!(
        text.contains("warrant_coverage_last_computed_timestamp_seconds"),
        "{text}"
    );

    // `-o yaml`: the label patches, applied server-side by kubectl as they are, close every gap.
    let (status, yaml) = coverage(&config, &kubeconfig, &["-o", "yaml"]);
    eprintln!("{yaml}");
    assert_eq!(status, 1, "{yaml}");
    assert_eq!(yaml.matches("---\n").count(), 5, "{yaml}");
    assert!(
        yaml.contains(
            "# Database data/orders: MEDIUM risk, score 30, protection none -> standard\n"
        ) && yaml.contains("apiVersion: example.com/v1\nkind: Database\n")
            && yaml.contains("sre.example.com/protection-level: standard"),
        "{yaml}"
    );
    let patches = dir.path().join("patches.yaml");
    std::fs::write(&patches, &yaml).unwrap();
    let applied = Command::new(bins.join("kubectl"))
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .args([
            "apply",
            "--server-side",
            "--field-manager",
            "coverage-fix",
            "-f",
        ])
        .arg(&patches)
        .output()
        .unwrap();
    assert!(
        applied.status.success(),
        "{}",
        String::from_utf8_lossy(&applied.stderr)
    );
    let (status, table) = coverage(&config, &kubeconfig, &[]);
    assert_eq!(
        (status, table.as_str()),
        (0, "no unprotected critical objects\n")
    );
    let db: Api<StatefulSet> = Api::namespaced(client.clone(), "data");
    let labels = db.get("db").await.unwrap().metadata.labels.unwrap();
    assert_eq!(labels["sre.example.com/protection-level"], "standard");
}
