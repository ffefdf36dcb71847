//! The webhook audit sink through a loopback HTTPS receiver (the fault server of the webhook
//! tests: real TLS, scripted answers): batches of JSON lines, gzip, retries after 5xx and
//! timeouts until every record is taken, and the `audit.k8s.io/v1` `EventList` shape.

use crate::support::*;
use crate::webhook::fault::{Behaviour, FaultServer};
use serde_json::Value;
use std::io::Read;
use std::sync::Arc;
use std::time::{Duration, Instant};
use warrant::telemetry::audit::remote::{RemoteSink, SinkMetrics, SinkRecord, SinkSettings};
use warrant::telemetry::audit::webhook::{WebhookFormat, WebhookSender, WebhookSettings};

fn tls(ca: &Ca) -> Arc<rustls::ClientConfig> {
    Arc::new(client_config(&ca.cert_pem, None))
}

fn sink(server: &FaultServer, format: WebhookFormat, batch: usize) -> RemoteSink {
    let sender = WebhookSender::new(WebhookSettings {
        url: server.url("/audit").parse().unwrap(),
        tls: tls(&server.ca),
        format,
        gzip: true,
    })
    .unwrap();
    let settings = SinkSettings {
        batch_records: batch,
        timeout: Duration::from_millis(500),
        max_backoff: Duration::from_millis(200),
        ..SinkSettings::new("webhook")
    };
    let mut registry = prometheus_client::registry::Registry::default();
    let metrics = SinkMetrics::register(&mut registry);
    RemoteSink::start(settings, Arc::new(sender), &metrics).unwrap()
}

fn record(n: usize) -> SinkRecord {
    let json = serde_json::json!({
        "id": format!("id-{n}"), "decisionId": format!("d-{}", n / 2), "time": "2026-12-04T10:00:00.000000Z",
        "stage": "authorization", "user": "jane", "groups": ["dev"],
        "resourceAttributes": {"verb": "delete", "group": "apps", "version": "v1",
                               "resource": "deployments", "namespace": "shop", "name": format!("web-{n}")},
        "decision": "Deny", "decidedBy": "guard", "code": "MISSING_TICKET",
        "allowed": false, "denied": true, "reason": "guard: no ticket [MISSING_TICKET]",
        "configHash": "sha256:0"
    });
    SinkRecord::now(
        Some(format!("d-{}", n / 2)),
        serde_json::to_vec(&json).unwrap(),
    )
}

/// The gunzipped bodies of the POSTs the server answered 200 (the last request's body when it
/// was retried), checking the headers of each.
fn bodies(server: &FaultServer) -> Vec<(String, Vec<u8>)> {
    server
        .received()
        .into_iter()
        .map(|r| {
            let head = r.head.to_ascii_lowercase();
            assert!(head.starts_with("post /audit http/1.1"), "{head}");
            assert!(head.contains("content-encoding: gzip"), "{head}");
            let mut plain = Vec::new();
            flate2::read::GzDecoder::new(r.bytes.as_slice())
                .read_to_end(&mut plain)
                .unwrap();
            (head, plain)
        })
        .collect()
}

async fn until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !done() {
        assert!(Instant::now() < deadline, "not within 20 s: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batches_of_gzipped_json_lines_arrive_in_order() {
    let server = FaultServer::start(None).await;
    server.always(Behaviour::text(200, "ok"));
    let s = sink(&server, WebhookFormat::JsonLines, 10);
    for n in 0..35 {
        s.offer(record(n));
    }
    until("35 records", || {
        bodies(&server)
            .iter()
            .map(|(_, b)| b.split(|c| *c == b'\n').filter(|l| !l.is_empty()).count())
            .sum::<usize>()
            == 35
    })
    .await;
    let got = bodies(&server);
    assert!(
        got.len() >= 4,
        "35 records in batches of at most 10: {} POSTs",
        got.len()
    );
    let mut all = Vec::new();
    for (head, body) in &got {
        assert!(
            head.contains("content-type: application/x-ndjson"),
            "{head}"
        );
        let lines: Vec<&[u8]> = body
            .split(|c| *c == b'\n')
            .filter(|l| !l.is_empty())
            .collect();
        assert!(lines.len() <= 10);
        assert!(body.ends_with(b"\n"));
        all.extend(lines.into_iter().map(|l| l.to_vec()));
    }
    let want: Vec<Vec<u8>> = (0..35).map(|n| record(n).json).collect();
    assert_eq!(all, want, "every record, byte for byte, in order");
    s.close(Duration::from_secs(1)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_5xx_and_a_timeout_are_retried_until_the_batch_is_taken() {
    let server = FaultServer::start(None).await;
    server.always(Behaviour::text(200, "ok"));
    server.then(vec![
        Behaviour::text(503, "busy"),
        Behaviour::text(500, "broken"),
        // Longer than the sink's 500 ms timeout.
        Behaviour::text(200, "late").after(Duration::from_secs(2)),
    ]);
    let s = sink(&server, WebhookFormat::JsonLines, 100);
    for n in 0..5 {
        s.offer(record(n));
    }
    until("a fourth POST", || server.calls() >= 4).await;
    // Failing meanwhile, with the receiver's answer in the status.
    let got = bodies(&server);
    let want: Vec<u8> = (0..5)
        .flat_map(|n| [record(n).json, b"\n".to_vec()].concat())
        .collect();
    // The first batch is what had been offered when the sender woke (all five, or fewer on a
    // loaded machine); the retries send that same batch each time, whole.
    let first = &got[0].1;
    assert!(
        !first.is_empty() && want.starts_with(first),
        "the first batch is a prefix of the records offered"
    );
    for (_, body) in &got[..4] {
        assert_eq!(body, first);
    }
    until("the sink to recover", || s.status().problem.is_none()).await;
    assert!(server.calls() >= 4);
    s.close(Duration::from_secs(1)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_webhook_is_reported_with_its_answer() {
    let server = FaultServer::start(None).await;
    server.always(Behaviour::text(503, "receiver overloaded"));
    let s = sink(&server, WebhookFormat::JsonLines, 100);
    s.offer(record(0));
    until("a failure", || s.status().problem.is_some()).await;
    let problem = s.status().problem.unwrap();
    assert!(
        problem.contains("HTTP 503: receiver overloaded"),
        "{problem}"
    );
    assert!(problem.contains("1 records waiting"), "{problem}");
    s.close(Duration::from_millis(100)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_eventlist_shape_is_kubernetes_audit() {
    let server = FaultServer::start(None).await;
    server.always(Behaviour::text(200, "ok"));
    let s = sink(&server, WebhookFormat::EventList, 100);
    for n in 0..3 {
        s.offer(record(n));
    }
    until("3 events", || {
        bodies(&server)
            .iter()
            .map(|(_, b)| {
                serde_json::from_slice::<Value>(b).unwrap()["items"]
                    .as_array()
                    .unwrap()
                    .len()
            })
            .sum::<usize>()
            == 3
    })
    .await;
    let (head, body) = &bodies(&server)[0];
    assert!(head.contains("content-type: application/json"), "{head}");
    let list: Value = serde_json::from_slice(body).unwrap();
    assert_eq!(list["kind"], "EventList");
    assert_eq!(list["apiVersion"], "audit.k8s.io/v1");
    let e = &list["items"][0];
    assert_eq!(
        e,
        &serde_json::json!({
            "kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "Metadata",
            "auditID": "id-0", "stage": "ResponseComplete",
            "requestReceivedTimestamp": "2026-12-04T10:00:00.000000Z",
            "stageTimestamp": "2026-12-04T10:00:00.000000Z",
            "verb": "delete",
            "user": {"username": "jane", "groups": ["dev"]},
            "objectRef": {"resource": "deployments", "namespace": "shop", "name": "web-0",
                          "apiGroup": "apps", "apiVersion": "v1"},
            "responseStatus": {"metadata": {}, "code": 403},
            "annotations": {
                "warrant.dev/stage": "authorization", "warrant.dev/decision": "Deny",
                "warrant.dev/decision-id": "d-0", "warrant.dev/decided-by": "guard",
                "warrant.dev/code": "MISSING_TICKET",
                "warrant.dev/reason": "guard: no ticket [MISSING_TICKET]",
                "warrant.dev/config-hash": "sha256:0"
            }
        })
    );
    s.close(Duration::from_secs(1)).await;
}
