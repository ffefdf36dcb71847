//! The wire work of one review: decoding a `SubjectAccessReview` in each API version, reading
//! it through without keeping anything (the least a decoder does), and encoding the answer.
//! `cargo bench --bench review_codec`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a benchmark's setup fails by panicking"
)]

#[path = "support/reference.rs"]
mod reference;

use criterion::{Criterion, criterion_group, criterion_main};
use k8s_openapi::api::authorization::v1::SubjectAccessReviewStatus;
use std::hint::black_box;
use warrant::review::{ApiVersion, decode, encode_response};

fn bench(c: &mut Criterion) {
    for (name, body) in [
        ("decode_v1", reference::REVIEW_V1),
        ("decode_v1beta1", reference::REVIEW_V1BETA1),
    ] {
        decode(body.as_bytes()).expect("the review decodes");
        c.bench_function(name, |b| {
            b.iter(|| black_box(decode(black_box(body.as_bytes()))))
        });
    }
    // The least any JSON decoder does with the review: read it through, keeping nothing
    // (serde_json into `IgnoredAny`). What `decode_v1` spends beyond it is building the review.
    c.bench_function("parse_only_v1", |b| {
        b.iter(|| {
            black_box(serde_json::from_slice::<serde::de::IgnoredAny>(black_box(
                reference::REVIEW_V1.as_bytes(),
            )))
        })
    });
    let status = SubjectAccessReviewStatus {
        allowed: true,
        denied: None,
        reason: Some("bench/owners: owners may act".into()),
        evaluation_error: None,
    };
    c.bench_function("encode_response_v1", |b| {
        b.iter(|| black_box(encode_response(ApiVersion::V1, black_box(&status))))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
