//! Live traffic in the risk model against a real Prometheus ([`server`]: Debian's binary on
//! loopback, scraping every second an exporter the test runs whose counters grow at known
//! rates): the validation ring scores a Service's deletion with the rate Prometheus measures
//! (`source: prometheus`) and adds the traffic weight above its threshold; a Service without
//! series, a paused Prometheus (timeout) and a stopped one (unreachable) fall back to the
//! estimate, say why in the report and count in `warrant_guard_traffic_fallbacks_total`; an
//! answer is reused from the cache while Prometheus is gone. Skipped when the binary is missing,
//! except under `CI=true`.

mod server;

use crate::support::*;
use serde_json::{Value, json};
use server::{Exporter, Prometheus};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use warrant::object::{
    ClusterView, Dependents, LabelValues, ObjectRef, Subject, ViewError, ViewFuture,
};

/// A cluster where every Service has 4 running pods behind it and one Ingress in front.
#[derive(Debug)]
struct Served;

impl ClusterView for Served {
    fn ready(&self) -> Result<(), ViewError> {
        Ok(())
    }

    fn namespace_label(&self, _: &str, _: &str) -> Result<Option<String>, ViewError> {
        Ok(None)
    }

    fn labelled_inside(&self, _: &str, _: &str) -> Result<LabelValues, ViewError> {
        Ok(LabelValues::default())
    }

    fn dependents(&self, o: &ObjectRef<'_>, _: Option<&Subject>) -> Result<Dependents, ViewError> {
        Ok(Dependents {
            running_pods: 4,
            ingress_pods: 4,
            services: vec![format!("{}/{}", o.namespace, o.name)],
            ingresses: vec![format!("{}/{}", o.namespace, o.name)],
            bound_volumes: vec![],
        })
    }

    fn remaining_objects<'a>(&'a self, _: &'a Subject) -> ViewFuture<'a, Result<u64, ViewError>> {
        Box::pin(std::future::ready(Ok(0)))
    }
}

fn chain(prometheus: &str) -> String {
    format!(
        r#"apiVersion: warrant.dev/v1alpha1
kind: AuthorizationConfiguration
authorizers:
- type: DeletionGuard
  name: guard
  guard:
    mode: Observe
    protectionLabel: sre.example.com/protection-level
    riskWeights: {{businessHours: 0, highTraffic: 15, highTrafficAt: 40}}
    liveTraffic:
      prometheus: {{url: "{prometheus}"}}
      timeout: 300ms
      cacheTTL: 5m
      queries:
      - resource: services
        query: 'sum(irate(http_requests_total{{namespace="${{namespace}}",service="${{name}}"}}[10s]))'
"#
    )
}

/// The AdmissionReview of a DELETE of Service `shop/<name>`.
fn delete_service(name: &str) -> String {
    let service = json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": name, "namespace": "shop", "uid": format!("svc-{name}")}});
    json!({
        "kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1",
        "request": {
            "uid": format!("del-{name}-{}", fastrand::u32(..)),
            "kind": {"group": "", "version": "v1", "kind": "Service"},
            "resource": {"group": "", "version": "v1", "resource": "services"},
            "name": name, "namespace": "shop", "operation": "DELETE",
            "userInfo": {"username": "jane", "groups": ["dev", "system:authenticated"]},
            "object": null, "oldObject": service, "dryRun": false,
            "options": {"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1"},
        }
    })
    .to_string()
}

/// The guard's report on the deletion of `shop/<name>`, and how long the answer took.
async fn report(w: &Warrant, name: &str) -> (Value, Duration) {
    let started = Instant::now();
    let (code, v) = post_review(&w.client(), &w.url("/admit"), &delete_service(name)).await;
    let took = started.elapsed();
    assert_eq!(code, 200, "{v}");
    let annotations = &v["response"]["auditAnnotations"];
    let text = annotations["report"]
        .as_str()
        .unwrap_or_else(|| panic!("no report: {v}"));
    (serde_json::from_str(text).unwrap(), took)
}

fn reasons(report: &Value) -> Vec<String> {
    report["riskReasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap().to_owned())
        .collect()
}

/// The value of `warrant_guard_traffic_fallbacks_total` for `reason`.
fn fallbacks(metrics: &str, reason: &str) -> u64 {
    let series =
        format!(r#"warrant_guard_traffic_fallbacks_total{{name="guard",reason="{reason}"}} "#);
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(&series))
        .map_or(0, |v| v.trim().parse().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_risk_uses_prometheus_rates_and_falls_back_to_the_estimate_visibly() {
    let Some(bin) = server::installed() else {
        return;
    };
    let rates = BTreeMap::from([(("shop", "web"), 50.0), (("shop", "quiet"), 2.0)]);
    let exporter = Exporter::start(rates).await;
    let mut prometheus = Prometheus::start(&bin, exporter.port).await;
    // Two scrapes of both series: irate() has an answer (the increase between them).
    prometheus
        .wait_for_series("irate(http_requests_total[10s])", 2)
        .await;
    let w = Warrant::start(Options {
        config: Some(chain(&prometheus.url())),
        audit: true,
        cluster: Some(Arc::new(Served)),
        ..Options::default()
    })
    .await;

    // 50 req/s measured: at or above the threshold (40), the weight applies.
    let (web, _) = report(&w, "web").await;
    let traffic = &web["impact"]["traffic"];
    assert_eq!(traffic["source"], "prometheus", "{web}");
    let rate = traffic["requestsPerSecond"].as_f64().unwrap();
    assert!((rate - 50.0).abs() < 1.0, "{web}");
    assert!(traffic["fallback"].is_null(), "{web}");
    let r = reasons(&web);
    assert!(
        r.iter()
            .any(|r| r.starts_with("traffic ") && r.ends_with("measured >= 40 req/s +15")),
        "{r:?}"
    );
    assert!(
        r.iter()
            .any(|r| r.starts_with("ingress shop/web reaches the target (")
                && r.ends_with("req/s measured) +15")),
        "{r:?}"
    );
    // 4 running pods +10, the Ingress +15, the traffic +15.
    assert_eq!(web["riskScore"], 40, "{web}");

    // 2 req/s: below the threshold, no weight.
    let (quiet, _) = report(&w, "quiet").await;
    assert_eq!(
        quiet["impact"]["traffic"]["source"], "prometheus",
        "{quiet}"
    );
    let rate = quiet["impact"]["traffic"]["requestsPerSecond"]
        .as_f64()
        .unwrap();
    assert!((rate - 2.0).abs() < 0.2, "{quiet}");
    assert!(
        !reasons(&quiet).iter().any(|r| r.starts_with("traffic ")),
        "{quiet}"
    );
    assert_eq!(quiet["riskScore"], 25, "{quiet}");

    // No series: the estimate (4 pods x 120), and why.
    let (ghost, _) = report(&w, "ghost").await;
    let traffic = &ghost["impact"]["traffic"];
    assert_eq!(traffic["source"], "estimate", "{ghost}");
    assert_eq!(traffic["requestsPerSecond"], 480.0, "{ghost}");
    assert_eq!(traffic["fallback"]["reason"], "empty", "{ghost}");
    assert!(
        traffic["query"]
            .as_str()
            .unwrap()
            .contains(r#"service="ghost""#),
        "{ghost}"
    );
    // The estimate is above the threshold too: the weight applies whichever source.
    assert!(
        reasons(&ghost)
            .iter()
            .any(|r| r == "traffic ~480 QPS >= 40 req/s +15"),
        "{ghost}"
    );

    // Paused: no answer within the timeout (300ms), and the admission does not wait longer.
    prometheus.signal("STOP");
    let (slow, took) = report(&w, "ghost").await;
    prometheus.signal("CONT");
    assert_eq!(slow["impact"]["traffic"]["source"], "estimate", "{slow}");
    assert_eq!(
        slow["impact"]["traffic"]["fallback"]["reason"], "timeout",
        "{slow}"
    );
    assert!(took < Duration::from_secs(2), "{took:?}");

    // Stopped: unreachable; the cached answer for web is still used.
    prometheus.stop();
    let (gone, _) = report(&w, "ghost").await;
    assert_eq!(
        gone["impact"]["traffic"]["fallback"]["reason"], "unreachable",
        "{gone}"
    );
    let (cached, _) = report(&w, "web").await;
    assert_eq!(
        cached["impact"]["traffic"]["source"], "prometheus",
        "{cached}"
    );
    assert_eq!(
        cached["impact"]["traffic"], web["impact"]["traffic"],
        "{cached}"
    );

    let metrics = metrics_text(&w.client(), &w).await;
    for (reason, n) in [
        ("empty", 1),
        ("timeout", 1),
        ("unreachable", 1),
        ("decode", 0),
    ] {
        assert_eq!(fallbacks(&metrics, reason), n, "{reason}: {metrics}");
    }
}
