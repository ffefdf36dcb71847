//! The validated `unusualDeletions:` block of a `DeletionGuard`: how each principal's baseline
//! of destructive requests is learnt and what a burst far above it meets. The model itself
//! (decay, window, judgement) is `authorizer::deletion_guard::baseline`.

use super::kind::Kind;
use super::scope::RateLimitScope;
use serde::Serialize;
use std::time::Duration;

/// The window unless `window` says otherwise.
pub(crate) const DEFAULT_WINDOW: Duration = Duration::from_secs(600);
/// The half-life unless `halfLife` says otherwise.
pub(crate) const DEFAULT_HALF_LIFE: Duration = Duration::from_secs(24 * 3600);
/// The prior rate per hour unless `priorPerHour` says otherwise.
pub(crate) const DEFAULT_PRIOR_PER_HOUR: u32 = 6;
/// The floor per hour unless `floorPerHour` says otherwise.
pub(crate) const DEFAULT_FLOOR_PER_HOUR: u32 = 6;
/// The factor unless `factor` says otherwise.
pub(crate) const DEFAULT_FACTOR: u32 = 10;

/// What a burst meets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
pub enum UnusualAction {
    /// Recorded (metric, audit record, log), never refused: how the gate is rolled out.
    #[default]
    Observe,
    /// Refused (`UNUSUAL_DELETION_RATE`) unless a valid change ticket covers the request.
    RequireTicket,
    /// Refused (`UNUSUAL_DELETION_RATE`).
    Deny,
}

impl UnusualAction {
    /// Every action, in the order `Unsupported value` lists them.
    pub const ALL: [UnusualAction; 3] = [
        UnusualAction::Observe,
        UnusualAction::RequireTicket,
        UnusualAction::Deny,
    ];

    /// The spelling in files and metric labels.
    pub fn as_str(self) -> &'static str {
        match self {
            UnusualAction::Observe => "Observe",
            UnusualAction::RequireTicket => "RequireTicket",
            UnusualAction::Deny => "Deny",
        }
    }

    /// Parses the file spelling.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.as_str() == s)
    }
}

/// The unusual-deletion gate's settings.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UnusualDeletions {
    /// The kinds counted; empty means every kind the guard judges.
    pub resources: Vec<Kind>,
    /// The short window a burst is measured over.
    pub window: Duration,
    /// The half-life of the baseline's exponential decay.
    pub half_life: Duration,
    /// The rate per hour a principal never seen before starts from.
    pub prior_per_hour: u32,
    /// The lowest baseline per hour a burst is measured against.
    pub floor_per_hour: u32,
    /// A burst: the window's rate above `factor` times the baseline.
    pub factor: u32,
    /// What a burst meets.
    pub action: UnusualAction,
    /// Where the baselines live.
    pub scope: RateLimitScope,
}

impl UnusualDeletions {
    /// Settings with every default and `action`, counting every kind in this replica.
    pub fn with_action(action: UnusualAction) -> Self {
        Self {
            resources: Vec::new(),
            window: DEFAULT_WINDOW,
            half_life: DEFAULT_HALF_LIFE,
            prior_per_hour: DEFAULT_PRIOR_PER_HOUR,
            floor_per_hour: DEFAULT_FLOOR_PER_HOUR,
            factor: DEFAULT_FACTOR,
            action,
            scope: RateLimitScope::Replica,
        }
    }

    /// Whether `group`/`resource` is counted.
    pub(crate) fn covers(&self, group: &str, resource: &str) -> bool {
        self.resources.is_empty() || self.resources.iter().any(|k| k.covers(group, resource))
    }
}
