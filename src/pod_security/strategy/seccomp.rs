//! The seccomp strategy.
//!
//! A pod without a profile gets the constraint's first profile other than `*`, written both as
//! the `seccomp.security.alpha.kubernetes.io/pod` annotation and as the pod's
//! `seccompProfile`. A profile is checked as an annotation value: with no profiles listed none
//! may be set; `*` allows any; else it must be listed, `runtime/default` and `docker/default`
//! standing for each other. A container's profile is its own field, else its container
//! annotation, else the pod's field, else the pod's annotation
//! (`pkg/securitycontextconstraints/seccomp/strategy.go`; the field-to-annotation conversion
//! is `seccompFieldForAnnotation` in `sccmatching/provider.go`).

use crate::pod_security::field::{FieldError, FieldPath};
use k8s_openapi::api::core::v1::SeccompProfile;
use std::collections::BTreeMap;

/// The pod annotation of a seccomp profile.
pub const POD_ANNOTATION: &str = "seccomp.security.alpha.kubernetes.io/pod";
/// The prefix of a container's seccomp annotation (followed by the container's name).
pub const CONTAINER_ANNOTATION_PREFIX: &str = "container.seccomp.security.alpha.kubernetes.io/";
const RUNTIME_DEFAULT: &str = "runtime/default";
const DOCKER_DEFAULT: &str = "docker/default";
const UNCONFINED: &str = "unconfined";
const LOCALHOST_PREFIX: &str = "localhost/";

/// The seccomp strategy, ready to use.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Seccomp {
    allowed: Vec<String>,
    allow_any: bool,
    runtime_default_allowed: bool,
}

impl Seccomp {
    /// The strategy of a constraint's `seccompProfiles`.
    pub fn new(profiles: &[String]) -> Self {
        let mut strategy = Self::default();
        for profile in profiles {
            if profile == "*" {
                strategy.allow_any = true;
                continue;
            }
            if profile == RUNTIME_DEFAULT || profile == DOCKER_DEFAULT {
                strategy.runtime_default_allowed = true;
            }
            strategy.allowed.push(profile.clone());
        }
        strategy
    }

    /// The pod's profile as an annotation value: the one it has, else the default; empty for
    /// none.
    pub fn generate(
        &self,
        annotations: &BTreeMap<String, String>,
        pod_field: Option<&SeccompProfile>,
    ) -> String {
        if let Some(value) = annotations.get(POD_ANNOTATION).filter(|v| !v.is_empty()) {
            return value.clone();
        }
        if let Some(field) = pod_field {
            return annotation_for_field(field);
        }
        self.allowed.first().cloned().unwrap_or_default()
    }

    /// Checks the pod's profile.
    pub fn validate_pod(
        &self,
        annotations: &BTreeMap<String, String>,
        pod_field: Option<&SeccompProfile>,
        errors: &mut Vec<FieldError>,
    ) {
        let mut profile = annotations.get(POD_ANNOTATION).cloned().unwrap_or_default();
        if profile.is_empty()
            && let Some(field) = pod_field
        {
            profile = annotation_for_field(field);
        }
        let path = FieldPath::root("pod")
            .child("metadata")
            .child("annotations")
            .key(POD_ANNOTATION);
        self.validate_profile(path, &profile, errors);
    }

    /// Checks a container's profile.
    pub fn validate_container(
        &self,
        annotations: &BTreeMap<String, String>,
        pod_field: Option<&SeccompProfile>,
        container_name: &str,
        container_field: Option<&SeccompProfile>,
        errors: &mut Vec<FieldError>,
    ) {
        let key = format!("{CONTAINER_ANNOTATION_PREFIX}{container_name}");
        let profile = if let Some(field) = container_field {
            annotation_for_field(field)
        } else if let Some(value) = annotations.get(&key) {
            value.clone()
        } else if let Some(field) = pod_field {
            annotation_for_field(field)
        } else {
            annotations.get(POD_ANNOTATION).cloned().unwrap_or_default()
        };
        let path = FieldPath::root("pod")
            .child("metadata")
            .child("annotations")
            .key(&key);
        self.validate_profile(path, &profile, errors);
    }

    fn validate_profile(&self, path: FieldPath, profile: &str, errors: &mut Vec<FieldError>) {
        if !self.allow_any && self.allowed.is_empty() && !profile.is_empty() {
            errors.push(FieldError::forbidden(path, "seccomp may not be set"));
            return;
        }
        if (self.allowed.is_empty() && profile.is_empty()) || self.allow_any {
            return;
        }
        let runtime_default = profile == RUNTIME_DEFAULT || profile == DOCKER_DEFAULT;
        if self.allowed.iter().any(|p| p == profile)
            || (self.runtime_default_allowed && runtime_default)
        {
            return;
        }
        errors.push(FieldError::forbidden(
            path,
            format!(
                "{profile} is not an allowed seccomp profile. Valid values are [{}]",
                self.allowed.join(" ")
            ),
        ));
    }
}

/// A profile field as an annotation value; empty for a localhost profile without a file.
pub fn annotation_for_field(field: &SeccompProfile) -> String {
    match field.type_.as_str() {
        "Unconfined" => UNCONFINED.to_owned(),
        "RuntimeDefault" => RUNTIME_DEFAULT.to_owned(),
        "Localhost" => field
            .localhost_profile
            .as_ref()
            .map(|p| format!("{LOCALHOST_PREFIX}{p}"))
            .unwrap_or_default(),
        _ => String::new(),
    }
}

/// An annotation value as a profile field; `None` for an unknown value.
pub fn field_for_annotation(annotation: &str) -> Option<SeccompProfile> {
    if annotation == UNCONFINED {
        return Some(SeccompProfile {
            type_: "Unconfined".to_owned(),
            localhost_profile: None,
        });
    }
    if annotation == RUNTIME_DEFAULT || annotation == DOCKER_DEFAULT {
        return Some(SeccompProfile {
            type_: "RuntimeDefault".to_owned(),
            localhost_profile: None,
        });
    }
    annotation
        .strip_prefix(LOCALHOST_PREFIX)
        .filter(|p| !p.is_empty())
        .map(|p| SeccompProfile {
            type_: "Localhost".to_owned(),
            localhost_profile: Some(p.to_owned()),
        })
}
