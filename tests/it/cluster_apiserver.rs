//! The cluster cache against a real kube-apiserver (and etcd): the watches list and follow
//! real objects (pods made running through their status, owner references set by hand, as
//! there is no controller manager), `dependents()` and `labelled_inside()` answer from them, deletions reach the
//! cache, and `remaining_objects` lists a real custom resource. Skipped when `KUBE_BIN_DIR`
//! (a directory with `etcd` and `kube-apiserver`, as tests/apiserver/build-tools.sh prints)
//! is not set.

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::{Namespace, PersistentVolumeClaim, Pod, Service};
use k8s_openapi::api::networking::v1::Ingress;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::ApiResource;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use warrant::cluster::{Cache, CacheOptions, Source};
use warrant::object::{ClusterView, Dependents, LabelValue, ObjectRef, Subject};

pub(crate) struct Proc(Child);

impl From<Child> for Proc {
    fn from(child: Child) -> Self {
        Self(child)
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Prints the tails of the control plane's logs when the test fails.
pub(crate) struct Logs<'a>(pub(crate) &'a Path);

impl Drop for Logs<'_> {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            return;
        }
        for name in ["etcd.log", "kube-apiserver.log"] {
            let text = std::fs::read_to_string(self.0.join(name)).unwrap_or_default();
            let tail: Vec<&str> = text.lines().rev().take(30).collect();
            eprintln!("--- {name}");
            for l in tail.iter().rev() {
                eprintln!("{l}");
            }
        }
    }
}

pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn start(bin: &Path, args: &[String], log: &Path) -> Proc {
    let log = std::fs::File::create(log).unwrap();
    Proc(
        Command::new(bin)
            .args(args)
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .stdin(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e}", bin.display())),
    )
}

/// etcd and kube-apiserver in `dir`; returns them and an admin kubeconfig.
pub(crate) fn control_plane(bins: &Path, dir: &Path) -> (Proc, Proc, PathBuf) {
    control_plane_with(bins, dir, &[])
}

/// [`control_plane`] with more kube-apiserver flags (an `--authorization-config` replaces the
/// default `--authorization-mode=RBAC`).
pub(crate) fn control_plane_with(
    bins: &Path,
    dir: &Path,
    extra: &[String],
) -> (Proc, Proc, PathBuf) {
    let (client, peer, api) = (free_port(), free_port(), free_port());
    let etcd_url = format!("http://127.0.0.1:{client}");
    let peer_url = format!("http://127.0.0.1:{peer}");
    let etcd = start(
        &bins.join("etcd"),
        &[
            "--name=default".into(),
            format!("--data-dir={}", dir.join("etcd").display()),
            format!("--listen-client-urls={etcd_url}"),
            format!("--advertise-client-urls={etcd_url}"),
            format!("--listen-peer-urls={peer_url}"),
            format!("--initial-advertise-peer-urls={peer_url}"),
            format!("--initial-cluster=default={peer_url}"),
            "--unsafe-no-fsync".into(),
            "--log-level=error".into(),
        ],
        &dir.join("etcd.log"),
    );
    let (sa_key, sa_pub) = (dir.join("sa.key"), dir.join("sa.pub"));
    let key = rcgen::KeyPair::generate().unwrap();
    std::fs::write(&sa_key, key.serialize_pem()).unwrap();
    std::fs::write(&sa_pub, key.public_key_pem()).unwrap();
    let tokens = dir.join("tokens.csv");
    std::fs::write(&tokens, "admin-token,admin,1,\"system:masters\"\n").unwrap();
    let apiserver = start(
        &bins.join("kube-apiserver"),
        &[
            format!("--etcd-servers={etcd_url}"),
            "--bind-address=127.0.0.1".into(),
            "--advertise-address=127.0.0.1".into(),
            format!("--secure-port={api}"),
            format!("--cert-dir={}", dir.join("certs").display()),
            format!("--token-auth-file={}", tokens.display()),
            "--service-account-issuer=https://kubernetes.default.svc".into(),
            format!("--service-account-key-file={}", sa_pub.display()),
            format!("--service-account-signing-key-file={}", sa_key.display()),
            "--service-cluster-ip-range=10.0.0.0/24".into(),
            "--disable-admission-plugins=ServiceAccount".into(),
            "--endpoint-reconciler-type=none".into(),
            "--enable-priority-and-fairness=false".into(),
            "--profiling=false".into(),
        ]
        .into_iter()
        .chain(
            (!extra
                .iter()
                .any(|a| a.starts_with("--authorization-config")))
            .then(|| "--authorization-mode=RBAC".to_owned()),
        )
        .chain(extra.iter().cloned())
        .collect::<Vec<String>>(),
        &dir.join("kube-apiserver.log"),
    );
    let kubeconfig = dir.join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:{api}\n    insecure-skip-tls-verify: true\nusers:\n- name: admin\n  user:\n    token: admin-token\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: admin\ncurrent-context: x\n"
        ),
    )
    .unwrap();
    (etcd, apiserver, kubeconfig)
}

pub(crate) async fn until<T>(
    what: &str,
    timeout: Duration,
    mut f: impl AsyncFnMut() -> Option<T>,
) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

pub(crate) async fn create<K>(api: &Api<K>, v: Value) -> K
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug,
{
    let object: K = serde_json::from_value(v).unwrap();
    api.create(&PostParams::default(), &object).await.unwrap()
}

pub(crate) fn owner(kind: &str, name: &str, uid: &str) -> Value {
    json!([{"apiVersion": "apps/v1", "kind": kind, "name": name, "uid": uid}])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cache_follows_a_real_api_server() {
    let Some(bins) = std::env::var_os("KUBE_BIN_DIR").map(PathBuf::from) else {
        eprintln!("KUBE_BIN_DIR is not set: skipped");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (_etcd, _apiserver, kubeconfig) = control_plane(&bins, dir.path());
    let _logs = Logs(dir.path());
    let source = Source::Kubeconfig(kubeconfig);
    let client = source.client().await.unwrap();
    until("kube-apiserver", Duration::from_secs(90), async || {
        let ns: Api<Namespace> = Api::all(client.clone());
        ns.get("default").await.ok()
    })
    .await;

    // Cache first, so its watches follow the objects as they come.
    let cache = Arc::new(Cache::new(CacheOptions::default()));
    let _watches = warrant::cluster::start(&cache, client.clone());
    until("cache sync", Duration::from_secs(30), async || {
        cache.ready().ok()
    })
    .await;

    let namespaces: Api<Namespace> = Api::all(client.clone());
    create(&namespaces, json!({"metadata": {"name": "shop", "labels": {"sre.example.com/protection-level": "high"}}})).await;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "shop");
    let sets: Api<ReplicaSet> = Api::namespaced(client.clone(), "shop");
    let pods: Api<Pod> = Api::namespaced(client.clone(), "shop");
    let template = json!({"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
    let dep = create(&deployments, json!({"metadata": {"name": "web"},
        "spec": {"replicas": 25, "selector": {"matchLabels": {"app": "web"}}, "template": template}})).await;
    let dep_uid = dep.metadata.uid.clone().unwrap();
    let rs = create(&sets, json!({"metadata": {"name": "web-abc", "ownerReferences": owner("Deployment", "web", &dep_uid)},
        "spec": {"replicas": 25, "selector": {"matchLabels": {"app": "web"}}, "template": template}})).await;
    let rs_uid = rs.metadata.uid.clone().unwrap();
    for n in 0..27 {
        let name = format!("web-abc-{n}");
        create(&pods, json!({"metadata": {"name": name, "labels": {"app": "web"}, "ownerReferences": owner("ReplicaSet", "web-abc", &rs_uid)},
            "spec": {"containers": [{"name": "c", "image": "nginx"}],
                     "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "shared"}}]}})).await;
        // 25 run, 2 stay pending.
        if n < 25 {
            pods.patch_status(
                &name,
                &PatchParams::default(),
                &Patch::Merge(json!({"status": {"phase": "Running"}})),
            )
            .await
            .unwrap();
        }
    }
    let services: Api<Service> = Api::namespaced(client.clone(), "shop");
    create(&services, json!({"metadata": {"name": "web"}, "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}})).await;
    let ingresses: Api<Ingress> = Api::namespaced(client.clone(), "shop");
    create(&ingresses, json!({"metadata": {"name": "web"}, "spec": {"rules": [{"http": {"paths": [
        {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]}})).await;
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), "shop");
    create(
        &claims,
        json!({"metadata": {"name": "shared"},
        "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "1Gi"}}}}),
    )
    .await;
    claims
        .patch_status(
            "shared",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Bound"}})),
        )
        .await
        .unwrap();

    let target = ObjectRef {
        group: "apps",
        resource: "deployments",
        namespace: "shop",
        name: "web",
    };
    let stored = Subject::new(serde_json::to_value(&dep).unwrap());
    let want = Dependents {
        running_pods: 25,
        ingress_pods: 25,
        services: vec!["shop/web".into()],
        ingresses: vec!["shop/web".into()],
        bound_volumes: vec!["shop/shared".into()],
    };
    let got = until(
        "the shop in the cache",
        Duration::from_secs(20),
        async || {
            let d = cache.dependents(&target, Some(&stored)).ok()?;
            (d == want).then_some(d)
        },
    )
    .await;
    assert_eq!(got, want);
    assert_eq!(
        cache
            .namespace_label("shop", "sre.example.com/protection-level")
            .unwrap()
            .as_deref(),
        Some("high")
    );

    // A labelled Deployment without replicas: its label is kept, for a Namespace's deletion.
    let level = "sre.example.com/protection-level";
    create(&deployments, json!({"metadata": {"name": "checkout", "labels": {level: "critical"}},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "checkout"}},
                 "template": {"metadata": {"labels": {"app": "checkout"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})).await;
    let held = until(
        "the labelled Deployment",
        Duration::from_secs(20),
        async || {
            let v = cache.labelled_inside("shop", level).ok()?;
            (!v.values.is_empty()).then_some(v)
        },
    )
    .await;
    let want = LabelValue {
        value: "critical".into(),
        object: "deployments.apps/checkout".into(),
        count: 1,
    };
    assert_eq!((held.values, held.truncated), (vec![want], false));

    // A deleted pod, a pod that stops running: the cache follows.
    pods.delete("web-abc-0", &DeleteParams::default().grace_period(0))
        .await
        .unwrap();
    pods.patch_status(
        "web-abc-1",
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"phase": "Succeeded"}})),
    )
    .await
    .unwrap();
    until("two pods fewer", Duration::from_secs(20), async || {
        (cache.dependents(&target, None).ok()?.running_pods == 23).then_some(())
    })
    .await;

    // A CRD's remaining objects, live.
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crd = create(&crds, json!({"metadata": {"name": "widgets.example.com"}, "spec": {"group": "example.com", "scope": "Namespaced",
        "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
        "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}})).await;
    let crd = Subject::new(serde_json::to_value(&crd).unwrap());
    let count = until("the CRD served", Duration::from_secs(20), async || {
        cache.remaining_objects(&crd).await.ok()
    })
    .await;
    assert_eq!(count, 0);
    let widgets: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        "shop",
        &ApiResource {
            group: "example.com".into(),
            version: "v1".into(),
            api_version: "example.com/v1".into(),
            kind: "Widget".into(),
            plural: "widgets".into(),
        },
    );
    for n in 0..2 {
        let w: DynamicObject = serde_json::from_value(json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": format!("w{n}")}})).unwrap();
        widgets.create(&PostParams::default(), &w).await.unwrap();
    }
    assert_eq!(cache.remaining_objects(&crd).await, Ok(2));
}
