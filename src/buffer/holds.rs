//! [`Holds`]: the deletions this replica holds now, by object UID, for the gauges and so that
//! a hold is announced (snapshot, Event, notifications) once per replica. It is a cache of what
//! the objects say, never the source of a decision: a new leader starts empty, finds the
//! Terminating objects in its watch and announces them again (at least once).

use chrono::{DateTime, Utc};
use std::collections::HashMap;
use std::sync::Mutex;

/// Held deletions by object UID: when each began.
#[derive(Debug, Default)]
pub struct Holds(Mutex<HashMap<String, DateTime<Utc>>>);

impl Holds {
    /// Records a hold; `true` when it is new to this replica (announce it).
    pub fn hold(&self, uid: &str, since: DateTime<Utc>) -> bool {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        map.insert(uid.to_owned(), since).is_none()
    }

    /// Forgets a hold (released, or the object is gone).
    pub(crate) fn release(&self, uid: &str) {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        map.remove(uid);
    }

    /// Forgets every hold (this replica stopped leading).
    pub fn clear(&self) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }

    /// How many holds, and the age in seconds of the oldest at `now`.
    pub(crate) fn summary(&self, now: DateTime<Utc>) -> (usize, f64) {
        let map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let oldest = map.values().min().map_or(0.0, |since| {
            (now - *since).num_milliseconds().max(0) as f64 / 1000.0
        });
        (map.len(), oldest)
    }
}
