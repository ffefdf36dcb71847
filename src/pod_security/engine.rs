//! The engine: tries the constraints in order and admits a pod with the first that validates,
//! or refuses it with every reason.
//!
//! This follows OpenShift's admission plugin (`sccadmission/admission.go`). When a pod is
//! created (the mutating side, [`Engine::admit`]), the constraints are sorted
//! ([`super::order`]), or reduced to the one `openshift.io/required-scc` names; the namespace
//! must carry its uid range and MCS annotations; each constraint becomes a provider for the
//! namespace; then, in order, a constraint available to neither subject is reported
//! `not usable by user or serviceaccount`, and one that is gives the pod its values and checks
//! them; the first without errors is chosen and the pod is annotated `openshift.io/scc` and
//! `security.openshift.io/validated-scc-subject-type`. When nothing validates, every error of
//! every constraint tried is listed, in OpenShift's format. After the other mutating webhooks
//! ([`Engine::validate`]), the pod is judged again with the chosen constraint tried first, and
//! is admitted only when a constraint accepts it without changing anything.

use super::constraint::SecurityContextConstraints;
use super::defaults::with_defaults;
use super::field::{FieldError, FieldPath, aggregate};
use super::namespace::{AllocationError, Namespace};
use super::order;
use super::provider::{Provider, ProviderError};
use super::subjects::SubjectType;
use k8s_openapi::api::core::v1::Pod;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use thiserror::Error;

/// The pod annotation naming the constraint a pod was admitted with.
pub const VALIDATED_SCC: &str = "openshift.io/scc";
/// The pod annotation restricting the choice to one constraint.
pub const REQUIRED_SCC: &str = "openshift.io/required-scc";
/// The pod annotation naming the subject the chosen constraint was available to.
pub const VALIDATED_SUBJECT_TYPE: &str = "security.openshift.io/validated-scc-subject-type";

/// Which subject may use a constraint, `None` for neither.
pub type Availability<'a> = dyn Fn(&SecurityContextConstraints) -> Option<SubjectType> + 'a;

/// A set of constraints, defaulted and in the order they are tried.
#[derive(Debug, Clone, Default)]
pub struct Engine {
    sorted: Vec<Arc<SecurityContextConstraints>>,
}

/// A pod admitted: the constraint, the subject it was available to, and the pod as admitted.
#[derive(Debug, Clone, PartialEq)]
pub struct Admitted {
    /// The chosen constraint's name.
    pub constraint: String,
    /// The subject it was available to.
    pub subject: SubjectType,
    /// The pod with the constraint's values and the annotations.
    pub pod: Pod,
    /// The constraints tried before that were not available.
    pub denied: Vec<String>,
    /// The constraints tried before that did not validate, with why.
    pub too_restrictive: BTreeMap<String, String>,
}

/// Why a pod is refused, in OpenShift's words.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Refusal {
    /// No constraint validated the pod; every reason.
    #[error("unable to validate against any security context constraint: {}", aggregate(.0))]
    NoConstraintValidates(Vec<FieldError>),
    /// After the other mutating webhooks, no constraint accepted the pod unchanged; the
    /// errors of those that did not validate it, as Go prints a list (`[a b]`).
    #[error("unable to validate against any security context constraint: [{}]", spaced(.0))]
    NoConstraintAcceptsUnchanged(Vec<FieldError>),
    /// The required constraint does not exist.
    #[error(
        "failed to retrieve the required SCC {0:?}: securitycontextconstraints.security.openshift.io {0:?} not found"
    )]
    RequiredNotFound(String),
    /// The required constraint is not the one the mutating side chose.
    #[error("required scc/{required} does not match the suggested scc/{suggested}")]
    RequiredMismatch {
        /// `openshift.io/required-scc`.
        required: String,
        /// `openshift.io/scc`.
        suggested: String,
    },
    /// An update changed `openshift.io/required-scc`.
    #[error(
        "invalid change of required security context constraint annotation: openshift.io/required-scc"
    )]
    RequiredChanged,
    /// There are no constraints at all.
    #[error("no SecurityContextConstraints found in cluster")]
    NoConstraints,
    /// The namespace lacks its pre-allocated values.
    #[error("error fetching namespace {namespace:?}: {source}")]
    Namespace {
        /// The namespace.
        namespace: String,
        /// What is missing.
        #[source]
        source: AllocationError,
    },
    /// Some constraints cannot be made into providers.
    #[error("{}", Providers(.0))]
    Providers(Vec<ProviderError>),
}

struct Providers<'a>(&'a [ProviderError]);

impl fmt::Display for Providers<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let texts: Vec<String> = self.0.iter().map(ToString::to_string).collect();
        match texts.as_slice() {
            [one] => f.write_str(one),
            many => write!(f, "[{}]", many.join(", ")),
        }
    }
}

/// Whether the pod may be changed: on create, yes; on the validating side, no.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Mutate,
    Validate,
}

impl Engine {
    /// The engine of `constraints`: each defaulted as OpenShift stores it, then sorted.
    pub fn new(constraints: impl IntoIterator<Item = SecurityContextConstraints>) -> Self {
        let mut sorted: Vec<Arc<SecurityContextConstraints>> = constraints
            .into_iter()
            .map(|c| Arc::new(with_defaults(c)))
            .collect();
        sorted.sort_by(|a, b| order::compare(a, b));
        Self { sorted }
    }

    /// The constraints, in the order they are tried.
    pub fn constraints(&self) -> &[Arc<SecurityContextConstraints>] {
        &self.sorted
    }

    /// Judges a pod being created: the pod as admitted (to be patched in), or why not.
    pub fn admit(
        &self,
        namespace: &Namespace,
        pod: &Pod,
        available: &Availability<'_>,
    ) -> Result<Admitted, Refusal> {
        let required = annotation(pod, REQUIRED_SCC);
        self.judge(namespace, pod, available, required, None, Stage::Mutate)
    }

    /// Judges a pod again after every mutating webhook: admitted only when a constraint (the
    /// one chosen at creation first) accepts it unchanged.
    pub fn validate(
        &self,
        namespace: &Namespace,
        pod: &Pod,
        available: &Availability<'_>,
    ) -> Result<Admitted, Refusal> {
        let required = annotation(pod, REQUIRED_SCC);
        let hint = annotation(pod, VALIDATED_SCC);
        if let Some(required) = required
            && hint != Some(required)
        {
            return Err(Refusal::RequiredMismatch {
                required: required.to_owned(),
                suggested: hint.unwrap_or_default().to_owned(),
            });
        }
        self.judge(namespace, pod, available, required, hint, Stage::Validate)
    }

    /// Refuses an update that changes `openshift.io/required-scc`.
    pub fn check_update(old: &Pod, new: &Pod) -> Result<(), Refusal> {
        if annotation(old, REQUIRED_SCC) != annotation(new, REQUIRED_SCC) {
            return Err(Refusal::RequiredChanged);
        }
        Ok(())
    }

    fn candidates(
        &self,
        required: Option<&str>,
        hint: Option<&str>,
    ) -> Result<Vec<&Arc<SecurityContextConstraints>>, Refusal> {
        let mut list: Vec<&Arc<SecurityContextConstraints>> = match required {
            Some(name) => {
                let found = self.sorted.iter().find(|c| c.name() == name);
                vec![found.ok_or_else(|| Refusal::RequiredNotFound(name.to_owned()))?]
            }
            None => self.sorted.iter().collect(),
        };
        if list.is_empty() {
            return Err(Refusal::NoConstraints);
        }
        if let Some(hint) = hint {
            list.sort_by_key(|c| c.name() != hint);
        }
        Ok(list)
    }

    fn judge(
        &self,
        namespace: &Namespace,
        pod: &Pod,
        available: &Availability<'_>,
        required: Option<&str>,
        hint: Option<&str>,
        stage: Stage,
    ) -> Result<Admitted, Refusal> {
        let candidates = self.candidates(required, hint)?;
        namespace
            .check_allocated()
            .map_err(|source| Refusal::Namespace {
                namespace: namespace.name.clone(),
                source,
            })?;
        let mut providers = Vec::with_capacity(candidates.len());
        let mut failures = Vec::new();
        for constraint in candidates {
            match Provider::new(constraint, namespace) {
                Ok(provider) => providers.push(provider),
                Err(error) => failures.push(error),
            }
        }
        if !failures.is_empty() {
            return Err(Refusal::Providers(failures));
        }
        let mut errors = Vec::new();
        let mut denied = Vec::new();
        let mut too_restrictive = BTreeMap::new();
        let mut restricted_denied = false;
        let mut restricted_v2_seen = false;
        for provider in &providers {
            let name = provider.name();
            restricted_v2_seen |= name == "restricted-v2";
            let Some(subject) = available(provider.constraint()) else {
                restricted_denied |= name == "restricted";
                denied.push(name.to_owned());
                errors.push(FieldError::forbidden(
                    FieldPath::root(format!("provider {name:?}")),
                    "not usable by user or serviceaccount",
                ));
                continue;
            };
            let mut candidate = pod.clone();
            let found = provider.assign(&mut candidate);
            if !found.is_empty() {
                too_restrictive.insert(name.to_owned(), aggregate(&found));
                errors.extend(found);
                continue;
            }
            if stage == Stage::Validate && candidate != *pod {
                too_restrictive.insert(
                    name.to_owned(),
                    "failures final validation after mutating admission".to_owned(),
                );
                continue;
            }
            let annotations = candidate
                .metadata
                .annotations
                .get_or_insert_with(BTreeMap::new);
            if stage == Stage::Mutate {
                annotations.insert(VALIDATED_SCC.to_owned(), name.to_owned());
                annotations.insert(
                    VALIDATED_SUBJECT_TYPE.to_owned(),
                    subject.as_str().to_owned(),
                );
            }
            return Ok(Admitted {
                constraint: name.to_owned(),
                subject,
                pod: candidate,
                denied,
                too_restrictive,
            });
        }
        if restricted_v2_seen
            && restricted_denied
            && let Some(restricted) = providers.iter().find(|p| p.name() == "restricted")
            && restricted.assign(&mut pod.clone()).is_empty()
        {
            errors.push(FieldError::forbidden(
                FieldPath::root("no access to scc/restricted"),
                "the pod fails to validate against the `restricted-v2` security context constraint, but would validate successfully against the `restricted` security context constraint",
            ));
        }
        Err(match stage {
            Stage::Mutate => Refusal::NoConstraintValidates(errors),
            Stage::Validate => Refusal::NoConstraintAcceptsUnchanged(errors),
        })
    }
}

fn spaced(errors: &[FieldError]) -> String {
    let texts: Vec<String> = errors.iter().map(ToString::to_string).collect();
    texts.join(" ")
}

fn annotation<'a>(pod: &'a Pod, key: &str) -> Option<&'a str> {
    pod.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(key))
        .map(String::as_str)
        .filter(|v| !v.is_empty())
}
