//! The user's connection: a client from their kubeconfig (and context), the namespace, who the
//! API server says they are (a SelfSubjectReview, as `kubectl auth whoami`), and the errors of
//! every ticket action.

use crate::cli::ExitStatus;
use crate::tickets::{self, DeletionTicket};
use kube::api::{Api, DynamicObject};
use std::path::Path;
use thiserror::Error;

/// Why a ticket action failed.
#[derive(Debug, Error)]
pub enum TicketError {
    /// The kubeconfig could not be read or used.
    #[error("{0}")]
    Kubeconfig(#[from] crate::cluster::ConnectError),
    /// The API server refused or did not answer.
    #[error("{}", crate::cluster::api_error::describe(.0))]
    Api(#[from] kube::Error),
    /// An argument is not usable.
    #[error("{0}")]
    Usage(String),
    /// The API server's object is not a ticket this client can read.
    #[error("{0}")]
    Decode(String),
}

impl TicketError {
    /// The exit status: 2 for a usage error, 1 otherwise.
    pub fn status(&self) -> ExitStatus {
        match self {
            TicketError::Usage(_) => ExitStatus::Usage,
            _ => ExitStatus::Failure,
        }
    }
}

/// A connected user.
pub struct Session {
    /// The client.
    pub client: kube::Client,
    /// The tickets' namespace.
    pub namespace: String,
}

impl Session {
    /// Connects with the user's kubeconfig (`kubeconfig`, else `KUBECONFIG`, else
    /// `~/.kube/config`), its `context` (else the current one), in `namespace` (else the
    /// context's).
    pub async fn open(
        kubeconfig: Option<&Path>,
        context: Option<&str>,
        namespace: Option<&str>,
    ) -> Result<Self, TicketError> {
        let (client, default_namespace) =
            crate::cluster::connect::user_client(kubeconfig, context).await?;
        let namespace = namespace.map_or(default_namespace, str::to_owned);
        Ok(Self { client, namespace })
    }

    /// Who the API server says the user is.
    pub async fn whoami(&self) -> Result<String, TicketError> {
        match crate::cluster::whoami::whoami(&self.client).await {
            Ok(me) => Ok(me.name),
            Err(crate::cluster::whoami::WhoamiError::Api(e)) => Err(e.into()),
            Err(e) => Err(TicketError::Decode(e.to_string())),
        }
    }

    /// The tickets of `namespace` (all namespaces when `None`).
    pub fn api(&self, namespace: Option<&str>) -> Api<DynamicObject> {
        let resource = tickets::api_resource();
        match namespace {
            Some(ns) => Api::namespaced_with(self.client.clone(), ns, &resource),
            None => Api::all_with(self.client.clone(), &resource),
        }
    }
}

/// A ticket as the API server sent it, decoded.
pub fn decode(object: &DynamicObject) -> Result<DeletionTicket, TicketError> {
    serde_json::to_value(object)
        .and_then(serde_json::from_value)
        .map_err(|e| TicketError::Decode(format!("not a DeletionTicket this client can read: {e}")))
}

/// A ticket as the API client sends it.
pub fn encode(ticket: &DeletionTicket) -> Result<DynamicObject, TicketError> {
    serde_json::to_value(ticket)
        .and_then(serde_json::from_value)
        .map_err(|e| TicketError::Decode(e.to_string()))
}
