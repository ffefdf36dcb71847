//! Where a guard's tickets come from ([`TicketSource`]): the tickets file, read into a
//! [`Snapshot`] and read again when the file changes (through [`crate::file_watch::FileWatch`]
//! when a runtime is running, read once otherwise), or the cluster's `DeletionTicket`s, whose
//! snapshot a watch keeps ([`super::feed`]), or an external ticket system asked for each
//! presented ticket ([`super::webhook`]). What a ticket authorises is the parent module's
//! business.

use super::feed::TicketFeed;
use super::snapshot::Snapshot;
use super::ticket::Ticket;
use super::webhook::WebhookTickets;
use crate::authorizer::Deadline;
use crate::authorizer::deletion_guard::error::GuardError;
use crate::authorizer::deletion_guard::scope::Target;
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

/// A live ticket source.
#[derive(Debug)]
pub enum TicketSource {
    /// The tickets file.
    File(FileTickets),
    /// The cluster's `DeletionTicket`s, as the watch last saw them.
    Cluster(Arc<TicketFeed>),
    /// An external ticket system, asked for each presented ticket.
    Webhook(Box<WebhookTickets>),
}

/// The tickets file and its last read.
#[derive(Debug)]
pub struct FileTickets {
    path: PathBuf,
    current: ArcSwap<Snapshot>,
}

impl TicketSource {
    /// Reads the file and, inside a tokio runtime, starts watching it. The watch stops when the
    /// source is dropped.
    pub fn open(path: &Path) -> Arc<Self> {
        let source = Arc::new(Self::File(FileTickets {
            path: path.to_path_buf(),
            current: ArcSwap::from_pointee(read(path)),
        }));
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            let weak = Arc::downgrade(&source);
            let path = path.to_path_buf();
            handle.spawn(watch(weak, path));
        }
        source
    }

    /// The cluster's tickets, from `feed` (whose watch is asked for).
    pub fn cluster(feed: Arc<TicketFeed>) -> Arc<Self> {
        feed.want();
        Arc::new(Self::Cluster(feed))
    }

    /// An external ticket system.
    pub fn webhook(tickets: WebhookTickets) -> Arc<Self> {
        Arc::new(Self::Webhook(Box::new(tickets)))
    }

    /// The tickets to judge a request presenting `presented` (if anything) for `target`: the
    /// file's or the cluster's as last read; for a ticket system, the presented ticket as it
    /// answers (nothing when none is presented: it cannot pre-authorise).
    pub async fn lookup(
        &self,
        presented: Option<&str>,
        target: &Target<'_>,
        deadline: Deadline,
    ) -> Arc<Snapshot> {
        match (self, presented) {
            (Self::File(f), _) => f.current.load_full(),
            (Self::Cluster(feed), _) => feed.snapshot(),
            // Boxed: an HTTP call's future is kilobytes, and every review's future would carry
            // that size (and copy it when boxed) whether it calls out or not.
            (Self::Webhook(w), Some(id)) => {
                Arc::new(Box::pin(w.lookup(id, target, deadline)).await)
            }
            (Self::Webhook(_), None) => Arc::new(Snapshot::Loaded(HashMap::new())),
        }
    }

    /// The file, for a file source.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Self::File(f) => Some(&f.path),
            Self::Cluster(_) | Self::Webhook(_) => None,
        }
    }

    /// Why a ticket webhook cannot be used, for a webhook source that cannot.
    pub fn build_error(&self) -> Option<&super::webhook::error::EndpointError> {
        match self {
            Self::Webhook(w) => w.build_error(),
            Self::File(_) | Self::Cluster(_) => None,
        }
    }

    /// Reads the file again (a cluster source follows its watch; a webhook is asked each time).
    pub fn reload(&self) {
        if let Self::File(f) = self {
            f.current.store(Arc::new(read(&f.path)));
        }
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
        if let TicketSource::File(f) = s.as_ref() {
            f.current.store(Arc::new(next));
        }
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
