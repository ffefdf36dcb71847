//! Downstream `type: Webhook` authorizers against real downstreams over TLS: a second in-process
//! warrant and a fault-injecting server. Spec section 7 vectors 1-16 and the failure classes;
//! tests assert attempt counts (requests the downstream received) and cache results, not only
//! answers.

mod cache;
mod conditional;
mod connection;
mod failures;
pub mod fault;
mod request;

use crate::support::*;
use base64::Engine;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Backoff base used by these tests: attempts 5 fit in ~100 ms.
pub const FAST_BACKOFF: Duration = Duration::from_millis(10);

/// How a kubeconfig reaches its downstream.
pub struct Kube<'a> {
    pub server: String,
    pub ca_pem: Option<&'a str>,
    pub client: Option<&'a Leaf>,
    pub extra_cluster: &'a str,
    pub extra_user: &'a str,
}

impl<'a> Kube<'a> {
    pub fn new(server: String, ca_pem: &'a str) -> Self {
        Self {
            server,
            ca_pem: Some(ca_pem),
            client: None,
            extra_cluster: "",
            extra_user: "",
        }
    }

    pub fn client(mut self, leaf: &'a Leaf) -> Self {
        self.client = Some(leaf);
        self
    }
}

pub fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}

/// Writes a kubeconfig with inline data; returns its absolute path.
pub fn write_kubeconfig(dir: &Path, file: &str, k: &Kube<'_>) -> PathBuf {
    let mut cluster = format!("    server: {}\n", k.server);
    if let Some(ca) = k.ca_pem {
        cluster.push_str(&format!("    certificate-authority-data: {}\n", b64(ca)));
    }
    cluster.push_str(k.extra_cluster);
    let mut user = String::new();
    if let Some(leaf) = k.client {
        user.push_str(&format!(
            "    client-certificate-data: {}\n    client-key-data: {}\n",
            b64(&leaf.cert_pem),
            b64(&leaf.key_pem)
        ));
    }
    user.push_str(k.extra_user);
    if user.is_empty() {
        user.push_str("    {}\n");
    }
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: downstream\n  cluster:\n{cluster}users:\n- name: warrant\n  user:\n{user}contexts:\n- name: default\n  context:\n    cluster: downstream\n    user: warrant\ncurrent-context: default\n"
    );
    let path = dir.join(file);
    std::fs::write(&path, text).unwrap();
    path
}

/// A warrant.dev config with one webhook entry (`settings` are extra lines of the webhook block,
/// indented by 4) followed by `tail` (more entries).
pub fn webhook_config(kubeconfig: &Path, settings: &str, tail: &str) -> String {
    format!(
        "apiVersion: warrant.dev/v1alpha1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: Webhook\n  name: opa\n  webhook:\n    timeout: 2s\n    subjectAccessReviewVersion: v1\n    failurePolicy: NoOpinion\n    connectionInfo:\n      type: KubeConfigFile\n      kubeConfigFile: {}\n{settings}{tail}",
        kubeconfig.display()
    )
}

/// Starts a front warrant serving `config`, with fast retries.
pub async fn front(config: String) -> Warrant {
    front_with(config, None).await
}

pub async fn front_with(config: String, review_timeout: Option<Duration>) -> Warrant {
    Warrant::start(Options {
        config: Some(config),
        webhook_backoff: Some(FAST_BACKOFF),
        review_timeout,
        ..Options::default()
    })
    .await
}

/// A v1 resource review.
pub fn review(user: &str, namespace: &str) -> String {
    serde_json::json!({
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {
            "user": user,
            "uid": "1",
            "groups": ["group1", "group2"],
            "resourceAttributes": {"namespace": namespace, "verb": "get", "resource": "pods"}
        }
    })
    .to_string()
}

/// Posts a review to `w`; returns the answer's status object.
pub async fn ask(w: &Warrant, body: &str) -> serde_json::Value {
    let (code, v) = post_review(&w.client(), &w.url("/authorize"), body).await;
    assert_eq!(code, 200, "{v}");
    v["status"].clone()
}

/// The value of one metric sample (`name{labels}`), 0 when absent.
pub async fn sample(w: &Warrant, series: &str) -> f64 {
    let text = metrics_text(&w.client(), w).await;
    text.lines()
        .find_map(|l| {
            let (k, v) = l.rsplit_once(' ')?;
            (k == series).then(|| v.parse().ok())?
        })
        .unwrap_or(0.0)
}

/// `warrant_webhook_cache_requests_total{name="opa",result=...}`.
pub async fn cache_count(w: &Warrant, result: &str) -> f64 {
    sample(
        w,
        &format!("warrant_webhook_cache_requests_total{{name=\"opa\",result=\"{result}\"}}"),
    )
    .await
}

/// `warrant_webhook_evaluations_total{name="opa",result=...}`.
pub async fn evaluations(w: &Warrant, result: &str) -> f64 {
    sample(
        w,
        &format!("warrant_webhook_evaluations_total{{name=\"opa\",result=\"{result}\"}}"),
    )
    .await
}

/// `warrant_webhook_evaluations_fail_open_total{name="opa",result=...}`.
pub async fn fail_open(w: &Warrant, result: &str) -> f64 {
    sample(
        w,
        &format!("warrant_webhook_evaluations_fail_open_total{{name=\"opa\",result=\"{result}\"}}"),
    )
    .await
}

/// Waits until `warrant_config_reloads_total{status="success"}` reaches `n`.
pub async fn wait_reloads(w: &Warrant, n: f64) {
    let started = Instant::now();
    while sample(w, "warrant_config_reloads_total{status=\"success\"}").await < n {
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "reload {n} not seen"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
