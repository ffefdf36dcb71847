//! The file as written: a strict serde mirror of `AuthorizationConfiguration`
//! (`k8s.io/apiserver/pkg/apis/apiserver/v1/types.go`) plus warrant's own fields. Every field is
//! optional here so that validation, not decoding, reports what is missing, with upstream's
//! messages; unknown fields are decoding errors. Values carry their YAML location.

pub mod buffer;
pub mod guard;
mod kind;
pub mod traffic;
pub mod unusual;

use serde::Deserialize;
use serde_saphyr::Spanned;

/// A value with its YAML location.
pub type At<T> = Spanned<T>;

/// The whole file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct File {
    /// `apiserver.config.k8s.io/{v1,v1beta1,v1alpha1}` or `warrant.dev/v1alpha1`.
    #[serde(default)]
    pub api_version: Option<At<String>>,
    /// `AuthorizationConfiguration`.
    #[serde(default)]
    pub kind: Option<At<String>>,
    /// The chain, in order.
    #[serde(default)]
    pub authorizers: Option<At<Vec<At<Authorizer>>>>,
}

/// One `authorizers[]` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Authorizer {
    /// The authorizer type.
    #[serde(default, rename = "type")]
    pub(crate) type_: Option<At<String>>,
    /// The unique name.
    #[serde(default)]
    pub name: Option<At<String>>,
    /// Upstream's webhook block (type `Webhook` only).
    #[serde(default)]
    pub webhook: Option<At<Webhook>>,
    /// warrant.dev only: what an error of this authorizer yields.
    #[serde(default)]
    pub failure_policy: Option<At<String>>,
    /// warrant.dev only: `Enforce` (default) or `Observe` (shadow mode), for any type.
    #[serde(default)]
    pub mode: Option<At<String>>,
    /// warrant.dev only: CEL pre-filters for any type.
    #[serde(default)]
    pub match_conditions: Option<At<Vec<At<MatchCondition>>>>,
    /// warrant.dev only: the rules of a `Policy` authorizer.
    #[serde(default)]
    pub policy: Option<At<Policy>>,
    /// warrant.dev only: the settings of a `DeletionGuard` authorizer.
    #[serde(default)]
    pub guard: Option<At<guard::GuardFile>>,
    /// Conditional authorization settings (Policy, DeletionGuard).
    #[serde(default)]
    pub conditions: Option<At<Conditions>>,
}

/// The `policy` block of a `Policy` authorizer.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Policy {
    /// The rules, in order.
    #[serde(default)]
    pub rules: Option<At<Vec<At<Rule>>>>,
}

/// One rule of a policy.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Rule {
    /// Unique within the policy.
    #[serde(default)]
    pub name: Option<At<String>>,
    /// `Allow` or `Deny`.
    #[serde(default)]
    pub effect: Option<At<String>>,
    /// A CEL bool over `request` and `now`.
    #[serde(default)]
    pub expression: Option<At<String>>,
    /// What the user is told when the rule decides.
    #[serde(default)]
    pub message: Option<At<String>>,
    /// A SCREAMING_SNAKE code for the decision.
    #[serde(default)]
    pub code: Option<At<String>>,
    /// `Enforce` (default) or `Observe` (shadow: recorded when it matches, then skipped).
    #[serde(default)]
    pub mode: Option<At<String>>,
    /// A CEL bool over `object`, `oldObject` and `request`, evaluated at admission (KEP-5681).
    #[serde(default)]
    pub condition: Option<At<String>>,
}

/// An entry's `conditions:` block (conditional authorization, KEP-5681).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Conditions {
    /// `Fold` (default) or `ValidationRing`.
    #[serde(default)]
    pub(crate) when_unsupported: Option<At<String>>,
}

/// Upstream's `WebhookConfiguration`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Webhook {
    /// How long allowed answers are cached.
    #[serde(default, rename = "authorizedTTL")]
    pub(crate) authorized_ttl: Option<At<String>>,
    /// Whether allowed answers are cached (1.34+).
    #[serde(default)]
    pub(crate) cache_authorized_requests: Option<At<bool>>,
    /// How long denied and no-opinion answers are cached.
    #[serde(default, rename = "unauthorizedTTL")]
    pub(crate) unauthorized_ttl: Option<At<String>>,
    /// Whether denied and no-opinion answers are cached (1.34+).
    #[serde(default)]
    pub(crate) cache_unauthorized_requests: Option<At<bool>>,
    /// Per-attempt timeout.
    #[serde(default)]
    pub timeout: Option<At<String>>,
    /// `v1` or `v1beta1`.
    #[serde(default)]
    pub(crate) subject_access_review_version: Option<At<String>>,
    /// `v1`; required iff matchConditions are set.
    #[serde(default)]
    pub(crate) match_condition_subject_access_review_version: Option<At<String>>,
    /// `Deny` or `NoOpinion`.
    #[serde(default)]
    pub failure_policy: Option<At<String>>,
    /// How to reach the webhook.
    #[serde(default)]
    pub(crate) connection_info: Option<At<ConnectionInfo>>,
    /// CEL pre-filters.
    #[serde(default)]
    pub match_conditions: Option<At<Vec<At<MatchCondition>>>>,
    /// warrant.dev only: whether identical concurrent misses share one downstream call.
    #[serde(default)]
    pub(crate) single_flight: Option<At<bool>>,
    /// warrant.dev only: how long past its TTL a cached verdict may be served when the
    /// downstream fails.
    #[serde(default)]
    pub stale_if_error: Option<At<String>>,
}

/// Upstream's `WebhookConnectionInfo`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ConnectionInfo {
    /// `KubeConfigFile` or `InClusterConfig`.
    #[serde(default, rename = "type")]
    pub(crate) type_: Option<At<String>>,
    /// Absolute path of the kubeconfig.
    #[serde(default)]
    pub(crate) kube_config_file: Option<At<String>>,
}

/// One CEL match condition.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MatchCondition {
    /// The CEL expression.
    #[serde(default)]
    pub expression: Option<At<String>>,
}
