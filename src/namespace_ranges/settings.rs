//! The allocator's settings, from `warrant serve`'s flags: the uid range
//! (`--pod-security-uid-range`), the MCS range (`--pod-security-mcs-range`), the labels per
//! namespace (`--pod-security-mcs-labels-per-namespace`), all defaulting to OpenShift's
//! (`UIDAllocatorRange`, `MCSAllocatorRange`, `MCSLabelsPerProject`), and where the taken
//! blocks are kept.

use crate::pod_security::allocation::{McsRange, McsRangeError, Plan, UidRange, UidRangeError};
use thiserror::Error;

/// The checked settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeSettings {
    /// What a namespace gets.
    pub plan: Plan,
    /// The namespace of the Lease that keeps the taken blocks.
    pub namespace: String,
}

/// Why the flags are refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SettingsError {
    /// `--pod-security-uid-range`.
    #[error("--pod-security-uid-range: {0}")]
    Uid(#[source] UidRangeError),
    /// `--pod-security-mcs-range`.
    #[error("--pod-security-mcs-range: {0}")]
    Mcs(#[source] McsRangeError),
}

impl RangeSettings {
    /// The settings of the flags' values.
    pub fn parse(
        uid_range: &str,
        mcs_range: &str,
        labels_per_namespace: u32,
        namespace: &str,
    ) -> Result<Self, SettingsError> {
        Ok(Self {
            plan: Plan {
                uids: UidRange::parse(uid_range).map_err(SettingsError::Uid)?,
                mcs: McsRange::parse(mcs_range).map_err(SettingsError::Mcs)?,
                labels_per_namespace,
            },
            namespace: namespace.to_owned(),
        })
    }
}
