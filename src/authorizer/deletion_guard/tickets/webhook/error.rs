//! [`LookupError`]: why the ticket webhook gave no answer warrant accepts. Every variant
//! becomes the guard's failure policy (a `TICKET_SOURCE_UNAVAILABLE` finding in Observe mode),
//! never a ticket; it renders as one line, usable in a Deny reason and `evaluationError`.

use super::contract::ContractError;
use crate::authorizer::webhook::BuildError;
use crate::authorizer::webhook::error::CallError;
use thiserror::Error;

/// Why a lookup failed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LookupError {
    /// The endpoint could not be set up (its kubeconfig, typically).
    #[error("the ticket webhook cannot be used: {0}")]
    Unusable(#[source] BuildError),
    /// No answer within the webhook's `timeout`.
    #[error("the ticket webhook did not answer within {timeout_ms} ms")]
    Timeout {
        /// The configured timeout, in milliseconds.
        timeout_ms: u64,
    },
    /// The review's deadline came before the answer.
    #[error("the review's deadline came before the ticket webhook answered")]
    Deadline,
    /// The call failed below HTTP (connect, TLS, reset), or the answer was too large.
    #[error("the ticket webhook is unreachable: {0}")]
    Unreachable(#[source] CallError),
    /// A non-2xx answer.
    #[error("the ticket webhook answered HTTP {code}{}", excerpt(body))]
    Status {
        /// The HTTP status code.
        code: u16,
        /// The start of the body, for the reason.
        body: String,
    },
    /// A 2xx answer the contract does not accept.
    #[error("the ticket webhook's answer is malformed: {0}")]
    Malformed(#[source] ContractError),
}

fn excerpt(body: &str) -> String {
    match body.trim() {
        "" => String::new(),
        b => format!(": {b}"),
    }
}

impl LookupError {
    /// The label of the failure in `warrant_ticket_webhook_lookups_total`.
    pub fn metrics_result(&self) -> &'static str {
        match self {
            LookupError::Unusable(_) => "unusable",
            LookupError::Timeout { .. } => "timeout",
            LookupError::Deadline => "canceled",
            LookupError::Unreachable(_) => "unreachable",
            LookupError::Status { .. } => "http_error",
            LookupError::Malformed(_) => "malformed",
        }
    }
}
