//! 100 rewrites of the chain file, valid and invalid mixed, while a load runs: every review is
//! answered, and by the configuration valid at the time.

use super::load::{Answer, Connection, Load, ask, http1_client, unexpected};
use super::served::Served;
use crate::support::{ALLOW_ALL, DENY_ALL, V1_REVIEW, replace_file};
use std::time::{Duration, Instant};

const RELOADS: usize = 100;
const SUCCESS: &str = "warrant_config_reloads_total{status=\"success\"}";
const FAILURE: &str = "warrant_config_reloads_total{status=\"failure\"}";

/// The `i`th invalid configuration: each different, so each is a new failed reload.
fn invalid(i: usize) -> String {
    let head = "apiVersion: warrant.dev/v1alpha1\nkind: AuthorizationConfiguration\n";
    match i % 5 {
        0 => format!("{head}authorizers: []\n# {i}\n"),
        1 => format!("{ALLOW_ALL}  nmae: typo-{i}\n"),
        2 => format!("{head}authorizers: [\n# {i}\n"),
        3 => format!("{}# {i}", &DENY_ALL[..60]),
        _ => format!("{head}authorizers:\n- type: RBAC\n  name: rbac-{i}\n"),
    }
}

/// A valid configuration served from `start` until the next valid one was written at `end`.
struct Window {
    start: Instant,
    end: Instant,
    want: Answer,
}

/// Polls until a review gets `want`; returns when it did.
async fn until(s: &Served, c: &reqwest::Client, want: &Answer) -> Instant {
    let started = Instant::now();
    loop {
        if ask(c, &s.url("/authorize"), V1_REVIEW).await == *want {
            return Instant::now();
        }
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{want:?} not served within 3 s"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Polls until the failed-reload counter passes `n`.
async fn until_failures_above(s: &Served, c: &reqwest::Client, n: f64) -> f64 {
    let started = Instant::now();
    loop {
        let now = s.sample(c, FAILURE).await;
        if now > n {
            return now;
        }
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "invalid configuration not seen within 3 s"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hundred_reloads_under_load_fail_no_review_and_answer_by_the_valid_config() {
    let s = Served::start(DENY_ALL, &[]);
    let probe = s.client();
    let mut windows = Vec::new();
    let mut current = Answer::Denied;
    let mut start = until(&s, &probe, &current).await;
    let h2 = s.client();
    let h1 = http1_client(&s.ca.cert_pem, &s.client);
    let load = Load::start(
        vec![
            Connection::Shared(h2.clone()),
            Connection::Shared(h2),
            Connection::Shared(h1),
        ],
        s.url("/authorize"),
        V1_REVIEW.to_owned(),
    );
    let path = s.path("config.yaml");
    let mut failures = s.sample(&probe, FAILURE).await;
    let (mut valid, mut refused) = (0, 0);
    for i in 0..RELOADS {
        // A, invalid, B, invalid, ...: every valid write changes the answer.
        match i % 4 {
            0 | 2 => {
                let (text, want) = if i % 4 == 0 {
                    (ALLOW_ALL, Answer::Allowed)
                } else {
                    (DENY_ALL, Answer::Denied)
                };
                let written = Instant::now();
                replace_file(&path, text);
                windows.push(Window {
                    start,
                    end: written,
                    want: current,
                });
                start = until(&s, &probe, &want).await;
                current = want;
                valid += 1;
            }
            _ => {
                let text = invalid(i);
                // Half in place (a reader may see it half-written), half by rename.
                if i % 8 == 1 {
                    std::fs::write(&path, &text).unwrap();
                } else {
                    replace_file(&path, &text);
                }
                failures = until_failures_above(&s, &probe, failures).await;
                assert_eq!(
                    ask(&probe, &s.url("/authorize"), V1_REVIEW).await,
                    current,
                    "invalid configuration {i} changed the answer:\n{text}"
                );
                refused += 1;
            }
        }
    }
    windows.push(Window {
        start,
        end: Instant::now(),
        want: current,
    });
    let outcomes = load.finish().await;
    let bad = unexpected(&outcomes, |a| *a == Answer::Allowed || *a == Answer::Denied);
    assert!(bad.is_empty(), "failed reviews: {bad:#?}");
    // A review sent after a configuration was seen served and answered before the next valid
    // one was written has that configuration's answer.
    let mut judged = 0;
    for w in &windows {
        let inside: Vec<_> = outcomes
            .iter()
            .filter(|o| o.sent >= w.start && o.done <= w.end)
            .collect();
        judged += inside.len();
        let wrong: Vec<_> = inside.iter().filter(|o| o.answer != w.want).collect();
        assert!(
            wrong.is_empty(),
            "{} answers other than {:?}",
            wrong.len(),
            w.want
        );
    }
    assert_eq!((valid, refused), (50, 50));
    assert_eq!(s.sample(&probe, SUCCESS).await, 1.0 + valid as f64);
    assert!(s.sample(&probe, FAILURE).await >= refused as f64);
    eprintln!(
        "{RELOADS} reloads under load: {} reviews, {judged} inside a window, 0 failed",
        outcomes.len()
    );
    assert!(outcomes.len() >= 500, "too little load: {}", outcomes.len());
}
