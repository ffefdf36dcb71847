//! [`Elector`]: the acquire/renew/release loop, after client-go's `LeaderElector`
//! (`tools/leaderelection/leaderelection.go`). In that file a candidate retries every retry
//! period (stretched by up to [`JITTER_FACTOR`]) until the Lease is absent, released (no holder)
//! or expired, where "expired" is measured on the candidate's own clock: `leaseDurationSeconds`
//! after it last saw the record change, never from the `renewTime` another host wrote. The
//! leader renews every retry period and, when no renewal succeeds within the renew deadline,
//! stops leading; on cancel it writes an empty holder with a one-second duration
//! (`ReleaseOnCancel`) so a candidate takes over at its next attempt. Unlike
//! kube-controller-manager, which exits when it loses the Lease, a replica here goes back to
//! being a candidate: it keeps serving reviews either way.

use super::lock::LeaseLock;
use super::metrics::LeaderMetrics;
use super::record::ElectionRecord;
use super::settings::{ElectionSettings, JITTER_FACTOR};
use k8s_openapi::jiff::Timestamp;
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// A receiver that is always true, for a replica without leader election (flag off, or no
/// cluster), with its sender: keep the sender alive as long as the receiver is used, so that
/// `changed()` waits instead of reporting a closed channel.
pub(crate) fn always_leading() -> (watch::Sender<bool>, watch::Receiver<bool>) {
    watch::channel(true)
}

/// What this replica last saw of the Lease, and when (on its own clock).
#[derive(Debug, Clone)]
struct Observed {
    record: ElectionRecord,
    version: String,
    at: Instant,
}

/// One replica's side of the election.
#[derive(Debug)]
pub(crate) struct Elector {
    lock: LeaseLock,
    settings: ElectionSettings,
    metrics: LeaderMetrics,
    observed: Option<Observed>,
    leading: watch::Sender<bool>,
}

impl Elector {
    /// A candidate on `lock`; the receiver is true while it leads.
    pub fn new(
        lock: LeaseLock,
        settings: ElectionSettings,
        metrics: LeaderMetrics,
    ) -> (Self, watch::Receiver<bool>) {
        let (leading, rx) = watch::channel(false);
        let elector = Self {
            lock,
            settings,
            metrics,
            observed: None,
            leading,
        };
        (elector, rx)
    }

    /// Runs the election until `stop` turns true; then, if leading, stops leading and
    /// releases the Lease (within the renew deadline).
    pub async fn run(mut self, mut stop: watch::Receiver<bool>) {
        tracing::info!(lease = %self.lock.describe(), identity = %self.settings.identity, "leader election: candidate");
        loop {
            if !self.acquire(&mut stop).await {
                return;
            }
            self.set_leading(true);
            let stopped = self.renew(&mut stop).await;
            self.set_leading(false);
            if stopped {
                let budget = self.settings.renew_deadline;
                if tokio::time::timeout(budget, self.release()).await.is_err() {
                    tracing::warn!(lease = %self.lock.describe(), "leader election: release timed out");
                }
                return;
            }
        }
    }

    /// Tries every (jittered) retry period until this replica holds the Lease (`true`) or
    /// `stop` turns true (`false`).
    async fn acquire(&mut self, stop: &mut watch::Receiver<bool>) -> bool {
        loop {
            if *stop.borrow() {
                return false;
            }
            let budget = self.settings.renew_deadline;
            if let Ok(true) = tokio::time::timeout(budget, self.try_acquire_or_renew()).await {
                return true;
            }
            let wait = jittered(self.settings.retry_period);
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = stop.wait_for(|s| *s) => return false,
            }
        }
    }

    /// Renews every retry period; returns `false` when no renewal succeeded within the renew
    /// deadline (leadership lost), `true` when `stop` turned true.
    async fn renew(&mut self, stop: &mut watch::Receiver<bool>) -> bool {
        let mut renewed = Instant::now();
        loop {
            tokio::select! {
                _ = tokio::time::sleep(self.settings.retry_period) => {}
                _ = stop.wait_for(|s| *s) => return true,
            }
            let deadline = renewed + self.settings.renew_deadline;
            let attempt = tokio::time::timeout_at(deadline, self.try_acquire_or_renew()).await;
            if let Ok(true) = attempt {
                renewed = Instant::now();
            } else if Instant::now() >= deadline {
                tracing::warn!(lease = %self.lock.describe(), deadline = ?self.settings.renew_deadline, "leader election: failed to renew the lease within the renew deadline");
                return false;
            }
        }
    }

    /// One attempt, as client-go's `tryAcquireOrRenew`: the leader's optimistic update first,
    /// else read (or create) the Lease, respect a valid foreign holder, and write this replica
    /// as the holder at the `resourceVersion` read.
    async fn try_acquire_or_renew(&mut self) -> bool {
        let now = Timestamp::now();
        let mut record = ElectionRecord {
            holder_identity: self.settings.identity.clone(),
            lease_duration_seconds: self.settings.lease_seconds(),
            acquire_time: Some(now),
            renew_time: Some(now),
            leader_transitions: 0,
        };
        if let Some(old) = self.observed.as_ref().filter(|_| self.holds_valid_lease()) {
            record.acquire_time = old.record.acquire_time;
            record.leader_transitions = old.record.leader_transitions;
            match self.lock.update(&record).await {
                Ok(()) => return self.wrote(record),
                Err(e) => {
                    tracing::info!(error = %e, "leader election: optimistic renew failed, reading the lease")
                }
            }
        }
        let (old, version) = match self.lock.get().await {
            Ok(Some(found)) => found,
            Ok(None) => return self.create(record).await,
            Err(e) => {
                tracing::warn!(error = %e, "leader election: cannot read the lease");
                return false;
            }
        };
        self.observe(&old, version);
        if !old.holder_identity.is_empty() && self.lease_valid() && !self.is_leader() {
            return false;
        }
        if self.is_leader() {
            record.acquire_time = old.acquire_time;
            record.leader_transitions = old.leader_transitions;
        } else {
            record.leader_transitions = old.leader_transitions.saturating_add(1);
        }
        match self.lock.update(&record).await {
            Ok(()) => self.wrote(record),
            Err(e) => {
                tracing::info!(error = %e, "leader election: cannot write the lease");
                false
            }
        }
    }

    async fn create(&mut self, record: ElectionRecord) -> bool {
        match self.lock.create(&record).await {
            Ok(()) => self.wrote(record),
            Err(e) => {
                tracing::info!(error = %e, "leader election: cannot create the lease");
                false
            }
        }
    }

    /// Remembers a record this replica wrote.
    fn wrote(&mut self, record: ElectionRecord) -> bool {
        self.observed = Some(Observed {
            record,
            version: self.lock.version(),
            at: Instant::now(),
        });
        true
    }

    /// Remembers a record read, restarting the expiry clock only when it changed.
    fn observe(&mut self, record: &ElectionRecord, version: String) {
        if self.observed.as_ref().is_some_and(|o| o.version == version) {
            return;
        }
        let before = self
            .observed
            .as_ref()
            .map(|o| o.record.holder_identity.as_str());
        if before != Some(record.holder_identity.as_str()) {
            tracing::info!(lease = %self.lock.describe(), holder = %record.holder_identity, "leader election: new holder observed");
        }
        self.observed = Some(Observed {
            record: record.clone(),
            version,
            at: Instant::now(),
        });
    }

    /// Whether the last record seen names this replica.
    fn is_leader(&self) -> bool {
        self.observed
            .as_ref()
            .is_some_and(|o| o.record.holder_identity == self.settings.identity)
    }

    /// Whether the last record seen is within its duration of when it was seen.
    fn lease_valid(&self) -> bool {
        self.observed.as_ref().is_some_and(|o| {
            let secs = u64::try_from(o.record.lease_duration_seconds).unwrap_or(0);
            o.at + Duration::from_secs(secs) > Instant::now()
        })
    }

    fn holds_valid_lease(&self) -> bool {
        self.is_leader() && self.lease_valid()
    }

    /// Gives the Lease up if this replica still holds it: no holder, a one-second duration.
    async fn release(&mut self) {
        let old = match self.lock.get().await {
            Ok(Some((old, _))) => old,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(error = %e, "leader election: cannot read the lease to release it");
                return;
            }
        };
        if old.holder_identity != self.settings.identity {
            return;
        }
        let now = Timestamp::now();
        let record = ElectionRecord {
            holder_identity: String::new(),
            lease_duration_seconds: 1,
            acquire_time: Some(now),
            renew_time: Some(now),
            leader_transitions: old.leader_transitions,
        };
        match self.lock.update(&record).await {
            Ok(()) => {
                tracing::info!(lease = %self.lock.describe(), "leader election: lease released")
            }
            Err(e) => tracing::warn!(error = %e, "leader election: cannot release the lease"),
        }
    }

    /// Publishes a change of leadership: the receiver, the metrics and a log line.
    fn set_leading(&self, leading: bool) {
        if self.leading.send_replace(leading) == leading {
            return;
        }
        self.metrics.changed(leading);
        if leading {
            tracing::info!(lease = %self.lock.describe(), identity = %self.settings.identity, "leader election: became leader");
        } else {
            tracing::warn!(lease = %self.lock.describe(), identity = %self.settings.identity, "leader election: stopped leading");
        }
    }
}

/// `period` stretched by a random factor in [1, 1 + [`JITTER_FACTOR`]), as client-go's
/// `wait.JitterUntil` waits between acquire attempts.
fn jittered(period: Duration) -> Duration {
    period.mul_f64(1.0 + JITTER_FACTOR * fastrand::f64())
}
