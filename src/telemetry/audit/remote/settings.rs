//! [`SinkSettings`]: how one remote sink queues, spools and retries, whatever it delivers to.

use std::path::PathBuf;
use std::time::Duration;

/// What a sink does with a record when its queue is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum WhenFull {
    /// Drop the record at once and count it (`warrant_audit_sink_dropped_records_total`,
    /// reason `queue-full`). The review never waits.
    #[value(name = "Drop")]
    Drop,
    /// Hold the review until there is room, at most the sink's block timeout; then drop the
    /// record and count it (reason `block-timeout`). The review is answered either way.
    #[value(name = "Block")]
    Block,
}

impl WhenFull {
    /// The flag's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            WhenFull::Drop => "Drop",
            WhenFull::Block => "Block",
        }
    }
}

/// The on-disk spool of a sink: every record is written there before it is sent, so that a
/// restart of warrant or a long outage of the receiver loses nothing within `max_bytes`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpoolSettings {
    /// The directory (one per sink; created when missing).
    pub dir: PathBuf,
    /// The most bytes the spool may hold on disk; past it the queue in memory fills, then
    /// [`WhenFull`] applies.
    pub max_bytes: u64,
}

/// How one remote sink queues, spools and retries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SinkSettings {
    /// The sink's name: its `sink` label in metrics, its line in `/readyz?verbose`.
    pub name: &'static str,
    /// The most records the queue in memory holds.
    pub queue_records: usize,
    /// What a full queue does with a new record.
    pub when_full: WhenFull,
    /// With [`WhenFull::Block`], the longest a review waits for room.
    pub block_timeout: Duration,
    /// The on-disk spool, if any.
    pub spool: Option<SpoolSettings>,
    /// The most records sent in one batch.
    pub batch_records: usize,
    /// The most record bytes sent in one batch.
    pub batch_bytes: usize,
    /// How long a batch smaller than `batch_records` waits in memory for more records before
    /// it is sent (Kafka's producer calls it `linger.ms`, 5 ms by default since Kafka 4.0), so
    /// that a low rate of reviews does not cost one request per record.
    pub linger: Duration,
    /// The longest wait between two attempts to deliver a batch that failed.
    pub max_backoff: Duration,
    /// The longest one delivery may take before it counts as failed.
    pub timeout: Duration,
}

/// The most bytes a queue in memory holds, whatever its record count.
pub const QUEUE_MAX_BYTES: usize = 64 << 20;

impl SinkSettings {
    /// Defaults for a sink called `name`: 65,536 records in memory, `Drop` when full, no
    /// spool, batches of 500 records or 1 MiB lingering 5 ms to fill, 10 s per delivery,
    /// retries backing off up to 30 s.
    pub fn new(name: &'static str) -> Self {
        Self {
            name,
            queue_records: 65_536,
            when_full: WhenFull::Drop,
            block_timeout: Duration::from_millis(100),
            spool: None,
            batch_records: 500,
            batch_bytes: 1 << 20,
            linger: Duration::from_millis(5),
            max_backoff: Duration::from_secs(30),
            timeout: Duration::from_secs(10),
        }
    }
}
