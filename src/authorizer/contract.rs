//! The contract every authorizer type implements: [`Authorizer`], with what it sees ([`Input`])
//! and how long it has ([`Deadline`]). It knows no implementation and nothing of the chain.

use super::error::AuthorizerError;
use crate::cel::Binding;
use crate::decision::Verdict;
use crate::object::ObjectContext;
use crate::review::Review;
use chrono::{DateTime, Utc};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

/// A pinned, boxed, `Send` future: what [`Authorizer::authorize`] returns, since an `async fn`
/// in a trait cannot sit behind `dyn`.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What every authorizer sees: the review and the instant it is judged at, read once per review
/// so that every authorizer of the chain sees the same `now`; at admission (the validation
/// ring), also the object and the cluster around it.
#[derive(Debug, Clone)]
pub struct Input {
    /// The review, in the v1 shape (at admission: the request mapped onto one).
    pub review: Review,
    /// When the review is judged.
    pub now: DateTime<Utc>,
    /// The admission context, when the review comes from an `AdmissionReview`.
    pub object: Option<Arc<ObjectContext>>,
}

impl Input {
    /// An authorization review judged at `now`.
    pub fn new(review: Review, now: DateTime<Utc>) -> Self {
        Self {
            review,
            now,
            object: None,
        }
    }

    /// The same input with an admission context.
    pub fn with_object(mut self, object: Arc<ObjectContext>) -> Self {
        self.object = Some(object);
        self
    }
}

/// When the review must be answered. It may cut work short (an `Err`) but never steers a
/// verdict, as upstream says of its request context.
#[derive(Debug, Clone, Copy)]
pub struct Deadline(pub tokio::time::Instant);

impl Deadline {
    /// A deadline `budget` from now.
    pub fn after(budget: Duration) -> Self {
        Self(tokio::time::Instant::now() + budget)
    }

    /// An error once the deadline has passed, for synchronous work checked between steps.
    pub fn check(self) -> Result<(), AuthorizerError> {
        if tokio::time::Instant::now() >= self.0 {
            Err(AuthorizerError::DeadlinePassed)
        } else {
            Ok(())
        }
    }
}

/// One authorizer: a review in, a verdict (or "I could not decide") out.
pub trait Authorizer: Send + Sync + fmt::Debug {
    /// Judges one review.
    fn authorize<'a>(
        &'a self,
        input: &'a Input,
        deadline: Deadline,
    ) -> BoxFuture<'a, Result<Verdict, AuthorizerError>>;

    /// Judges one review at once, on the review already bound for CEL (once per review, shared
    /// by every entry of the chain), when the type judges synchronously (Policy); `None` (the
    /// default) sends the chain to [`Authorizer::authorize`].
    fn judge_bound(
        &self,
        _input: &Input,
        _binding: &Binding<'_>,
        _deadline: Deadline,
    ) -> Option<Result<Verdict, AuthorizerError>> {
        None
    }
}
