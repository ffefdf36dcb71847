//! A downstream webhook's cache hit: canonical key of the v1 spec, moka lookup, freshness check,
//! status to verdict. Target: at most 2 µs. Run with `cargo bench --bench webhook_cache_hit`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a benchmark's setup fails by panicking"
)]

use base64::Engine;
use criterion::{Criterion, criterion_group, criterion_main};
use k8s_openapi::api::authorization::v1::{ResourceAttributes, SubjectAccessReviewSpec};
use std::collections::BTreeMap;
use std::time::Duration;
use warrant::authorizer::webhook::Webhook;
use warrant::authorizer::webhook::client::DownstreamStatus;
use warrant::authorizer::{Authorizer, Chain, Deadline, Input};
use warrant::decision::Decision;
use warrant::names::AuthorizerName;
use warrant::review::{ApiVersion, Review};

fn input() -> Input {
    let mut extra = BTreeMap::new();
    extra.insert("scopes".to_owned(), vec!["a".to_owned(), "b".to_owned()]);
    let spec = SubjectAccessReviewSpec {
        user: Some("jane@example.com".into()),
        uid: Some("6f1c2a9e-2b7d-4c1e-9a51-0d2f3c4b5a69".into()),
        groups: Some(vec!["dev".into(), "system:authenticated".into()]),
        extra: Some(extra),
        resource_attributes: Some(ResourceAttributes {
            namespace: Some("team-a".into()),
            verb: Some("list".into()),
            group: Some("apps".into()),
            version: Some("v1".into()),
            resource: Some("deployments".into()),
            ..Default::default()
        }),
        ..Default::default()
    };
    Input::new(
        Review::new(ApiVersion::V1, spec).expect("a valid review"),
        chrono::Utc::now(),
    )
}

fn bench(c: &mut Criterion) {
    // A kubeconfig whose server is never called: every lookup below is a hit.
    let dir = tempfile::tempdir().expect("temp dir");
    let key = rcgen::KeyPair::generate().expect("key");
    let cert = rcgen::CertificateParams::new(vec!["localhost".to_owned()])
        .expect("params")
        .self_signed(&key)
        .expect("cert");
    let ca = base64::engine::general_purpose::STANDARD.encode(cert.pem());
    let kc = dir.path().join("kc.yaml");
    std::fs::write(
        &kc,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: d\n  cluster:\n    server: https://127.0.0.1:1/\n    certificate-authority-data: {ca}\nusers:\n- name: u\n  user: {{}}\ncontexts:\n- name: x\n  context: {{cluster: d, user: u}}\ncurrent-context: x\n"
        ),
    )
    .expect("write kubeconfig");
    let config = format!(
        "apiVersion: warrant.dev/v1alpha1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: Webhook\n  name: opa\n  webhook:\n    timeout: 3s\n    subjectAccessReviewVersion: v1\n    failurePolicy: NoOpinion\n    connectionInfo:\n      type: KubeConfigFile\n      kubeConfigFile: {}\n",
        kc.display()
    );
    let loaded = warrant::config::parse("bench.yaml", config.as_bytes()).expect("valid config");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let chain = rt
        .block_on(async { Chain::build(&loaded.config) })
        .expect("chain");
    let name = AuthorizerName::new("opa").expect("name");
    let core = chain
        .webhook_states()
        .get(&name)
        .expect("the webhook core")
        .clone();
    let input = input();
    core.prime(
        &input,
        DownstreamStatus {
            allowed: true,
            denied: false,
            reason: "allowed by downstream policy".into(),
            ..Default::default()
        },
    );
    let webhook = Webhook::new(core);
    let _guard = rt.enter();
    let deadline = Deadline::after(Duration::from_secs(3600));
    let check = rt
        .block_on(webhook.authorize(&input, deadline))
        .expect("a hit");
    assert_eq!(check.decision, Decision::Allow);

    c.bench_function("webhook_cache_hit/authorizer", |b| {
        b.to_async(&rt)
            .iter(|| async { webhook.authorize(&input, deadline).await })
    });
    c.bench_function("webhook_cache_hit/chain", |b| {
        b.to_async(&rt)
            .iter(|| async { chain.authorize(&input, deadline).await })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
