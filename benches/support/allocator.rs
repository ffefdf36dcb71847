//! The allocator of warrant's binary (`src/main.rs`), for the benches that time a request path:
//! they measure what the binary runs.

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
