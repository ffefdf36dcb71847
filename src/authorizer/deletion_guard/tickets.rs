//! The tickets file: approved changes, reloaded when the file changes (through
//! [`crate::file_watch::FileWatch`] when a runtime is running, read once otherwise).

use crate::config::model::pattern::{Pattern, any};
use arc_swap::ArcSwap;
use chrono::{DateTime, Utc};
use serde::Deserialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};

/// A ticket's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum Status {
    /// Approved.
    Approved,
    /// Waiting for approval.
    Pending,
    /// Rejected.
    Rejected,
}

/// What a ticket covers; an empty list covers anything.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scope {
    /// Namespaces (patterns).
    #[serde(default)]
    pub namespaces: Vec<String>,
    /// Kinds as `resource[.group]`.
    #[serde(default)]
    pub resources: Vec<String>,
    /// Object names (patterns).
    #[serde(default)]
    pub names: Vec<String>,
    /// Users who may use it; when set, the ticket pre-authorises them without presenting it.
    #[serde(default)]
    pub requesters: Vec<String>,
}

/// One change ticket.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ticket {
    /// Its id.
    pub id: String,
    /// Its status.
    pub status: Status,
    /// Who approved it.
    #[serde(default)]
    pub approvers: Vec<String>,
    /// When it stops being valid.
    pub expires: DateTime<Utc>,
    /// What it covers.
    #[serde(default)]
    pub scope: Scope,
}

/// What a request targets, for scope checks.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// Namespace (`""` when cluster-scoped).
    pub namespace: &'a str,
    /// API group.
    pub group: &'a str,
    /// Plural resource.
    pub resource: &'a str,
    /// Object name (`""` for a collection).
    pub name: &'a str,
    /// The requester.
    pub user: &'a str,
}

impl Ticket {
    /// Whether the ticket's scope covers the target.
    pub fn covers(&self, t: &Target<'_>) -> bool {
        let pats = |v: &[String]| v.iter().map(|s| Pattern::new(s)).collect::<Vec<_>>();
        let s = &self.scope;
        let kind_ok = s.resources.is_empty()
            || s.resources.iter().any(|r| {
                let (res, group) = r.split_once('.').unwrap_or((r.as_str(), ""));
                res == t.resource && group == t.group
            });
        (s.namespaces.is_empty() || any(&pats(&s.namespaces), t.namespace))
            && kind_ok
            && (s.names.is_empty() || any(&pats(&s.names), t.name))
            && (s.requesters.is_empty() || s.requesters.iter().any(|r| r == t.user))
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TicketsFile {
    #[serde(default)]
    tickets: Vec<Ticket>,
}

/// The tickets as last read, or why they could not be read.
#[derive(Debug)]
pub enum Snapshot {
    /// Read and decoded.
    Loaded(HashMap<String, Ticket>),
    /// Not readable or not valid; the guard's failurePolicy applies when a ticket is needed.
    Unreadable(String),
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
        if let (Snapshot::Unreadable(e), _) = (&next, ()) {
            tracing::warn!(file = %path.display(), error = %e, "tickets file unreadable");
        }
        s.current.store(Arc::new(next));
    }
}

fn read(path: &Path) -> Snapshot {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => return Snapshot::Unreadable(format!("cannot read {}: {e}", path.display())),
    };
    match serde_saphyr::from_str::<TicketsFile>(&text) {
        Ok(f) => Snapshot::Loaded(f.tickets.into_iter().map(|t| (t.id.clone(), t)).collect()),
        Err(e) => Snapshot::Unreadable(format!("{}: {e}", path.display())),
    }
}
