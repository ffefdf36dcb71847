//! The `unusualDeletions:` block of a `DeletionGuard` as written. Validation into
//! [`crate::config::model::unusual::UnusualDeletions`] is `config::validate::guard::unusual`.

use super::kind::KindFile;
use serde::Deserialize;
use serde_saphyr::Spanned;

/// The `unusualDeletions:` block: each principal's usual rate of destructive requests per kind,
/// and what a burst far above it meets.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct UnusualDeletionsFile {
    /// The kinds counted (default every kind the guard judges).
    #[serde(default)]
    pub resources: Vec<Spanned<KindFile>>,
    /// The short window a burst is measured over, a Go duration (default `10m`).
    #[serde(default)]
    pub window: Option<Spanned<String>>,
    /// The half-life of the baseline, a Go duration (default `24h`).
    #[serde(default)]
    pub(crate) half_life: Option<Spanned<String>>,
    /// The rate per hour a principal never seen before starts from (default 6).
    #[serde(default)]
    pub(crate) prior_per_hour: Option<u32>,
    /// The lowest baseline per hour a burst is measured against (default 6).
    #[serde(default)]
    pub(crate) floor_per_hour: Option<u32>,
    /// How many times the baseline the window's rate must exceed to be a burst (default 10).
    #[serde(default)]
    pub factor: Option<Spanned<u32>>,
    /// What a burst meets: `Observe` (default), `RequireTicket` or `Deny`.
    #[serde(default)]
    pub action: Option<Spanned<String>>,
    /// Where the baselines live: `Replica` (default) or `Cluster`.
    #[serde(default)]
    pub scope: Option<Spanned<String>>,
}
