//! Body limits on `/authorize`: a SubjectAccessReview is refused as soon as it passes its 1 MiB
//! limit, without the server buffering up to the 8 MiB an AuthorizationConditionsReview may
//! take; only a body whose leading TypeMeta declares a conditions review may grow past it.
//! Stalled large bodies leave room for ordinary reviews.

use crate::support::{Options, V1_REVIEW, Warrant, post_review};
use futures_util::StreamExt;
use std::time::{Duration, Instant};

/// A body that sends `head` then `filler` bytes in 64 KiB chunks, then stalls forever.
fn stalled(head: &str, filler: usize) -> reqwest::Body {
    let mut chunks = vec![Ok::<_, std::io::Error>(head.as_bytes().to_vec())];
    let sizes = (0..filler.div_ceil(65536)).map(|i| (filler - i * 65536).min(65536));
    chunks.extend(sizes.map(|n| Ok(vec![b' '; n])));
    let stream = futures_util::stream::iter(chunks).chain(futures_util::stream::pending());
    reqwest::Body::wrap_stream(stream)
}

const SAR_HEAD: &str = r#"{"kind":"SubjectAccessReview","apiVersion":"authorization.k8s.io/v1","spec":{"user":"jane","#;
const CONDITIONS_HEAD: &str = r#"{"kind":"AuthorizationConditionsReview","apiVersion":"authorization.k8s.io/v1alpha1","request":{"#;

/// Posts a stalled body; the status and how long the answer took, or `None` after `within`.
async fn post_stalled(
    w: &Warrant,
    body: reqwest::Body,
    within: Duration,
) -> Option<(u16, Duration)> {
    let started = Instant::now();
    let sent = w
        .client()
        .post(w.url("/authorize"))
        .header("Content-Type", "application/json")
        .body(body)
        .send();
    match tokio::time::timeout(within, sent).await {
        Ok(Ok(r)) => Some((r.status().as_u16(), started.elapsed())),
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subject_access_review_is_refused_at_one_mebibyte_not_buffered_to_eight() {
    let w = Warrant::start(Options::default()).await;
    let refused = post_stalled(&w, stalled(SAR_HEAD, 1536 * 1024), Duration::from_secs(3)).await;
    assert!(
        matches!(refused, Some((413, _))),
        "a SubjectAccessReview past 1 MiB: {refused:?}"
    );
    // A body that declares a conditions review up front may grow past 1 MiB: still being read
    // (neither refused nor answered) when the test stops waiting.
    let large = post_stalled(
        &w,
        stalled(CONDITIONS_HEAD, 1536 * 1024),
        Duration::from_millis(1500),
    )
    .await;
    assert_eq!(large, None, "a declared conditions review was cut at 1 MiB");
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_eight_mebibyte_bodies_leave_room_for_ordinary_reviews() {
    // Eight authenticated connections stall large bodies (SubjectAccessReviews, then declared
    // conditions reviews); ninety ordinary reviews must all be answered.
    let w = Warrant::start(Options::default()).await;
    for head in [SAR_HEAD, CONDITIONS_HEAD] {
        let stallers: Vec<_> = (0..8)
            .map(|_| {
                let (c, url) = (w.client(), w.url("/authorize"));
                // Just under the 8 MiB limit: eight of them fill the 64 MiB budget.
                let body = stalled(head, 8 * 1024 * 1024 - head.len() - 16);
                tokio::spawn(async move {
                    c.post(url)
                        .header("Content-Type", "application/json")
                        .body(body)
                        .send()
                        .await
                })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(2500)).await;
        let mut codes = std::collections::BTreeMap::<u16, usize>::new();
        for _ in 0..90 {
            let (code, _) = post_review(&w.client(), &w.url("/authorize"), V1_REVIEW).await;
            *codes.entry(code).or_default() += 1;
        }
        eprintln!("{head}: 90 fresh reviews beside 8 stalled bodies: {codes:?}");
        assert_eq!(codes.get(&200), Some(&90), "{codes:?}");
        for s in stallers {
            s.abort();
        }
    }
    w.stop().await;
}
