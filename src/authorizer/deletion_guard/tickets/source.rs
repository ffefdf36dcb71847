//! The tickets file: read into a [`Snapshot`], and read again when the file changes (through
//! [`crate::file_watch::FileWatch`] when a runtime is running, read once otherwise). What a
//! ticket authorises is the parent module's business.

use super::ticket::Ticket;
use crate::authorizer::deletion_guard::error::GuardError;
use arc_swap::ArcSwap;
use serde::Deserialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TicketsFile {
    #[serde(default)]
    tickets: Vec<Ticket>,
}

/// The tickets as last read, or why they could not be read.
#[derive(Debug)]
pub enum Snapshot {
    /// Read and decoded, by id.
    Loaded(HashMap<String, Ticket>),
    /// Not readable or not valid; the guard's failurePolicy applies when a ticket is needed.
    Unreadable(GuardError),
}

/// A live ticket source.
#[derive(Debug)]
pub struct TicketSource {
    path: PathBuf,
    current: ArcSwap<Snapshot>,
}

impl TicketSource {
    /// Reads the file and, inside a tokio runtime, starts watching it. The watch stops when the
    /// source is dropped.
    pub fn open(path: &Path) -> Arc<Self> {
        let source = Arc::new(Self {
            path: path.to_path_buf(),
            current: ArcSwap::from_pointee(read(path)),
        });
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            let weak = Arc::downgrade(&source);
            let path = path.to_path_buf();
            handle.spawn(watch(weak, path));
        }
        source
    }

    /// The current snapshot.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.current.load_full()
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the file again.
    pub fn reload(&self) {
        self.current.store(Arc::new(read(&self.path)));
    }
}

async fn watch(source: Weak<TicketSource>, path: PathBuf) {
    let mut w = crate::file_watch::FileWatch::new(&[&path], Default::default());
    loop {
        // Wake at least every few seconds to notice the source being dropped.
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), w.changed()).await;
        let Some(s) = source.upgrade() else { return };
        let next = read(&path);
        if let Snapshot::Unreadable(e) = &next {
            tracing::warn!(file = %path.display(), error = %e, "tickets file unreadable");
        }
        s.current.store(Arc::new(next));
    }
}

fn read(path: &Path) -> Snapshot {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            return Snapshot::Unreadable(GuardError::TicketsUnreadable {
                path: path.to_path_buf(),
                source: Arc::new(e),
            });
        }
    };
    match parse(&text) {
        Ok(tickets) => Snapshot::Loaded(tickets),
        Err(e) => Snapshot::Unreadable(GuardError::TicketsInvalid {
            path: path.to_path_buf(),
            source: Arc::new(e),
        }),
    }
}

/// Decodes the text of a tickets file (`tickets:` list, unknown fields refused) into the
/// tickets by id; a later ticket with the same id replaces an earlier one. What
/// [`TicketSource`] does with each read of the file (the fuzz target `tickets` calls it too).
pub fn parse(text: &str) -> Result<HashMap<String, Ticket>, serde_saphyr::Error> {
    let file = serde_saphyr::from_str::<TicketsFile>(text)?;
    Ok(file
        .tickets
        .into_iter()
        .map(|t| (t.id.clone(), t))
        .collect())
}
