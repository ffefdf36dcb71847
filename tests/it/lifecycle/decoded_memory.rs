//! Memory under bodies that are small on the wire and large as trees: about 8 MiB of bare
//! numbers (`[0,0,...]`), which decoded into `serde_json::Value` take some 130 MB each. Eight at
//! once on `/admit`, then eight AuthorizationConditionsReviews at once on `/authorize`, against
//! the real `warrant serve`; its peak resident memory (VmHWM) must stay at most 150 MB and each
//! hostile body be refused with a Status, while an ordinary review is still answered.

use super::served::Served;
use crate::support::{ALLOW_ALL, V1_REVIEW, post_review};

/// About 8 MiB of zeros in one array.
fn zeros() -> String {
    zeros_of(4 * 1024 * 1024 - 64 * 1024)
}

/// `n` zeros in one array.
fn zeros_of(n: usize) -> String {
    let mut s = String::with_capacity(2 * n + 2);
    s.push('[');
    for _ in 0..n - 1 {
        s.push_str("0,");
    }
    s.push_str("0]");
    s
}

fn admission(zeros: &str) -> String {
    format!(
        r#"{{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{{"uid":"u","kind":{{"group":"","version":"v1","kind":"ConfigMap"}},"resource":{{"group":"","version":"v1","resource":"configmaps"}},"namespace":"n","name":"x","operation":"CREATE","userInfo":{{"username":"jane"}},"object":{{"data":{zeros}}}}}}}"#
    )
}

fn conditions_review(zeros: &str) -> String {
    format!(
        r#"{{"kind":"AuthorizationConditionsReview","apiVersion":"authorization.k8s.io/v1alpha1","request":{{"admissionRequest":{{"uid":"u","object":{{"data":{zeros}}}}},"decision":{{"type":"NoOpinion","noOpinion":{{}}}}}}}}"#
    )
}

/// Sends `body` to `path` eight times at once; the HTTP statuses and Status reasons.
async fn eight_at_once(s: &Served, path: &str, body: String) -> Vec<(u16, String)> {
    let body = std::sync::Arc::new(body);
    let sent: Vec<_> = (0..8)
        .map(|_| {
            let (c, url, body) = (s.client(), s.url(path), body.clone());
            tokio::spawn(async move {
                let r = c
                    .post(url)
                    .header("Content-Type", "application/json")
                    .body(body.as_str().to_owned())
                    .send()
                    .await
                    .unwrap();
                let code = r.status().as_u16();
                let v: serde_json::Value = r.json().await.unwrap_or_default();
                (code, v["reason"].as_str().unwrap_or_default().to_owned())
            })
        })
        .collect();
    let mut out = Vec::new();
    for s in sent {
        out.push(s.await.unwrap());
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_concurrent_bodies_of_bare_numbers_do_not_grow_the_process_past_150_mb() {
    let s = Served::start(ALLOW_ALL, &[]);
    let zeros = zeros();
    let admitted = eight_at_once(&s, "/admit", admission(&zeros)).await;
    let admit_peak = s.memory("VmHWM");
    let reviewed = eight_at_once(&s, "/authorize", conditions_review(&zeros)).await;
    let peak = s.memory("VmHWM");
    eprintln!(
        "8 x {} byte /admit: peak RSS {} MB; then 8 conditions reviews: peak RSS {} MB, \
         RSS after {} MB; answers {admitted:?} {reviewed:?}",
        admission(&zeros).len(),
        admit_peak / 1_000_000,
        peak / 1_000_000,
        s.memory("VmRSS") / 1_000_000
    );
    for (code, reason) in admitted.iter().chain(&reviewed) {
        assert!(
            (*code, reason.as_str()) == (413, "RequestEntityTooLarge")
                || (*code, reason.as_str()) == (429, "TooManyRequests"),
            "{code} {reason}"
        );
    }
    assert!(peak <= 150_000_000, "peak RSS {peak} bytes");
    // Just under the per-request estimate (48 MiB at 48 bytes a value): accepted one at a
    // time by the total budget, each decoded in full.
    let under = zeros_of(950_000);
    let admitted = eight_at_once(&s, "/admit", admission(&under)).await;
    let reviewed = eight_at_once(&s, "/authorize", conditions_review(&under)).await;
    let peak = s.memory("VmHWM");
    eprintln!(
        "8 x {} bytes just under the estimate limit, on /admit then /authorize: peak RSS {} MB; \
         answers {admitted:?} {reviewed:?}",
        admission(&under).len(),
        peak / 1_000_000
    );
    assert!(peak <= 150_000_000, "peak RSS {peak} bytes");
    let (code, v) = post_review(&s.client(), &s.url("/authorize"), V1_REVIEW).await;
    assert_eq!((code, v["status"]["allowed"].as_bool()), (200, Some(true)));
}
