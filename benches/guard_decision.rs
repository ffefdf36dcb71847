//! One deletion guard decision (target: p50 <= 5 us): a critical Deployment delete in a
//! protected namespace with an approved ticket presented, inside a window, through the guard's
//! full path (scope, risk, rate limits, windows, ticket lookup, reason and assessment).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a benchmark's setup fails by panicking"
)]

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use warrant::authorizer::{Chain, Deadline, Input};
use warrant::review::decode;

const REVIEW: &str = r#"{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{
 "user":"alice","groups":["dev","system:authenticated"],
 "extra":{"warrant.dev/ticket":["CHG-100"]},
 "resourceAttributes":{"namespace":"production","verb":"delete","group":"apps","version":"v1","resource":"statefulsets","name":"db"}}}"#;

fn bench(c: &mut Criterion) {
    let path = format!(
        "{}/authz-config/guard-example.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let loaded = warrant::config::load_file(std::path::Path::new(&path)).expect("config");
    let chain = Chain::build(&loaded.config).expect("chain");
    let review = decode(REVIEW.as_bytes()).expect("review");
    let now = chrono::DateTime::parse_from_rfc3339("2026-12-02T10:00:00Z")
        .expect("time")
        .with_timezone(&chrono::Utc);
    let input = Input::new(review, now);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let answer =
        rt.block_on(chain.authorize(&input, Deadline::after(std::time::Duration::from_secs(5))));
    let code = answer.trace[0].outcome.clone();
    assert!(
        format!("{code:?}").contains("ALLOW_WITH_COOLDOWN"),
        "{code:?}"
    );
    c.bench_function("guard_decision_ticketed_critical_delete", |b| {
        b.iter(|| {
            let a = rt.block_on(chain.authorize(
                black_box(&input),
                Deadline::after(std::time::Duration::from_secs(5)),
            ));
            black_box(a)
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
