//! [`Head`]: the fields of an object the guard reads (type, metadata, `spec.replicas`), decoded
//! straight from its JSON text with every field [`Lenient`].

use super::lenient::{FromObject, Lenient};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The read fields of one object; absent or mistyped fields are `None`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub(super) struct Head {
    #[serde(rename = "apiVersion", default)]
    pub api_version: Lenient<String>,
    #[serde(default)]
    pub kind: Lenient<String>,
    #[serde(default)]
    pub metadata: Lenient<FromObject<Meta>>,
    #[serde(default)]
    pub spec: Lenient<FromObject<Spec>>,
}

/// The read part of `metadata`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Meta {
    #[serde(default)]
    pub name: Lenient<String>,
    #[serde(default)]
    pub namespace: Lenient<String>,
    #[serde(default)]
    pub uid: Lenient<String>,
    /// Shared: the validation ring keeps the stored object's labels for the ticket gates.
    #[serde(default)]
    pub labels: Lenient<Arc<BTreeMap<String, String>>>,
    #[serde(default)]
    pub annotations: Lenient<BTreeMap<String, String>>,
    #[serde(default)]
    pub deletion_timestamp: Lenient<String>,
    #[serde(default)]
    pub finalizers: Lenient<Vec<String>>,
}

/// The read part of `spec`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub(super) struct Spec {
    #[serde(default)]
    pub replicas: Lenient<i64>,
}

impl Head {
    /// `metadata`, when it is an object.
    pub fn meta(&self) -> Option<&Meta> {
        self.metadata.0.as_ref().map(|m| &m.0)
    }

    /// `spec`, when it is an object.
    pub fn spec(&self) -> Option<&Spec> {
        self.spec.0.as_ref().map(|s| &s.0)
    }
}
