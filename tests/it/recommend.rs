//! `warrant recommend` on real audit logs: a kube-apiserver (and etcd) writing its audit log
//! (`--audit-policy-file`, `--audit-log-path`) and asking `warrant serve` (which writes its own
//! audit records) to authorize every request of three people, impersonated by the admin. Real
//! creates, patches, deletes and re-creates go through the API; the recommendations, their
//! evidence, the label patches (applied server-side to the same cluster) and the exit status
//! are asserted. Skipped when `KUBE_BIN_DIR` is not set.

use super::cluster_apiserver::{Logs, Proc, control_plane_with, free_port, until};
use super::support::BIN;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;
use warrant::cluster::Source;

const LABEL: &str = "sre.example.com/protection-level";

const CHAIN: &str = "apiVersion: warrant.dev/v1alpha1
kind: AuthorizationConfiguration
authorizers:
- type: DeletionGuard
  name: guard
  guard:
    protectionLabel: sre.example.com/protection-level
    riskWeights: {businessHours: 0}
- type: AlwaysAllow
  name: allow-the-rest
";

const AUDIT_POLICY: &str = "apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  verbs: [get, list, watch]
- level: Metadata
";

/// kube-apiserver's authorization: warrant for everyone but the admin, then RBAC.
fn authorization_config(kubeconfig: &Path) -> String {
    format!(
        "apiVersion: apiserver.config.k8s.io/v1
kind: AuthorizationConfiguration
authorizers:
- type: Webhook
  name: warrant
  webhook:
    timeout: 3s
    subjectAccessReviewVersion: v1
    matchConditionSubjectAccessReviewVersion: v1
    failurePolicy: NoOpinion
    cacheAuthorizedRequests: false
    cacheUnauthorizedRequests: false
    connectionInfo:
      type: KubeConfigFile
      kubeConfigFile: {}
    matchConditions:
    - expression: \"!('system:masters' in request.groups)\"
- type: RBAC
  name: rbac
",
        kubeconfig.display()
    )
}

/// A client acting as `user` (the admin impersonating it, in group `dev`).
async fn as_user(admin: &Path, user: &str) -> kube::Client {
    let text = std::fs::read_to_string(admin).unwrap().replace(
        "    token: admin-token\n",
        &format!("    token: admin-token\n    as: {user}\n    as-groups: [\"dev\"]\n"),
    );
    let path = admin.with_file_name(format!("kubeconfig-{user}"));
    std::fs::write(&path, text).unwrap();
    Source::Kubeconfig(path).client().await.unwrap()
}

/// Runs `warrant recommend` with `args`: (exit code, stdout).
fn recommend(config: &Path, kubeconfig: &Path, logs: &[&Path], args: &[&str]) -> (i32, String) {
    let mut cmd = Command::new(BIN);
    cmd.arg("recommend")
        .arg("--config")
        .arg(config)
        .arg("--kubeconfig")
        .arg(kubeconfig);
    for l in logs {
        cmd.arg("--audit-log").arg(l);
    }
    let out = cmd.args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.code() != Some(2), "{stderr}");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
    )
}

fn cm(name: &str) -> Value {
    json!({"metadata": {"name": name}, "data": {"k": "v"}})
}

fn deployment(name: &str) -> Value {
    json!({"metadata": {"name": name},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})
}

async fn make<K>(api: &Api<K>, v: Value)
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug,
{
    let object: K = serde_json::from_value(v).unwrap();
    api.create(&PostParams::default(), &object).await.unwrap();
}

async fn remove<K>(api: &Api<K>, name: &str)
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    api.delete(name, &DeleteParams::default()).await.unwrap();
}

async fn touch(api: &Api<ConfigMap>, name: &str, value: &str) {
    api.patch(
        name,
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"k": value}})),
    )
    .await
    .unwrap();
}

fn row(r: &Value) -> (String, String, String, String, String) {
    let s = |k: &str| r[k].as_str().unwrap_or("").to_owned();
    (
        s("scope"),
        s("resource"),
        s("namespace"),
        s("name"),
        s("level"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recommend_proposes_levels_from_real_audit_logs() {
    let Some(bins) = std::env::var_os("KUBE_BIN_DIR").map(PathBuf::from) else {
        eprintln!("KUBE_BIN_DIR is not set: skipped");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("authz.yaml");
    std::fs::write(&config, CHAIN).unwrap();

    // warrant first, so the API server's first review finds it.
    let port = free_port();
    let state = dir.path().join("warrant-state");
    let warrant_log = dir.path().join("warrant-audit.jsonl");
    let serve_log = std::fs::File::create(dir.path().join("warrant.log")).unwrap();
    let _warrant = Proc::from(
        Command::new(BIN)
            .arg("serve")
            .arg("--config")
            .arg(&config)
            .arg("--listen")
            .arg(format!("127.0.0.1:{port}"))
            .arg("--state-dir")
            .arg(&state)
            .arg("--audit-log")
            .arg(&warrant_log)
            .stdin(Stdio::null())
            .stdout(serve_log.try_clone().unwrap())
            .stderr(serve_log)
            .spawn()
            .unwrap(),
    );
    let webhook = state.join("kubeconfig.yaml");
    until("warrant serve", Duration::from_secs(30), async || {
        (webhook.exists() && std::net::TcpStream::connect(("127.0.0.1", port)).is_ok())
            .then_some(())
    })
    .await;

    let authz = dir.path().join("authorization.yaml");
    std::fs::write(&authz, authorization_config(&webhook)).unwrap();
    let policy = dir.path().join("audit-policy.yaml");
    std::fs::write(&policy, AUDIT_POLICY).unwrap();
    let apiserver_log = dir.path().join("apiserver-audit.log");
    let (_etcd, _apiserver, kubeconfig) = control_plane_with(
        &bins,
        dir.path(),
        &[
            format!("--authorization-config={}", authz.display()),
            format!("--audit-policy-file={}", policy.display()),
            format!("--audit-log-path={}", apiserver_log.display()),
        ],
    );
    let _logs = Logs(dir.path());
    let admin = Source::Kubeconfig(kubeconfig.clone())
        .client()
        .await
        .unwrap();
    until("kube-apiserver", Duration::from_secs(90), async || {
        let ns: Api<Namespace> = Api::all(admin.clone());
        ns.get("default").await.ok()
    })
    .await;

    let (ana, ben, chen, ci) = (
        as_user(&kubeconfig, "ana").await,
        as_user(&kubeconfig, "ben").await,
        as_user(&kubeconfig, "chen").await,
        as_user(&kubeconfig, "ci").await,
    );
    let ns: Api<Namespace> = Api::all(ana.clone());
    make(&ns, json!({"metadata": {"name": "shop"}})).await;
    make(&ns, json!({"metadata": {"name": "lab"}})).await;
    let maps = |c: &kube::Client, n: &str| Api::<ConfigMap>::namespaced(c.clone(), n);
    let deps = |c: &kube::Client| Api::<Deployment>::namespaced(c.clone(), "shop");

    // shop/settings: three writers, deleted by ben and put back by ana.
    make(&maps(&ana, "shop"), cm("settings")).await;
    touch(&maps(&ana, "shop"), "settings", "1").await;
    touch(&maps(&ben, "shop"), "settings", "2").await;
    touch(&maps(&chen, "shop"), "settings", "3").await;
    remove(&maps(&ben, "shop"), "settings").await;
    make(&maps(&ana, "shop"), cm("settings")).await;
    // shop/web: deleted twice by mistake, put back twice.
    make(&deps(&ana), deployment("web")).await;
    remove(&deps(&ben), "web").await;
    make(&deps(&ana), deployment("web")).await;
    remove(&deps(&chen), "web").await;
    make(&deps(&ana), deployment("web")).await;
    // shop/guarded: restored, but already labelled high.
    let mut guarded = cm("guarded");
    guarded["metadata"]["labels"] = json!({LABEL: "high"});
    make(&maps(&ana, "shop"), guarded.clone()).await;
    remove(&maps(&ben, "shop"), "guarded").await;
    make(&maps(&ana, "shop"), guarded).await;
    // lab: a shared object, and the CI's scratch objects deleted as routine.
    make(&maps(&ana, "lab"), cm("shared")).await;
    touch(&maps(&ana, "lab"), "shared", "1").await;
    touch(&maps(&ben, "lab"), "shared", "2").await;
    touch(&maps(&chen, "lab"), "shared", "3").await;
    for i in 0..3 {
        let name = format!("scratch-{i}");
        make(&maps(&ci, "lab"), cm(&name)).await;
        remove(&maps(&ci, "lab"), &name).await;
    }
    // lab/temp: restored, then deleted for good.
    make(&maps(&ana, "lab"), cm("temp")).await;
    remove(&maps(&ben, "lab"), "temp").await;
    make(&maps(&ana, "lab"), cm("temp")).await;
    remove(&maps(&ci, "lab"), "temp").await;

    // warrant's writer thread takes its queue every 20 ms.
    let warrant_log_read = warrant_log.clone();
    until("warrant's records", Duration::from_secs(10), async || {
        let text = std::fs::read_to_string(&warrant_log_read).unwrap_or_default();
        text.lines()
            .any(|l| {
                l.contains(r#""user":"ci""#)
                    && l.contains(r#""name":"temp""#)
                    && l.contains(r#""verb":"delete""#)
            })
            .then_some(())
    })
    .await;

    let logs = [apiserver_log.as_path(), warrant_log.as_path()];
    let (status, out) = recommend(&config, &kubeconfig, &logs, &["-o", "json"]);
    assert_eq!(status, 1, "recommendations exit 1: {out}");
    let report: Value = serde_json::from_str(&out).unwrap();
    let recs = report["recommendations"].as_array().unwrap();
    let rows: Vec<_> = recs.iter().map(row).collect();
    let r = |scope: &str, res: &str, ns: &str, name: &str, level: &str| {
        (
            scope.to_owned(),
            res.to_owned(),
            ns.to_owned(),
            name.to_owned(),
            level.to_owned(),
        )
    };
    assert_eq!(
        rows,
        vec![
            r("Namespace", "namespaces", "", "shop", "critical"),
            r("Object", "deployments", "shop", "web", "critical"),
            r("Object", "configmaps", "shop", "settings", "high"),
            r("Object", "configmaps", "lab", "shared", "standard"),
        ],
        "{out}"
    );
    let find = |name: &str| recs.iter().find(|r| r["name"] == name).unwrap();
    // The evidence: web's two restores, each by whom.
    let web = find("web");
    let restores = web["evidence"]["restores"].as_array().unwrap();
    let who: Vec<(&str, &str)> = restores
        .iter()
        .map(|r| {
            (
                r["deletedBy"].as_str().unwrap(),
                r["restoredBy"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(who, [("ben", "ana"), ("chen", "ana")], "{web}");
    assert_eq!(web["evidence"]["deletions"], 2);
    assert_eq!(web["evidence"]["routineDeletions"], 0);
    assert_eq!(web["evidence"]["risk"]["level"], "LOW", "{web}");
    assert_eq!(web["kind"], "Deployment");
    let settings = find("settings");
    assert_eq!(
        settings["evidence"]["writers"],
        json!(["ana", "ben", "chen"])
    );
    assert_eq!(
        settings["evidence"]["restores"].as_array().unwrap().len(),
        1
    );
    assert_eq!(settings["kind"], "ConfigMap");
    assert!(settings.get("current").is_none(), "{settings}");
    let reasons = settings["reasons"].as_array().unwrap();
    assert!(
        reasons[0]
            .as_str()
            .unwrap()
            .starts_with("deleted and restored within 1h: 1 time"),
        "{reasons:?}"
    );
    assert_eq!(reasons[1], "written by 3 principals: ana, ben, chen");
    let shop = find("shop");
    assert_eq!(
        shop["evidence"]["objects"],
        json!([
            "configmaps/guarded",
            "configmaps/settings",
            "deployments.apps/web"
        ]),
        "{shop}"
    );
    // lab: routine deletions inside, so no namespace level; lab/temp is gone.
    assert!(
        recs.iter()
            .all(|r| r["name"] != "lab" && r["name"] != "temp")
    );
    assert!(report["writes"].as_u64().unwrap() >= 32, "{out}");

    // kube-apiserver's log alone says the same; warrant's alone cannot see restores (the
    // review of a create names no object), only who wrote and who deleted.
    let (_, alone) = recommend(&config, &kubeconfig, &[&apiserver_log], &["-o", "json"]);
    let alone: Value = serde_json::from_str(&alone).unwrap();
    assert_eq!(alone["recommendations"], report["recommendations"]);
    let (_, warrant_only) = recommend(&config, &kubeconfig, &[&warrant_log], &["-o", "json"]);
    let warrant_only: Value = serde_json::from_str(&warrant_only).unwrap();
    let rows: Vec<_> = warrant_only["recommendations"]
        .as_array()
        .unwrap()
        .iter()
        .map(row)
        .collect();
    assert_eq!(
        rows,
        vec![
            r("Object", "configmaps", "lab", "shared", "standard"),
            r("Object", "configmaps", "shop", "settings", "standard"),
        ],
        "{warrant_only}"
    );

    // The table, then the patches: applied server-side, they leave nothing to recommend.
    let (_, table) = recommend(&config, &kubeconfig, &logs, &[]);
    eprintln!("{table}");
    assert!(table.ends_with("4 recommendations\n"), "{table}");
    assert!(
        table.contains("namespace  critical  none      namespaces/shop"),
        "{table}"
    );
    let (_, yaml) = recommend(&config, &kubeconfig, &logs, &["-o", "yaml"]);
    eprintln!("{yaml}");
    let docs: Vec<Value> = serde_saphyr::from_multiple(&yaml).unwrap();
    assert_eq!(docs.len(), 4, "{yaml}");
    assert!(
        yaml.contains("# - deleted and restored within 1h: 2 times"),
        "{yaml}"
    );
    for doc in docs {
        let (kind, name) = (
            doc["kind"].as_str().unwrap(),
            doc["metadata"]["name"].as_str().unwrap(),
        );
        let labels = &doc["metadata"]["labels"];
        assert!(labels[LABEL].is_string(), "{doc}");
        let params = PatchParams::apply("warrant-recommend-test");
        let ns = doc["metadata"]["namespace"].as_str().unwrap_or("");
        match kind {
            "Namespace" => drop(
                Api::<Namespace>::all(admin.clone())
                    .patch(name, &params, &Patch::Apply(&doc))
                    .await
                    .unwrap(),
            ),
            "Deployment" => drop(
                Api::<Deployment>::namespaced(admin.clone(), ns)
                    .patch(name, &params, &Patch::Apply(&doc))
                    .await
                    .unwrap(),
            ),
            "ConfigMap" => drop(
                Api::<ConfigMap>::namespaced(admin.clone(), ns)
                    .patch(name, &params, &Patch::Apply(&doc))
                    .await
                    .unwrap(),
            ),
            other => panic!("unexpected kind {other}"),
        }
    }
    let (status, table) = recommend(&config, &kubeconfig, &logs, &[]);
    assert_eq!(status, 0, "{table}");
    assert!(table.ends_with("no protection to recommend\n"), "{table}");
}
