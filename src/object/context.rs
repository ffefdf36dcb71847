//! [`ObjectContext`]: what an admission request adds to a review: the operation, the object
//! before and after, whether it is a dry run, and the cluster view to ask about dependents.

use super::subject::Subject;
use super::view::ClusterView;
use std::sync::Arc;

/// The admission operations the validation ring judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// `DELETE`: `old_object` is the object being deleted.
    Delete,
    /// `UPDATE` (an update or a patch): `old_object` is the stored object, `object` the new one.
    Update,
}

/// What the validation ring sees beside the review.
#[derive(Debug, Clone)]
pub struct ObjectContext {
    /// The operation.
    pub operation: Operation,
    /// The object after the request (`UPDATE`), absent for `DELETE`.
    pub object: Option<Subject>,
    /// The stored object before the request.
    pub(crate) old_object: Option<Subject>,
    /// Whether the request is a dry run (nothing persists; no rate-limit token is spent).
    pub dry_run: bool,
    /// The cluster around the object.
    pub view: Arc<dyn ClusterView>,
}
