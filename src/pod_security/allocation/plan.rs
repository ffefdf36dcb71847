//! What one namespace gets: the annotations of a free block, as OpenShift's `allocate` writes
//! them (`namespace_scc_allocation_controller.go`): the block as both
//! `openshift.io/sa.scc.uid-range` and `openshift.io/sa.scc.supplemental-groups`
//! (`<start>/<size>`), and `openshift.io/sa.scc.mcs` from the block's offset unless the
//! namespace has one already. Also the ledger the namespaces' own annotations say is taken
//! (OpenShift's `Repair`).

use super::ledger::Ledger;
use super::mcs::McsRange;
use super::uid_range::{UidRange, block_text};
use crate::pod_security::namespace::{MCS, SUPPLEMENTAL_GROUPS, UID_RANGE, parse_block};
use std::collections::BTreeMap;
use thiserror::Error;

/// The allocator's configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The cluster-wide uid range.
    pub uids: UidRange,
    /// The MCS labels.
    pub mcs: McsRange,
    /// Labels skipped between two consecutive blocks' labels.
    pub labels_per_namespace: u32,
}

/// The annotations one namespace gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allocation {
    /// The block's offset in the range.
    pub offset: u32,
    /// `openshift.io/sa.scc.uid-range`.
    pub uid_range: String,
    /// `openshift.io/sa.scc.supplemental-groups`.
    pub supplemental_groups: String,
    /// `openshift.io/sa.scc.mcs`, when the namespace has none.
    pub mcs: Option<String>,
}

/// Why a block cannot be given.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PlanError {
    /// Every block is taken (OpenShift: "uid range exceeded").
    #[error("uid range {0} exceeded: every block is taken; widen the range")]
    Full(String),
    /// The MCS range has no label for the block.
    #[error(
        "the mcs range {range} has no label at offset {offset}; widen it or lower the labels per namespace"
    )]
    NoLabel {
        /// The MCS range.
        range: String,
        /// The offset asked.
        offset: u64,
    },
}

impl Allocation {
    /// The annotations to write.
    pub fn annotations(&self) -> BTreeMap<&'static str, String> {
        let mut out = BTreeMap::from([
            (UID_RANGE, self.uid_range.clone()),
            (SUPPLEMENTAL_GROUPS, self.supplemental_groups.clone()),
        ]);
        if let Some(mcs) = &self.mcs {
            out.insert(MCS, mcs.clone());
        }
        out
    }
}

impl Plan {
    /// The allocation of the first block `taken` leaves free, for a namespace whose MCS
    /// annotation is `existing_mcs`.
    pub fn next(
        &self,
        taken: &Ledger,
        existing_mcs: Option<&str>,
    ) -> Result<Allocation, PlanError> {
        let offset = taken
            .first_free()
            .ok_or_else(|| PlanError::Full(self.uids.to_string()))?;
        self.at(offset, existing_mcs)
    }

    /// The allocation of block `offset`.
    pub fn at(&self, offset: u32, existing_mcs: Option<&str>) -> Result<Allocation, PlanError> {
        let block = self
            .uids
            .block_at(offset)
            .ok_or_else(|| PlanError::Full(self.uids.to_string()))?;
        let mcs = match existing_mcs {
            Some(_) => None,
            None => {
                let at = u64::from(offset) * u64::from(self.labels_per_namespace.max(1));
                Some(self.mcs.label_at(at).ok_or_else(|| PlanError::NoLabel {
                    range: self.mcs.to_string(),
                    offset: at,
                })?)
            }
        };
        let text = block_text(block);
        Ok(Allocation {
            offset,
            uid_range: text.clone(),
            supplemental_groups: text,
            mcs,
        })
    }

    /// The blocks the namespaces' `openshift.io/sa.scc.uid-range` annotations touch; a value
    /// that is not a block is skipped, as OpenShift's repair skips it.
    pub fn taken_by<'a>(&self, uid_ranges: impl IntoIterator<Item = &'a str>) -> Ledger {
        let mut ledger = Ledger::new(self.uids);
        for value in uid_ranges {
            if let Ok(block) = parse_block(value) {
                ledger.take_overlapping(block);
            }
        }
        ledger
    }
}
