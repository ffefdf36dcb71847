//! "One of these files may have changed": a directory watch (inotify, debounced) plus a periodic
//! poll as a backstop, shared by the configuration, certificate and ticket-file reloaders.
//!
//! Directories are watched, not files: kubelet updates a ConfigMap or Secret volume by swapping
//! the `..data` symlink, and a watch on the file itself follows the old inode and goes dead after
//! the first swap. Consumers re-read by path and compare contents, so a spurious wake-up costs one
//! read.
//!
//! The kernel is asked only for what replaces or rewrites a file (`WAKING` in `events`): a file
//! written and closed, made, removed, renamed into or out of the directory, or its attributes
//! changed. Writes to a file kept open and opens are not asked for, so a log appended to beside
//! the watched files (an audit log, kube-apiserver's own) queues no events and wakes nothing; a
//! writer that keeps a watched file open while it rewrites it is seen at the next poll.
//!
//! A file that is a symbolic link to a file in another directory is watched there too (the
//! directory of its resolved target), so an edit of the target is seen within the debounce, not
//! at the next poll; the targets are resolved again at every wake-up, so a link pointed
//! elsewhere gets its new directory watched.
//!
//! inotify is Linux's; elsewhere the files are polled only.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

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
    events: Option<events::Events>,
    debounce: Duration,
    poll: tokio::time::Interval,
    files: Vec<PathBuf>,
    watched: BTreeSet<PathBuf>,
}

impl std::fmt::Debug for FileWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileWatch")
            .field("inotify", &self.events.is_some())
            .field("watched", &self.watched)
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
        let events = match events::Events::new() {
            Ok(e) => Some(e),
            Err(e) => {
                tracing::warn!(error = %e, "cannot start file watcher; polling only");
                None
            }
        };
        let mut poll = tokio::time::interval(timing.poll);
        poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut watch = Self {
            events,
            debounce: timing.debounce,
            poll,
            files: files.iter().map(|f| f.to_path_buf()).collect(),
            watched: BTreeSet::new(),
        };
        watch.watch_dirs();
        watch
    }

    /// Watches every directory the files need that is not watched yet. A directory that cannot
    /// be watched leaves only polling for the files in it (logged).
    fn watch_dirs(&mut self) {
        let Some(events) = self.events.as_mut() else {
            return;
        };
        for dir in dirs_of(&self.files) {
            if self.watched.contains(&dir) {
                continue;
            }
            match events.watch(&dir) {
                Ok(()) => {
                    self.watched.insert(dir);
                }
                Err(e) => {
                    tracing::warn!(dir = %dir.display(), error = %e, "cannot watch directory; polling only");
                }
            }
        }
    }

    /// Waits until a file may have changed: an event followed by [`WatchTiming::debounce`] of
    /// quiet (a burst is one wake-up), or the poll. The first call returns at once, so the
    /// caller checks right after the watch is established, as kube-apiserver does.
    pub async fn changed(&mut self) {
        match self.events.as_mut() {
            Some(events) => {
                let woke = tokio::select! {
                    woke = events.next() => Some(woke),
                    _ = self.poll.tick() => None,
                };
                if let Some(woke) = woke {
                    self.settle(woke).await;
                }
            }
            None => {
                self.poll.tick().await;
            }
        }
        // A link may point elsewhere now: watch its new target's directory too.
        self.watch_dirs();
    }

    /// After a first event, waits until none has come for the debounce. A watch that fails
    /// (its descriptor unreadable) is logged and dropped: polling alone goes on, and the caller
    /// re-checks now, since the failure may have hidden a change.
    async fn settle(&mut self, mut woke: std::io::Result<()>) {
        loop {
            if let Err(e) = woke {
                tracing::warn!(error = %e, "file watcher failed; polling only");
                self.events = None;
                self.watched.clear();
                return;
            }
            let Some(events) = self.events.as_mut() else {
                return;
            };
            match tokio::time::timeout(self.debounce, events.next()).await {
                Ok(next) => woke = next,
                Err(_quiet) => return,
            }
        }
    }
}

/// The kernel side of a watch: inotify on Linux.
#[cfg(target_os = "linux")]
mod events {
    use futures_util::StreamExt;
    use inotify::{EventStream, Inotify, WatchMask};
    use std::io;
    use std::path::Path;

    /// What wakes a watch: a file written and closed, made, removed, renamed into or out of the
    /// directory, or its attributes changed; the directory itself removed or moved. Not
    /// `MODIFY`, `OPEN` or `ACCESS`: every append to an open log would queue one.
    pub(super) const WAKING: WatchMask = WatchMask::CLOSE_WRITE
        .union(WatchMask::CREATE)
        .union(WatchMask::DELETE)
        .union(WatchMask::MOVED_FROM)
        .union(WatchMask::MOVED_TO)
        .union(WatchMask::ATTRIB)
        .union(WatchMask::DELETE_SELF)
        .union(WatchMask::MOVE_SELF)
        .union(WatchMask::ONLYDIR);

    /// The inotify descriptor's events (an overflow is an event too: the caller re-checks).
    pub(super) struct Events(EventStream<Vec<u8>>);

    impl Events {
        pub(super) fn new() -> io::Result<Self> {
            Inotify::init()?.into_event_stream(vec![0; 4096]).map(Self)
        }

        pub(super) fn watch(&mut self, dir: &Path) -> io::Result<()> {
            self.0.watches().add(dir, WAKING).map(drop)
        }

        /// The next event, or why none can be read (the stream never ends on its own).
        pub(super) async fn next(&mut self) -> io::Result<()> {
            match self.0.next().await {
                Some(event) => event.map(drop),
                None => Err(io::Error::other("inotify stream ended")),
            }
        }
    }
}

/// Elsewhere there is no kernel watch: the files are polled.
#[cfg(not(target_os = "linux"))]
mod events {
    use std::io;
    use std::path::Path;

    pub(super) enum Events {}

    impl Events {
        pub(super) fn new() -> io::Result<Self> {
            Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "directory watches need inotify (Linux)",
            ))
        }

        pub(super) fn watch(&mut self, _dir: &Path) -> io::Result<()> {
            match *self {}
        }

        pub(super) async fn next(&mut self) -> io::Result<()> {
            match *self {}
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::{FileWatch, WatchTiming};
    use std::io::Write;
    use std::time::Duration;

    const TIMING: WatchTiming = WatchTiming {
        debounce: Duration::from_millis(20),
        poll: Duration::from_secs(3600),
    };

    /// Whether the watch wakes within `limit`.
    async fn wakes(watch: &mut FileWatch, limit: Duration) -> bool {
        tokio::time::timeout(limit, watch.changed()).await.is_ok()
    }

    #[tokio::test]
    async fn appends_to_an_open_log_beside_the_file_do_not_wake_the_watch_and_a_rewrite_does() {
        let dir = tempfile::tempdir().unwrap();
        let watched = dir.path().join("tls.crt");
        std::fs::write(&watched, "one").unwrap();
        let mut watch = FileWatch::new(&[&watched], TIMING);
        assert!(watch.events.is_some(), "inotify is available");
        assert!(
            wakes(&mut watch, Duration::from_secs(1)).await,
            "first call"
        );

        let mut log = std::fs::File::create(dir.path().join("audit.jsonl")).unwrap();
        assert!(
            wakes(&mut watch, Duration::from_secs(1)).await,
            "a file made"
        );
        for i in 0..1_000 {
            writeln!(log, "{{\"record\":{i}}}").unwrap();
            log.flush().unwrap();
        }
        assert!(
            !wakes(&mut watch, Duration::from_millis(300)).await,
            "appends to an open file woke the watch"
        );

        std::fs::write(&watched, "two").unwrap();
        assert!(wakes(&mut watch, Duration::from_secs(1)).await, "a rewrite");
        let replacement = dir.path().join("tls.crt.new");
        std::fs::write(&replacement, "three").unwrap();
        std::fs::rename(&replacement, &watched).unwrap();
        assert!(wakes(&mut watch, Duration::from_secs(1)).await, "a rename");
        assert!(
            !wakes(&mut watch, Duration::from_millis(200)).await,
            "one burst is one wake-up"
        );
    }
}
