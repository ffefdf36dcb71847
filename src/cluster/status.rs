//! [`WatchHealth`]: one watch's readiness and age. A watch is ready once it has listed; it
//! stays ready through a re-list (the store is kept) and through a passing error, but not
//! through errors that keep coming for longer than [`Limits::stale_after`]: a watch that
//! cannot reach or may not read the API server must not leave the cache silently stale.

use std::time::{Duration, Instant};

/// When a failing watch makes the cache not ready.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Errors that keep coming for this long make the watch not ready.
    pub(crate) stale_after: Duration,
    /// A watch with no error for this long has recovered (a resumed watch reports nothing
    /// until an object changes). Longer than the watcher's longest backoff (30 s) plus a
    /// connect timeout (30 s).
    pub quiet: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            stale_after: Duration::from_secs(180),
            quiet: Duration::from_secs(120),
        }
    }
}

/// One watch's state.
#[derive(Debug, Clone, Default)]
pub struct WatchHealth {
    listed: bool,
    last_ok: Option<Instant>,
    failing_since: Option<Instant>,
    last_error_at: Option<Instant>,
    last_error: Option<String>,
}

impl WatchHealth {
    /// A successful event (a list began, an object arrived).
    pub fn ok(&mut self, now: Instant) {
        self.last_ok = Some(now);
        self.failing_since = None;
    }

    /// A list finished: the watch is ready.
    pub fn listed(&mut self, now: Instant) {
        self.listed = true;
        self.ok(now);
    }

    /// An error; starts a failing streak unless one is running.
    pub fn error(&mut self, now: Instant, message: String, limits: &Limits) {
        let recent = self
            .last_error_at
            .is_some_and(|at| now.saturating_duration_since(at) < limits.quiet);
        if self.failing_since.is_none() || !recent {
            self.failing_since = Some(now);
        }
        self.last_error_at = Some(now);
        self.last_error = Some(message);
    }

    /// Listed, with no failing streak: [`WatchHealth::check`] answers `Ok` at any time until
    /// the state changes.
    pub(crate) fn is_steady(&self) -> bool {
        self.listed && self.failing_since.is_none()
    }

    /// Whether the watch has listed at least once.
    pub fn has_listed(&self) -> bool {
        self.listed
    }

    /// Time since the last list or event.
    pub(crate) fn age(&self, now: Instant) -> Option<Duration> {
        self.last_ok.map(|t| now.saturating_duration_since(t))
    }

    /// `Ok` when the watch can be trusted; else why not.
    pub fn check(&self, now: Instant, limits: &Limits) -> Result<(), String> {
        let last = self.last_error.as_deref().unwrap_or("");
        if !self.listed {
            return Err(match self.last_error {
                Some(_) => format!("has not listed yet (last error: {last})"),
                None => "has not listed yet".to_owned(),
            });
        }
        if let (Some(since), Some(at)) = (self.failing_since, self.last_error_at) {
            let streak = now.saturating_duration_since(since);
            if now.saturating_duration_since(at) < limits.quiet && streak >= limits.stale_after {
                return Err(format!(
                    "watch failing for {}s (last error: {last})",
                    streak.as_secs()
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{Limits, WatchHealth};
    use std::time::{Duration, Instant};

    const LIMITS: Limits = Limits {
        stale_after: Duration::from_secs(180),
        quiet: Duration::from_secs(120),
    };

    fn at(t0: Instant, s: u64) -> Instant {
        t0 + Duration::from_secs(s)
    }

    #[test]
    fn not_ready_until_listed() {
        let t0 = Instant::now();
        let mut h = WatchHealth::default();
        assert_eq!(h.check(t0, &LIMITS).unwrap_err(), "has not listed yet");
        h.error(t0, "403 forbidden".into(), &LIMITS);
        assert!(h.check(t0, &LIMITS).unwrap_err().contains("403 forbidden"));
        h.listed(at(t0, 1));
        assert!(h.check(at(t0, 1), &LIMITS).is_ok());
        assert_eq!(h.age(at(t0, 11)), Some(Duration::from_secs(10)));
    }

    #[test]
    fn a_passing_error_keeps_it_ready_a_lasting_one_does_not() {
        let t0 = Instant::now();
        let mut h = WatchHealth::default();
        h.listed(t0);
        // One error, then a silent resumed watch: ready all along.
        h.error(at(t0, 10), "reset".into(), &LIMITS);
        for s in [10, 100, 189, 400] {
            assert!(h.check(at(t0, s), &LIMITS).is_ok(), "at {s}s");
        }
        // A later single error starts a new streak, not an old one.
        h.error(at(t0, 500), "reset".into(), &LIMITS);
        assert!(h.check(at(t0, 501), &LIMITS).is_ok());
        // Errors every 60 s for more than 180 s: not ready, until an event arrives.
        for s in [560, 620, 680] {
            h.error(at(t0, s), "connection refused".into(), &LIMITS);
        }
        let why = h.check(at(t0, 681), &LIMITS).unwrap_err();
        assert!(
            why.contains("failing for 181s") && why.contains("refused"),
            "{why}"
        );
        h.ok(at(t0, 690));
        assert!(h.check(at(t0, 690), &LIMITS).is_ok());
    }
}
