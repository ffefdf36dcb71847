//! One review in the guard's scope, as every gate sees it.

use super::objects::ObjectFacts;
use super::risk::Risk;
use super::scope::Target;
use crate::review::Review;
use chrono::{DateTime, Utc};

/// One review in the guard's scope, as every gate sees it: what it targets, when, its risk and,
/// at admission, what the validation ring learned about the object.
#[derive(Debug)]
pub(super) struct Case<'a> {
    pub(super) review: &'a Review,
    pub(super) now: DateTime<Utc>,
    pub(super) target: Target<'a>,
    pub(super) risk: Risk,
    pub(super) facts: Option<ObjectFacts>,
}

impl Case<'_> {
    /// Whether this case is an admission request (the validation ring).
    pub(super) fn at_admission(&self) -> bool {
        self.facts.is_some()
    }
}
