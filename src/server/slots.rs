//! Connection slots: the listener's cap on open connections, split by trust. A connection
//! starts unauthenticated (its TLS handshake included) and is promoted once it proves who it is:
//! a client certificate verified during the handshake, or a first request that passes caller
//! authentication. Unauthenticated connections share a small part of the cap; when that part is
//! full, or the whole cap is, a new connection takes the slot of the oldest unauthenticated one,
//! which is closed. The share gives way to young connections: while the oldest unauthenticated
//! connection is younger than [`YOUNG`], a new one is admitted past the share (within the cap)
//! rather than closing it, so a legitimate client's burst of new connections finishes its
//! handshakes instead of closing one another (kube-apiserver's webhook client dials one new
//! connection per call waiting on a full HTTP/2 connection; under load that is hundreds at
//! once). A flood ages past [`YOUNG`] and is displaced as before, and at the cap the oldest is
//! always displaced. A slot is taken once a connection has been accepted. So however many connections an unauthenticated client opens, it cannot keep
//! a new one from being served, and authenticated callers (kube-apiserver, by its client
//! certificate) keep the rest of the cap. Only when every slot is held by an authenticated
//! connection does a new one wait, in the kernel's backlog, until one closes.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::{Notify, oneshot};
use tokio::time::Instant;

/// How long a new unauthenticated connection is spared from displacement while only the
/// unauthenticated share, not the whole cap, is full: about what a burst of TLS handshakes takes
/// on a busy core.
pub(super) const YOUNG: std::time::Duration = std::time::Duration::from_secs(1);

/// The cap and its unauthenticated share, and who holds which slot.
#[derive(Debug)]
pub(super) struct Slots {
    cap: usize,
    unauthenticated_cap: usize,
    held: Mutex<Held>,
    freed: Notify,
}

/// The slots held: authenticated ones by count, unauthenticated ones oldest first, each with
/// when it was admitted and the sender whose drop tells its connection to close.
#[derive(Debug, Default)]
struct Held {
    next_id: u64,
    authenticated: usize,
    unauthenticated: BTreeMap<u64, (Instant, oneshot::Sender<()>)>,
}

impl Held {
    fn total(&self) -> usize {
        self.authenticated + self.unauthenticated.len()
    }
}

/// What [`Slots::admit`] reports besides the slot: whether an older connection was closed.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Admitted {
    /// A free slot was taken.
    Free,
    /// The oldest unauthenticated connection was closed to make room.
    Displaced,
}

impl Slots {
    /// A cap of `cap` connections (at least one), of which at most `unauthenticated_cap` (at
    /// least one, at most `cap`) may be unauthenticated at once.
    pub(super) fn new(cap: usize, unauthenticated_cap: usize) -> Arc<Self> {
        let cap = cap.max(1);
        Arc::new(Self {
            cap,
            unauthenticated_cap: unauthenticated_cap.clamp(1, cap),
            held: Mutex::new(Held::default()),
            freed: Notify::new(),
        })
    }

    fn held(&self) -> std::sync::MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A slot for a new (unauthenticated) connection, displacing the oldest unauthenticated
    /// connection when their share or the cap is full; waits only while every slot is held by
    /// an authenticated connection.
    pub(super) async fn admit(self: &Arc<Self>) -> (Slot, Admitted) {
        loop {
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            if let Some(admitted) = self.try_admit() {
                return admitted;
            }
            freed.await;
        }
    }

    /// Resolves once a new connection could have a slot: below the cap, or with an
    /// unauthenticated connection to displace.
    pub(super) async fn admissible(&self) {
        loop {
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            {
                let held = self.held();
                if held.total() < self.cap || !held.unauthenticated.is_empty() {
                    return;
                }
            }
            freed.await;
        }
    }

    fn try_admit(self: &Arc<Self>) -> Option<(Slot, Admitted)> {
        let mut held = self.held();
        let now = Instant::now();
        let oldest_is_young = held
            .unauthenticated
            .first_key_value()
            .is_some_and(|(_, (admitted, _))| now.duration_since(*admitted) < YOUNG);
        let share_full = held.unauthenticated.len() >= self.unauthenticated_cap;
        let full = held.total() >= self.cap || (share_full && !oldest_is_young);
        let admitted = if full {
            // Dropping the sender tells the displaced connection to close.
            held.unauthenticated.pop_first()?;
            Admitted::Displaced
        } else {
            Admitted::Free
        };
        let id = held.next_id;
        held.next_id += 1;
        let (tx, rx) = oneshot::channel();
        held.unauthenticated.insert(id, (now, tx));
        let slot = Slot {
            shared: Arc::new(SlotShared {
                id,
                slots: self.clone(),
                authenticated: AtomicBool::new(false),
                kept: Mutex::new(None),
            }),
            displaced: Some(rx),
            admitted: now,
        };
        Some((slot, admitted))
    }

    /// Moves slot `id` to the authenticated part; its sender is handed back to be kept (not
    /// dropped), or `None` when the slot was displaced meanwhile.
    fn promote(&self, id: u64) -> Option<oneshot::Sender<()>> {
        let mut held = self.held();
        let (_, sender) = held.unauthenticated.remove(&id)?;
        held.authenticated += 1;
        Some(sender)
    }

    fn release(&self, id: u64, authenticated: bool) {
        {
            let mut held = self.held();
            if authenticated {
                held.authenticated = held.authenticated.saturating_sub(1);
            } else {
                held.unauthenticated.remove(&id);
            }
        }
        self.freed.notify_one();
    }

    /// Open connections, authenticated and not.
    #[cfg(test)]
    pub(super) fn counts(&self) -> (usize, usize) {
        let held = self.held();
        (held.authenticated, held.unauthenticated.len())
    }
}

/// One connection's slot, from accept to close.
#[derive(Debug)]
pub(super) struct Slot {
    shared: Arc<SlotShared>,
    /// `None` once it has resolved (a receiver must not be polled again).
    displaced: Option<oneshot::Receiver<()>>,
    admitted: Instant,
}

impl Slot {
    /// When the connection was accepted.
    pub(super) fn admitted(&self) -> Instant {
        self.admitted
    }

    /// The handle requests use to promote the connection once a caller is authenticated.
    pub(super) fn trust(&self) -> Trust {
        Trust(self.shared.clone())
    }

    /// Whether the connection has authenticated.
    pub(super) fn is_authenticated(&self) -> bool {
        self.shared.authenticated.load(Ordering::Acquire)
    }

    /// Resolves when a newer connection took this (unauthenticated) slot: the connection must
    /// close. Never resolves once the connection has authenticated.
    pub(super) async fn displaced(&mut self) {
        if let Some(rx) = self.displaced.as_mut() {
            // The sender is dropped on displacement (an error here), kept on promotion.
            let _ = rx.await;
            self.displaced = None;
        }
        if self.is_authenticated() {
            std::future::pending::<()>().await;
        }
    }
}

/// A connection's promotion handle, carried in each request's extensions so that caller
/// authentication can mark the connection authenticated.
#[derive(Debug, Clone)]
pub struct Trust(Arc<SlotShared>);

impl Trust {
    /// Marks the connection authenticated: it leaves the unauthenticated share, is never
    /// displaced, and is no longer held to the unauthenticated time budget.
    pub fn authenticated(&self) {
        let shared = &self.0;
        if shared.authenticated.load(Ordering::Acquire) {
            return;
        }
        let mut kept = shared.kept.lock().unwrap_or_else(PoisonError::into_inner);
        if shared.authenticated.load(Ordering::Acquire) {
            return;
        }
        if let Some(sender) = shared.slots.promote(shared.id) {
            *kept = Some(sender);
            shared.authenticated.store(true, Ordering::Release);
        }
    }
}

#[derive(Debug)]
struct SlotShared {
    id: u64,
    slots: Arc<Slots>,
    authenticated: AtomicBool,
    /// The displacement sender of a promoted slot, kept so that it is not dropped.
    kept: Mutex<Option<oneshot::Sender<()>>>,
}

impl Drop for SlotShared {
    fn drop(&mut self) {
        self.slots
            .release(self.id, self.authenticated.load(Ordering::Acquire));
    }
}

#[cfg(test)]
mod tests;
