//! The saved cluster state of `warrant check --cluster-state DIR`: the input is written as one
//! file of a temporary directory (`.json` when the first byte is odd, `.yaml` otherwise) and
//! loaded with `FileView::load`; loaded or refused, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::LazyLock;
use warrant::cluster::FileView;

static DIR: LazyLock<tempfile::TempDir> =
    LazyLock::new(|| tempfile::tempdir().expect("a temporary directory"));

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let (name, stale) = if first & 1 == 1 {
        ("state.json", "state.yaml")
    } else {
        ("state.yaml", "state.json")
    };
    let _ = std::fs::remove_file(DIR.path().join(stale));
    std::fs::write(DIR.path().join(name), rest).expect("write the state file");
    if let Ok(view) = FileView::load(DIR.path()) {
        let _ = view.index();
    }
});
