//! What the controller does with one object, as pure functions of what it observed, the time
//! and the settings: the whole policy of the buffer ring, with no I/O. Nothing is remembered
//! between two calls: the deletion's start is the object's `deletionTimestamp` and the
//! confirmation its annotation, so any replica (a new leader too) reaches the same answer.

use crate::authorizer::deletion_guard::RiskLevel;
use crate::config::model::buffer::BufferSettings;
use crate::config::model::guard::{Level, Mode};
use chrono::{DateTime, Utc};
use std::time::Duration;

/// What the controller saw of one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observed {
    /// Whether the object carries the finalizer.
    pub(crate) has_finalizer: bool,
    /// Whether it is protected at or above `finalizeAt` (its kind is in `resources`).
    pub protected: bool,
    /// `metadata.deletionTimestamp`, once it is Terminating.
    pub deletion: Option<DateTime<Utc>>,
    /// Whether the confirmation annotation is set (not empty).
    pub confirmed: bool,
}

/// What to do while the object is not being deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Live {
    /// Nothing.
    Nothing,
    /// Put the finalizer on (protected, lacks it).
    Attach,
    /// Take it off (no longer protected, carries it).
    Detach,
}

/// Why a held deletion may finish.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Release {
    /// The re-computed risk is below CRITICAL: no cool-down.
    BelowCritical,
    /// The cool-down has passed (and no confirmation is required).
    CooldownElapsed,
    /// The cool-down has passed and the deletion was confirmed.
    Confirmed,
    /// `maxHold` has passed: released whatever else (`COOLDOWN_EXPIRED`).
    Expired,
    /// The guard is in Observe mode, which records and never holds: a deletion held before
    /// the switch is let go (`OBSERVE_MODE`).
    Observing,
}

impl Release {
    /// The `outcome` label of `warrant_buffer_finalizer_removals_total` and the audit code.
    pub fn as_str(self) -> &'static str {
        match self {
            Release::BelowCritical => "BELOW_CRITICAL",
            Release::CooldownElapsed => "COOLDOWN_ELAPSED",
            Release::Confirmed => "CONFIRMED",
            Release::Expired => "COOLDOWN_EXPIRED",
            Release::Observing => "OBSERVE_MODE",
        }
    }
}

/// What a held deletion waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waiting {
    /// The cool-down, until the time given.
    Cooldown,
    /// The confirmation annotation (at the latest until `maxHold`).
    Confirmation,
}

/// What to do with a Terminating object that carries the finalizer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deleting {
    /// Remove the finalizer now.
    Release(Release),
    /// Keep it; look again at `next` (the cool-down's end or `maxHold`, whichever comes
    /// first); the deletion finishes at the latest at `deadline`.
    Hold {
        /// What it waits for.
        waiting: Waiting,
        /// When to look again.
        next: DateTime<Utc>,
        /// When the cool-down ends (the earliest the object can go).
        cooldown_ends: DateTime<Utc>,
        /// `deletionTimestamp + maxHold`: the latest it goes.
        deadline: DateTime<Utc>,
    },
}

/// Whether an object protected at `level` is the buffer ring's to hold: at or above
/// `finalizeAt`, and only while the guard enforces. Observe mode records what it would have
/// done and never holds a deletion, so it puts no finalizer on (and takes its own off).
pub fn protects(level: Option<Level>, s: &BufferSettings, mode: Mode) -> bool {
    holds(mode) && level.is_some_and(|l| l >= s.finalize_at)
}

/// Whether the buffer ring holds deletions under a guard in `mode` (only while it enforces).
pub fn holds(mode: Mode) -> bool {
    mode == Mode::Enforce
}

/// The object is not Terminating: whether the finalizer goes on or comes off.
pub fn live(seen: &Observed) -> Live {
    match (seen.protected, seen.has_finalizer) {
        (true, false) => Live::Attach,
        (false, true) => Live::Detach,
        _ => Live::Nothing,
    }
}

/// Whether a Terminating object needs the risk re-computed: only while our finalizer holds
/// it and `maxHold` has not passed (past it the risk does not matter).
pub(crate) fn needs_risk(seen: &Observed, now: DateTime<Utc>, s: &BufferSettings) -> bool {
    match seen.deletion {
        Some(at) => seen.has_finalizer && now < after(at, s.max_hold),
        None => false,
    }
}

/// The object is Terminating since `at` with our finalizer, and its deletion scores `risk`.
pub fn deleting(
    at: DateTime<Utc>,
    confirmed: bool,
    risk: Option<RiskLevel>,
    now: DateTime<Utc>,
    s: &BufferSettings,
) -> Deleting {
    let deadline = after(at, s.max_hold);
    if now >= deadline {
        return Deleting::Release(Release::Expired);
    }
    if risk.is_some_and(|r| r < RiskLevel::Critical) {
        return Deleting::Release(Release::BelowCritical);
    }
    let cooldown_ends = after(at, s.cooldown).min(deadline);
    let hold = |waiting, next| Deleting::Hold {
        waiting,
        next,
        cooldown_ends,
        deadline,
    };
    if now < cooldown_ends {
        return hold(Waiting::Cooldown, cooldown_ends);
    }
    match (s.require_confirmation, confirmed) {
        (false, _) => Deleting::Release(Release::CooldownElapsed),
        (true, true) => Deleting::Release(Release::Confirmed),
        (true, false) => hold(Waiting::Confirmation, deadline),
    }
}

/// `at + d`, saturating at the end of time.
pub fn after(at: DateTime<Utc>, d: Duration) -> DateTime<Utc> {
    chrono::Duration::from_std(d)
        .ok()
        .and_then(|d| at.checked_add_signed(d))
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}
