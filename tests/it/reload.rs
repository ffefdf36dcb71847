//! Hot reload: a valid change within 1 s, an invalid change keeping the old chain, a
//! ConfigMap-style `..data` symlink swap, and readiness before and after a config is loaded.

use crate::support::*;
use std::time::{Duration, Instant};

/// Polls until the answer's `allowed` is `want`; returns how long it took.
async fn until_allowed(w: &Warrant, c: &reqwest::Client, want: bool, limit: Duration) -> Duration {
    let started = Instant::now();
    loop {
        let (code, v) = post_review(c, &w.url("/authorize"), V1_REVIEW).await;
        if code == 200 && v["status"]["allowed"].as_bool() == Some(want) {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < limit,
            "answer did not become allowed={want} within {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn metric(c: &reqwest::Client, w: &Warrant, line_prefix: &str) -> Option<String> {
    let text = metrics_text(c, w).await;
    text.lines()
        .find(|l| l.starts_with(line_prefix))
        .map(String::from)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn valid_change_takes_effect_within_one_second() {
    let w = Warrant::start(Options::default()).await;
    let c = w.client();
    until_allowed(&w, &c, true, Duration::from_secs(1)).await;
    std::fs::write(w.config_path(), DENY_ALL).unwrap();
    let took = until_allowed(&w, &c, false, Duration::from_secs(1)).await;
    eprintln!("in-place write took effect after {took:?}");
    replace_file(&w.config_path(), ALLOW_ALL);
    let took = until_allowed(&w, &c, true, Duration::from_secs(1)).await;
    eprintln!("rename took effect after {took:?}");
    assert_eq!(
        metric(&c, &w, "warrant_config_reloads_total{status=\"success\"}")
            .await
            .as_deref(),
        Some("warrant_config_reloads_total{status=\"success\"} 3")
    );
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_change_keeps_the_old_chain() {
    let w = Warrant::start(Options::default()).await;
    let c = w.client();
    let hash_before = metric(&c, &w, "warrant_config_info").await.unwrap();
    std::fs::write(w.config_path(), "apiVersion: warrant.dev/v1alpha1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: AlwaysDeny\n  nmae: typo\n").unwrap();
    // Wait until the failure is counted, then check the old chain still answers.
    let started = Instant::now();
    while metric(&c, &w, "warrant_config_reloads_total{status=\"failure\"}")
        .await
        .is_none()
    {
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "failure was not counted"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let (code, v) = post_review(&c, &w.url("/authorize"), V1_REVIEW).await;
    assert_eq!((code, v["status"]["allowed"].as_bool()), (200, Some(true)));
    assert_eq!(
        metric(&c, &w, "warrant_config_info").await.unwrap(),
        hash_before
    );
    assert_eq!(c.get(w.url("/readyz")).send().await.unwrap().status(), 200);
    // Touching the same invalid bytes again is not a new failure.
    std::fs::write(w.config_path(), "apiVersion: warrant.dev/v1alpha1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: AlwaysDeny\n  nmae: typo\n").unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(
        metric(&c, &w, "warrant_config_reloads_total{status=\"failure\"}")
            .await
            .as_deref(),
        Some("warrant_config_reloads_total{status=\"failure\"} 1")
    );
    // A fix is picked up.
    std::fs::write(w.config_path(), DENY_ALL).unwrap();
    until_allowed(&w, &c, false, Duration::from_secs(1)).await;
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configmap_symlink_swaps() {
    // Lay out a ConfigMap volume by hand: config.yaml -> ..data/config.yaml, ..data -> ..v1.
    let w = Warrant::start(Options {
        config: None,
        ..Options::default()
    })
    .await;
    let dir = w.dir.path();
    let swap = |name: &str, contents: &str| {
        let ts = dir.join(name);
        std::fs::create_dir(&ts).unwrap();
        std::fs::write(ts.join("config.yaml"), contents).unwrap();
        let tmp = dir.join("..data_tmp");
        std::os::unix::fs::symlink(name, &tmp).unwrap();
        std::fs::rename(&tmp, dir.join("..data")).unwrap();
    };
    swap("..v1", ALLOW_ALL);
    let link = w.config_path();
    std::os::unix::fs::symlink("..data/config.yaml", &link).unwrap();
    let c = w.client();
    until_allowed(&w, &c, true, Duration::from_secs(2)).await;
    swap("..v2", DENY_ALL);
    std::fs::remove_dir_all(dir.join("..v1")).unwrap();
    let took = until_allowed(&w, &c, false, Duration::from_secs(1)).await;
    eprintln!("first swap took effect after {took:?}");
    swap("..v3", ALLOW_ALL);
    std::fs::remove_dir_all(dir.join("..v2")).unwrap();
    let took = until_allowed(&w, &c, true, Duration::from_secs(1)).await;
    eprintln!("second swap took effect after {took:?}");
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_of_a_symlink_target_in_another_directory_is_seen_at_once() {
    // Config.yaml -> <elsewhere>/real.yaml; an in-place edit of real.yaml
    // used to wait for the periodic re-check (30 s here). Then the link is pointed at a third
    // directory, whose file is edited too.
    let w = Warrant::start(Options {
        config: None,
        ..Options::default()
    })
    .await;
    let elsewhere = tempfile::tempdir().unwrap();
    let third = tempfile::tempdir().unwrap();
    let real = elsewhere.path().join("real.yaml");
    std::fs::write(&real, ALLOW_ALL).unwrap();
    std::os::unix::fs::symlink(&real, w.config_path()).unwrap();
    let c = w.client();
    until_allowed(&w, &c, true, Duration::from_secs(2)).await;
    std::fs::write(&real, DENY_ALL).unwrap();
    let took = until_allowed(&w, &c, false, Duration::from_secs(2)).await;
    eprintln!("edit of the link's target took effect after {took:?}");

    let moved = third.path().join("moved.yaml");
    std::fs::write(&moved, ALLOW_ALL).unwrap();
    let tmp = w.path("config.yaml.tmp");
    std::os::unix::fs::symlink(&moved, &tmp).unwrap();
    std::fs::rename(&tmp, w.config_path()).unwrap();
    until_allowed(&w, &c, true, Duration::from_secs(2)).await;
    std::fs::write(&moved, DENY_ALL).unwrap();
    let took = until_allowed(&w, &c, false, Duration::from_secs(2)).await;
    eprintln!("edit of the retargeted link's target took effect after {took:?}");
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_follows_the_first_valid_config() {
    let w = Warrant::start(Options {
        config: None,
        ..Options::default()
    })
    .await;
    let c = w.client();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let r = c.get(w.url("/readyz")).send().await.unwrap();
    assert_eq!(r.status(), 503);
    assert_eq!(c.get(w.url("/healthz")).send().await.unwrap().status(), 200);
    let (code, v) = post_review(&c, &w.url("/authorize"), V1_REVIEW).await;
    assert_eq!(code, 503);
    assert_eq!(v["reason"], "ServiceUnavailable");
    std::fs::write(w.config_path(), DENY_ALL).unwrap();
    let started = Instant::now();
    while c.get(w.url("/readyz")).send().await.unwrap().status() != 200 {
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "not ready within 1s"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let (code, v) = post_review(&c, &w.url("/authorize"), V1_REVIEW).await;
    assert_eq!((code, v["status"]["denied"].as_bool()), (200, Some(true)));
    w.stop().await;
}
