//! `warrant serve --kubeconfig`: the cluster cache opens only for a chain with a
//! DeletionGuard; while the API server cannot be reached `/authorize` still answers, `/readyz`
//! says the cache has not synced, and the metrics show the watch errors. A bad kubeconfig
//! stops the start with the file named.

use crate::support::{BIN, repo};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const TOKEN: &str = "cluster-test-token";

/// A kubeconfig for an API server that refuses connections (a closed loopback port).
fn unreachable_kubeconfig(dir: &std::path::Path) -> std::path::PathBuf {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let path = dir.join("kubeconfig");
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:{port}\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    token: t\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: u\ncurrent-context: x\n"
        ),
    )
    .unwrap();
    path
}

struct Serving {
    child: Child,
    plain: String,
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `warrant serve` with `args` and a plain-HTTP loopback listener taking a bearer token.
fn serve(dir: &std::path::Path, args: &[&str]) -> Serving {
    let tokens = dir.join("tokens.csv");
    std::fs::write(&tokens, format!("{TOKEN},tester,1,\"system:masters\"\n")).unwrap();
    let mut child = Command::new(BIN)
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--insecure-listen",
            "127.0.0.1:0",
        ])
        .args(["--audit-log", "none", "--token-auth-file"])
        .arg(&tokens)
        .arg("--state-dir")
        .arg(dir.join("state"))
        .args(args)
        .env_remove("KUBERNETES_SERVICE_HOST")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for l in lines.map_while(Result::ok) {
            let _ = tx.send(l);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut seen = Vec::new();
    let plain = loop {
        assert!(Instant::now() < deadline, "no plain listener: {seen:#?}");
        let Ok(line) = rx.recv_timeout(Duration::from_millis(100)) else {
            continue;
        };
        if let Some(rest) = line.strip_prefix("warrant also serving plain HTTP on ") {
            break rest
                .split_whitespace()
                .next()
                .unwrap()
                .trim_end_matches("/authorize")
                .to_owned();
        }
        seen.push(line);
    };
    Serving { child, plain }
}

/// A client for the plain-HTTP listener (reqwest is built without a default TLS provider).
fn plain_client() -> reqwest::Client {
    let tls = rustls::ClientConfig::builder_with_provider(crate::support::provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(rustls::RootCertStore::empty())
        .with_no_client_auth();
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

async fn get(url: &str) -> (u16, String) {
    let r = plain_client()
        .get(url)
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_answers_while_the_api_server_is_unreachable_and_readyz_waits_for_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = unreachable_kubeconfig(dir.path());
    let config = repo("authz-config/guard-example.yaml");
    let s = serve(
        dir.path(),
        &[
            "--config",
            &config,
            "--kubeconfig",
            kubeconfig.to_str().unwrap(),
        ],
    );
    // /readyz: the configuration is loaded, the cache cannot list.
    let deadline = Instant::now() + Duration::from_secs(20);
    let (code, body) = loop {
        let (code, body) = get(&format!("{}/readyz", s.plain)).await;
        if body.contains("has not listed yet (last error") || Instant::now() > deadline {
            break (code, body);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(code, 503, "{body}");
    assert!(
        body.starts_with("not ready: cluster cache not ready: pods: has not listed yet"),
        "{body}"
    );
    // /authorize still answers.
    let review = std::fs::read_to_string(repo("tests/fixtures/reviews/v1-resource.json")).unwrap();
    let r = plain_client()
        .post(format!("{}/authorize", s.plain))
        .bearer_auth(TOKEN)
        .header("Content-Type", "application/json")
        .body(review)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let v: serde_json::Value = r.json().await.unwrap();
    assert_eq!(v["kind"], "SubjectAccessReview", "{v}");
    // The metrics show the cache and its errors.
    let (code, metrics) = get(&format!("{}/metrics", s.plain)).await;
    assert_eq!(code, 200);
    for want in [
        "warrant_cluster_cache_ready 0",
        "warrant_cluster_cache_objects{resource=\"pods\"} 0",
        "warrant_cluster_watch_errors_total{resource=\"pods\"}",
    ] {
        assert!(metrics.contains(want), "{want} missing:\n{metrics}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chain_without_a_guard_opens_no_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = unreachable_kubeconfig(dir.path());
    let config = repo("authz-config/warrant.yaml");
    let s = serve(
        dir.path(),
        &[
            "--config",
            &config,
            "--kubeconfig",
            kubeconfig.to_str().unwrap(),
        ],
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while get(&format!("{}/readyz", s.plain)).await.0 != 200 {
        assert!(Instant::now() < deadline, "not ready");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Past the first poll of the chain: still ready, and no cache series at all.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(
        get(&format!("{}/readyz", s.plain)).await,
        (200, "ok".to_owned())
    );
    let (_, metrics) = get(&format!("{}/metrics", s.plain)).await;
    assert!(
        !metrics.contains("warrant_cluster_cache_ready"),
        "{metrics}"
    );
}

#[test]
fn a_bad_kubeconfig_stops_the_start_and_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-kubeconfig");
    let out = Command::new(BIN)
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--audit-log",
            "none",
            "--kubeconfig",
        ])
        .arg(&missing)
        .arg("--state-dir")
        .arg(dir.path().join("state"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("--kubeconfig {}", missing.display())),
        "{stderr}"
    );
}
