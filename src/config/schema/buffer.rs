//! The `buffer:` block of a `DeletionGuard` (the buffer ring) as written. Validation into
//! [`crate::config::model::buffer::BufferSettings`] is `config::validate::guard::buffer`.

use super::kind::KindFile;
use serde::Deserialize;
use serde_saphyr::Spanned;

/// The `buffer:` block: which objects carry warrant's finalizer and how a deletion is held.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BufferFile {
    /// The finalizer (default `warrant.dev/deletion-cooldown`).
    #[serde(default)]
    pub finalizer: Option<Spanned<String>>,
    /// The lowest protection level whose objects carry the finalizer (default `high`).
    #[serde(default)]
    pub(crate) finalize_at: Option<Spanned<String>>,
    /// The kinds the finalizer is put on (default: Deployments, StatefulSets, DaemonSets,
    /// PersistentVolumeClaims, Namespaces).
    #[serde(default)]
    pub resources: Option<Vec<Spanned<KindFile>>>,
    /// How long a CRITICAL deletion is held, from its `deletionTimestamp` (default `10m`).
    #[serde(default)]
    pub cooldown: Option<Spanned<String>>,
    /// Whether a CRITICAL deletion also waits for a confirmation annotation (default false).
    #[serde(default)]
    pub(crate) require_confirmation: Option<bool>,
    /// The annotation a second person sets, to a ticket id, to confirm a held deletion
    /// (default `warrant.dev/deletion-confirmed`).
    #[serde(default)]
    pub(crate) confirmation_annotation: Option<Spanned<String>>,
    /// The annotation warrant sets to the deleter's user name when it admits the deletion of a
    /// finalized object (default `warrant.dev/deletion-requested-by`).
    #[serde(default)]
    pub(crate) requester_annotation: Option<Spanned<String>>,
    /// The longest any finalizer is held (default `24h`).
    #[serde(default)]
    pub(crate) max_hold: Option<Spanned<String>>,
    /// Where a held deletion is announced.
    #[serde(default)]
    pub(crate) notify: Vec<Spanned<NotifyFile>>,
}

/// One notification receiver.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct NotifyFile {
    /// An `https://` URL the JSON notification is POSTed to.
    pub url: String,
    /// PEM CA bundle verifying the receiver, relative to the configuration file (default: the
    /// system roots).
    #[serde(default)]
    pub ca_file: Option<String>,
    /// Per attempt (default `5s`).
    #[serde(default)]
    pub timeout: Option<String>,
    /// Attempts before giving up (default 5, at most 20); the waits between them double from 1s,
    /// capped at 60s.
    #[serde(default)]
    pub attempts: Option<u32>,
}
