//! The kubeconfig loader of downstream webhooks: the bytes are written to a file (the loader
//! reads a path, and resolves relative paths against its directory) and loaded. Loaded or
//! refused, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::{Arc, LazyLock};
use warrant::authorizer::webhook::kubeconfig;

static DIR: LazyLock<tempfile::TempDir> =
    LazyLock::new(|| tempfile::tempdir().expect("a temporary directory"));

fuzz_target!(|data: &[u8]| {
    let path = DIR.path().join("kubeconfig.yaml");
    std::fs::write(&path, data).expect("write the kubeconfig");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let _ = kubeconfig::load(&path, &provider);
});
