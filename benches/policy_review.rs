//! One review through a `Policy` of 20 rules behind 3 matchConditions: the conditions, the
//! binding of the review into CEL values and the rules, as the chain runs them (the target:
//! p50 <= 3 us on the CI machine). Also the same review through the whole chain.
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
use warrant::authorizer::{Deadline, Input};
use warrant::review::decode;

fn bench(c: &mut Criterion) {
    let chain = reference::chain();
    let input = Input::new(
        decode(reference::REVIEW_V1.as_bytes()).expect("review"),
        chrono::Utc::now(),
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    let answer =
        rt.block_on(chain.authorize(&input, Deadline::after(std::time::Duration::from_secs(1))));
    assert_eq!(answer.reason, "bench/owners: owners may act");
    let entry = &chain.entries()[0];
    c.bench_function("policy_20_rules_3_conditions", |b| {
        b.iter(|| {
            let (matched, _) = entry.match_conditions.evaluate(black_box(&input));
            black_box(matched);
            black_box(
                rt.block_on(
                    entry
                        .authorizer
                        .authorize(&input, Deadline::after(std::time::Duration::from_secs(1))),
                ),
            )
        })
    });
    let spec = input.review.spec();
    let sel = warrant::cel::RequestUse::default();
    c.bench_function("bind_review", |b| {
        b.iter(|| {
            let binding = warrant::cel::Binding::new(black_box(spec), input.now);
            black_box(&binding.with(sel));
        })
    });
    let one = warrant::cel::Expression::compile(
        "request.resourceAttributes.namespace == 'ns-0' && request.resourceAttributes.verb == 'delete'",
        warrant::cel::Variables::Request,
    )
    .expect("compiles");
    let binding = warrant::cel::Binding::new(spec, input.now);
    let bound = binding.with(sel);
    c.bench_function("one_rule", |b| {
        b.iter(|| black_box(one.evaluate(black_box(&bound))))
    });
    let lit =
        warrant::cel::Expression::compile("true", warrant::cel::Variables::Request).expect("true");
    c.bench_function("literal_true", |b| {
        b.iter(|| black_box(lit.evaluate(black_box(&bound))))
    });
    c.bench_function("chain_policy_review", |b| {
        b.iter(|| {
            black_box(rt.block_on(chain.authorize(
                black_box(&input),
                Deadline::after(std::time::Duration::from_secs(1)),
            )))
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
