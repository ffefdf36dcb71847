//! Why `warrant check` has nothing to evaluate: its input, its time, its runtime.

use crate::review::ReviewError;
use std::path::PathBuf;
use thiserror::Error;

/// Why the flags of `warrant check` (or the fields of a `warrant test` case) describe no review.
#[derive(Debug, Error)]
pub enum InputError {
    /// The object or cluster state of an admission check.
    #[error(transparent)]
    Object(#[from] crate::cli::object_input::ObjectInputError),
    /// Both a review file and flags.
    #[error("give either -f REVIEW.json or VERB RESOURCE, not both")]
    FileAndFlags,
    /// `--cluster-state` for a review that reads no object.
    #[error("--cluster-state is read with --object or --pod")]
    StateWithoutObject,
    /// The review file cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    ReadFile {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The review file is not a usable review.
    #[error("{}: {source}", path.display())]
    DecodeFile {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: ReviewError,
    },
    /// Neither a review file nor VERB and RESOURCE.
    #[error("VERB and RESOURCE are required (or -f REVIEW.json)")]
    MissingTarget,
    /// A non-resource path with a namespace or subresource.
    #[error("a non-resource path takes no namespace or subresource")]
    NonResourceScope,
    /// `RESOURCE/` with nothing after the slash.
    #[error("{target:?}: name after '/' is empty")]
    EmptyName {
        /// The target as given.
        target: String,
    },
    /// `.GROUP` or `/NAME` without a resource.
    #[error("{target:?}: resource is empty")]
    EmptyResource {
        /// The target as given.
        target: String,
    },
    /// The spec the flags make is not a review.
    #[error(transparent)]
    Review(ReviewError),
    /// An `--extra` that is not `KEY=VALUE`.
    #[error("--extra {pair:?}: expected KEY=VALUE")]
    Extra {
        /// The argument as given.
        pair: String,
    },
    /// `--at` is not an RFC 3339 time.
    #[error("--at {0}")]
    At(#[source] TimeError),
}

/// An evaluation time that is not RFC 3339.
#[derive(Debug, Error)]
#[error("{input:?}: not an RFC 3339 time: {source}")]
pub struct TimeError {
    /// The time as given.
    pub input: String,
    /// chrono's error.
    pub source: chrono::ParseError,
}

/// The runtime of the offline commands could not start.
#[derive(Debug, Error)]
#[error("cannot start runtime: {0}")]
pub struct RuntimeError(#[source] pub std::io::Error);
