//! Spec vectors 6-8 (`TestV1WebhookCache`), single-flight, staleIfError, and cache state across
//! reloads.

use super::fault::{Behaviour, FaultServer};
use super::*;

const LONG_TTLS: &str = "    authorizedTTL: 2400h\n    unauthorizedTTL: 2400h\n";

struct Setup {
    fault: FaultServer,
    w: Warrant,
    kc: PathBuf,
    _dir: tempfile::TempDir,
}

async fn setup(settings: &str) -> Setup {
    let fault = FaultServer::start(None).await;
    let dir = tempfile::tempdir().unwrap();
    let kc = write_kubeconfig(
        dir.path(),
        "kc.yaml",
        &Kube::new(fault.url("/"), &fault.ca.cert_pem),
    );
    let w = front(webhook_config(&kc, settings, "")).await;
    Setup {
        fault,
        w,
        kc,
        _dir: dir,
    }
}

async fn ask_with(s: &Setup, body: &str, b: Behaviour) -> (serde_json::Value, usize) {
    s.fault.take_calls();
    s.fault.always(b);
    let st = ask(&s.w, body).await;
    (st, s.fault.take_calls())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vectors_6_7_allowed_and_no_opinion_are_cached_errors_are_not() {
    let s = setup(LONG_TTLS).await;
    let alice = review("alice", "kittensandponies");
    let bob = review("bob", "kittensandponies");
    // 6. alice allowed: 1 call; again while the downstream fails: 0 calls, still allowed.
    let (st, calls) = ask_with(&s, &alice, Behaviour::status(true, false, "ok")).await;
    assert_eq!((st["allowed"].clone(), calls), (true.into(), 1));
    let (st, calls) = ask_with(&s, &alice, Behaviour::text(500, "")).await;
    assert_eq!((st["allowed"].clone(), calls), (true.into(), 0));
    assert_eq!(cache_count(&s.w, "hit").await, 1.0);
    // 7. bob 500: 5 calls (not cached); bob allowed=false: 1 call; bob again with 500: 0 calls.
    let (_, calls) = ask_with(&s, &bob, Behaviour::text(500, "")).await;
    assert_eq!(calls, 5);
    let (_, calls) = ask_with(&s, &bob, Behaviour::text(500, "")).await;
    assert_eq!(calls, 5, "errors are never cached");
    let (st, calls) = ask_with(&s, &bob, Behaviour::status(false, false, "no")).await;
    assert_eq!((st["allowed"].clone(), calls), (false.into(), 1));
    let (st, calls) = ask_with(&s, &bob, Behaviour::text(500, "")).await;
    assert_eq!(calls, 0, "NoOpinion is cached");
    assert_eq!(st["allowed"], false);
    assert!(st.get("evaluationError").is_none(), "{st}");
    assert_eq!(cache_count(&s.w, "hit").await, 2.0);
    // The key is order-sensitive on groups.
    let swapped = alice.replace(r#"["group1","group2"]"#, r#"["group2","group1"]"#);
    assert_ne!(swapped, alice);
    let (_, calls) = ask_with(&s, &swapped, Behaviour::status(true, false, "")).await;
    assert_eq!(calls, 1);
    s.w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vector_8_large_requests_are_never_cached() {
    let s = setup(LONG_TTLS).await;
    let big = "x".repeat(2000);
    for user in ["bob", "alice"] {
        let body = serde_json::json!({
            "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
            "spec": {"user": user, "resourceAttributes": {"namespace": "kittensandponies",
                "verb": big, "group": big, "version": big, "resource": big, "name": big}}
        })
        .to_string();
        for allowed in [true, false, true] {
            let (_, calls) = ask_with(&s, &body, Behaviour::status(allowed, false, "")).await;
            assert_eq!(calls, 1, "{user} allowed={allowed}");
        }
    }
    assert_eq!(cache_count(&s.w, "hit").await, 0.0);
    s.w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_switches_and_split_ttl() {
    // unauthorizedTTL leaves room for a fresh client's handshake on a busy machine between
    // the call that fills the cache and the one that must hit it.
    let s = setup(
        "    authorizedTTL: 2400h\n    unauthorizedTTL: 3s\n    cacheAuthorizedRequests: false\n",
    )
    .await;
    let a = review("a", "ns");
    for _ in 0..2 {
        let (_, calls) = ask_with(&s, &a, Behaviour::status(true, false, "")).await;
        assert_eq!(calls, 1, "allowed answers are not cached");
    }
    let d = review("d", "ns");
    let (_, calls) = ask_with(&s, &d, Behaviour::status(false, true, "no")).await;
    assert_eq!(calls, 1);
    let (st, calls) = ask_with(&s, &d, Behaviour::status(false, true, "no")).await;
    assert_eq!((calls, st["denied"].clone()), (0, true.into()));
    tokio::time::sleep(Duration::from_millis(3100)).await;
    let (_, calls) = ask_with(&s, &d, Behaviour::status(false, true, "no")).await;
    assert_eq!(calls, 1, "unauthorizedTTL expired");
    s.w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hundred_concurrent_identical_misses_make_one_call() {
    let s = setup("").await;
    s.fault
        .always(Behaviour::status(true, false, "slow").after(Duration::from_millis(500)));
    let body = review("alice", "ns");
    let client = s.w.client();
    let url = s.w.url("/authorize");
    let mut tasks = Vec::new();
    for _ in 0..100 {
        let (c, u, b) = (client.clone(), url.clone(), body.clone());
        tasks.push(tokio::spawn(async move { post_review(&c, &u, &b).await }));
    }
    for t in tasks {
        let (code, v) = t.await.unwrap();
        assert_eq!((code, v["status"]["allowed"].clone()), (200, true.into()));
    }
    assert_eq!(s.fault.calls(), 1, "exactly one downstream call");
    let (miss, coalesced, hit) = (
        cache_count(&s.w, "miss").await,
        cache_count(&s.w, "coalesced").await,
        cache_count(&s.w, "hit").await,
    );
    assert_eq!(miss, 1.0);
    assert_eq!(coalesced + hit, 99.0, "coalesced {coalesced} hit {hit}");
    assert!(coalesced > 0.0);
    s.w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn single_flight_can_be_switched_off() {
    // Answers expire at once: a call arriving after the first answer is a miss as well, so the
    // downstream sees all 5 whatever the timing, and only single flight could make it fewer.
    let s = setup("    singleFlight: false\n    authorizedTTL: 1ms\n").await;
    s.fault
        .always(Behaviour::status(true, false, "").after(Duration::from_millis(300)));
    let body = review("alice", "ns");
    let mut tasks = Vec::new();
    for _ in 0..5 {
        let (c, u, b) = (s.w.client(), s.w.url("/authorize"), body.clone());
        tasks.push(tokio::spawn(async move { post_review(&c, &u, &b).await }));
    }
    for t in tasks {
        assert_eq!(t.await.unwrap().0, 200);
    }
    assert_eq!(s.fault.calls(), 5);
    s.w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stale_if_error_serves_an_expired_verdict_only_on_failure() {
    let s = setup("    authorizedTTL: 200ms\n    staleIfError: 1m\n").await;
    let a = review("alice", "ns");
    let (_, calls) = ask_with(&s, &a, Behaviour::status(true, false, "yes")).await;
    assert_eq!(calls, 1);
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Expired, downstream healthy: asked again.
    let (_, calls) = ask_with(&s, &a, Behaviour::status(true, false, "yes")).await;
    assert_eq!(calls, 1);
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Expired, downstream failing: the stale verdict, marked.
    let (st, calls) = ask_with(&s, &a, Behaviour::text(500, "")).await;
    assert_eq!(calls, 5);
    assert_eq!(st["allowed"], true);
    assert_eq!(st["reason"], "opa: yes [STALE_IF_ERROR]");
    assert_eq!(cache_count(&s.w, "stale").await, 1.0);
    // Without staleIfError the same sequence fails.
    let t = setup("    authorizedTTL: 200ms\n").await;
    ask_with(&t, &a, Behaviour::status(true, false, "yes")).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (st, _) = ask_with(&t, &a, Behaviour::text(500, "")).await;
    assert_eq!(st["allowed"], false);
    s.w.stop().await;
    t.w.stop().await;
}

#[test]
fn upstream_files_cannot_use_warrant_additions() {
    let dir = tempfile::tempdir().unwrap();
    let kc = write_kubeconfig(
        dir.path(),
        "kc.yaml",
        &Kube::new("https://127.0.0.1:1/".into(), "x"),
    );
    let text = webhook_config(&kc, "    staleIfError: 1m\n    singleFlight: false\n", "")
        .replace("warrant.dev/v1alpha1", "apiserver.config.k8s.io/v1");
    let e = warrant::config::parse("up.yaml", text.as_bytes())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("authorizers[0].staleIfError") && e.contains("authorizers[0].singleFlight"),
        "{e}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_survives_a_reload_that_keeps_the_webhook_and_resets_otherwise() {
    let s = setup(LONG_TTLS).await;
    let a = review("alice", "ns");
    let (_, calls) = ask_with(&s, &a, Behaviour::status(true, false, "")).await;
    assert_eq!(calls, 1);
    // Another entry added after the webhook: its settings and kubeconfig are unchanged.
    let cfg = s.w.config_path();
    let base = std::fs::read_to_string(&cfg).unwrap();
    replace_file(
        &cfg,
        &format!("{base}- type: AlwaysDeny\n  name: deny-rest\n"),
    );
    wait_reloads(&s.w, 2.0).await;
    let (st, calls) = ask_with(&s, &a, Behaviour::text(500, "")).await;
    assert_eq!(
        (calls, st["allowed"].clone()),
        (0, true.into()),
        "cache kept"
    );
    // A changed TTL resets it.
    replace_file(
        &cfg,
        &base.replace("authorizedTTL: 2400h", "authorizedTTL: 2399h"),
    );
    wait_reloads(&s.w, 3.0).await;
    let (_, calls) = ask_with(&s, &a, Behaviour::status(true, false, "")).await;
    assert_eq!(calls, 1, "cache reset by a settings change");
    // A changed kubeconfig (same path, same server, new content) resets it too, once the
    // configuration is reloaded.
    let text = std::fs::read_to_string(&s.kc).unwrap();
    std::fs::write(&s.kc, format!("{text}# rotated\n")).unwrap();
    replace_file(
        &cfg,
        &format!(
            "{}- type: AlwaysDeny\n  name: deny-rest\n",
            base.replace("authorizedTTL: 2400h", "authorizedTTL: 2399h")
        ),
    );
    wait_reloads(&s.w, 4.0).await;
    let (_, calls) = ask_with(&s, &a, Behaviour::status(true, false, "")).await;
    assert_eq!(calls, 1, "cache reset by a kubeconfig change");
    let (_, calls) = ask_with(&s, &a, Behaviour::status(true, false, "")).await;
    assert_eq!(calls, 0);
    s.w.stop().await;
}

/// Vectors 4, 6 and 7 as upstream writes them: the webhook carries the matchCondition
/// `has(request.resourceAttributes) && request.resourceAttributes.namespace == 'kittensandponies'`,
/// so reviews elsewhere never reach it (0 calls, no error) and those in the namespace are cached
/// as before; conditions are evaluated on every review, before the cache.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vectors_4_6_7_with_the_upstream_match_condition() {
    let condition = "    matchConditionSubjectAccessReviewVersion: v1\n    matchConditions:\n    - expression: \"has(request.resourceAttributes) && request.resourceAttributes.namespace == 'kittensandponies'\"\n";
    let s = setup(&format!("{LONG_TTLS}{condition}")).await;
    let alice = review("alice", "kittensandponies");
    let elsewhere = review("alice", "elsewhere");
    // 4. 500 -> five calls and an error.
    let (st, calls) = ask_with(&s, &alice, Behaviour::text(500, "")).await;
    assert_eq!(calls, 5);
    assert!(st["evaluationError"].is_string(), "{st}");
    // Outside the namespace: excluded, no call, no error, whatever the downstream does.
    let (st, calls) = ask_with(&s, &elsewhere, Behaviour::text(500, "")).await;
    assert_eq!(calls, 0);
    assert_eq!(st["allowed"], false);
    assert!(st.get("evaluationError").is_none(), "{st}");
    // 6. allowed once, then served from the cache while the downstream fails.
    let (st, calls) = ask_with(&s, &alice, Behaviour::status(true, false, "ok")).await;
    assert_eq!((st["allowed"].clone(), calls), (true.into(), 1));
    let (st, calls) = ask_with(&s, &alice, Behaviour::text(500, "")).await;
    assert_eq!((st["allowed"].clone(), calls), (true.into(), 0));
    let text = metrics_text(&s.w.client(), &s.w).await;
    assert!(
        text.contains("warrant_match_condition_exclusions_total{type=\"Webhook\",name=\"opa\"} 1"),
        "{text}"
    );
    s.w.stop().await;
}
