//! A review with 70,000 `extra` keys (as many as fit the 1 MiB body
//! limit) costs about the same under a chain of CEL authorizers that never read `extra` as
//! under AlwaysAllow, instead of a map of every key built for each authorizer.

use super::load::{Answer, ask};
use super::served::Served;
use crate::support::{ALLOW_ALL, repo};
use std::time::Duration;

const KEYS: usize = 70_000;
const REVIEWS: u32 = 6;

/// A review whose `extra` has `KEYS` distinct four-character keys, each with one empty value.
fn review() -> String {
    let alphabet: Vec<char> = ('a'..='z').chain('0'..='9').collect();
    let n = alphabet.len();
    let extra: serde_json::Map<String, serde_json::Value> = (0..KEYS)
        .map(|i| {
            let key: String = [i / (n * n * n), i / (n * n), i / n, i]
                .iter()
                .map(|d| alphabet[d % n])
                .collect();
            (key, serde_json::json!([""]))
        })
        .collect();
    let body = serde_json::json!({
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {
            "user": "jane", "groups": ["dev"], "extra": extra,
            "resourceAttributes": {"namespace": "team-a", "verb": "get", "resource": "pods"}
        }
    })
    .to_string();
    assert!(body.len() < 1 << 20, "{} bytes", body.len());
    body
}

/// Whether the review was answered (a verdict, or no opinion), not refused.
fn answered(a: &Answer) -> bool {
    !matches!(a, Answer::Other(t) if !t.starts_with("HTTP 200"))
}

/// Server CPU time per review of `body` under `config`.
async fn cost(config: &str, body: &str) -> Duration {
    let s = Served::start(config, &[]);
    let c = s.client();
    // The first review also pays for connection set-up.
    let a = ask(&c, &s.url("/authorize"), body).await;
    assert!(answered(&a), "{a:?}");
    let before = s.cpu();
    for _ in 0..REVIEWS {
        let a = ask(&c, &s.url("/authorize"), body).await;
        assert!(answered(&a), "{a:?}");
    }
    (s.cpu() - before) / REVIEWS
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seventy_thousand_extra_keys_cost_no_more_under_cel_authorizers() {
    let body = review();
    let policy = std::fs::read_to_string(repo("authz-config/policy-example.yaml")).unwrap();
    let allow = cost(ALLOW_ALL, &body).await;
    let cel = cost(&policy, &body).await;
    eprintln!(
        "{KEYS} extra keys: {allow:?} CPU per review under AlwaysAllow, {cel:?} under policy-example.yaml"
    );
    assert!(
        cel <= allow * 3 / 2 + Duration::from_millis(30),
        "CEL authorizers cost {cel:?} per review against {allow:?} for AlwaysAllow"
    );
}
