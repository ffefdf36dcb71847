//! The capabilities strategy.
//!
//! A container gets the constraint's default additions it does not drop and must drop what the
//! constraint requires; its own lists are kept as they are when that adds nothing, else both
//! lists are replaced by their sorted unions. A container may add a capability that is a
//! default addition or allowed (`*` allows any); it must drop every required one; and a
//! container without capabilities fails when the constraint adds or drops any
//! (`pkg/securitycontextconstraints/capabilities/mustrunas.go`).

use crate::pod_security::field::{BadValue, FieldError, FieldPath};
use k8s_openapi::api::core::v1::Capabilities;
use std::collections::BTreeSet;

/// The capabilities strategy, ready to use.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CapabilityRules {
    default_add: Vec<String>,
    required_drop: Vec<String>,
    allowed: Vec<String>,
}

impl CapabilityRules {
    /// The strategy of a constraint's three capability lists.
    pub fn new(default_add: &[String], required_drop: &[String], allowed: &[String]) -> Self {
        Self {
            default_add: default_add.to_vec(),
            required_drop: required_drop.to_vec(),
            allowed: allowed.to_vec(),
        }
    }

    /// The capabilities a container gets, from those it asks for.
    pub fn generate(&self, asked: Option<&Capabilities>) -> Option<Capabilities> {
        let container_add: BTreeSet<&str> = asked
            .and_then(|c| c.add.as_ref())
            .into_iter()
            .flatten()
            .map(String::as_str)
            .collect();
        let container_drop: BTreeSet<&str> = asked
            .and_then(|c| c.drop.as_ref())
            .into_iter()
            .flatten()
            .map(String::as_str)
            .collect();
        let mut add: BTreeSet<&str> = self
            .default_add
            .iter()
            .map(String::as_str)
            .filter(|c| !container_drop.contains(c))
            .collect();
        add.extend(container_add.iter().copied());
        let mut drop: BTreeSet<&str> = self.required_drop.iter().map(String::as_str).collect();
        drop.extend(container_drop.iter().copied());
        if add.len() == container_add.len() && drop.len() == container_drop.len() {
            return asked.cloned();
        }
        let list = |set: BTreeSet<&str>| {
            (!set.is_empty()).then(|| set.into_iter().map(str::to_owned).collect())
        };
        Some(Capabilities {
            add: list(add),
            drop: list(drop),
        })
    }

    /// Checks a container's capabilities; `path` is the container.
    pub fn validate(
        &self,
        path: &FieldPath,
        capabilities: Option<&Capabilities>,
        errors: &mut Vec<FieldError>,
    ) {
        let Some(capabilities) = capabilities else {
            if !self.default_add.is_empty() || !self.required_drop.is_empty() {
                errors.push(FieldError::invalid(
                    path.child("capabilities"),
                    BadValue::Null,
                    "required capabilities are not set on the securityContext",
                ));
            }
            return;
        };
        if self.allowed.iter().any(|c| c == "*") {
            return;
        }
        for cap in capabilities.add.iter().flatten() {
            if !self.default_add.contains(cap) && !self.allowed.contains(cap) {
                errors.push(FieldError::invalid(
                    path.child("capabilities").child("add"),
                    BadValue::Str(cap.clone()),
                    "capability may not be added",
                ));
            }
        }
        let drops = capabilities.drop.as_ref();
        for required in &self.required_drop {
            if !drops.is_some_and(|d| d.contains(required)) {
                errors.push(FieldError::invalid(
                    path.child("capabilities").child("drop"),
                    BadValue::Capabilities(drops.cloned()),
                    format!("{required} is required to be dropped but was not found"),
                ));
            }
        }
    }
}
