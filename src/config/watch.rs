//! The configuration reload loop's front half: re-read the file whenever it may have changed and
//! report each *new* content once, as kube-apiserver's `reload.go` does. Identical bytes to the
//! last read are ignored, so an invalid file is reported once per distinct content; a read error
//! is reported every time. What to do with a new config (build a chain, swap it) is the
//! consumer's business (`crate::reload`).

use super::error::ConfigErrors;
use super::load::{Loaded, parse, read_error};
use crate::file_watch::{FileWatch, WatchTiming};
use std::path::{Path, PathBuf};
use tokio::sync::mpsc;

/// What a check of the file found.
#[derive(Debug)]
pub enum Change {
    /// New content that validates.
    Loaded(Loaded),
    /// New content that does not validate.
    Invalid(ConfigErrors),
    /// The file could not be read.
    Unreadable(ConfigErrors),
}

/// Watches one configuration file and sends a [`Change`] for each new content. The task ends
/// when the receiver is dropped.
pub fn spawn(path: PathBuf, timing: WatchTiming) -> mpsc::Receiver<Change> {
    let (tx, rx) = mpsc::channel(4);
    tokio::spawn(async move {
        let mut watch = FileWatch::new(&[path.as_path()], timing);
        let mut last: Option<Vec<u8>> = None;
        loop {
            watch.changed().await;
            let change = match check(&path, &mut last) {
                Some(c) => c,
                None => continue,
            };
            if tx.send(change).await.is_err() {
                return;
            }
        }
    });
    rx
}

/// Reads the file once; `None` when its bytes are those of the last read.
fn check(path: &Path, last: &mut Option<Vec<u8>>) -> Option<Change> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            // Forget the last content so that the file's return is reported even if unchanged.
            *last = None;
            return Some(Change::Unreadable(read_error(
                &path.display().to_string(),
                e,
            )));
        }
    };
    if last.as_deref() == Some(bytes.as_slice()) {
        return None;
    }
    let result = parse(&path.display().to_string(), &bytes);
    *last = Some(bytes);
    Some(match result {
        Ok(l) => Change::Loaded(l),
        Err(e) => Change::Invalid(e),
    })
}
