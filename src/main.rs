//! The `warrant` binary: set up the allocator, parse the arguments and dispatch to the library.

use clap::Parser;
use std::process::ExitCode;

/// mimalloc rather than glibc's malloc: a request decodes and answers in a few dozen short-lived
/// allocations, and glibc's free lists cost a fifth of an admission decision
/// (`cargo bench --bench admission_decision`: p50 15.1 us on glibc, 12.0 us on mimalloc). The
/// floor (`examples/sar_floor.rs`) runs on the same allocator, so the bench's `warrant/floor`
/// ratio compares like with like.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_arena_eager_commit` and `mi_option_purge_delay`: their places in `mi_option_t`
/// (`include/mimalloc.h` of the C library libmimalloc-sys 0.1.49 builds, the same in its v2 and
/// v3 sources).
const ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Hands memory back to the OS as soon as it is free, as glibc does for large blocks: a body of
/// megabytes is buffered, refused and freed on whichever worker thread it landed, and mimalloc's
/// defaults (commit arenas eagerly, purge 10 ms after the last free) kept it resident long enough
/// for eight hostile bodies to push the process past its 150 MB bound
/// (`tests/it/lifecycle/decoded_memory.rs`: a peak of 175 MB; 112-119 MB with these settings,
/// 119-122 MB on glibc). The admission bench's p50 is the same with them (12.0 against 12.1 us).
fn tune_allocator() {
    // SAFETY: both options take a number; they are set before any other thread exists.
    unsafe {
        libmimalloc_sys::mi_option_set(ARENA_EAGER_COMMIT, 0);
        libmimalloc_sys::mi_option_set(PURGE_DELAY, 0);
    }
}

fn main() -> ExitCode {
    tune_allocator();
    let cli = warrant::cli::Cli::parse();
    ExitCode::from(warrant::cli::run(cli).code())
}
