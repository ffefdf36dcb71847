//! The leader's coverage loop: the series only while leading and with a guard configured; a
//! count that cannot be made keeps the last one.

use super::*;
use crate::cluster::CacheOptions;
use crate::telemetry::metrics::Metrics;

const GUARD: &str = "apiVersion: warrant.dev/v1alpha1
kind: AuthorizationConfiguration
authorizers:
- type: DeletionGuard
  name: guard
  guard:
    protectionLabel: sre.example.com/protection-level
";

const NO_GUARD: &str = "apiVersion: warrant.dev/v1alpha1
kind: AuthorizationConfiguration
authorizers:
- type: AlwaysAllow
  name: allow
";

fn live(yaml: &str) -> Arc<LiveChain> {
    let live = Arc::new(LiveChain::default());
    let loaded = crate::config::parse("authz.yaml", yaml.as_bytes()).unwrap();
    live.apply(loaded, &Metrics::new()).unwrap();
    live
}

/// An export holding one series, as a count left it.
fn counted() -> CoverageExport {
    let export = CoverageExport::default();
    export
        .unprotected
        .get_or_create(&CoverageLabels {
            kind: "StatefulSet".into(),
            namespace: "scratch".into(),
        })
        .set(1);
    export
}

fn series(export: &CoverageExport) -> usize {
    let mut registry = Registry::default();
    registry.register("c", "c", export.unprotected.clone());
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
    text.lines().filter(|l| l.starts_with("c{")).count()
}

/// Lets the loop run its first tick.
async fn settle() {
    for _ in 0..20 {
        tokio::task::yield_now().await;
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
}

#[tokio::test(start_paused = true)]
async fn a_failed_count_keeps_the_last_and_lost_leadership_drops_it() {
    let export = counted();
    // A cache that has listed nothing: every count fails.
    let cache = Arc::new(Cache::new(CacheOptions::default()));
    let (leading, rx) = watch::channel(true);
    let task = tokio::spawn(
        export
            .clone()
            .run(live(GUARD), cache, rx, Duration::from_secs(60)),
    );
    settle().await;
    assert_eq!(series(&export), 1, "the last count stays");
    leading.send(false).unwrap();
    settle().await;
    assert_eq!(
        series(&export),
        0,
        "a replica that stops leading exports nothing"
    );
    drop(leading);
    tokio::time::timeout(Duration::from_secs(1), task)
        .await
        .unwrap()
        .unwrap();
}

#[tokio::test(start_paused = true)]
async fn without_a_guard_nothing_is_exported() {
    let export = counted();
    let cache = Arc::new(Cache::new(CacheOptions::default()));
    let (_leading, rx) = watch::channel(true);
    let task = tokio::spawn(
        export
            .clone()
            .run(live(NO_GUARD), cache, rx, Duration::from_secs(60)),
    );
    settle().await;
    assert_eq!(series(&export), 0);
    task.abort();
}
