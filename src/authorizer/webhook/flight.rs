//! Single-flight (a warrant addition; upstream has no coalescing): identical concurrent misses
//! share one downstream call. The first caller for a key leads; the others wait on the same cell
//! and get its outcome. If the leader is dropped (its review was cancelled), a waiter takes over,
//! as `tokio::sync::OnceCell` hands initialisation to the next waiter.

use super::cache::VerdictKey;
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use tokio::sync::OnceCell;

/// Whether a caller made the call or waited for another's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// It made the call.
    Leader,
    /// It shared another caller's call.
    Follower,
}

/// The calls in flight, by key.
#[derive(Debug)]
pub(crate) struct Flights<T> {
    in_flight: Mutex<HashMap<VerdictKey, Arc<OnceCell<T>>>>,
}

impl<T> Default for Flights<T> {
    fn default() -> Self {
        Self {
            in_flight: Mutex::new(HashMap::new()),
        }
    }
}

/// Removes a finished (or abandoned) flight from the map, if it is still the current one.
struct Landing<'a, T> {
    flights: &'a Flights<T>,
    key: &'a VerdictKey,
    cell: &'a Arc<OnceCell<T>>,
}

impl<T> Drop for Landing<'_, T> {
    fn drop(&mut self) {
        let mut map = self
            .flights
            .in_flight
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if map.get(self.key).is_some_and(|c| Arc::ptr_eq(c, self.cell)) {
            map.remove(self.key);
        }
    }
}

impl<T: Clone> Flights<T> {
    /// Runs `call` for `key` unless an identical call is in flight, in which case its outcome is
    /// shared.
    pub async fn run<F>(&self, key: VerdictKey, call: F) -> (T, Role)
    where
        F: Future<Output = T>,
    {
        let cell = {
            let mut map = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
            map.entry(key)
                .or_insert_with(|| Arc::new(OnceCell::new()))
                .clone()
        };
        let mut role = Role::Follower;
        let value = cell
            .get_or_init(|| async {
                role = Role::Leader;
                let _landing = Landing {
                    flights: self,
                    key: &key,
                    cell: &cell,
                };
                call.await
            })
            .await
            .clone();
        (value, role)
    }

    /// How many calls are in flight.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.in_flight
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .len()
    }

    /// Whether nothing is in flight.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_identical_calls_share_one() {
        let flights = Arc::new(Flights::<u32>::default());
        let calls = Arc::new(AtomicUsize::new(0));
        let mut tasks = Vec::new();
        for _ in 0..100 {
            let (f, c) = (flights.clone(), calls.clone());
            tasks.push(tokio::spawn(async move {
                f.run(VerdictKey([7; 32]), async {
                    c.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    7
                })
                .await
            }));
        }
        let mut leaders = 0;
        for t in tasks {
            let (v, role) = t.await.unwrap();
            assert_eq!(v, 7);
            leaders += usize::from(role == Role::Leader);
        }
        assert_eq!((calls.load(Ordering::SeqCst), leaders), (1, 1));
        assert!(flights.is_empty());
    }

    #[tokio::test]
    async fn a_dropped_leader_hands_over() {
        let flights = Arc::new(Flights::<u32>::default());
        let f = flights.clone();
        let leader = tokio::spawn(async move {
            f.run(VerdictKey([7; 32]), std::future::pending::<u32>())
                .await
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        leader.abort();
        let _ = leader.await;
        let (v, role) = flights.run(VerdictKey([7; 32]), async { 3 }).await;
        assert_eq!((v, role), (3, Role::Leader));
        assert!(flights.is_empty());
    }
}
