//! A review load: workers posting the same review in a loop until told to stop, each outcome
//! kept with when it was sent and answered.

use crate::support::{Leaf, client_config};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;

/// What a review got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// 200 with `allowed: true`.
    Allowed,
    /// 200 with `allowed: false, denied: true`.
    Denied,
    /// Anything else: another answer, another status code, or no answer at all.
    Other(String),
}

/// One review of the load.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub sent: Instant,
    pub done: Instant,
    pub answer: Answer,
}

/// Posts `body` once and classifies the answer.
pub async fn ask(c: &reqwest::Client, url: &str, body: &str) -> Answer {
    let sent = c
        .post(url)
        .header("Content-Type", "application/json")
        .body(body.to_owned())
        .send()
        .await;
    let r = match sent {
        Ok(r) => r,
        Err(e) => return Answer::Other(format!("no answer: {e:?}")),
    };
    let code = r.status().as_u16();
    let text = r.text().await.unwrap_or_default();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    let status = &v["status"];
    match (
        code,
        status["allowed"].as_bool(),
        status["denied"].as_bool(),
    ) {
        (200, Some(true), _) => Answer::Allowed,
        (200, Some(false), Some(true)) => Answer::Denied,
        _ => Answer::Other(format!("HTTP {code}: {text}")),
    }
}

/// How a worker reaches the server.
#[derive(Clone)]
pub enum Connection {
    /// One client (one HTTP/2 connection) for all its reviews.
    Shared(reqwest::Client),
    /// A new client, so a new TLS handshake, for every review.
    Fresh { ca_pem: String, leaf: Leaf },
}

/// A client speaking HTTP/1.1 only (ALPN `http/1.1`).
pub fn http1_client(ca_pem: &str, leaf: &Leaf) -> reqwest::Client {
    let mut cfg = client_config(ca_pem, Some(leaf));
    cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
    reqwest::Client::builder()
        .tls_backend_preconfigured(cfg)
        .http1_only()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

/// A running load.
pub struct Load {
    stop: Arc<AtomicBool>,
    workers: Vec<JoinHandle<Vec<Outcome>>>,
}

impl Load {
    /// Starts one worker per connection, each posting `body` to `url` until stopped.
    pub fn start(connections: Vec<Connection>, url: String, body: String) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let workers = connections
            .into_iter()
            .map(|conn| {
                let (stop, url, body) = (stop.clone(), url.clone(), body.clone());
                tokio::spawn(async move {
                    let mut out = Vec::new();
                    while !stop.load(Ordering::Relaxed) {
                        let c = match &conn {
                            Connection::Shared(c) => c.clone(),
                            Connection::Fresh { ca_pem, leaf } => {
                                crate::support::client(ca_pem, Some(leaf))
                            }
                        };
                        let sent = Instant::now();
                        let answer = ask(&c, &url, &body).await;
                        out.push(Outcome {
                            sent,
                            done: Instant::now(),
                            answer,
                        });
                    }
                    out
                })
            })
            .collect();
        Self { stop, workers }
    }

    /// Stops the workers and returns every outcome.
    pub async fn finish(self) -> Vec<Outcome> {
        self.stop.store(true, Ordering::Relaxed);
        let mut all = Vec::new();
        for w in self.workers {
            all.extend(w.await.unwrap());
        }
        all
    }
}

/// Every outcome that is not `want`, for a failure message (at most 5).
pub fn unexpected(outcomes: &[Outcome], want: impl Fn(&Answer) -> bool) -> Vec<Answer> {
    outcomes
        .iter()
        .filter(|o| !want(&o.answer))
        .take(5)
        .map(|o| o.answer.clone())
        .collect()
}
