//! "One of these files may have changed": a directory watch (inotify through notify, debounced)
//! plus a periodic poll as a backstop, shared by the configuration and certificate reloaders.
//!
//! Directories are watched, not files: kubelet updates a ConfigMap or Secret volume by swapping
//! the `..data` symlink, and a watch on the file itself follows the old inode and goes dead after
//! the first swap. Consumers re-read by path and compare contents, so a spurious wake-up costs one
//! read. Access events are ignored, since reading the file would otherwise wake the watch again.

use notify::RecursiveMode;
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::sync::mpsc;

/// How often and how quickly a [`FileWatch`] wakes.
#[derive(Debug, Clone, Copy)]
pub struct WatchTiming {
    /// Quiet time after the last event before waking (debounce).
    pub debounce: Duration,
    /// Wake at least this often even without events.
    pub poll: Duration,
}

impl Default for WatchTiming {
    fn default() -> Self {
        Self {
            debounce: Duration::from_millis(100),
            poll: Duration::from_secs(60),
        }
    }
}

/// A watch over the directories of some files.
pub struct FileWatch {
    events: mpsc::UnboundedReceiver<()>,
    poll: tokio::time::Interval,
    // Dropping the debouncer stops its thread and the inotify watch; `None` when watching
    // failed and only polling is left.
    _debouncer: Option<Debouncer<notify::RecommendedWatcher, RecommendedCache>>,
}

impl std::fmt::Debug for FileWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileWatch")
            .field("inotify", &self._debouncer.is_some())
            .finish()
    }
}

fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

impl FileWatch {
    /// Watches the directories holding `files`. Must be called inside a tokio runtime. If the
    /// directory watch cannot be set up, it logs why and falls back to polling alone.
    pub fn new(files: &[&Path], timing: WatchTiming) -> Self {
        let (tx, events) = mpsc::unbounded_channel();
        let dirs: BTreeSet<PathBuf> = files.iter().map(|f| parent_of(f)).collect();
        let debouncer = new_debouncer(timing.debounce, None, move |res: DebounceEventResult| {
            let relevant = match res {
                Ok(events) => events.iter().any(|e| !e.kind.is_access()),
                // An error (e.g. inotify queue overflow) may have hidden a change: re-check.
                Err(_) => true,
            };
            if relevant {
                let _ = tx.send(());
            }
        });
        let debouncer = match debouncer {
            Ok(mut d) => {
                let mut ok = true;
                for dir in &dirs {
                    if let Err(e) = d.watch(dir, RecursiveMode::NonRecursive) {
                        tracing::warn!(dir = %dir.display(), error = %e, "cannot watch directory; polling only");
                        ok = false;
                    }
                }
                ok.then_some(d)
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot start file watcher; polling only");
                None
            }
        };
        let mut poll = tokio::time::interval(timing.poll);
        poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        Self {
            events,
            poll,
            _debouncer: debouncer,
        }
    }

    /// Waits until a file may have changed. The first call returns at once, so the caller
    /// checks right after the watch is established, as kube-apiserver does.
    pub async fn changed(&mut self) {
        tokio::select! {
            Some(()) = self.events.recv() => {
                // Coalesce a burst into one wake-up.
                while self.events.try_recv().is_ok() {}
            }
            _ = self.poll.tick() => {}
        }
    }
}
