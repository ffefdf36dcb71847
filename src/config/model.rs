//! The validated configuration: what a chain is built from. Holding a [`Config`] means every
//! upstream and warrant rule has been checked.

pub mod buffer;
pub mod conditions;
pub mod guard;
mod kind;
mod level;
mod mode;
pub mod pattern;
mod scope;
pub mod traffic;
pub mod unusual;
pub mod window;

pub use conditions::{ConditionsSettings, RuleCondition, WhenUnsupported};
pub use guard::GuardSpec;
pub use mode::Mode;

use crate::cel::Expression;
use crate::names::{AuthorizerName, Code, RuleName};
use crate::review::ApiVersion;
use serde::Serialize;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

/// A validated chain configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The authorizers, in file order. Never empty.
    pub authorizers: Vec<AuthorizerConfig>,
    /// What validation found likely unintended in a valid file (printed by `warrant validate`,
    /// logged when served).
    pub warnings: Vec<super::error::ConfigWarning>,
}

impl Config {
    /// The `DeletionGuard` entries, in file order, with their names.
    pub fn deletion_guards(&self) -> impl Iterator<Item = (&AuthorizerName, &GuardSpec)> {
        self.authorizers.iter().filter_map(|a| match &a.spec {
            AuthorizerSpec::DeletionGuard(g) => Some((&a.name, g.as_ref())),
            _ => None,
        })
    }
}

/// One validated authorizer entry.
#[derive(Debug, Clone, PartialEq)]
pub struct AuthorizerConfig {
    /// Its unique name.
    pub name: AuthorizerName,
    /// What an error of this authorizer yields.
    pub failure_policy: FailurePolicy,
    /// `Enforce` (default) or `Observe` (shadow mode: evaluated and recorded, answers
    /// NoOpinion). For a DeletionGuard it equals the guard's own `guard.mode`.
    pub mode: Mode,
    /// The type and its settings.
    pub spec: AuthorizerSpec,
    /// Compiled CEL pre-filters, evaluated in order on every review before the authorizer
    /// (from `webhook.matchConditions` for a Webhook, from `matchConditions` otherwise).
    pub match_conditions: Vec<Expression>,
    /// `conditions`: whether (and how) the authorizer answers with conditions (KEP-5681).
    /// `None` for a DeletionGuard means it authors none; a Policy with `condition:` rules
    /// authors them whatever this says, with the default settings when it is absent.
    pub conditions: Option<ConditionsSettings>,
}

/// A `Policy` authorizer's rules.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicySpec {
    /// The rules, in file order; names are unique.
    pub rules: Vec<PolicyRule>,
}

/// One policy rule.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyRule {
    /// Its name, unique in the policy.
    pub name: RuleName,
    /// What a match yields.
    pub effect: Effect,
    /// The compiled condition (sees `request` and `now`).
    pub expression: Expression,
    /// The message a match reports.
    pub message: String,
    /// The code a match reports.
    pub code: Option<Code>,
    /// `Enforce` (default) or `Observe` (shadow: a match is recorded, then the rule is skipped).
    pub mode: Mode,
    /// `condition`: a CEL bool over the object, evaluated at admission (KEP-5681); a match of
    /// `expression` then only makes the rule's effect conditional on it.
    pub condition: Option<RuleCondition>,
}

/// What a matching rule yields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Effect {
    /// The review is allowed (unless a Deny rule also matches).
    Allow,
    /// The review is denied.
    Deny,
}

impl Effect {
    /// The spelling in files and metric labels.
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::Allow => "Allow",
            Effect::Deny => "Deny",
        }
    }
}

/// The settings of one authorizer, by type. The CEL `Policy`, `Webhook` and `DeletionGuard`
/// types add variants here.
#[derive(Debug, Clone, PartialEq)]
pub enum AuthorizerSpec {
    /// Allows everything.
    AlwaysAllow,
    /// Denies everything (in warrant a real Deny; see `authorizer::always`).
    AlwaysDeny,
    /// CEL rules with Allow and Deny effects.
    Policy(PolicySpec),
    /// A downstream SubjectAccessReview webhook (upstream's `webhook:` block).
    Webhook(WebhookConfig),
    /// The deletion guard (warrant.dev only).
    DeletionGuard(Box<GuardSpec>),
}

/// The validated `webhook:` block of a `Webhook` authorizer, defaults applied. Its failure
/// policy is the entry's [`AuthorizerConfig::failure_policy`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WebhookConfig {
    /// Per-attempt timeout (`timeout`, 0 < t <= 30s).
    pub timeout: Duration,
    /// How long allowed answers are cached (`authorizedTTL`, default 5m).
    pub(crate) authorized_ttl: Duration,
    /// How long denied and no-opinion answers are cached (`unauthorizedTTL`, default 30s).
    pub(crate) unauthorized_ttl: Duration,
    /// Whether allowed answers are cached (`cacheAuthorizedRequests`, default true).
    pub(crate) cache_authorized: bool,
    /// Whether denied and no-opinion answers are cached (`cacheUnauthorizedRequests`, default true).
    pub(crate) cache_unauthorized: bool,
    /// The version the review is sent in (`subjectAccessReviewVersion`).
    pub version: ApiVersion,
    /// The absolute path of the kubeconfig (`connectionInfo.kubeConfigFile`).
    pub kubeconfig: PathBuf,
    /// warrant.dev only (`singleFlight`, default true): identical concurrent misses share one call.
    pub(crate) single_flight: bool,
    /// warrant.dev only (`staleIfError`, default off): how long past its TTL a cached verdict may
    /// still be served when the downstream fails.
    pub stale_if_error: Option<Duration>,
}

impl AuthorizerSpec {
    /// The type of this entry.
    pub(crate) fn authorizer_type(&self) -> AuthorizerType {
        match self {
            AuthorizerSpec::AlwaysAllow => AuthorizerType::AlwaysAllow,
            AuthorizerSpec::AlwaysDeny => AuthorizerType::AlwaysDeny,
            AuthorizerSpec::Policy(_) => AuthorizerType::Policy,
            AuthorizerSpec::Webhook(_) => AuthorizerType::Webhook,
            AuthorizerSpec::DeletionGuard(_) => AuthorizerType::DeletionGuard,
        }
    }
}

/// Authorizer types, spelled as in the file. Used as the `type` label of metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum AuthorizerType {
    /// `AlwaysAllow`.
    AlwaysAllow,
    /// `AlwaysDeny`.
    AlwaysDeny,
    /// `Policy`.
    Policy,
    /// `Webhook`.
    Webhook,
    /// `DeletionGuard`.
    DeletionGuard,
}

impl AuthorizerType {
    /// The spelling in files and metric labels.
    pub fn as_str(self) -> &'static str {
        match self {
            AuthorizerType::AlwaysAllow => "AlwaysAllow",
            AuthorizerType::AlwaysDeny => "AlwaysDeny",
            AuthorizerType::Policy => "Policy",
            AuthorizerType::Webhook => "Webhook",
            AuthorizerType::DeletionGuard => "DeletionGuard",
        }
    }
}

impl fmt::Display for AuthorizerType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What an authorizer's error yields (`failurePolicy`, upstream spelling).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum FailurePolicy {
    /// The chain stops with a Deny whose reason says what failed.
    Deny,
    /// The chain goes on; the error is kept in `evaluationError`.
    NoOpinion,
}

impl FailurePolicy {
    /// The spelling in files.
    pub fn as_str(self) -> &'static str {
        match self {
            FailurePolicy::Deny => "Deny",
            FailurePolicy::NoOpinion => "NoOpinion",
        }
    }
}
