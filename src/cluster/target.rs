//! An object a person names on the command line, as kubectl spells it:
//! `RESOURCE[.GROUP]/NAME` (`statefulsets.apps/orders-db`, `statefulset.apps/orders-db`,
//! `namespaces/shop`), resolved by discovery to the resource the API server serves (its
//! preferred version of the group), so that the commands people run (`warrant confirm`,
//! `warrant why`) read and write the object as kubectl would.

use kube::discovery::{self, ApiResource, Scope};
use thiserror::Error;

/// Why a named object cannot be used.
#[derive(Debug, Error)]
pub enum TargetError {
    /// Not `RESOURCE[.GROUP]/NAME`.
    #[error("{0:?}: want RESOURCE[.GROUP]/NAME, e.g. statefulsets.apps/orders-db")]
    Syntax(String),
    /// The API server does not serve the resource.
    #[error("the server doesn't have a resource type {resource:?} in group {group:?}")]
    Unknown {
        /// The group.
        group: String,
        /// The resource as typed.
        resource: String,
    },
    /// Discovery failed.
    #[error("discovery of group {group:?}: {source}")]
    Discovery {
        /// The group.
        group: String,
        /// The cause.
        source: kube::Error,
    },
}

/// An object named on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectTarget {
    /// The API group (`""` for core).
    pub group: String,
    /// The resource as typed (plural, or the kind in lower case).
    pub resource: String,
    /// The object's name.
    pub name: String,
}

impl ObjectTarget {
    /// Parses `RESOURCE[.GROUP]/NAME`.
    pub fn parse(text: &str) -> Result<Self, TargetError> {
        let bad = || TargetError::Syntax(text.to_owned());
        let (kind, name) = text.split_once('/').ok_or_else(bad)?;
        let (resource, group) = kind.split_once('.').unwrap_or((kind, ""));
        if resource.is_empty() || name.is_empty() || name.contains('/') {
            return Err(bad());
        }
        Ok(Self {
            group: group.to_owned(),
            resource: resource.to_ascii_lowercase(),
            name: name.to_owned(),
        })
    }

    /// The resource the API server serves for it (plural or kind, in the group's preferred
    /// version), and whether it is namespaced.
    pub async fn resolve(&self, client: &kube::Client) -> Result<(ApiResource, bool), TargetError> {
        let group = discovery::group(client, &self.group)
            .await
            .map_err(|source| TargetError::Discovery {
                group: self.group.clone(),
                source,
            })?;
        group
            .recommended_resources()
            .into_iter()
            .find(|(ar, _)| {
                ar.plural == self.resource || ar.kind.to_ascii_lowercase() == self.resource
            })
            .map(|(ar, caps)| (ar, caps.scope == Scope::Namespaced))
            .ok_or_else(|| TargetError::Unknown {
                group: self.group.clone(),
                resource: self.resource.clone(),
            })
    }
}

/// `resource[.group]` as kubectl prints a kind (`statefulsets.apps`, `namespaces`).
pub fn resource_name(ar: &ApiResource) -> String {
    if ar.group.is_empty() {
        ar.plural.clone()
    } else {
        format!("{}.{}", ar.plural, ar.group)
    }
}

#[cfg(test)]
mod tests {
    use super::{ObjectTarget, TargetError};

    #[test]
    fn targets_read_as_kubectl_spells_them() {
        let t = ObjectTarget::parse("StatefulSets.apps/orders-db").unwrap();
        assert_eq!(
            (t.group.as_str(), t.resource.as_str(), t.name.as_str()),
            ("apps", "statefulsets", "orders-db")
        );
        let t = ObjectTarget::parse("namespaces/shop").unwrap();
        assert_eq!((t.group.as_str(), t.resource.as_str()), ("", "namespaces"));
        for bad in ["db", "/db", "deployments.apps/", "a/b/c"] {
            assert!(
                matches!(ObjectTarget::parse(bad), Err(TargetError::Syntax(_))),
                "{bad}"
            );
        }
    }
}
