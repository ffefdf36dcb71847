//! The namespace range allocator: every namespace without `openshift.io/sa.scc.uid-range` gets
//! a block of uids (also its supplemental groups) and an MCS label that no other namespace has,
//! as OpenShift's namespace security allocation controller gives them
//! (`cluster-policy-controller`, `pkg/security/controller/namespace_scc_allocation_controller.go`;
//! the arithmetic is [`crate::pod_security::allocation`]). It runs with pod security
//! (`--pod-security` not `Off`) unless `--pod-security-allocate-ranges=false`, and acts only
//! while this replica leads (`crate::leader`).
//!
//! # Where the taken blocks are kept, and why that cannot overlap
//!
//! OpenShift keeps the taken blocks in a `RangeAllocation` object (`securityinternal/v1`: the
//! range, and a bitmap of its blocks) and updates it before it writes a namespace: a block is
//! reserved in etcd first, at the object's `resourceVersion`, so two writers cannot both
//! reserve it. A vanilla cluster has no `RangeAllocation` type, and a CRD for one object would
//! be one more thing to install before warrant starts. The equivalent here is a
//! `coordination.k8s.io/v1` Lease in warrant's namespace (`--leader-elect-resource-namespace`,
//! name [`store::LEDGER_NAME`]) holding the same two things in annotations (the range, and the
//! bitmap in base64: at most 128 KiB of blocks, within the 256 KiB annotations allow): warrant
//! may already read and write Leases there (leader election, `scope: Cluster` rate limits), and
//! a Lease is written with the same optimistic concurrency. So:
//!
//! - **One block, one namespace.** A block is taken only by a compare-and-swap of the Lease
//!   (a `PUT` at the `resourceVersion` read, or a `POST` for the first); of two replicas that
//!   race for the same block one gets 409 Conflict, reads again and takes the next. Only then
//!   is the namespace written.
//! - **Free means free everywhere.** The block chosen is the first free in the Lease *and* in
//!   the annotations this replica's namespace watch sees (ranges written by hand, by another
//!   tool, or by a leader whose reservation a repair dropped): a block any namespace's range
//!   touches is never given again.
//! - **One namespace, one block.** The namespace is written with a merge patch carrying the
//!   `resourceVersion` it was seen at, so a namespace that changed (another writer gave it a
//!   range) is not overwritten: 409, the reservation is released and the watch's next event
//!   decides again.
//! - **Surviving restarts.** The state is the Lease and the namespaces' own annotations,
//!   both in the cluster; nothing is kept in the process. Each time this replica starts to
//!   lead (and each time its namespace watch lists again) it repairs the Lease from the
//!   namespaces' annotations, as OpenShift's `Repair` does: blocks of deleted namespaces come
//!   free, blocks with no record are recorded.
//! - **Leadership changes.** A leader stops acting when it cannot renew within the renew
//!   deadline, shorter than the lease duration after which another may lead; it checks that it
//!   still leads between the reservation and the namespace write. A reservation whose namespace
//!   write never came is released by the next repair.
//!
//! The modules: [`settings`] (the flags' values), [`store`] (the Lease), [`controller`] (the
//! watch and the allocation loop) and [`metrics`].

pub mod controller;
pub mod metrics;
pub mod settings;
pub mod store;

pub use controller::Allocator;
pub use metrics::RangeMetrics;
pub use settings::{RangeSettings, SettingsError};
