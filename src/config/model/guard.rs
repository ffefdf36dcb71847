//! The validated settings of a `DeletionGuard` authorizer (built by `config::validate::guard`
//! from [`crate::config::schema::guard`]). What the guard does with them at run time belongs to
//! `authorizer::deletion_guard`.

use super::buffer::BufferSettings;
pub use super::kind::Kind;
pub use super::level::Level;
pub use super::mode::Mode;
use super::pattern::{self, Pattern};
pub use super::scope::RateLimitScope;
use super::traffic::LiveTraffic;
use super::unusual::UnusualDeletions;
use super::window::{Freeze, Weekly};
use chrono_tz::Tz;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Duration;

/// A protected namespace rule.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ProtectedNamespace {
    /// Names or patterns.
    pub names: Vec<Pattern>,
    /// Its level.
    pub level: Level,
}

/// A protected resource rule.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ProtectedResource {
    /// The kind.
    pub kind: Kind,
    /// Names or patterns; empty means every name.
    pub names: Vec<Pattern>,
    /// Its level.
    pub level: Level,
}

/// Principals named by users, groups and service accounts (`namespace/name`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub(crate) struct Principals {
    /// User names or patterns.
    pub users: Vec<Pattern>,
    /// Group names.
    pub groups: Vec<String>,
}

impl Principals {
    /// Whether the user or one of its groups is named.
    pub fn contains(&self, user: &str, groups: &[String]) -> bool {
        pattern::any(&self.users, user) || groups.iter().any(|g| self.groups.contains(g))
    }
}

/// A trusted identity and what it may do.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Trusted {
    /// Who.
    pub(crate) principals: Principals,
    /// The highest protection level it may delete without window or ticket.
    pub(crate) max_level: Level,
}

/// A token bucket limit on destructive requests per user.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RateLimit {
    /// The kind it counts.
    pub kind: Kind,
    /// Requests per period (the bucket's capacity).
    pub count: u32,
    /// The period over which `count` tokens refill.
    pub period: Duration,
    /// Where its counters live.
    pub scope: RateLimitScope,
}

/// Risk level thresholds: LOW < medium <= MEDIUM < high <= HIGH < critical <= CRITICAL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Thresholds {
    /// Lowest MEDIUM score (25).
    pub(crate) medium: u32,
    /// Lowest HIGH score (50).
    pub high: u32,
    /// Lowest CRITICAL score (80).
    pub critical: u32,
}

impl Default for Thresholds {
    fn default() -> Self {
        Self {
            medium: 25,
            high: 50,
            critical: 80,
        }
    }
}

/// What each risk factor adds to the score: the model our users wrote, point for point, as the
/// defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RiskWeights {
    /// A critical target.
    pub critical: u32,
    /// A high target.
    pub high: u32,
    /// Deleting a Namespace.
    pub(crate) namespace_deletion: u32,
    /// A collection delete (authorization ring).
    pub(crate) deletecollection: u32,
    /// At least `many_pods_at` running pods affected.
    pub(crate) many_pods: u32,
    /// The pod count from which `many_pods` applies.
    pub(crate) many_pods_at: u32,
    /// Some running pods affected.
    pub(crate) some_pods: u32,
    /// An Ingress reaching the target.
    pub ingress: u32,
    /// Bound PersistentVolumeClaims affected.
    pub bound_volumes: u32,
    /// Inside business hours.
    pub(crate) business_hours: u32,
    /// Estimated requests per second per affected pod behind an Ingress.
    pub(crate) qps_per_pod: u32,
    /// Traffic of at least `high_traffic_at` requests per second reaching the target.
    pub(crate) high_traffic: u32,
    /// The requests per second from which `high_traffic` applies.
    pub(crate) high_traffic_at: u32,
}

impl Default for RiskWeights {
    fn default() -> Self {
        Self {
            critical: 40,
            high: 20,
            namespace_deletion: 30,
            deletecollection: 20,
            many_pods: 20,
            many_pods_at: 20,
            some_pods: 10,
            ingress: 15,
            bound_volumes: 20,
            business_hours: 10,
            qps_per_pod: 120,
            high_traffic: 0,
            high_traffic_at: 1000,
        }
    }
}

impl RiskWeights {
    /// What a protection level adds.
    pub fn level(&self, level: Level) -> u32 {
        match level {
            Level::Critical => self.critical,
            Level::High => self.high,
            Level::Standard => 0,
        }
    }
}

/// Where rate-limit tokens are spent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
pub(crate) enum RateLimitStage {
    /// By requests the authorization ring lets through (a `can-i` spends one too).
    #[default]
    Authorization,
    /// By deletes the validation ring admits (never dry runs); the authorization ring only
    /// refuses when a bucket is empty.
    Admission,
}

/// The validation ring's settings: what it reads on objects and namespaces.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct ObjectProtection {
    /// The protection label key (on objects and namespaces).
    pub(crate) protection_label: Option<String>,
    /// The ticket annotation key (on objects).
    pub(crate) ticket_annotation: Option<String>,
    /// Whether cascading deletions are refused unless ticketed.
    pub(crate) cascade: bool,
}

/// Where tickets come from and what they must carry.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TicketSettings {
    /// The tickets file (absolute, or relative to the working directory after resolution).
    pub file: Option<PathBuf>,
    /// The user `extra` key a request presents its ticket id under.
    pub(crate) extra_key: String,
    /// Protection levels that always need a ticket (besides HIGH/CRITICAL risk).
    pub(crate) required_for: Vec<Level>,
    /// Approvals required per level: standard, high, critical.
    pub approvals: [u32; 3],
    /// The tickets are the cluster's `DeletionTicket`s (`source: {cluster: {}}`), watched.
    pub cluster: Option<ClusterTickets>,
    /// The tickets are an external system's, asked over HTTPS (`source: {webhook: ...}`).
    pub webhook: Option<TicketWebhook>,
    /// Whether a `DeletionTicket` may name targets with `*` in name or namespace
    /// (`allowWildcardTargets`, default false).
    pub allow_wildcard_targets: bool,
}

/// An external ticket system as a guard's ticket source.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TicketWebhook {
    /// The kubeconfig of the endpoint (absolute).
    pub kubeconfig: PathBuf,
    /// How long one lookup may take (also bounded by the review's deadline).
    pub timeout: Duration,
    /// How long an Approved answer is reused (zero: never).
    pub approved_ttl: Duration,
    /// How long any other answer is reused (zero: never).
    pub unapproved_ttl: Duration,
}

/// The cluster's `DeletionTicket`s as a guard's ticket source.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct ClusterTickets {}

/// A validated `guard:` block.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GuardSpec {
    /// Enforce or Observe.
    pub mode: Mode,
    /// The time zone of business hours.
    pub(crate) time_zone: Tz,
    /// Business hours (+10 risk inside them).
    pub(crate) business_hours: Weekly,
    /// Resources whose `update`/`patch` are also guarded.
    pub(crate) update_resources: Vec<Kind>,
    /// Protected namespaces.
    pub namespaces: Vec<ProtectedNamespace>,
    /// Protected resources.
    pub resources: Vec<ProtectedResource>,
    /// Namespaces the guard never looks at (the control plane's always included).
    pub(crate) excluded_namespaces: Vec<Pattern>,
    /// Principals the guard never looks at (the control plane's always included).
    pub(crate) excluded_principals: Principals,
    /// Break-glass groups.
    pub(crate) break_glass_groups: Vec<String>,
    /// Trusted identities.
    pub trusted: Vec<Trusted>,
    /// Allowed weekly change windows; none configured means no window restriction.
    pub windows: Vec<Weekly>,
    /// Dated freezes.
    pub(crate) freezes: Vec<Freeze>,
    /// Tickets.
    pub tickets: TicketSettings,
    /// Rate limits.
    pub(crate) rate_limits: Vec<RateLimit>,
    /// The unusual-deletion gate, when configured.
    pub unusual_deletions: Option<UnusualDeletions>,
    /// Risk thresholds.
    pub(crate) thresholds: Thresholds,
    /// Risk weights.
    pub weights: RiskWeights,
    /// What the validation ring reads on objects.
    pub objects: ObjectProtection,
    /// Where rate-limit tokens are spent.
    pub(crate) rate_limit_stage: RateLimitStage,
    /// The buffer ring, when configured.
    pub buffer: Option<BufferSettings>,
    /// The live request rate at admission, when configured (else the fixed estimate).
    pub live_traffic: Option<LiveTraffic>,
    /// warrant's own service account as a user name (`system:serviceaccount:<ns>:<name>`):
    /// `warrantServiceAccount`, else [`DEFAULT_WARRANT_SERVICE_ACCOUNT`]. The only identity
    /// that may write the buffer's requester annotation.
    pub(crate) warrant_service_account: String,
}

/// Namespaces excluded by default: the control plane's.
pub(crate) const DEFAULT_EXCLUDED_NAMESPACES: [&str; 3] =
    ["kube-system", "kube-public", "kube-node-lease"];

/// warrant's own service account unless `warrantServiceAccount` names another.
pub(crate) const DEFAULT_WARRANT_SERVICE_ACCOUNT: &str =
    "system:serviceaccount:warrant-system:warrant";

/// Users excluded by default: warrant's own service account and the control plane's controllers
/// (the namespace controller and garbage collector delete on everyone's behalf).
pub(crate) const DEFAULT_EXCLUDED_USERS: [&str; 5] = [
    DEFAULT_WARRANT_SERVICE_ACCOUNT,
    "system:serviceaccount:kube-system:*",
    "system:kube-controller-manager",
    "system:kube-scheduler",
    "system:apiserver",
];

/// Groups excluded by default: the nodes.
pub(crate) const DEFAULT_EXCLUDED_GROUPS: [&str; 1] = ["system:nodes"];
