//! The cluster's `DeletionTicket`s for the guard: a watch of every namespace's tickets feeding
//! the guard's [`TicketFeed`] (started once a guard reads its tickets from the cluster), and
//! marking a single-use ticket `Used` once the deletion it authorized is admitted.
//!
//! The watch lists, then follows changes, keeping the tickets by `<namespace>/<name>` and
//! publishing the whole set after the list and after every change ([`Seen`]). Each object is
//! decoded on its own: a ticket warrant cannot read (or that names no targets) is skipped,
//! logged and counted, and never breaks the rest. When the watch fails (the API
//! server unreachable, the CRD missing, `list` forbidden), the feed turns unreadable at once,
//! the error is logged, and a fresh watch lists again after a backoff (1 s doubling to 30 s):
//! until it has, every guard that needs a ticket applies its failure policy.

use super::annotate::{AnnotateError, Annotator, FIELD_MANAGER, ObjectAddress};
use super::connect::Source;
use crate::authorizer::deletion_guard::tickets::TicketFeed;
use crate::tickets::{self, DeletionTicket, Phase, TicketStatus, UsedFor};
use chrono::{DateTime, Utc};
use futures_util::StreamExt;
use kube::api::{Api, DynamicObject, PostParams};
use kube::runtime::watcher::{self, Event, watcher};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

#[cfg(test)]
mod tests;

/// The longest wait before a broken watch lists again.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// Waits until a guard asks for the cluster's tickets, builds the client from `source`
/// (retrying with backoff; each failure logged and published as the feed's error), then
/// watches, until dropped.
pub async fn watch_when_wanted(feed: Arc<TicketFeed>, source: Source) {
    while !feed.wanted() {
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    tracing::info!("a guard reads its tickets from the cluster: watching DeletionTickets");
    let mut delay = Duration::from_secs(1);
    let client = loop {
        match source.client().await {
            Ok(client) => break client,
            Err(e) => {
                tracing::error!(error = %e, retry_in = ?delay, "cannot build the cluster client for DeletionTickets");
                feed.fail(&format!("cannot build the cluster client: {e}"));
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(MAX_BACKOFF);
            }
        }
    };
    watch(feed, client).await;
}

/// Watches every namespace's `DeletionTicket`s into `feed`, until dropped.
pub async fn watch(feed: Arc<TicketFeed>, client: kube::Client) {
    let api: Api<DynamicObject> = Api::all_with(client, &tickets::api_resource());
    let mut backoff = Duration::from_secs(1);
    loop {
        let mut stream = watcher(api.clone(), watcher::Config::default()).boxed();
        let mut seen = Seen::default();
        while let Some(event) = stream.next().await {
            match event {
                Ok(event) => {
                    if seen.apply(event, &feed) {
                        backoff = Duration::from_secs(1);
                    }
                }
                Err(e) => {
                    let reason = format!("the watch of DeletionTickets failed: {e}");
                    tracing::error!(error = %e, retry_in = ?backoff, "{reason}; tickets unavailable until it lists again");
                    feed.fail(&reason);
                    break;
                }
            }
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// The tickets one watch has seen: the list in progress and the live set.
#[derive(Debug, Default)]
pub(crate) struct Seen {
    listing: HashMap<String, DeletionTicket>,
    live: HashMap<String, DeletionTicket>,
}

impl Seen {
    /// Applies one event of the watch to the set, publishing it into `feed` after the list and
    /// after every change; an object that is not a ticket warrant can read is skipped (logged,
    /// counted) and leaves the rest as they are. True when a list has completed.
    pub(crate) fn apply(&mut self, event: Event<DynamicObject>, feed: &TicketFeed) -> bool {
        match event {
            Event::Init => self.listing.clear(),
            Event::InitApply(o) => {
                if let Some((key, t)) = decode(o, feed) {
                    self.listing.insert(key, t);
                }
            }
            Event::InitDone => {
                self.live = std::mem::take(&mut self.listing);
                feed.publish(self.live.values());
                tracing::info!(tickets = self.live.len(), "DeletionTickets listed");
                return true;
            }
            Event::Apply(o) => {
                let key = key_of(&o);
                match decode(o, feed) {
                    Some((key, t)) => drop(self.live.insert(key, t)),
                    None => drop(key.map(|k| self.live.remove(&k))),
                }
                feed.publish(self.live.values());
            }
            Event::Delete(o) => {
                if let Some(key) = key_of(&o) {
                    self.live.remove(&key);
                }
                feed.publish(self.live.values());
            }
        }
        false
    }
}

fn key_of(o: &DynamicObject) -> Option<String> {
    Some(format!(
        "{}/{}",
        o.metadata.namespace.as_deref()?,
        o.metadata.name.as_deref()?
    ))
}

/// One watched object as a ticket, or `None` (logged, counted in `feed`) when it does not
/// decode or names no targets (it would cover whatever its requester deletes).
fn decode(o: DynamicObject, feed: &TicketFeed) -> Option<(String, DeletionTicket)> {
    let Some(key) = key_of(&o) else {
        tracing::warn!("DeletionTicket skipped: it has no namespace or name");
        feed.skip();
        return None;
    };
    let decoded = serde_json::to_value(&o).and_then(serde_json::from_value::<DeletionTicket>);
    let why = match decoded {
        Ok(t) if !t.spec.targets.is_empty() => return Some((key, t)),
        Ok(_) => "it names no targets".to_owned(),
        Err(e) => e.to_string(),
    };
    tracing::warn!(ticket = %key, error = %why, "DeletionTicket skipped: warrant cannot read it");
    feed.skip();
    None
}

/// Why a ticket was not marked Used.
#[derive(Debug, thiserror::Error)]
pub enum MarkError {
    /// No client.
    #[error(transparent)]
    Client(#[from] AnnotateError),
    /// The ticket could not be read or written.
    #[error("ticket {ticket}: {source}")]
    Api {
        /// `<namespace>/<name>`.
        ticket: String,
        /// The API server's error.
        #[source]
        source: kube::Error,
    },
    /// The ticket is not one warrant can read, or names no namespace.
    #[error("ticket {0} cannot be read")]
    Unreadable(String),
    /// The ticket was used for another deletion meanwhile.
    #[error("ticket {0} was already used for another deletion")]
    UsedElsewhere(String),
}

impl Annotator {
    /// Marks the single-use ticket `id` (`<namespace>/<name>`) Used for the deletion of
    /// `object`, as warrant's own identity: the status is read and written back at its
    /// `resourceVersion` (a conflict is retried once). A ticket already Used for this object
    /// (the same deletion judged again) is left as it is.
    pub(crate) async fn mark_used(
        &self,
        id: &str,
        object: &ObjectAddress<'_>,
        now: DateTime<Utc>,
    ) -> Result<(), MarkError> {
        let (namespace, name) = id
            .split_once('/')
            .ok_or_else(|| MarkError::Unreadable(id.to_owned()))?;
        let api: Api<DynamicObject> =
            Api::namespaced_with(self.client().await?, namespace, &tickets::api_resource());
        let api_error = |source| MarkError::Api {
            ticket: id.to_owned(),
            source,
        };
        let mut attempts = 0;
        loop {
            attempts += 1;
            let stored = api.get(name).await.map_err(api_error)?;
            let mut ticket = serde_json::to_value(&stored)
                .and_then(serde_json::from_value::<DeletionTicket>)
                .map_err(|_| MarkError::Unreadable(id.to_owned()))?;
            let mut status: TicketStatus = tickets::status_of(&ticket);
            if status.phase() == Phase::Used {
                return match &status.used_for {
                    Some(u) if u.uid == object.uid => Ok(()),
                    _ => Err(MarkError::UsedElsewhere(id.to_owned())),
                };
            }
            status.phase = Some(Phase::Used);
            status.used_at = Some(now);
            status.used_for = Some(UsedFor {
                group: object.group.to_owned(),
                resource: object.resource.to_owned(),
                namespace: object.namespace.to_owned(),
                name: object.name.to_owned(),
                uid: object.uid.to_owned(),
            });
            ticket.status = Some(status);
            let body = serde_json::to_value(&ticket)
                .and_then(serde_json::from_value::<DynamicObject>)
                .map_err(|_| MarkError::Unreadable(id.to_owned()))?;
            let params = PostParams {
                field_manager: Some(FIELD_MANAGER.to_owned()),
                ..PostParams::default()
            };
            match api.replace_status(name, &params, &body).await {
                Ok(_) => return Ok(()),
                Err(kube::Error::Api(s)) if s.is_conflict() && attempts < 2 => continue,
                Err(e) => return Err(api_error(e)),
            }
        }
    }
}
