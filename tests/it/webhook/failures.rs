//! Spec vectors 4, 5, 9-13 and the failure classes: what is retried (attempt counts), what each
//! failure yields under failurePolicy, and the upstream-shaped metrics.

use super::fault::{Behaviour, FaultServer};
use super::*;

struct Setup {
    fault: FaultServer,
    w: Warrant,
    _dir: tempfile::TempDir,
}

async fn setup(settings: &str) -> Setup {
    setup_with(settings, None).await
}

async fn setup_with(settings: &str, review_timeout: Option<Duration>) -> Setup {
    let fault = FaultServer::start(None).await;
    let dir = tempfile::tempdir().unwrap();
    let kc = write_kubeconfig(
        dir.path(),
        "kc.yaml",
        &Kube::new(fault.url("/"), &fault.ca.cert_pem),
    );
    let w = front_with(webhook_config(&kc, settings, ""), review_timeout).await;
    Setup {
        fault,
        w,
        _dir: dir,
    }
}

/// Asks once (a fresh user each time, so nothing is cached) and returns (status, calls).
async fn once(s: &Setup, user: &str, b: Behaviour) -> (serde_json::Value, usize) {
    s.fault.take_calls();
    s.fault.always(b);
    let status = ask(&s.w, &review(user, "kittensandponies")).await;
    (status, s.fault.take_calls())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vector_4_500_and_429_are_tried_five_times() {
    let s = setup("").await;
    for (i, code) in [500u16, 429].into_iter().enumerate() {
        let (st, calls) = once(&s, &format!("alice{i}"), Behaviour::text(code, "boom")).await;
        assert_eq!(calls, 5, "HTTP {code}");
        assert_eq!(st["allowed"], false);
        assert!(st.get("denied").is_none(), "NoOpinion: {st}");
        let e = st["evaluationError"].as_str().unwrap();
        assert!(
            e.starts_with("opa: ") && e.contains("(after 5 attempts)"),
            "{e}"
        );
    }
    assert_eq!(evaluations(&s.w, "error").await, 10.0);
    assert_eq!(fail_open(&s.w, "error").await, 2.0);
    s.w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vector_5_client_errors_are_not_retried() {
    let s = setup("").await;
    for code in [404u16, 403, 401, 400, 409, 422] {
        let (st, calls) = once(&s, &format!("alice{code}"), Behaviour::text(code, "")).await;
        assert_eq!(calls, 1, "HTTP {code}");
        assert_eq!(st["allowed"], false);
        assert!(
            st["evaluationError"]
                .as_str()
                .unwrap()
                .contains(&format!("(HTTP {code})"))
        );
    }
    s.w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vectors_9_10_12_metrics_by_result() {
    let s = setup("").await;
    // 9. 200: success, no fail-open.
    once(&s, "a", Behaviour::status(true, false, "")).await;
    assert_eq!(evaluations(&s.w, "success").await, 1.0);
    // 10. 504: retried (5 attempts), result timeout, fail-open timeout.
    let (_, calls) = once(&s, "b", Behaviour::text(504, "")).await;
    assert_eq!(calls, 5);
    assert_eq!(evaluations(&s.w, "timeout").await, 5.0);
    assert_eq!(fail_open(&s.w, "timeout").await, 1.0);
    // 12. 500: error, fail-open error.
    once(&s, "c", Behaviour::text(500, "")).await;
    assert_eq!(evaluations(&s.w, "error").await, 5.0);
    assert_eq!(fail_open(&s.w, "error").await, 1.0);
    assert_eq!(fail_open(&s.w, "success").await, 0.0);
    // Each attempt is timed.
    assert_eq!(
        sample(
            &s.w,
            "warrant_webhook_duration_seconds_count{name=\"opa\",result=\"timeout\"}"
        )
        .await,
        5.0
    );
    s.w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vector_11_review_deadline_cancels_without_fail_open() {
    // Webhook timeout 2s, review deadline 300 ms: the review, not the webhook, ends the call.
    let s = setup_with("", Some(Duration::from_millis(300))).await;
    let started = Instant::now();
    let (st, calls) = once(&s, "a", Behaviour::Hang).await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(calls, 1);
    assert_eq!(st["allowed"], false);
    assert_eq!(evaluations(&s.w, "canceled").await, 1.0);
    assert_eq!(fail_open(&s.w, "canceled").await, 0.0);
    assert_eq!(fail_open(&s.w, "error").await, 0.0);
    s.w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hang_is_a_client_timeout_and_not_retried() {
    let s = setup("").await;
    let cfg = s.w.config_path();
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace("timeout: 2s", "timeout: 300ms");
    replace_file(&cfg, &text);
    wait_reloads(&s.w, 2.0).await;
    // A client already connected, so that the time measured is warrant's, not a handshake's.
    let c = s.w.client();
    assert_eq!(
        c.get(s.w.url("/healthz")).send().await.unwrap().status(),
        200
    );
    s.fault.take_calls();
    s.fault.always(Behaviour::Hang);
    let started = Instant::now();
    let (code, v) = post_review(&c, &s.w.url("/authorize"), &review("a", "kittensandponies")).await;
    let took = started.elapsed();
    assert_eq!(code, 200, "{v}");
    let st = &v["status"];
    assert_eq!(s.fault.take_calls(), 1);
    assert!(took < Duration::from_secs(1), "{took:?}");
    assert!(
        st["evaluationError"]
            .as_str()
            .unwrap()
            .contains("within the webhook timeout (300 ms)"),
        "{st}"
    );
    assert_eq!(evaluations(&s.w, "timeout").await, 1.0);
    assert_eq!(fail_open(&s.w, "timeout").await, 1.0);
    s.w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reset_is_retried_refused_is_not() {
    let s = setup("").await;
    let (st, calls) = once(&s, "a", Behaviour::Reset).await;
    assert_eq!(calls, 5, "{st}");
    assert!(
        st["evaluationError"]
            .as_str()
            .unwrap()
            .contains("connection reset"),
        "{st}"
    );
    // Nothing listening: refused, one attempt.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let dir = tempfile::tempdir().unwrap();
    let kc = write_kubeconfig(
        dir.path(),
        "kc.yaml",
        &Kube::new(format!("https://127.0.0.1:{port}/"), &s.fault.ca.cert_pem),
    );
    let w = front(webhook_config(&kc, "", "")).await;
    let st = ask(&w, &review("a", "b")).await;
    assert!(
        st["evaluationError"]
            .as_str()
            .unwrap()
            .contains("cannot connect"),
        "{st}"
    );
    assert_eq!(evaluations(&w, "error").await, 1.0);
    w.stop().await;
    s.w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_after_rules() {
    let s = setup("").await;
    // 503 without Retry-After: not retried.
    let (_, calls) = once(&s, "a", Behaviour::text(503, "")).await;
    assert_eq!(calls, 1);
    // 503 with Retry-After: 1, then 200: client-go's inner layer re-sends after 1 s, in the
    // same attempt.
    s.fault.take_calls();
    s.fault.always(Behaviour::status(true, false, "late"));
    s.fault.then(vec![
        Behaviour::text(503, "").with_header("Retry-After", "1"),
    ]);
    let started = Instant::now();
    let st = ask(&s.w, &review("b", "ns")).await;
    let took = started.elapsed();
    assert_eq!(st["allowed"], true, "{st}");
    assert_eq!(s.fault.take_calls(), 2);
    assert!(took >= Duration::from_secs(1), "{took:?}");
    assert_eq!(evaluations(&s.w, "success").await, 1.0, "one outer attempt");
    // 503 with Retry-After: 0: re-sent 10 times inside the attempt, then not retried outside
    // (a zero delay suggests nothing): 11 requests.
    let (_, calls) = once(
        &s,
        "c",
        Behaviour::text(503, "").with_header("Retry-After", "0"),
    )
    .await;
    assert_eq!(calls, 11);
    // 404 with a positive Retry-After in a Status body is retried by the outer layer.
    let status = r#"{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"message":"gone","details":{"retryAfterSeconds":1}}"#;
    let (st, calls) = once(&s, "d", Behaviour::json(404, status)).await;
    assert_eq!(calls, 5, "{st}");
    assert!(
        st["evaluationError"]
            .as_str()
            .unwrap()
            .contains("gone (HTTP 404)"),
        "{st}"
    );
    s.w.stop().await;
}

/// kube-apiserver's webhook client decodes a 2xx body whatever its media type (its serializer
/// info has no media type, so it matches any: `pkg/util/webhook/webhook.go`,
/// apimachinery `SerializerInfoForMediaType`); so does warrant.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_answer_is_decoded_whatever_its_content_type() {
    let s = setup("").await;
    let b = Behaviour::Respond {
        status: 200,
        headers: vec![("Content-Type", "text/plain".into())],
        body: super::fault::review_answer("authorization.k8s.io/v1", true, false, "plain"),
        delay: Duration::ZERO,
    };
    let (st, calls) = once(&s, "typed", b).await;
    assert_eq!(calls, 1);
    assert_eq!(st["allowed"], true, "{st}");
    s.w.stop().await;
}

/// Client-go runs `mime.ParseMediaType` on every answer's Content-Type
/// and makes a failure an InternalError, which upstream retries; no Content-Type means JSON.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unparseable_downstream_content_type_is_a_failure() {
    let s = setup("").await;
    let answer = super::fault::review_answer("authorization.k8s.io/v1", true, false, "ok");
    let with = |ct: Option<&str>| Behaviour::Respond {
        status: 200,
        headers: ct
            .map(|c| ("Content-Type", c.to_owned()))
            .into_iter()
            .collect(),
        body: answer.clone(),
        delay: Duration::ZERO,
    };
    for (i, ct) in ["application/", "application/json; charset", "/json"]
        .into_iter()
        .enumerate()
    {
        let (st, calls) = once(&s, &format!("bad{i}"), with(Some(ct))).await;
        assert_eq!(calls, 5, "{ct}: retried as an InternalError");
        assert_eq!(st["allowed"], false, "{ct}: {st}");
        let e = st["evaluationError"].as_str().unwrap();
        assert!(
            e.starts_with("opa: Internal error occurred: mime: ") && e.contains(ct),
            "{e}"
        );
    }
    for (i, ct) in [None, Some("json")].into_iter().enumerate() {
        let (st, calls) = once(&s, &format!("good{i}"), with(ct)).await;
        assert_eq!(
            (calls, &st["allowed"]),
            (1, &serde_json::json!(true)),
            "{ct:?}"
        );
    }
    assert_eq!(fail_open(&s.w, "error").await, 3.0);
    s.w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_2xx_answers_are_decode_failures_not_retried() {
    let s = setup("").await;
    let rows: Vec<(Behaviour, &str)> = vec![
        (Behaviour::json(200, "{not json"), "cannot decode"),
        (
            Behaviour::json(200, ""),
            "0-length response with status code: 200",
        ),
        (
            Behaviour::Respond {
                status: 200,
                headers: vec![("Content-Type", "text/html".into())],
                body: "<html>oops</html>".into(),
                delay: Duration::ZERO,
            },
            "cannot decode",
        ),
        (
            Behaviour::json(
                200,
                &super::fault::review_answer("authorization.k8s.io/v1beta1", true, false, ""),
            ),
            "does not match the request's",
        ),
    ];
    for (i, (b, want)) in rows.into_iter().enumerate() {
        let (st, calls) = once(&s, &format!("u{i}"), b).await;
        assert_eq!(calls, 1, "{want}");
        assert_eq!(st["allowed"], false);
        assert!(
            st["evaluationError"].as_str().unwrap().contains(want),
            "{st}"
        );
    }
    assert_eq!(fail_open(&s.w, "error").await, 4.0);
    s.w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowed_and_denied_is_a_cached_deny_whatever_the_policy() {
    let s = setup("").await;
    let (st, calls) = once(&s, "a", Behaviour::status(true, true, "both")).await;
    assert_eq!(calls, 1);
    assert_eq!(
        (st["allowed"].clone(), st["denied"].clone()),
        (false.into(), true.into())
    );
    assert_eq!(
        st["reason"],
        "opa: both (webhook subject access review returned both allow and deny response)"
    );
    // Cached under authorizedTTL: asked again while the downstream fails, no call.
    let (st, calls) = once(&s, "a", Behaviour::text(500, "")).await;
    assert_eq!((calls, st["denied"].clone()), (0, true.into()));
    s.w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failure_policy_deny_names_the_webhook_and_the_failure() {
    let s = setup("").await;
    let cfg = s.w.config_path();
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace("failurePolicy: NoOpinion", "failurePolicy: Deny");
    replace_file(&cfg, &text);
    wait_reloads(&s.w, 2.0).await;
    let (st, calls) = once(&s, "a", Behaviour::text(500, "boom")).await;
    assert_eq!(calls, 5);
    assert_eq!(st["denied"], true);
    assert_eq!(
        st["reason"],
        "opa: an error on the server (\"boom\") has prevented the request from succeeding (HTTP 500) (after 5 attempts)"
    );
    assert_eq!(fail_open(&s.w, "error").await, 0.0, "Deny is not fail-open");
    // A clean allowed=false answer is not a failure: NoOpinion, no error.
    let (st, _) = once(&s, "b", Behaviour::status(false, false, "not mine")).await;
    assert_eq!(st["allowed"], false);
    assert!(
        st.get("denied").is_none() && st.get("evaluationError").is_none(),
        "{st}"
    );
    s.w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_review_deadline_bounds_upstream_backoff() {
    // Upstream's own 500 ms backoff (no test knob) and a 1 s review deadline: attempts at 0 and
    // ~0.5 s fit; the ~0.75 s sleep before a third would end past the deadline, so the review
    // answers with the last real error, before the deadline.
    let fault = FaultServer::start(None).await;
    fault.always(Behaviour::text(500, "boom"));
    let dir = tempfile::tempdir().unwrap();
    let kc = write_kubeconfig(
        dir.path(),
        "kc.yaml",
        &Kube::new(fault.url("/"), &fault.ca.cert_pem),
    );
    let w = Warrant::start(Options {
        config: Some(webhook_config(&kc, "", "")),
        review_timeout: Some(Duration::from_secs(1)),
        ..Options::default()
    })
    .await;
    // A client already connected, so that the time measured is warrant's, not a handshake's.
    let c = w.client();
    assert_eq!(c.get(w.url("/healthz")).send().await.unwrap().status(), 200);
    let started = Instant::now();
    let (code, v) = post_review(&c, &w.url("/authorize"), &review("a", "b")).await;
    let took = started.elapsed();
    assert_eq!(code, 200, "{v}");
    let st = &v["status"];
    assert!(took < Duration::from_secs(1), "{took:?}");
    assert!(took >= Duration::from_millis(500), "{took:?}");
    assert_eq!(fault.calls(), 2);
    let e = st["evaluationError"].as_str().unwrap();
    assert!(
        e.contains("(HTTP 500) (after 2 attempts; the review deadline left no time for another)"),
        "{e}"
    );
    // Cut short by the deadline, as upstream's context would be: not counted as a fail-open.
    assert_eq!(fail_open(&w, "error").await, 0.0);
    w.stop().await;
}

/// A Webhook in shadow mode (`mode: Observe`) is called on every review and its
/// would-be answer is recorded, but neither its Deny nor its failure (under failurePolicy Deny)
/// ever changes the answer: the next entry decides and no evaluationError is reported.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shadow_webhook_never_changes_the_answer() {
    let fault = FaultServer::start(None).await;
    let dir = tempfile::tempdir().unwrap();
    let kc = write_kubeconfig(
        dir.path(),
        "kc.yaml",
        &Kube::new(fault.url("/"), &fault.ca.cert_pem),
    );
    let config = webhook_config(&kc, "", "- type: AlwaysAllow\n  name: allow-all\n")
        .replace("  name: opa\n", "  name: opa\n  mode: Observe\n")
        .replace("failurePolicy: NoOpinion", "failurePolicy: Deny");
    let w = front(config).await;
    // The downstream denies: recorded, not answered.
    fault.always(Behaviour::status(false, true, "downstream says no"));
    let st = ask(&w, &review("alice", "kittensandponies")).await;
    assert_eq!(st["allowed"], true, "{st}");
    assert!(st.get("evaluationError").is_none(), "{st}");
    assert_eq!(fault.take_calls(), 1);
    // The downstream fails (5 attempts); failurePolicy Deny would deny; the answer stays Allow.
    fault.always(Behaviour::text(500, "boom"));
    let st = ask(&w, &review("bob", "kittensandponies")).await;
    assert_eq!(st["allowed"], true, "{st}");
    assert!(st.get("evaluationError").is_none(), "{st}");
    assert!(st.get("reason").is_none(), "{st}");
    assert_eq!(fault.take_calls(), 5);
    for (series, want) in [
        (
            "warrant_shadow_decisions_total{authorizer=\"opa\",rule=\"\",would=\"Deny\"}",
            2.0,
        ),
        (
            "warrant_shadow_disagreements_total{authorizer=\"opa\",rule=\"\",would=\"Deny\",chain=\"Allow\"}",
            2.0,
        ),
        (
            "warrant_authorization_attempts_total{result=\"allowed\"}",
            2.0,
        ),
    ] {
        assert_eq!(sample(&w, series).await, want, "{series}");
    }
    w.stop().await;
}
