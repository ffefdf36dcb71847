//! [`BuildError`]: why a configuration could not become a chain.

use crate::authorizer::webhook;
use crate::names::AuthorizerName;
use thiserror::Error;

/// Why a chain could not be built from a configuration.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BuildError {
    /// A chain needs at least one authorizer.
    #[error("a chain needs at least one authorizer")]
    Empty,
    /// Two entries share a name.
    #[error("authorizer name {:?} is used twice", .0.as_str())]
    DuplicateName(AuthorizerName),
    /// A webhook authorizer's connection could not be set up (its kubeconfig, typically).
    #[error("authorizer {:?}: {source}", name.as_str())]
    Webhook {
        /// The authorizer.
        name: AuthorizerName,
        /// What failed.
        source: webhook::BuildError,
    },
    /// A deletion guard's ticket webhook could not be set up (its kubeconfig, typically).
    #[error("authorizer {:?}: tickets.source.webhook: {source}", name.as_str())]
    TicketWebhook {
        /// The guard.
        name: AuthorizerName,
        /// What failed.
        source: webhook::BuildError,
    },
}
