//! Spec vectors 13-16 (`TestV1TLSConfig`, `TestV1NewFromConfig`, `TestAuthorizerMetrics`): mTLS
//! against a real downstream warrant, trust failures, and kubeconfig loading rules.

use super::fault::FaultServer;
use super::*;
use warrant::authorizer::{BuildError, Chain};

/// A downstream `warrant serve` that requires client certificates from its own CA.
async fn downstream(config: &str) -> Warrant {
    Warrant::start(Options {
        config: Some(config.to_owned()),
        ..Options::default()
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vector_14_mtls_to_a_real_downstream_warrant() {
    let down = downstream(ALLOW_ALL).await;
    let dir = tempfile::tempdir().unwrap();
    let kc = write_kubeconfig(
        dir.path(),
        "kc.yaml",
        &Kube::new(down.url("/authorize"), &down.ca.cert_pem).client(&down.client),
    );
    let w = front(webhook_config(&kc, "", "")).await;
    let st = ask(&w, &review("jane", "team-a")).await;
    assert_eq!(st["allowed"], true, "{st}");
    assert_eq!(evaluations(&w, "success").await, 1.0);
    // The downstream counted the review it answered.
    let down_metrics = metrics_text(&down.client(), &down).await;
    assert!(
        down_metrics.contains("warrant_authorization_decisions_total{type=\"AlwaysAllow\",name=\"allow-all\",decision=\"allowed\"} 1"),
        "{down_metrics}"
    );
    w.stop().await;
    down.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_downstream_deny_and_v1beta1() {
    let down = downstream(DENY_ALL).await;
    let dir = tempfile::tempdir().unwrap();
    let kc = write_kubeconfig(
        dir.path(),
        "kc.yaml",
        &Kube::new(down.url("/authorize"), &down.ca.cert_pem).client(&down.client),
    );
    let config = webhook_config(&kc, "", "").replace(
        "subjectAccessReviewVersion: v1\n",
        "subjectAccessReviewVersion: v1beta1\n",
    );
    let w = front(config).await;
    let st = ask(&w, &review("jane", "team-a")).await;
    assert_eq!(st["denied"], true, "{st}");
    assert_eq!(st["reason"], "opa: deny-all: Everything is forbidden.");
    w.stop().await;
    down.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vector_14_server_without_client_auth_accepts_either_client() {
    let fault = FaultServer::start(None).await;
    let other = Ca::new("client-ca");
    let leaf = other.client("warrant");
    let dir = tempfile::tempdir().unwrap();
    for (i, client) in [None, Some(&leaf)].into_iter().enumerate() {
        let mut k = Kube::new(fault.url("/"), &fault.ca.cert_pem);
        k.client = client;
        let kc = write_kubeconfig(dir.path(), &format!("kc{i}.yaml"), &k);
        let w = front(webhook_config(&kc, "", "")).await;
        assert_eq!(ask(&w, &review("jane", "a")).await["allowed"], true);
        w.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vectors_13_15_trust_failures_are_errors_not_retried() {
    let client_ca = Ca::new("accepted-client-ca");
    let fault = FaultServer::start(Some(&client_ca)).await;
    let foreign = Ca::new("foreign");
    let dir = tempfile::tempdir().unwrap();
    let good_leaf = client_ca.client("warrant");
    let foreign_leaf = foreign.client("warrant");
    let cases: Vec<(&str, Kube<'_>)> = vec![
        // 15. the client lacks the CA of the server's certificate.
        (
            "unknown server CA",
            Kube::new(fault.url("/"), &foreign.cert_pem).client(&good_leaf),
        ),
        // 13/15. the server does not trust the client's certificate.
        (
            "client cert from another CA",
            Kube::new(fault.url("/"), &fault.ca.cert_pem).client(&foreign_leaf),
        ),
        // The server requires a client certificate and none is presented.
        (
            "no client cert",
            Kube::new(fault.url("/"), &fault.ca.cert_pem),
        ),
    ];
    for (i, (what, k)) in cases.into_iter().enumerate() {
        let kc = write_kubeconfig(dir.path(), &format!("kc{i}.yaml"), &k);
        let w = front(webhook_config(&kc, "", "")).await;
        let st = ask(&w, &review("jane", "a")).await;
        assert_eq!(st["allowed"], false, "{what}: {st}");
        let e = st["evaluationError"].as_str().unwrap_or("");
        // With TLS 1.3 the server's refusal of a missing client certificate arrives after the
        // client considers the handshake done, so it can surface as a failed first request
        // rather than a handshake error; either way it is a transport failure, not retried.
        let tls_or_refused_after_handshake =
            e.contains("TLS") || (what == "no client cert" && e.contains("transport failure"));
        assert!(tls_or_refused_after_handshake, "{what}: {e}");
        assert!(!e.contains("attempts"), "{what}: not retried: {e}");
        assert_eq!(evaluations(&w, "error").await, 1.0, "{what}");
        assert_eq!(fail_open(&w, "error").await, 1.0, "{what}");
        w.stop().await;
    }
    assert_eq!(fault.calls(), 0);
    // With the right CA and client certificate the same server allows.
    let kc = write_kubeconfig(
        dir.path(),
        "ok.yaml",
        &Kube::new(fault.url("/"), &fault.ca.cert_pem).client(&good_leaf),
    );
    let w = front(webhook_config(&kc, "", "")).await;
    assert_eq!(ask(&w, &review("jane", "a")).await["allowed"], true);
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_server_name_and_insecure_skip_verify() {
    let fault = FaultServer::start(None).await;
    let dir = tempfile::tempdir().unwrap();
    let foreign = Ca::new("foreign");
    let rows: Vec<(Kube<'_>, bool)> = vec![
        (
            Kube {
                extra_cluster: "    tls-server-name: localhost\n",
                ..Kube::new(fault.url("/"), &fault.ca.cert_pem)
            },
            true,
        ),
        (
            Kube {
                extra_cluster: "    tls-server-name: not-the-server.example\n",
                ..Kube::new(fault.url("/"), &fault.ca.cert_pem)
            },
            false,
        ),
        (
            Kube {
                ca_pem: None,
                extra_cluster: "    insecure-skip-tls-verify: true\n",
                ..Kube::new(fault.url("/"), &foreign.cert_pem)
            },
            true,
        ),
    ];
    for (i, (k, allowed)) in rows.into_iter().enumerate() {
        let kc = write_kubeconfig(dir.path(), &format!("kc{i}.yaml"), &k);
        let w = front(webhook_config(&kc, "", "")).await;
        assert_eq!(
            ask(&w, &review("jane", "a")).await["allowed"],
            allowed,
            "row {i}"
        );
        w.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bearer_token_and_token_file_are_sent() {
    let fault = FaultServer::start(None).await;
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, "from-file\n").unwrap();
    let extra = format!("    tokenFile: {}\n", token_file.display());
    // Both set: client-go sends the file's token; the inline one is only a fallback.
    let both = format!("    token: inline-token\n{extra}");
    let missing = "    token: inline-token\n    tokenFile: /nonexistent/token\n".to_owned();
    let rows = [
        ("    token: inline-token\n".to_owned(), "inline-token"),
        (extra, "from-file"),
        (both, "from-file"),
        (missing, "inline-token"),
    ];
    for (i, (user, token)) in rows.iter().enumerate() {
        let kc = write_kubeconfig(
            dir.path(),
            &format!("kc{i}.yaml"),
            &Kube {
                extra_user: user,
                ..Kube::new(fault.url("/"), &fault.ca.cert_pem)
            },
        );
        let w = front(webhook_config(&kc, "", "")).await;
        fault.take_calls();
        ask(&w, &review("jane", "a")).await;
        let head = fault.received()[0].head.to_ascii_lowercase();
        assert!(
            head.contains(&format!("authorization: bearer {token}\r\n")),
            "{head}"
        );
        w.stop().await;
    }
}

/// Builds a chain from a config whose webhook uses `kubeconfig` text; returns the build error.
fn build_error(kubeconfig: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kc.yaml");
    std::fs::write(&kc, kubeconfig).unwrap();
    let loaded = warrant::config::parse("c.yaml", webhook_config(&kc, "", "").as_bytes()).unwrap();
    match Chain::build(&loaded.config) {
        Err(BuildError::Webhook { name, source }) => {
            assert_eq!(name.as_str(), "opa");
            source.to_string()
        }
        other => panic!("expected a webhook build error, got {other:?}"),
    }
}

#[test]
fn vector_16_kubeconfig_loading_rules() {
    let ca = Ca::new("ca");
    let data = b64(&ca.cert_pem);
    let dir = tempfile::tempdir().unwrap();
    let good = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: good\n  cluster:\n    server: https://127.0.0.1:1/\n    certificate-authority-data: {data}\n- name: bad\n  cluster:\n    server: https://127.0.0.1:1/\n    certificate-authority: {}\ncontexts:\n- name: good\n  context: {{cluster: good, user: u}}\n- name: bad\n  context: {{cluster: bad, user: u}}\nusers:\n- name: u\n  user: {{}}\n",
        dir.path().join("missing-ca.crt").display()
    );
    // Multiple clusters, no current-context.
    let e = build_error(&good);
    assert!(e.contains("current context"), "{e}");
    // A context selecting the cluster with an unreadable CA.
    let e = build_error(&format!("{good}current-context: bad\n"));
    assert!(e.contains("certificate authority"), "{e}");
    // The good cluster.
    let kc = dir.path().join("ok.yaml");
    std::fs::write(&kc, format!("{good}current-context: good\n")).unwrap();
    let loaded = warrant::config::parse("c.yaml", webhook_config(&kc, "", "").as_bytes()).unwrap();
    assert!(Chain::build(&loaded.config).is_ok());
    // One named cluster and user, no context.
    let e = build_error(&format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1/\n    certificate-authority-data: {data}\nusers:\n- name: u\n  user: {{}}\n"
    ));
    assert!(e.contains("current context"), "{e}");
}

#[test]
fn kubeconfig_conflicts_and_unsupported_users_are_refused() {
    let ca = Ca::new("ca");
    let data = b64(&ca.cert_pem);
    let dir = tempfile::tempdir().unwrap();
    let ca_file = dir.path().join("ca.crt");
    std::fs::write(&ca_file, &ca.cert_pem).unwrap();
    let kc = |cluster: &str, user: &str| {
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1/\n{cluster}users:\n- name: u\n  user:\n{user}contexts:\n- name: x\n  context: {{cluster: c, user: u}}\ncurrent-context: x\n"
        )
    };
    let ca_data = format!("    certificate-authority-data: {data}\n");
    let rows = [
        (
            kc(
                &format!(
                    "{ca_data}    certificate-authority: {}\n",
                    ca_file.display()
                ),
                "    {}\n",
            ),
            "certificate-authority-data and certificate-authority are both specified",
        ),
        (
            kc(
                &format!("{ca_data}    insecure-skip-tls-verify: true\n"),
                "    {}\n",
            ),
            "specifying a root certificates file with the insecure flag is not allowed",
        ),
        (
            kc(
                &ca_data,
                "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: /bin/true\n",
            ),
            "exec credential plugin",
        ),
        (
            kc(&ca_data, "    auth-provider:\n      name: oidc\n"),
            "auth-provider",
        ),
        (
            kc(&ca_data, &format!("    client-certificate-data: {data}\n")),
            "client-key-data or client-key must be specified",
        ),
        (kc("", "    {}\n"), "no certificate-authority"),
    ];
    for (text, want) in rows {
        let e = build_error(&text);
        assert!(e.contains(want), "want {want:?} in {e}");
    }
}

#[test]
fn in_cluster_config_is_refused_at_validation() {
    let text = "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: Webhook\n  name: wh\n  webhook:\n    timeout: 3s\n    subjectAccessReviewVersion: v1\n    failurePolicy: Deny\n    connectionInfo:\n      type: InClusterConfig\n";
    let e = warrant::config::parse("c.yaml", text.as_bytes())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("authorizers[0].connectionInfo.type") && e.contains("call warrant again"),
        "{e}"
    );
}

#[test]
fn shipped_webhook_example_validates() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("authz-config/examples/downstream-webhook.yaml"))
        .unwrap();
    let kc = root.join("kubeconfigs/warrant-to-downstream.yaml");
    assert!(kc.is_file());
    let text = text.replace(
        "/etc/warrant/kubeconfigs/warrant-to-downstream.yaml",
        &kc.display().to_string(),
    );
    let loaded = warrant::config::parse("downstream-webhook.yaml", text.as_bytes()).unwrap();
    assert_eq!(loaded.config.authorizers.len(), 2);
    // The shipped kubeconfig parses; only its placeholder CA file is missing.
    let e = match Chain::build(&loaded.config) {
        Err(BuildError::Webhook { source, .. }) => source.to_string(),
        other => panic!("{other:?}"),
    };
    assert!(e.contains("DOWNSTREAM_CA_FILE"), "{e}");
}

#[test]
fn build_error_keeps_the_kubeconfig_error_underneath() {
    use std::error::Error as _;
    use warrant::authorizer::webhook::{self, kubeconfig::KubeconfigError};
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kc.yaml");
    std::fs::write(
        &kc,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1/\n    certificate-authority: ca.crt\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n",
    )
    .unwrap();
    let loaded = warrant::config::parse("c.yaml", webhook_config(&kc, "", "").as_bytes()).unwrap();
    let e = Chain::build(&loaded.config).unwrap_err();
    // The relative CA resolves against the kubeconfig's directory, and the error says so.
    let ca = dir.path().join("ca.crt");
    assert_eq!(
        e.to_string(),
        format!(
            "authorizer \"opa\": kubeconfig {}: failed to load certificate authority: failed to read file '{ca:?}': No such file or directory (os error 2)",
            kc.display()
        )
    );
    let BuildError::Webhook { name, source } = &e else {
        panic!("{e:?}");
    };
    assert_eq!(name.as_str(), "opa");
    let webhook::BuildError::Kubeconfig(KubeconfigError::CaFile { path, file, .. }) = source else {
        panic!("{source:?}");
    };
    assert_eq!((path, file), (&kc, &ca));
    let io = e
        .source()
        .and_then(|s| s.source())
        .and_then(|s| s.downcast_ref::<std::sync::Arc<std::io::Error>>());
    assert_eq!(io.map(|e| e.kind()), Some(std::io::ErrorKind::NotFound));
}
