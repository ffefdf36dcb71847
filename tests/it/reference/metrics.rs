//! `docs/metrics.md` against the code: the page's table must list exactly the metric families
//! the code registers (every `"warrant_..."` name passed with its help text to the registry or a
//! collector's descriptor), each under the name a query uses (`_total` for counters), and with
//! the type the registry's own OpenMetrics encoding gives it. prometheus-client encodes a labelled
//! family only once it has a series, so the types of the rest are checked against a live
//! `/metrics` by the kube-apiserver tier (`TestMetricsPageMatchesLiveMetrics`).

use super::{read, root};
use std::collections::BTreeMap;
use std::sync::Arc;

const PAGE: &str = "docs/metrics.md";

/// name as queried -> type, from the registry's encoding.
fn registered() -> BTreeMap<String, String> {
    let cache = Arc::new(warrant::cluster::Cache::new(
        warrant::cluster::CacheOptions::default(),
    ));
    // As `warrant serve` registers them with a cluster connection.
    let mut registry = prometheus_client::registry::Registry::default();
    warrant::authorizer::deletion_guard::tickets::TicketFeed::new().register(&mut registry);
    let leader = warrant::leader::LeaderMetrics::default();
    leader.register(&mut registry);
    warrant::cluster::metrics::register(&cache, &mut registry);
    let buffer = warrant::buffer::BufferMetrics::default();
    buffer.register(&mut registry);
    warrant::server::tls::CertificateExpiry::default().register(&mut registry);
    let defense = warrant::defense::DefenseMetrics::register(&mut registry);
    warrant::defense::coverage_export::CoverageExport::register(&mut registry);
    let access = warrant::cluster::AccessReviewMetrics::register(&mut registry);
    let sinks = warrant::telemetry::audit::remote::SinkMetrics::register(&mut registry);
    let metrics = warrant::telemetry::metrics::Metrics::in_registry(registry);
    // Series for the families with labels, so that the encoding describes them too.
    defense.record_requester(warrant::defense::metrics::RequesterOutcome::Recorded);
    access.record(warrant::cluster::access_review::AccessReviewResult::Allowed);
    sinks
        .series("kafka")
        .dropped(warrant::telemetry::audit::remote::DropReason::QueueFull, 1);
    metrics.record_http(200);
    metrics.record_audit_dropped();
    metrics.record_reload_refusal("lockout");
    metrics.record_admission(
        "DELETE",
        "deployments.apps",
        true,
        std::time::Duration::from_millis(1),
    );
    metrics.record_reload(
        warrant::telemetry::metrics::ReloadStatus::Success,
        1.0,
        Some("sha256:0"),
    );
    let text = metrics.encode();
    let mut out = BTreeMap::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let mut parts = rest.split_whitespace();
            let (Some(name), Some(kind)) = (parts.next(), parts.next()) else {
                continue;
            };
            let queried = if kind == "counter" {
                format!("{name}_total")
            } else {
                name.to_owned()
            };
            out.insert(queried, kind.to_owned());
        }
    }
    out
}

/// name -> type, from the page's table rows (`| \`name\` | type | ...`).
fn documented() -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for line in read(PAGE).lines() {
        let Some(rest) = line.strip_prefix("| `warrant_") else {
            continue;
        };
        let mut cells = rest.split(" | ");
        let name = format!(
            "warrant_{}",
            cells.next().unwrap_or("").trim_end_matches('`')
        );
        let kind = cells.next().unwrap_or("").trim().to_owned();
        assert!(
            out.insert(name.clone(), kind).is_none(),
            "{PAGE}: {name} is listed twice"
        );
    }
    out
}

/// Family names (without `_total`) the code registers: a `"warrant_..."` literal followed by a
/// help string literal, in the library's non-test sources.
fn family_names_in_source() -> std::collections::BTreeSet<String> {
    let pattern = regex::Regex::new(r#""(warrant_[a-z0-9_]+)",\s*""#).expect("a valid pattern");
    let mut out = std::collections::BTreeSet::new();
    let mut dirs = vec![root().join("src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("src is readable") {
            let path = entry.expect("a directory entry").path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                if name != "tests" {
                    dirs.push(path);
                }
            } else if name.ends_with(".rs") && !name.starts_with("tests") {
                let text = std::fs::read_to_string(&path).expect("a readable source file");
                out.extend(pattern.captures_iter(&text).map(|c| c[1].to_owned()));
            }
        }
    }
    out
}

fn family_of(documented_name: &str, kind: &str) -> String {
    if kind == "counter" {
        documented_name.trim_end_matches("_total").to_owned()
    } else {
        documented_name.to_owned()
    }
}

#[test]
fn metrics_page_lists_every_metric_family_the_code_registers() {
    let in_source = family_names_in_source();
    assert!(in_source.len() >= 30, "found only {in_source:?}");
    let documented: std::collections::BTreeSet<String> =
        documented().iter().map(|(n, k)| family_of(n, k)).collect();
    let missing: Vec<_> = in_source.difference(&documented).collect();
    let unknown: Vec<_> = documented.difference(&in_source).collect();
    assert!(
        missing.is_empty() && unknown.is_empty(),
        "{PAGE} and the code disagree\n  registered, not on the page: {missing:?}\n  on the page, not registered: {unknown:?}"
    );
}

#[test]
fn metrics_page_types_match_the_registry_encoding() {
    let registered = registered();
    assert!(
        registered.len() >= 15,
        "the registry encoded only {registered:?}"
    );
    let documented = documented();
    let missing: Vec<_> = registered
        .iter()
        .filter(|(n, _)| !documented.contains_key(*n))
        .map(|(n, t)| format!("{n} ({t})"))
        .collect();
    let unknown: Vec<String> = Vec::new();
    let wrong_type: Vec<_> = registered
        .iter()
        .filter_map(|(n, t)| {
            documented
                .get(n)
                .filter(|d| *d != t)
                .map(|d| format!("{n}: page says {d}, registry {t}"))
        })
        .collect();
    assert!(
        missing.is_empty() && unknown.is_empty() && wrong_type.is_empty(),
        "{PAGE} and the registry disagree\n  not on the page: {missing:?}\n  not registered: {unknown:?}\n  types: {wrong_type:?}"
    );
}
