//! Heap allocations per review, counted by a counting global allocator: the whole
//! in-process path of one review on the reference configuration (decode, chain, status, encode),
//! its parts, and the audit record a review writes when the audit log is on. Prints
//! allocations and bytes per review. `cargo bench --bench request_allocations`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a benchmark's setup fails by panicking"
)]

#[path = "support/reference.rs"]
mod reference;

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use warrant::authorizer::{Deadline, Input};
use warrant::review::{decode, encode_response};
use warrant::telemetry::audit::AuditRecord;

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
static BYTES: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged; only counters are kept.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(new_size, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const ROUNDS: usize = 1000;

/// Allocations and bytes per call of `f`, averaged over [`ROUNDS`] calls after a warm-up.
fn per_call(mut f: impl FnMut()) -> (f64, f64) {
    for _ in 0..10 {
        f();
    }
    let (a0, b0) = (
        ALLOCATIONS.load(Ordering::Relaxed),
        BYTES.load(Ordering::Relaxed),
    );
    for _ in 0..ROUNDS {
        f();
    }
    let (a1, b1) = (
        ALLOCATIONS.load(Ordering::Relaxed),
        BYTES.load(Ordering::Relaxed),
    );
    (
        (a1 - a0) as f64 / ROUNDS as f64,
        (b1 - b0) as f64 / ROUNDS as f64,
    )
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing: run either way.
    let chain = reference::chain();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    let body = reference::REVIEW_V1.as_bytes();
    let input = Input::new(decode(body).expect("review"), chrono::Utc::now());
    let deadline = || Deadline::after(Duration::from_secs(1));
    let whole = per_call(|| {
        let input = Input::new(decode(black_box(body)).expect("review"), chrono::Utc::now());
        let answer = rt.block_on(chain.authorize(&input, deadline()));
        black_box(encode_response(input.review.version(), &answer.status()));
    });
    let decoding = per_call(|| {
        black_box(decode(black_box(body)).expect("review"));
    });
    let judging = per_call(|| {
        black_box(rt.block_on(chain.authorize(&input, deadline())));
    });
    let answer = rt.block_on(chain.authorize(&input, deadline()));
    assert_eq!(answer.reason, "bench/owners: owners may act");
    let encoding = per_call(|| {
        black_box(encode_response(input.review.version(), &answer.status()));
    });
    let auditing = per_call(|| {
        let record = AuditRecord::new(&input, &answer, Duration::from_micros(9), None);
        black_box(serde_json::to_vec(&record).expect("record"));
    });
    println!("allocations per review, reference config (3 matchConditions + 20 rules):");
    for (what, (n, bytes)) in [
        ("decode + chain + encode", whole),
        ("decode (v1)", decoding),
        ("chain", judging),
        ("status + encode", encoding),
        ("audit record + encode", auditing),
    ] {
        println!("  {what:<26} {n:>6.1} allocations {bytes:>8.0} bytes");
    }
}
