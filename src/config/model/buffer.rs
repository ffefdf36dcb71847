//! The validated `buffer:` block of a `DeletionGuard`: which objects carry warrant's finalizer,
//! how long a CRITICAL deletion is held and who is told. The controller that acts on it is
//! `crate::buffer`; the validation ring guards the finalizer and the annotations.

use super::kind::Kind;
use super::level::Level;
use std::path::PathBuf;
use std::time::Duration;

/// The finalizer unless `finalizer` names another.
pub(crate) const DEFAULT_FINALIZER: &str = "warrant.dev/deletion-cooldown";
/// The confirmation annotation unless `confirmationAnnotation` names another.
pub(crate) const DEFAULT_CONFIRMATION_ANNOTATION: &str = "warrant.dev/deletion-confirmed";
/// The requester annotation unless `requesterAnnotation` names another.
pub(crate) const DEFAULT_REQUESTER_ANNOTATION: &str = "warrant.dev/deletion-requested-by";
/// The cool-down unless `cooldown` says otherwise (the users' example: ten minutes).
pub(crate) const DEFAULT_COOLDOWN: Duration = Duration::from_secs(600);
/// The longest hold unless `maxHold` says otherwise.
pub(crate) const DEFAULT_MAX_HOLD: Duration = Duration::from_secs(24 * 3600);
/// The kinds finalized unless `resources` names others: `(group, resource)`.
pub(crate) const DEFAULT_RESOURCES: [(&str, &str); 5] = [
    ("apps", "deployments"),
    ("apps", "statefulsets"),
    ("apps", "daemonsets"),
    ("", "persistentvolumeclaims"),
    ("", "namespaces"),
];

/// The buffer ring's settings.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BufferSettings {
    /// The finalizer warrant puts on protected objects and removes when a deletion may finish.
    pub finalizer: String,
    /// Objects protected at this level or above carry the finalizer.
    pub(crate) finalize_at: Level,
    /// The kinds that may carry it (never a wildcard).
    pub resources: Vec<Kind>,
    /// How long a CRITICAL deletion is held, measured from `deletionTimestamp`.
    pub cooldown: Duration,
    /// Whether a CRITICAL deletion also waits for [`Self::confirmation_annotation`].
    pub(crate) require_confirmation: bool,
    /// The annotation confirming a held deletion; its value is a ticket id.
    pub(crate) confirmation_annotation: String,
    /// The annotation recording who asked for the deletion (set by warrant only).
    pub(crate) requester_annotation: String,
    /// No finalizer is held longer than this, confirmation or not (`COOLDOWN_EXPIRED`).
    pub(crate) max_hold: Duration,
    /// Where a held deletion is announced.
    pub(crate) notify: Vec<Notify>,
}

impl Default for BufferSettings {
    /// What an empty `buffer: {}` block means: every default, no receiver. The commands people
    /// run (`warrant holds`, `warrant confirm`) read these when no chain file is given.
    fn default() -> Self {
        Self {
            finalizer: DEFAULT_FINALIZER.to_owned(),
            finalize_at: Level::High,
            resources: DEFAULT_RESOURCES
                .iter()
                .map(|(group, resource)| Kind {
                    group: (*group).to_owned(),
                    resource: (*resource).to_owned(),
                })
                .collect(),
            cooldown: DEFAULT_COOLDOWN,
            require_confirmation: false,
            confirmation_annotation: DEFAULT_CONFIRMATION_ANNOTATION.to_owned(),
            requester_annotation: DEFAULT_REQUESTER_ANNOTATION.to_owned(),
            max_hold: DEFAULT_MAX_HOLD,
            notify: Vec::new(),
        }
    }
}

impl BufferSettings {
    /// Whether a CRITICAL deletion also waits for the confirmation annotation.
    pub fn require_confirmation(&self) -> bool {
        self.require_confirmation
    }

    /// The annotation that confirms a held deletion (its value: a ticket id).
    pub fn confirmation_annotation(&self) -> &str {
        &self.confirmation_annotation
    }

    /// The annotation that records who asked for a held deletion.
    pub fn requester_annotation(&self) -> &str {
        &self.requester_annotation
    }

    /// The longest a deletion is held.
    pub fn max_hold(&self) -> Duration {
        self.max_hold
    }

    /// Whether `group`/`resource` may carry the finalizer.
    pub(crate) fn covers(&self, group: &str, resource: &str) -> bool {
        self.resources.iter().any(|k| k.covers(group, resource))
    }
}

/// One notification receiver.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Notify {
    /// The `https://` URL POSTed to.
    pub url: String,
    /// The CA bundle verifying it (resolved against the configuration file's directory); the
    /// system roots when absent.
    pub ca_file: Option<PathBuf>,
    /// Per attempt.
    pub timeout: Duration,
    /// Attempts before giving up (1-20).
    pub attempts: u32,
}
