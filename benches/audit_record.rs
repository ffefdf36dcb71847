//! What the audit log costs a review in process, on the reference configuration's review:
//! building its record (ids, time, the chain's trace) and encoding it, then the whole
//! `AuditSink::write` into a file (the record queued; the writer thread drains the queue into
//! the file in batches, as `warrant serve --audit-log FILE` runs it). Against the review itself
//! (decode, chain, status, encode), measured in the same run. `cargo bench --bench audit_record`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a benchmark's setup fails by panicking"
)]

#[path = "support/reference.rs"]
mod reference;

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;
use warrant::authorizer::{Deadline, Input};
use warrant::review::{decode, encode_response};
use warrant::telemetry::audit::{AuditRecord, AuditSink, AuditTarget};
use warrant::telemetry::metrics::Metrics;

fn bench(c: &mut Criterion) {
    let chain = reference::chain();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    let body = reference::REVIEW_V1.as_bytes();
    let deadline = || Deadline::after(Duration::from_secs(1));
    let input = Input::new(decode(body).expect("review"), chrono::Utc::now());
    let answer = rt.block_on(chain.authorize(&input, deadline()));
    assert_eq!(answer.reason, "bench/owners: owners may act");

    c.bench_function("audit_record/review_without_audit", |b| {
        b.iter(|| {
            let input = Input::new(decode(black_box(body)).expect("review"), chrono::Utc::now());
            let answer = rt.block_on(chain.authorize(&input, deadline()));
            black_box(encode_response(input.review.version(), &answer.status()))
        })
    });
    c.bench_function("audit_record/record_and_encode", |b| {
        b.iter(|| {
            let record = AuditRecord::new(&input, &answer, Duration::from_micros(9), None);
            black_box(serde_json::to_vec(&record).expect("record"))
        })
    });
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("audit.log");
    let metrics = Arc::new(Metrics::new());
    let sink = AuditSink::open(&AuditTarget::File(path.clone()), metrics).expect("sink");
    c.bench_function("audit_record/sink_write_to_file", |b| {
        b.iter(|| {
            let record = AuditRecord::new(&input, &answer, Duration::from_micros(9), None);
            sink.write(black_box(&record));
        })
    });
    drop(sink);
    let written = std::fs::read_to_string(&path).expect("audit file");
    let last: serde_json::Value =
        serde_json::from_str(written.lines().last().expect("a record")).expect("json");
    assert_eq!(last["decidedBy"], "bench", "{last}");
}

criterion_group!(benches, bench);
criterion_main!(benches);
