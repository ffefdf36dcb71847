//! [`ReadError`]: why one recorded line or document is no review.

use crate::review::ReviewError;
use thiserror::Error;

/// Why a recorded line or document is no review.
#[derive(Debug, Error)]
pub enum ReadError {
    /// It is not JSON of the expected shape.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// Its review is not one warrant can judge.
    #[error(transparent)]
    Review(#[from] ReviewError),
    /// A warrant record's decision is none of Allow, Deny, NoOpinion.
    #[error("unknown decision {0:?}")]
    UnknownDecision(String),
    /// A time field is not RFC 3339.
    #[error("{field} {value:?}: {source}")]
    Time {
        /// The field.
        field: &'static str,
        /// Its value.
        value: String,
        /// chrono's error.
        source: chrono::ParseError,
    },
}
