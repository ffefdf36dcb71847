//! The parts of kube-apiserver's `audit.k8s.io/v1` `Event`
//! (`k8s.io/apiserver/pkg/apis/audit/v1/types.go`) that more than one reader of audit logs
//! needs: who asked (`user`, `impersonatedUser`) and what about (`objectRef`). Each reader
//! declares its own `Event` with the fields it reads and these types for those parts.

use serde::Deserialize;
use std::collections::BTreeMap;

/// The audit API version of the events read.
pub const API_VERSION: &str = "audit.k8s.io/v1";

/// `authentication.k8s.io/v1` `UserInfo`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct UserInfo {
    /// `username`.
    pub(crate) username: Option<String>,
    /// `uid`.
    pub(crate) uid: Option<String>,
    /// `groups`.
    pub(crate) groups: Option<Vec<String>>,
    /// `extra`.
    pub(crate) extra: Option<BTreeMap<String, Vec<String>>>,
}

/// `audit.k8s.io/v1` `ObjectReference`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct ObjectRef {
    /// `resource`.
    pub(crate) resource: Option<String>,
    /// `namespace`.
    pub(crate) namespace: Option<String>,
    /// `name`.
    pub(crate) name: Option<String>,
    /// `apiGroup`.
    pub(crate) api_group: Option<String>,
    /// `apiVersion`.
    pub(crate) api_version: Option<String>,
    /// `subresource`.
    pub(crate) subresource: Option<String>,
}
