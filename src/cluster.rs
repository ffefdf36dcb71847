//! The cluster as the validation ring sees it: a `kube` client ([`connect`]), a metadata
//! cache fed by watches ([`Cache`], the live [`crate::object::ClusterView`]), and the same
//! index read from saved files ([`FileView`], for `warrant check`).
//!
//! The [`Index`] is a pure data structure (compact entries projected from objects, interned
//! strings, an owner-UID -> children index); [`watch`] feeds it from `kube::runtime`
//! watchers; [`open`] starts them only once the chain needs the cluster.

pub mod access_review;
pub(crate) mod annotate;
pub mod api_error;
pub(crate) mod baselines;
pub mod buckets;
pub mod cache;
pub mod connect;
pub mod constraints;
pub mod counters;
pub mod crd;
pub mod files;
pub mod index;
pub(crate) mod intern;
pub mod inventory;
mod labelled;
pub mod labels;
pub mod lookup;
pub mod metrics;
pub mod open;
pub mod project;
mod query;
pub mod resource;
pub mod status;
pub mod store;
pub mod target;
pub mod tickets;
pub mod watch;
pub mod whoami;
pub mod wire;

#[cfg(test)]
mod tests;

pub use access_review::{AccessReviewMetrics, AccessReviewSettings, AccessReviewer};
pub(crate) use annotate::{AnnotateError, Annotator, ObjectAddress};
pub use cache::{Cache, CacheOptions};
pub use connect::{ConnectError, Source};
pub use files::{FileView, FilesError};
pub use index::Index;
pub use open::{open_when_needed, warn_unconnected};
pub use resource::Resource;
pub use tickets::MarkError;
pub use watch::{Watches, start};
