//! "One of these files may have changed": a directory watch (inotify through notify, debounced)
//! plus a periodic poll as a backstop, shared by the configuration and certificate reloaders.
//!
//! Directories are watched, not files: kubelet updates a ConfigMap or Secret volume by swapping
//! the `..data` symlink, and a watch on the file itself follows the old inode and goes dead after
//! the first swap. Consumers re-read by path and compare contents, so a spurious wake-up costs one
//! read. Access events are ignored, since reading the file would otherwise wake the watch again.
//!
//! A file that is a symbolic link to a file in another directory is watched there too (the
//! directory of its resolved target), so an edit of the target is seen within the debounce, not
//! at the next poll; the targets are resolved again at every wake-up, so a link pointed
//! elsewhere gets its new directory watched.

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
pub(crate) struct FileWatch {
    events: mpsc::UnboundedReceiver<()>,
    poll: tokio::time::Interval,
    files: Vec<PathBuf>,
    watched: BTreeSet<PathBuf>,
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

/// The directories to watch for `files`: each file's own, and its resolved target's when the
/// file is a symbolic link into another directory.
fn dirs_of(files: &[PathBuf]) -> BTreeSet<PathBuf> {
    let mut dirs = BTreeSet::new();
    for f in files {
        dirs.insert(parent_of(f));
        let is_link = std::fs::symlink_metadata(f).is_ok_and(|m| m.file_type().is_symlink());
        if let (true, Ok(target)) = (is_link, std::fs::canonicalize(f)) {
            dirs.insert(parent_of(&target));
        }
    }
    dirs
}

impl FileWatch {
    /// Watches the directories holding `files`. Must be called inside a tokio runtime. If the
    /// directory watch cannot be set up, it logs why and falls back to polling alone.
    pub fn new(files: &[&Path], timing: WatchTiming) -> Self {
        let (tx, events) = mpsc::unbounded_channel();
        let files: Vec<PathBuf> = files.iter().map(|f| f.to_path_buf()).collect();
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
            Ok(d) => Some(d),
            Err(e) => {
                tracing::warn!(error = %e, "cannot start file watcher; polling only");
                None
            }
        };
        let mut poll = tokio::time::interval(timing.poll);
        poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut watch = Self {
            events,
            poll,
            files,
            watched: BTreeSet::new(),
            _debouncer: debouncer,
        };
        watch.watch_dirs();
        watch
    }

    /// Watches every directory the files need that is not watched yet. A directory that cannot
    /// be watched leaves only polling for the files in it (logged).
    fn watch_dirs(&mut self) {
        let Some(d) = self._debouncer.as_mut() else {
            return;
        };
        for dir in dirs_of(&self.files) {
            if self.watched.contains(&dir) {
                continue;
            }
            match d.watch(&dir, RecursiveMode::NonRecursive) {
                Ok(()) => {
                    self.watched.insert(dir);
                }
                Err(e) => {
                    tracing::warn!(dir = %dir.display(), error = %e, "cannot watch directory; polling only");
                }
            }
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
        // A link may point elsewhere now: watch its new target's directory too.
        self.watch_dirs();
    }
}
