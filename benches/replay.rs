//! `warrant replay` throughput (>= 50,000 recorded reviews per second on one core):
//! a generated 100,000-line kube-apiserver audit log (audit.k8s.io/v1 events at Metadata level:
//! gets, lists and watches with label and field selectors, creates, impersonation, non-resource
//! paths) and a 100,000-line warrant audit log, each replayed against a Policy of 20 rules
//! behind 3 matchConditions (the policy_review bench's), reading, mapping, judging and
//! comparing every line on one thread.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a benchmark's setup fails by panicking"
)]

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::fmt::Write as _;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use warrant::authorizer::Chain;
use warrant::replay::{Options, replay_blocking};

const LINES: usize = 100_000;

fn config() -> String {
    let mut rules = String::new();
    for i in 0..19 {
        let (effect, expr) = if i % 2 == 0 {
            (
                "Deny",
                format!(
                    "request.resourceAttributes.namespace == 'ns-{i}' && request.resourceAttributes.verb == 'delete'"
                ),
            )
        } else {
            ("Allow", format!("'team-{i}' in request.groups"))
        };
        let _ = write!(
            rules,
            "    - name: rule-{i}\n      effect: {effect}\n      expression: \"{expr}\"\n      message: rule {i}\n"
        );
    }
    rules.push_str("    - name: owners\n      effect: Allow\n      expression: \"request.user.startsWith('owner-') && request.resourceAttributes.resource in ['deployments', 'pods']\"\n      message: owners may act\n");
    format!(
        "apiVersion: warrant.dev/v1alpha1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: Policy\n  name: bench\n  matchConditions:\n  - expression: \"has(request.resourceAttributes)\"\n  - expression: \"!('system:masters' in request.groups)\"\n  - expression: \"!request.user.startsWith('system:')\"\n  policy:\n    rules:\n{rules}"
    )
}

/// One generated event: the shape cycles through the kinds of request a cluster sees.
fn event(i: usize) -> String {
    use serde_json::json;
    let ns = format!("ns-{}", i % 40);
    let user = match i % 7 {
        0 => "owner-ann".to_owned(),
        1 => "system:serviceaccount:kube-system:replicaset-controller".to_owned(),
        _ => format!("user-{}", i % 500),
    };
    let groups = json!([format!("team-{}", i % 23), "system:authenticated"]);
    let name = format!("web-{i}");
    let (verb, uri, object_ref) = match i % 10 {
        0..=2 => (
            "get",
            format!("/apis/apps/v1/namespaces/{ns}/deployments/{name}"),
            json!({"resource": "deployments", "namespace": ns, "name": name, "apiGroup": "apps", "apiVersion": "v1"}),
        ),
        3 | 4 => (
            "list",
            format!(
                "/api/v1/namespaces/{ns}/pods?labelSelector=app%3Dweb%2Ctier+in+%28a%2Cb%29&limit=500"
            ),
            json!({"resource": "pods", "namespace": ns, "apiVersion": "v1"}),
        ),
        5 => (
            "watch",
            format!(
                "/api/v1/namespaces/{ns}/pods?fieldSelector=spec.nodeName%3Dnode-{}&watch=true",
                i % 9
            ),
            json!({"resource": "pods", "namespace": ns, "apiVersion": "v1"}),
        ),
        6 => (
            "create",
            format!("/api/v1/namespaces/{ns}/configmaps"),
            json!({"resource": "configmaps", "namespace": ns, "name": format!("cm-{i}"), "apiVersion": "v1"}),
        ),
        7 => (
            "delete",
            format!("/apis/apps/v1/namespaces/{ns}/deployments/{name}"),
            json!({"resource": "deployments", "namespace": ns, "name": name, "apiGroup": "apps", "apiVersion": "v1"}),
        ),
        8 => (
            "update",
            format!("/api/v1/namespaces/{ns}/pods/{name}/status"),
            json!({"resource": "pods", "namespace": ns, "name": name, "apiVersion": "v1", "subresource": "status"}),
        ),
        _ => ("get", "/healthz".to_owned(), serde_json::Value::Null),
    };
    let impersonating = i.is_multiple_of(13);
    let mut e = json!({
        "kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "Metadata",
        "auditID": format!("a-{i:08}"), "stage": "ResponseComplete", "requestURI": uri, "verb": verb,
        "user": {"username": if impersonating { "admin" } else { user.as_str() }, "uid": format!("uid-{i}"), "groups": groups},
        "sourceIPs": ["10.0.0.1"], "userAgent": "kubectl/v1.35.4 (linux/amd64) kubernetes/abcdef",
        "responseStatus": {"metadata": {}, "code": 200},
        "requestReceivedTimestamp": format!("2026-12-03T13:22:07.{:06}Z", i % 1_000_000),
        "stageTimestamp": format!("2026-12-03T13:22:07.{:06}Z", i % 1_000_000),
        "annotations": {
            "authorization.k8s.io/decision": if i.is_multiple_of(5) { "forbid" } else { "allow" },
            "authorization.k8s.io/reason": ""
        }
    });
    if !object_ref.is_null() {
        e["objectRef"] = object_ref;
    }
    if impersonating {
        e["impersonatedUser"] = json!({"username": user, "groups": groups});
    }
    e.to_string()
}

fn write_apiserver_log(path: &Path) {
    let mut out = String::with_capacity(LINES * 700);
    for i in 0..LINES {
        out.push_str(&event(i));
        out.push('\n');
    }
    std::fs::write(path, out).expect("write log");
}

fn bench(c: &mut Criterion) {
    let loaded = warrant::config::parse("bench.yaml", config().as_bytes()).expect("config");
    let chain = Chain::build(&loaded.config).expect("chain");
    let dir = tempfile::tempdir().expect("tempdir");
    let apiserver: PathBuf = dir.path().join("apiserver.jsonl");
    write_apiserver_log(&apiserver);
    let options = Options::default();
    let report =
        replay_blocking(std::slice::from_ref(&apiserver), &chain, None, &options).expect("replay");
    assert_eq!(report.totals.read, LINES as u64, "{:?}", report.errors);
    assert_eq!(report.totals.malformed, 0, "{:?}", report.errors);

    // warrant's own log of the same reviews: the report's reviews re-recorded by warrant.
    let warrant_log = dir.path().join("warrant.jsonl");
    write_warrant_log(&apiserver, &warrant_log, &chain);

    let mut g = c.benchmark_group("replay");
    g.sample_size(10);
    g.measurement_time(std::time::Duration::from_secs(20));
    g.throughput(Throughput::Elements(LINES as u64));
    g.bench_function("kube_apiserver_log_100k", |b| {
        b.iter(|| {
            black_box(
                replay_blocking(std::slice::from_ref(&apiserver), &chain, None, &options)
                    .expect("replay"),
            )
        })
    });
    g.bench_function("warrant_log_100k", |b| {
        b.iter(|| {
            black_box(
                replay_blocking(std::slice::from_ref(&warrant_log), &chain, None, &options)
                    .expect("replay"),
            )
        })
    });
    g.bench_function("kube_apiserver_log_100k_with_baseline", |b| {
        b.iter(|| {
            black_box(
                replay_blocking(
                    std::slice::from_ref(&apiserver),
                    &chain,
                    Some(&chain),
                    &options,
                )
                .expect("replay"),
            )
        })
    });
    g.finish();
}

/// warrant's audit records of every review of the API server's log, as `warrant serve` writes
/// them.
fn write_warrant_log(apiserver: &Path, out: &Path, chain: &Chain) {
    use warrant::authorizer::{Deadline, Input};
    use warrant::replay::input::Reader;
    use warrant::replay::record::Item;
    use warrant::telemetry::audit::AuditRecord;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut reader = Reader::new(&[apiserver.to_path_buf()]).expect("reader");
    let mut text = String::with_capacity(LINES * 700);
    while let Some(next) = reader.next_item() {
        let Ok(Ok(Item::Review(rec))) = next else {
            continue;
        };
        let input = Input::new(rec.review, rec.at.unwrap_or_else(chrono::Utc::now));
        let answer = rt
            .block_on(chain.authorize(&input, Deadline::after(std::time::Duration::from_secs(5))));
        let record = AuditRecord::new(&input, &answer, std::time::Duration::from_micros(20), None);
        text.push_str(&serde_json::to_string(&record).expect("record"));
        text.push('\n');
    }
    std::fs::write(out, text).expect("write warrant log");
}

criterion_group!(benches, bench);
criterion_main!(benches);
