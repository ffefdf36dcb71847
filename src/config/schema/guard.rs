//! The `guard:` block of a `DeletionGuard` authorizer as written (strict: unknown fields are
//! decoding errors with their line). Validation into [`crate::config::model::guard::GuardSpec`]
//! is `config::validate::guard`; the runtime is `authorizer::deletion_guard`.

use super::buffer::BufferFile;
pub use super::kind::KindFile;
use super::traffic::LiveTrafficFile;
use super::unusual::UnusualDeletionsFile;
use serde::Deserialize;
use serde_saphyr::Spanned;

/// The `guard:` block.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct GuardFile {
    /// `Enforce` (default) or `Observe`.
    #[serde(default)]
    pub mode: Option<Spanned<String>>,
    /// IANA zone of business hours (default `UTC`).
    #[serde(default)]
    pub(crate) time_zone: Option<Spanned<String>>,
    /// Business hours (default every day 10:00-22:00).
    #[serde(default)]
    pub(crate) business_hours: Option<Spanned<WindowFile>>,
    /// Kinds whose `update` and `patch` are guarded too.
    #[serde(default)]
    pub(crate) update_resources: Vec<Spanned<KindFile>>,
    /// Protected namespaces.
    #[serde(default)]
    pub(crate) protected_namespaces: Vec<Spanned<ProtectedNamespaceFile>>,
    /// Protected resources.
    #[serde(default)]
    pub(crate) protected_resources: Vec<Spanned<ProtectedResourceFile>>,
    /// Namespaces never guarded, besides the control plane's.
    #[serde(default)]
    pub(crate) excluded_namespaces: Vec<String>,
    /// Principals never guarded, besides the control plane's.
    #[serde(default)]
    pub(crate) excluded_principals: PrincipalsFile,
    /// The name of warrant's own service account (`namespace/name`, default
    /// `warrant-system/warrant`), always excluded.
    #[serde(default)]
    pub(crate) warrant_service_account: Option<Spanned<String>>,
    /// Groups whose members break glass.
    #[serde(default)]
    pub(crate) break_glass_groups: Vec<String>,
    /// Trusted identities.
    #[serde(default)]
    pub trusted: Vec<Spanned<TrustedFile>>,
    /// Allowed change windows.
    #[serde(default)]
    pub windows: Vec<Spanned<WindowFile>>,
    /// Dated freezes.
    #[serde(default)]
    pub(crate) freezes: Vec<Spanned<FreezeFile>>,
    /// Tickets.
    #[serde(default)]
    pub tickets: Option<Spanned<TicketsFile>>,
    /// Rate limits.
    #[serde(default)]
    pub(crate) rate_limits: Vec<Spanned<RateLimitFile>>,
    /// A principal's burst of destructive requests far above its own baseline
    /// (`UNUSUAL_DELETION_RATE`).
    #[serde(default)]
    pub(crate) unusual_deletions: Option<Spanned<UnusualDeletionsFile>>,
    /// Risk level thresholds.
    #[serde(default)]
    pub(crate) risk_thresholds: Option<Spanned<ThresholdsFile>>,
    /// What each risk factor adds to the score (the defaults are the documented model).
    #[serde(default)]
    pub(crate) risk_weights: Option<Spanned<RiskWeightsFile>>,
    /// The label whose value (`critical`, `high`, `standard`) protects an object or a namespace
    /// at admission (the validation ring).
    #[serde(default)]
    pub(crate) protection_label: Option<Spanned<String>>,
    /// The annotation carrying a ticket id on the object (the validation ring).
    #[serde(default)]
    pub(crate) ticket_annotation: Option<Spanned<String>>,
    /// At admission, refuse to delete a Namespace holding running pods, a CRD with objects or a
    /// workload with replicas above zero unless ticketed (`CASCADE_BLOCKED`).
    #[serde(default)]
    pub(crate) cascade_protection: Option<bool>,
    /// Where rate-limit tokens are spent: `Authorization` (default) or `Admission`.
    #[serde(default)]
    pub(crate) rate_limit_stage: Option<Spanned<String>>,
    /// The buffer ring: warrant's finalizer and the cool-down of CRITICAL deletions.
    #[serde(default)]
    pub buffer: Option<Spanned<BufferFile>>,
    /// At admission, the target's real request rate from a Prometheus server instead of the
    /// fixed estimate.
    #[serde(default)]
    pub(crate) live_traffic: Option<Spanned<LiveTrafficFile>>,
}

/// A protected namespace rule.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct ProtectedNamespaceFile {
    /// Names or patterns.
    pub names: Vec<String>,
    /// `critical`, `high` or `standard`.
    pub level: String,
}

/// A protected resource rule.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct ProtectedResourceFile {
    /// API group.
    #[serde(default)]
    pub group: String,
    /// Plural resource.
    pub resource: String,
    /// Names or patterns (default every name).
    #[serde(default)]
    pub names: Vec<String>,
    /// `critical`, `high` or `standard`.
    pub level: String,
}

/// Users, groups and service accounts.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct PrincipalsFile {
    /// User names or patterns.
    #[serde(default)]
    pub users: Vec<String>,
    /// Groups.
    #[serde(default)]
    pub groups: Vec<String>,
    /// Service accounts as `namespace/name`.
    #[serde(default)]
    pub(crate) service_accounts: Vec<String>,
}

/// A trusted identity.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TrustedFile {
    /// Users.
    #[serde(default)]
    pub users: Vec<String>,
    /// Groups.
    #[serde(default)]
    pub groups: Vec<String>,
    /// Service accounts as `namespace/name`.
    #[serde(default)]
    pub(crate) service_accounts: Vec<String>,
    /// The highest level it may delete in any window without a ticket (default `standard`).
    #[serde(default)]
    pub(crate) max_level: Option<String>,
}

/// A weekly window.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WindowFile {
    /// Days it starts on (`Mon` .. `Sun`).
    pub days: Vec<String>,
    /// `HH:MM`.
    pub start: String,
    /// `HH:MM`; before `start` crosses midnight.
    pub end: String,
    /// IANA zone (default the guard's `timeZone`).
    #[serde(default)]
    pub(crate) time_zone: Option<String>,
}

/// A dated freeze.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct FreezeFile {
    /// RFC 3339 start.
    pub start: String,
    /// RFC 3339 end.
    pub end: String,
    /// Why.
    #[serde(default)]
    pub reason: String,
}

/// Ticket settings.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TicketsFile {
    /// The tickets file, relative to the configuration file.
    #[serde(default)]
    pub file: Option<String>,
    /// The user `extra` key carrying the ticket id (default `warrant.dev/ticket`).
    #[serde(default)]
    pub(crate) extra_key: Option<String>,
    /// Levels that always need a ticket.
    #[serde(default)]
    pub(crate) required_for: Vec<String>,
    /// Approvals required per level (defaults: critical 2, high 1, standard 0).
    #[serde(default)]
    pub approvals: Option<ApprovalsFile>,
    /// Where tickets come from besides `file` (`cluster: {}`: the cluster's DeletionTickets;
    /// `webhook`: an external ticket system).
    #[serde(default)]
    pub source: Option<TicketSourceFile>,
    /// Whether a `DeletionTicket` may name its targets with `*` in name or namespace (default
    /// false: refused at create).
    #[serde(default)]
    pub(crate) allow_wildcard_targets: Option<bool>,
}

/// Where tickets come from.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TicketSourceFile {
    /// The cluster's `DeletionTicket` objects, watched.
    #[serde(default)]
    pub cluster: Option<ClusterTicketsFile>,
    /// An external ticket system, asked over HTTPS for each presented ticket.
    #[serde(default)]
    pub webhook: Option<Spanned<TicketWebhookFile>>,
}

/// An external ticket system as the ticket source: where it is and how long its answers count.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TicketWebhookFile {
    /// The kubeconfig naming the endpoint, its CA, client certificate and credentials (an
    /// absolute path).
    #[serde(default)]
    pub kube_config_file: Option<Spanned<String>>,
    /// How long one lookup may take (a Go duration, default `2s`, at most `10s`).
    #[serde(default)]
    pub timeout: Option<Spanned<String>>,
    /// How long an Approved answer is reused (default `30s`; `0s` never).
    #[serde(default, rename = "approvedTTL")]
    pub approved_ttl: Option<Spanned<String>>,
    /// How long any other answer (not found, Pending, Rejected, Expired) is reused (default
    /// `5s`; `0s` never).
    #[serde(default, rename = "unapprovedTTL")]
    pub unapproved_ttl: Option<Spanned<String>>,
}

/// The cluster's `DeletionTicket`s as the ticket source (no settings yet).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ClusterTicketsFile {}

/// Approvals per level.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ApprovalsFile {
    /// Critical targets.
    #[serde(default)]
    pub critical: Option<u32>,
    /// High targets.
    #[serde(default)]
    pub high: Option<u32>,
    /// Standard targets.
    #[serde(default)]
    pub standard: Option<u32>,
}

/// A rate limit.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RateLimitFile {
    /// API group (`*` any).
    #[serde(default)]
    pub group: String,
    /// Plural resource (`*` any).
    pub resource: String,
    /// Requests per period.
    pub count: u32,
    /// A Go duration (`1h`, `1m`).
    pub per: String,
    /// Where the counters live: `Replica` (default, each replica its own) or `Cluster` (one
    /// bucket in the cluster shared by every replica).
    #[serde(default)]
    pub scope: Option<Spanned<String>>,
}

/// Risk thresholds.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct ThresholdsFile {
    /// Lowest MEDIUM score (25).
    #[serde(default)]
    pub(crate) medium: Option<u32>,
    /// Lowest HIGH score (50).
    #[serde(default)]
    pub high: Option<u32>,
    /// Lowest CRITICAL score (80).
    #[serde(default)]
    pub critical: Option<u32>,
}

/// Risk weights; every field defaults to the documented model.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RiskWeightsFile {
    /// A critical target (40).
    #[serde(default)]
    pub critical: Option<u32>,
    /// A high target (20).
    #[serde(default)]
    pub high: Option<u32>,
    /// Deleting a Namespace (30).
    #[serde(default)]
    pub(crate) namespace_deletion: Option<u32>,
    /// A collection delete, in the authorization ring (20).
    #[serde(default)]
    pub(crate) deletecollection: Option<u32>,
    /// At least `manyPodsAt` running pods affected (20).
    #[serde(default)]
    pub(crate) many_pods: Option<u32>,
    /// The pod count from which `manyPods` applies (20).
    #[serde(default)]
    pub(crate) many_pods_at: Option<u32>,
    /// Some (fewer than `manyPodsAt`) running pods affected (10).
    #[serde(default)]
    pub(crate) some_pods: Option<u32>,
    /// An Ingress reaching the target (15).
    #[serde(default)]
    pub ingress: Option<u32>,
    /// Bound PersistentVolumeClaims affected (20).
    #[serde(default)]
    pub bound_volumes: Option<u32>,
    /// Inside business hours (10).
    #[serde(default)]
    pub(crate) business_hours: Option<u32>,
    /// The traffic estimate per affected pod behind an Ingress, in requests per second (120).
    #[serde(default)]
    pub(crate) qps_per_pod: Option<u32>,
    /// Traffic of at least `highTrafficAt` requests per second reaching the target (0).
    #[serde(default)]
    pub(crate) high_traffic: Option<u32>,
    /// The requests per second from which `highTraffic` applies (1000).
    #[serde(default)]
    pub(crate) high_traffic_at: Option<u32>,
}
