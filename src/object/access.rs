//! "May this user do this?", asked of the cluster: the question ([`AccessQuestion`], the
//! attributes of a `SubjectAccessReview`), its answer ([`AccessAnswer`]) and the trait that
//! answers it ([`AccessReview`]). Approving a deletion ticket and using a pod security
//! constraint are both decided this way, so that RBAC (and every other authorizer the API
//! server runs) decides, never text typed into an object. `cluster` asks the API server;
//! [`NoAccessReview`] stands in without a cluster connection. Nothing here knows either.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use thiserror::Error;

/// A boxed future, as [`AccessReview::review`] returns.
pub type AccessFuture<'a> =
    Pin<Box<dyn Future<Output = Result<AccessAnswer, AccessReviewError>> + Send + 'a>>;

/// Who asks to do what: the resource attributes and user of a `SubjectAccessReview` (upstream
/// `authorization/v1` `SubjectAccessReviewSpec` with `resourceAttributes`). An empty string
/// means the attribute is unset, as in the wire form.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct AccessQuestion {
    /// The user name (`userInfo.username`).
    pub user: String,
    /// The user's UID, when known.
    pub uid: Option<String>,
    /// The user's groups.
    pub groups: Vec<String>,
    /// The user's extra attributes.
    pub extra: BTreeMap<String, Vec<String>>,
    /// The verb (`approve`, `use`, ...).
    pub verb: String,
    /// The API group (`""` for core).
    pub group: String,
    /// The plural resource.
    pub resource: String,
    /// The subresource, if any.
    pub subresource: String,
    /// The namespace (`""` for cluster-scoped or all namespaces).
    pub namespace: String,
    /// The object's name (`""` for all).
    pub name: String,
}

/// What the cluster answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AccessAnswer {
    /// The user may.
    Allowed,
    /// The user may not (denied, or no authorizer had an opinion).
    NotAllowed {
        /// The API server's reason, possibly empty.
        reason: String,
    },
}

impl AccessAnswer {
    /// Whether the user may.
    pub fn is_allowed(&self) -> bool {
        matches!(self, AccessAnswer::Allowed)
    }
}

/// Why no answer came.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AccessReviewError {
    /// No cluster connection is configured.
    #[error("no cluster connection is configured to ask the API server who may do what")]
    NoCluster,
    /// The API server did not answer in time.
    #[error("the API server did not answer the access review within {0:?}")]
    Timeout(std::time::Duration),
    /// The API server's answer was an error.
    #[error("the access review failed: {0}")]
    Api(String),
    /// The API server could not evaluate the review (`status.evaluationError` with no decision).
    #[error("the API server could not evaluate the access review: {0}")]
    Evaluation(String),
}

/// Answers [`AccessQuestion`]s.
pub trait AccessReview: Send + Sync + fmt::Debug {
    /// Whether `question.user` may do what `question` asks.
    fn review<'a>(&'a self, question: &'a AccessQuestion) -> AccessFuture<'a>;
}

/// Without a cluster connection: every question is an error, so a caller applies its failure
/// policy instead of deciding by accident.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoAccessReview;

impl AccessReview for NoAccessReview {
    fn review<'a>(&'a self, _question: &'a AccessQuestion) -> AccessFuture<'a> {
        Box::pin(async { Err(AccessReviewError::NoCluster) })
    }
}
