//! Tickets read from the cluster: the `DeletionTicket`s a watch keeps (started by `cluster`,
//! which calls [`TicketFeed::publish`] after every change and [`TicketFeed::fail`] when the
//! watch breaks), converted into [`Ticket`]s and published as one [`Snapshot`]. Until the first
//! list, and from a watch error until the next list, the snapshot is unreadable: the guard
//! then applies its failure policy (`TICKET_SOURCE_UNAVAILABLE` in Observe mode), never an old
//! or empty list by accident.
//!
//! An object the watch cannot read as a ticket (it does not decode, or names no targets) is
//! skipped, logged and counted (`warrant_ticket_objects_skipped_total`, [`TicketFeed::skip`]);
//! the others are published as usual.
//!
//! How a `DeletionTicket` reads as a ticket ([`ticket_of`]): its id is `<namespace>/<name>`; it
//! pre-authorises its requester (`spec.requestedBy`) for its targets (no id need be presented);
//! its approvers are the distinct users of `status.approvals`, less the requester (warrant's
//! admission refuses such approvals; a ticket written while the webhook was not called still
//! cannot approve itself); a Pending ticket with approvals is judged by their number (the guard's
//! `approvals` per level decides, not the phase a client wrote); Rejected, Expired and Used are
//! final.

use super::snapshot::Snapshot;
use super::ticket::{Scope, Status, Ticket, UsedFor};
use crate::authorizer::deletion_guard::error::GuardError;
use crate::tickets::{DeletionTicket, Phase, status_of};
use arc_swap::ArcSwap;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::registry::Registry;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The cluster's tickets as last listed and watched, shared by every guard whose tickets come
/// from the cluster and filled by one watch.
#[derive(Debug)]
pub struct TicketFeed {
    current: ArcSwap<Snapshot>,
    wanted: AtomicBool,
    skipped: Counter,
}

impl Default for TicketFeed {
    fn default() -> Self {
        Self::new()
    }
}

impl TicketFeed {
    /// A feed that has not listed yet (unreadable: `the ticket watch has not listed yet`).
    pub fn new() -> Self {
        Self {
            current: ArcSwap::from_pointee(Snapshot::Unreadable(GuardError::TicketWatch {
                reason: Arc::from("the watch of DeletionTickets has not listed them yet"),
            })),
            wanted: AtomicBool::new(false),
            skipped: Counter::default(),
        }
    }

    /// Registers `warrant_ticket_objects_skipped` (the watched objects warrant could not read
    /// as tickets) in `registry`.
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "warrant_ticket_objects_skipped",
            "DeletionTicket objects the watch skipped because warrant cannot read them as tickets (each logged); the other tickets still count",
            self.skipped.clone(),
        );
    }

    /// Counts one watched object skipped (the watch logs why).
    pub fn skip(&self) {
        self.skipped.inc();
    }

    /// How many watched objects were skipped so far.
    pub fn skipped(&self) -> u64 {
        self.skipped.get()
    }

    /// A feed that will never list: no cluster connection is configured.
    pub fn unconnected() -> Self {
        let feed = Self::new();
        feed.fail("no cluster connection is configured (--kubeconfig, or in a cluster)");
        feed
    }

    /// The current snapshot.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.current.load_full()
    }

    /// Replaces the snapshot with these tickets (a ticket warrant cannot read is skipped by the
    /// caller, which decodes them).
    pub fn publish<'a>(&self, tickets: impl IntoIterator<Item = &'a DeletionTicket>) {
        let tickets: HashMap<String, Ticket> = tickets.into_iter().filter_map(ticket_of).collect();
        self.current.store(Arc::new(Snapshot::Loaded(tickets)));
    }

    /// Marks the snapshot unreadable: the watch broke (`reason`) and has not listed again.
    pub fn fail(&self, reason: &str) {
        self.current
            .store(Arc::new(Snapshot::Unreadable(GuardError::TicketWatch {
                reason: Arc::from(reason),
            })));
    }

    /// Asks for the watch (a guard reading tickets from the cluster was built).
    pub fn want(&self) {
        self.wanted.store(true, Ordering::Relaxed);
    }

    /// Whether a guard has asked for the watch.
    pub fn wanted(&self) -> bool {
        self.wanted.load(Ordering::Relaxed)
    }
}

/// A `DeletionTicket` as the guard's ticket, by id `<namespace>/<name>` (see the module
/// documentation); `None` for a ticket without a namespace or name.
pub fn ticket_of(t: &DeletionTicket) -> Option<(String, Ticket)> {
    let namespace = t.metadata.namespace.as_deref()?;
    let name = t.metadata.name.as_deref()?;
    let id = format!("{namespace}/{name}");
    let status = status_of(t);
    let requester = &t.spec.requested_by;
    let mut approvers: Vec<String> = Vec::new();
    for a in &status.approvals {
        if a.user != *requester && !approvers.contains(&a.user) {
            approvers.push(a.user.clone());
        }
    }
    let state = match status.phase() {
        Phase::Pending if approvers.is_empty() => Status::Pending,
        Phase::Pending | Phase::Approved => Status::Approved,
        Phase::Rejected => Status::Rejected,
        Phase::Expired => Status::Expired,
        Phase::Used => Status::Used,
    };
    let ticket = Ticket {
        id: id.clone(),
        status: state,
        approvers,
        expires: t.spec.expires_at,
        scope: Scope {
            requesters: vec![requester.clone()],
            ..Scope::default()
        },
        targets: t.spec.targets.clone(),
        single_use: t.spec.single_use,
        used_for: status.used_for.clone().map(UsedFor),
    };
    Some((id, ticket))
}
