//! The values a namespace pre-allocates to its pods, read from its annotations.
//!
//! OpenShift gives every namespace a uid range (`openshift.io/sa.scc.uid-range`), supplemental
//! groups (`openshift.io/sa.scc.supplemental-groups`, falling back to the uid range) and an MCS
//! label (`openshift.io/sa.scc.mcs`). A block is `<start>/<size>` or `<start>-<end>` of 32-bit
//! ids; the groups annotation is a comma-separated list of blocks. A constraint that leaves its
//! range, groups or SELinux level unset takes them from here (`sccmatching/matcher.go`,
//! `CreateProviderFromConstraint` and the `getPreallocated*` functions; the block syntax is
//! library-go's `pkg/security/uid/uid.go`, `ParseBlock`). The errors are OpenShift's texts.

use super::constraint::IdRange;
use std::collections::BTreeMap;
use thiserror::Error;

/// The uid range annotation.
pub const UID_RANGE: &str = "openshift.io/sa.scc.uid-range";
/// The supplemental groups annotation.
pub const SUPPLEMENTAL_GROUPS: &str = "openshift.io/sa.scc.supplemental-groups";
/// The MCS label annotation.
pub const MCS: &str = "openshift.io/sa.scc.mcs";

/// A namespace as admission sees it: its name and the annotations that matter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Namespace {
    /// The namespace's name.
    pub name: String,
    /// `openshift.io/sa.scc.uid-range`, when set.
    pub uid_range: Option<String>,
    /// `openshift.io/sa.scc.supplemental-groups`, when set.
    pub supplemental_groups: Option<String>,
    /// `openshift.io/sa.scc.mcs`, when set.
    pub mcs: Option<String>,
}

impl Namespace {
    /// The namespace `name` with the annotations of `annotations` that matter.
    pub fn from_annotations(
        name: impl Into<String>,
        annotations: &BTreeMap<String, String>,
    ) -> Self {
        Self {
            name: name.into(),
            uid_range: annotations.get(UID_RANGE).cloned(),
            supplemental_groups: annotations.get(SUPPLEMENTAL_GROUPS).cloned(),
            mcs: annotations.get(MCS).cloned(),
        }
    }

    /// The first problem OpenShift waits on before judging any pod of the namespace: the uid
    /// range and MCS annotations must both be present.
    pub fn check_allocated(&self) -> Result<(), AllocationError> {
        if self.uid_range.is_none() {
            return Err(AllocationError::Missing(UID_RANGE));
        }
        if self.mcs.is_none() {
            return Err(AllocationError::Missing(MCS));
        }
        Ok(())
    }

    /// The uid range, as `(first, last)`.
    pub fn uid_range(&self) -> Result<(i64, i64), AllocationError> {
        let value = self
            .uid_range
            .as_deref()
            .ok_or(AllocationError::Missing(UID_RANGE))?;
        if value.is_empty() {
            return Err(AllocationError::Empty(UID_RANGE));
        }
        let block = parse_block(value)?;
        Ok((block.min, block.max))
    }

    /// The MCS level.
    pub fn mcs_level(&self) -> Result<&str, AllocationError> {
        let value = self.mcs.as_deref().ok_or(AllocationError::Missing(MCS))?;
        if value.is_empty() {
            return Err(AllocationError::Empty(MCS));
        }
        Ok(value)
    }

    /// The supplemental group ranges (the uid range when the groups annotation is absent).
    pub fn supplemental_groups(&self) -> Result<Vec<IdRange>, AllocationError> {
        let value = match (&self.supplemental_groups, &self.uid_range) {
            (Some(groups), _) => groups,
            (None, Some(uids)) => uids,
            (None, None) => return Err(AllocationError::NoGroups(self.name.clone())),
        };
        if value.is_empty() {
            return Err(AllocationError::EmptyGroups);
        }
        value.split(',').map(parse_block).collect()
    }

    /// The single fsGroup range: the first id of the first supplemental group block.
    pub fn fs_group(&self) -> Result<Vec<IdRange>, AllocationError> {
        let first = self.supplemental_groups()?.first().map(|b| b.min);
        let first = first.ok_or(AllocationError::EmptyGroups)?;
        Ok(vec![IdRange {
            min: first,
            max: first,
        }])
    }
}

/// Why a namespace's pre-allocated values cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AllocationError {
    /// The annotation is absent.
    #[error("unable to find annotation {0}")]
    Missing(&'static str),
    /// The annotation is empty.
    #[error("found annotation {0} but it was empty")]
    Empty(&'static str),
    /// Neither the groups nor the uid annotation is present.
    #[error("unable to find supplemental group or uid annotation for namespace {0}")]
    NoGroups(String),
    /// The groups annotation is empty.
    #[error(
        "unable to find groups using openshift.io/sa.scc.supplemental-groups and openshift.io/sa.scc.uid-range annotations"
    )]
    EmptyGroups,
    /// A block is neither `<start>/<size>` nor `<start>-<end>`.
    #[error("block {block:?} not in the format \"{format}\"")]
    BadBlock {
        /// The text.
        block: String,
        /// The format it was read as.
        format: &'static str,
    },
}

/// One block of ids: `<start>/<size>` or `<start>-<end>`, 32-bit unsigned.
pub fn parse_block(text: &str) -> Result<IdRange, AllocationError> {
    let (sep, format) = if text.contains('/') {
        ('/', "<start>/<size>")
    } else {
        ('-', "<start>-<end>")
    };
    let bad = || AllocationError::BadBlock {
        block: text.to_owned(),
        format,
    };
    let (first, second) = text.split_once(sep).ok_or_else(bad)?;
    let first: u32 = first.trim().parse().map_err(|_| bad())?;
    let second: u32 = second.trim().parse().map_err(|_| bad())?;
    let (min, max) = if sep == '/' {
        if second == 0 {
            return Err(bad());
        }
        (i64::from(first), i64::from(first) + i64::from(second) - 1)
    } else {
        (i64::from(first), i64::from(second))
    };
    Ok(IdRange { min, max })
}
