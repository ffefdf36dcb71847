//! How a Policy's cost grows with rules that cannot match the review (target: <= 100 ns
//! per added rule; <= 10 us at 100 rules): the chain on policies of 10, 100 and 1,000 rules
//! (`reference::scaling_config`), each ending with the one rule that allows. Prints the cost per
//! added rule from criterion's estimates afterwards. `cargo bench --bench policy_scaling`.
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
use std::time::{Duration, Instant};
use warrant::authorizer::{Chain, Deadline, Input};
use warrant::review::decode;

const SIZES: [usize; 3] = [10, 100, 1000];

fn chain(n: usize) -> Chain {
    let loaded = warrant::config::parse("bench.yaml", reference::scaling_config(n).as_bytes())
        .expect("config");
    Chain::build(&loaded.config).expect("chain")
}

fn input() -> Input {
    Input::new(
        decode(reference::REVIEW_V1.as_bytes()).expect("review"),
        chrono::Utc::now(),
    )
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime")
}

fn review(
    rt: &tokio::runtime::Runtime,
    chain: &Chain,
    input: &Input,
) -> warrant::authorizer::Answer {
    rt.block_on(chain.authorize(input, Deadline::after(Duration::from_secs(1))))
}

/// Median time of one review, measured in batches outside criterion, for the per-rule line.
fn median(rt: &tokio::runtime::Runtime, chain: &Chain, input: &Input) -> f64 {
    let mut batches: Vec<f64> = (0..31)
        .map(|_| {
            let started = Instant::now();
            for _ in 0..200 {
                black_box(review(rt, chain, input));
            }
            started.elapsed().as_nanos() as f64 / 200.0
        })
        .collect();
    batches.sort_by(f64::total_cmp);
    batches[batches.len() / 2]
}

fn bench(c: &mut Criterion) {
    let rt = runtime();
    let input = input();
    let mut medians = Vec::new();
    for n in SIZES {
        let chain = chain(n);
        let answer = review(&rt, &chain, &input);
        assert_eq!(answer.reason, "bench/owners: owners may act", "{n} rules");
        c.bench_function(&format!("policy_{n}_rules"), |b| {
            b.iter(|| black_box(review(&rt, &chain, black_box(&input))))
        });
        medians.push((n, median(&rt, &chain, &input)));
    }
    for pair in medians.windows(2) {
        let ((n0, t0), (n1, t1)) = (pair[0], pair[1]);
        println!(
            "policy scaling: {n0} -> {n1} rules: {t0:.0} ns -> {t1:.0} ns, {:.1} ns per added rule",
            (t1 - t0) / (n1 - n0) as f64
        );
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
