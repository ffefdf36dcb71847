//! A duration flag (`--review-timeout 10s`): a positive Go duration, or an error naming the
//! flag and its value.

use crate::config::duration::GoDuration;
use std::time::Duration;
use thiserror::Error;

/// A duration flag that is not a positive Go duration.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("--{flag} {value:?}: expected a positive duration such as {example}")]
pub struct DurationFlagError {
    /// The flag, without its dashes.
    pub flag: &'static str,
    /// What it was given.
    pub value: String,
    /// A valid value, for the message.
    pub example: &'static str,
}

/// The value of duration flag `flag` (`example`: a valid value, for the error message).
pub fn positive(
    flag: &'static str,
    value: &str,
    example: &'static str,
) -> Result<Duration, DurationFlagError> {
    GoDuration::parse(value)
        .ok()
        .filter(|d| d.is_positive())
        .and_then(|d| d.to_std())
        .ok_or_else(|| DurationFlagError {
            flag,
            value: value.to_owned(),
            example,
        })
}
