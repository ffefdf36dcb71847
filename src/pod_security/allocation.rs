//! Namespace range allocation as pure functions: what OpenShift's namespace security allocation
//! controller computes, without the cluster.
//!
//! OpenShift's `cluster-policy-controller` gives every namespace without
//! `openshift.io/sa.scc.uid-range` the next free block of a cluster-wide uid range (default
//! `1000000000-1999999999/10000`: 100,000 blocks of 10,000 ids), writes that block as both the
//! uid range and the supplemental groups, and an MCS label derived from the block's offset
//! (default range `s0:/2`, five labels per namespace) unless the namespace already has one
//! (`pkg/security/controller/namespace_scc_allocation_controller.go`, `allocate` and
//! `DefaultMCSAllocation`; the defaults in
//! `pkg/cmd/cluster-policy-controller/openshiftcontrolplane_config.go`). The modules: the uid
//! range and its blocks ([`uid_range`], library-go's `pkg/security/uid/uid.go`), MCS labels by
//! offset ([`mcs`], `pkg/security/mcs/label.go`), the set of taken blocks ([`ledger`]) and the
//! annotations one block gives a namespace ([`plan`]). Reading and writing the cluster is the
//! caller's (`crate::namespace_ranges`).

pub mod ledger;
pub mod mcs;
pub mod plan;
pub mod uid_range;

#[cfg(test)]
mod tests;

pub use ledger::{Ledger, LedgerError};
pub use mcs::{McsRange, McsRangeError};
pub use plan::{Allocation, Plan};
pub use uid_range::{UidRange, UidRangeError};
