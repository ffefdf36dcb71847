//! The audit writer thread: it takes the queue's whole buffer at each wake (every
//! `queue::FLUSH_INTERVAL`, or sooner when many records wait) and writes it in one call to
//! standard output or a file. Nothing is lost silently: every line that
//! cannot be written is counted in `warrant_audit_records_dropped_total`, the first failure of
//! a run of failures is logged as an error (and the recovery as info), and a file that was moved
//! or removed (log rotation by `mv` or `rm`) is reopened at its path within a second.

use super::queue::Queue;
use crate::telemetry::metrics::Metrics;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often a file's path is checked for a rotation while records flow (and when idle).
const ROTATION_CHECK: Duration = Duration::from_secs(1);

/// Where the writer writes.
#[derive(Debug)]
pub(super) enum Output {
    /// Standard output.
    Stdout,
    /// An append-only file at `path`, reopened when `path` no longer names it.
    File {
        /// The path records go to.
        path: PathBuf,
        /// The file open now (`None` after a failed reopen).
        file: Option<File>,
    },
}

impl Output {
    /// Opens `path` for appending.
    pub(super) fn file(path: &Path) -> std::io::Result<Self> {
        Ok(Output::File {
            path: path.to_path_buf(),
            file: Some(open(path)?),
        })
    }

    fn write(&mut self, batch: &[u8]) -> std::io::Result<()> {
        match self {
            Output::Stdout => {
                let mut out = std::io::stdout().lock();
                out.write_all(batch)?;
                out.flush()
            }
            Output::File { file: Some(f), .. } => f.write_all(batch),
            Output::File { path, file: None } => Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("{} could not be reopened", path.display()),
            )),
        }
    }

    /// Reopens the file when its path names another file, or none (or when it is not open), or
    /// always when `forced` (SIGHUP, as log rotation tools expect of a daemon).
    fn follow_rotation(&mut self, forced: bool) {
        let Output::File { path, file } = self else {
            return;
        };
        let moved = match (file.as_ref(), std::fs::metadata(&*path)) {
            (Some(f), Ok(at_path)) => f
                .metadata()
                .map_or(true, |open| !same_file(&open, &at_path)),
            _ => true,
        };
        if moved || forced {
            match open(path) {
                Ok(f) => {
                    let why = if moved {
                        "rotated or removed"
                    } else {
                        "SIGHUP"
                    };
                    tracing::info!(file = %path.display(), why, "audit log reopened");
                    *file = Some(f);
                }
                Err(e) => {
                    tracing::error!(file = %path.display(), error = %e, "audit log cannot be reopened");
                    *file = None;
                }
            }
        }
    }
}

fn open(path: &Path) -> std::io::Result<File> {
    OpenOptions::new().create(true).append(true).open(path)
}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    (a.dev(), a.ino()) == (b.dev(), b.ino())
}

#[cfg(not(unix))]
fn same_file(_: &std::fs::Metadata, _: &std::fs::Metadata) -> bool {
    true
}

/// Drains `queue` into `output`, a batch per wake, until it is closed and empty.
pub(super) fn drain(queue: Arc<Queue>, mut output: Output, metrics: Arc<Metrics>) {
    let mut failing = false;
    let mut checked = Instant::now();
    let mut batch = Vec::with_capacity(64 * 1024);
    loop {
        let taken = queue.take(&mut batch);
        if taken.reopen || checked.elapsed() >= ROTATION_CHECK {
            output.follow_rotation(taken.reopen);
            checked = Instant::now();
        }
        if taken.records > 0 {
            match output.write(&batch) {
                Ok(()) if failing => {
                    failing = false;
                    tracing::info!("audit records are written again");
                }
                Ok(()) => {}
                Err(e) => {
                    (0..taken.records).for_each(|_| metrics.record_audit_dropped());
                    if !failing {
                        failing = true;
                        tracing::error!(error = %e, lost = taken.records, "audit records cannot be written; they are dropped and counted in warrant_audit_records_dropped_total until writing works again");
                    }
                }
            }
            // A burst may leave a large buffer behind: give it back.
            if batch.capacity() > 1 << 20 {
                batch = Vec::with_capacity(64 * 1024);
            }
        }
        if taken.closed {
            return;
        }
    }
}
