//! The validation ring's vocabulary: the object a request is about ([`Subject`]), the admission
//! context around it ([`ObjectContext`]), and what the cluster knows of its dependents
//! ([`ClusterView`], [`Dependents`], [`LabelValues`]). The guard reads these; `cluster` implements the view from
//! watches (or from saved files, for `warrant check`); `server` builds the context from an
//! `AdmissionReview`. Nothing here knows any of them.

mod access;
mod context;
mod labelled;
mod subject;
mod view;

pub use access::{
    AccessAnswer, AccessFuture, AccessQuestion, AccessReview, AccessReviewError, NoAccessReview,
};
pub use context::{ObjectContext, Operation};
pub use labelled::{LabelValue, LabelValues, MAX_LABEL_VALUES};
pub use subject::{FieldHead, FindText, Subject};
pub use view::{
    ClusterView, Dependents, EmptyCluster, NoCluster, ObjectRef, ViewError, ViewFuture,
};
