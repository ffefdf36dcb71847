//! `warrant check`: one review, from flags shaped like `kubectl auth can-i` or from a JSON file,
//! evaluated against a configuration without a server. Prints the answer and the trace; the
//! exit status is 0 for Allow, 3 for Deny, 4 for NoOpinion and 2 for a usage or config error.
//!
//! Files: `args` (the flags), `input` (flags to a review and an input), `command` (evaluate,
//! round trip, exit status), `render` (text and JSON), `error`; `pod` judges a pod's creation by
//! pod security (`--pod`). This file only declares and
//! re-exports.

mod args;
mod command;
mod error;
mod input;
mod pod;
mod render;
mod runtime;

pub use args::{CheckArgs, Output};
pub use command::{evaluate, run};
pub use error::{InputError, RuntimeError, TimeError};
pub use input::{Flags, parse_at};
pub use render::{render, render_with};
pub use runtime::offline_runtime;

#[cfg(test)]
mod tests;
