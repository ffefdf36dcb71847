//! [`SinkRecord`]: one audit record as the remote sinks carry it: its JSON, the key that keeps
//! one decision's records together (the decision id) and when it was queued.

use std::time::{SystemTime, UNIX_EPOCH};

/// One encoded audit record on its way to a remote sink.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SinkRecord {
    /// When it was queued, in milliseconds since the Unix epoch (the oldest unsent age).
    pub queued_ms: i64,
    /// The decision id, the Kafka message key (none for records of no decision).
    pub key: Option<String>,
    /// The record's JSON, one line without its newline.
    pub json: Vec<u8>,
}

impl SinkRecord {
    /// A record queued now.
    pub fn now(key: Option<String>, json: Vec<u8>) -> Self {
        Self {
            queued_ms: now_ms(),
            key,
            json,
        }
    }

    /// The bytes it holds (what the queue and spool bounds count).
    pub fn size(&self) -> usize {
        self.json.len() + self.key.as_ref().map_or(0, String::len) + 32
    }
}

/// Now, in milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}
