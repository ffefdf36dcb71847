//! Who the API server says the user of a client is: a `SelfSubjectReview`, as
//! `kubectl auth whoami` asks, so that the commands people run name them as the API server
//! authenticates them, never as they type it.

use k8s_openapi::api::authentication::v1::SelfSubjectReview;
use kube::api::{Api, PostParams};
use thiserror::Error;

/// Why the user is not known.
#[derive(Debug, Error)]
pub enum WhoamiError {
    /// The API server refused or could not be reached.
    #[error("{}", crate::cluster::api_error::describe(.0))]
    Api(#[from] kube::Error),
    /// It answered without a user name.
    #[error("the API server did not say who you are")]
    Anonymous,
}

/// The authenticated user: name and groups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Me {
    /// The user name.
    pub name: String,
    /// The groups.
    pub groups: Vec<String>,
}

/// Asks the API server who the client's user is.
pub async fn whoami(client: &kube::Client) -> Result<Me, WhoamiError> {
    let api: Api<SelfSubjectReview> = Api::all(client.clone());
    let review = api
        .create(&PostParams::default(), &SelfSubjectReview::default())
        .await?;
    let user = review
        .status
        .and_then(|s| s.user_info)
        .ok_or(WhoamiError::Anonymous)?;
    match user.username.filter(|u| !u.is_empty()) {
        Some(name) => Ok(Me {
            name,
            groups: user.groups.unwrap_or_default(),
        }),
        None => Err(WhoamiError::Anonymous),
    }
}
