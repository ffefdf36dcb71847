//! The unusual-deletion model, pure (no clock, no lock, no I/O): one principal's [`Baseline`]
//! of destructive requests on one kind, and the [`Judgement`] of one more request.
//!
//! Two counts make a baseline:
//! - the **long** count, every admitted request decaying exponentially with the configured
//!   half-life: in steady state it holds `rate × τ` requests (`τ = halfLife / ln 2`), so
//!   `long / τ` is the usual rate per hour. A principal never seen starts at `priorPerHour × τ`,
//!   so its baseline starts at the prior and moves towards what it really does;
//! - the **window** count, the requests of the last `window`, estimated from the count of the
//!   current fixed window and the previous one weighted by how much of it the sliding window
//!   still covers (two counters instead of a timestamp per request).
//!
//! A request is a **burst** when the window's count, this request included, exceeds `factor`
//! times the baseline (never below `floorPerHour`) scaled to the window. Every request counts
//! in the window (a refused loop stays a burst while it runs); only requests that are no burst
//! feed the long count, so a leaked token cannot teach the baseline its own rate.

use crate::config::model::unusual::UnusualDeletions;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// One principal's counts on one kind, as of `at`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Baseline {
    /// The long count: admitted requests, decayed with the half-life, as of `at`.
    pub long: f64,
    /// When `long` was last decayed.
    pub at: DateTime<Utc>,
    /// When the current fixed window began.
    pub window_start: DateTime<Utc>,
    /// Requests counted in the current fixed window.
    pub current: u32,
    /// Requests counted in the fixed window before it.
    pub previous: u32,
}

/// What the model makes of one more request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judgement {
    /// The requests of the last window, this one included (an estimate).
    pub in_window: f64,
    /// The usual rate per hour (before the floor).
    pub baseline_per_hour: f64,
    /// The window's count above which a request is a burst.
    pub threshold: f64,
    /// Whether this request is a burst.
    pub burst: bool,
}

/// The settings in the units the model computes with.
#[derive(Debug, Clone, Copy)]
struct Units {
    /// The decay's time constant, in hours.
    tau_hours: f64,
    /// The window, in hours.
    window_hours: f64,
    /// The window, in milliseconds (at least one).
    window_ms: i64,
}

impl Units {
    fn of(s: &UnusualDeletions) -> Self {
        let tau_hours = s.half_life.as_secs_f64() / std::f64::consts::LN_2 / 3600.0;
        let window_ms = i64::try_from(s.window.as_millis())
            .unwrap_or(i64::MAX)
            .max(1);
        Self {
            tau_hours: tau_hours.max(1e-9),
            window_hours: s.window.as_secs_f64() / 3600.0,
            window_ms,
        }
    }
}

/// Milliseconds from `from` to `to`, never negative (a clock behind the state moves nothing).
fn elapsed_ms(from: DateTime<Utc>, to: DateTime<Utc>) -> i64 {
    (to - from).num_milliseconds().max(0)
}

impl Baseline {
    /// A principal never seen before, at `now`: the long count of the prior rate, empty windows.
    pub fn new(s: &UnusualDeletions, now: DateTime<Utc>) -> Self {
        Self {
            long: f64::from(s.prior_per_hour) * Units::of(s).tau_hours,
            at: now,
            window_start: now,
            current: 0,
            previous: 0,
        }
    }

    /// The usual rate per hour at `now` (before the floor).
    pub fn rate_per_hour(&self, s: &UnusualDeletions, now: DateTime<Utc>) -> f64 {
        self.advanced(s, now).long / Units::of(s).tau_hours
    }

    /// The same counts as of `now`: the long count decayed, the fixed windows rolled on.
    fn advanced(self, s: &UnusualDeletions, now: DateTime<Utc>) -> Self {
        let u = Units::of(s);
        let mut b = self;
        let hours = elapsed_ms(b.at, now) as f64 / 3_600_000.0;
        if hours > 0.0 {
            b.long *= (-hours / u.tau_hours).exp();
            b.at = now;
        }
        let windows = elapsed_ms(b.window_start, now) / u.window_ms;
        if windows >= 1 {
            b.previous = if windows == 1 { b.current } else { 0 };
            b.current = 0;
            // Whole windows only: the current one began at most a window ago.
            b.window_start += chrono::Duration::milliseconds(windows.saturating_mul(u.window_ms));
        }
        b
    }

    /// The judgement of one more request at `now`, without counting it.
    pub fn judge(&self, s: &UnusualDeletions, now: DateTime<Utc>) -> Judgement {
        let u = Units::of(s);
        let b = self.advanced(s, now);
        let into = elapsed_ms(b.window_start, now) as f64 / u.window_ms as f64;
        let in_window = f64::from(b.previous) * (1.0 - into).max(0.0) + f64::from(b.current) + 1.0;
        let baseline_per_hour = b.long / u.tau_hours;
        let threshold = f64::from(s.factor)
            * baseline_per_hour.max(f64::from(s.floor_per_hour))
            * u.window_hours;
        Judgement {
            in_window,
            baseline_per_hour,
            threshold,
            burst: in_window > threshold,
        }
    }

    /// Judges one more request at `now` and counts it: in the window always, in the long count
    /// unless it is a burst.
    pub fn record(self, s: &UnusualDeletions, now: DateTime<Utc>) -> (Self, Judgement) {
        let judgement = self.judge(s, now);
        let mut b = self.advanced(s, now);
        b.current = b.current.saturating_add(1);
        if !judgement.burst {
            b.long += 1.0;
        }
        (b, judgement)
    }

    /// Whether the counts are numbers a baseline can hold (a stored one may be damaged).
    pub fn is_sane(&self) -> bool {
        self.long.is_finite() && self.long >= 0.0
    }
}

#[cfg(test)]
mod tests;
