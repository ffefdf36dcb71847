//! One review in the guard's scope, as every gate sees it.

use super::risk::Risk;
use super::scope::Target;
use crate::review::Review;
use chrono::{DateTime, Utc};

/// One review in the guard's scope, as every gate sees it: what it targets, when, and its risk.
#[derive(Debug)]
pub(super) struct Case<'a> {
    pub(super) review: &'a Review,
    pub(super) now: DateTime<Utc>,
    pub(super) target: Target<'a>,
    pub(super) risk: Risk,
}
