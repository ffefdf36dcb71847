//! What the guard concluded about one review: its code, the risk score and level with the
//! reasons, as the audit record and the answer's reason show them. Computing them is the
//! pipeline's business; this module owns the vocabulary and the audit shape.

use crate::config::model::guard::{Level, Mode};
use crate::config::model::unusual::{UnusualAction, UnusualDeletions};
use crate::decision::AnnotationValue;
use serde::Serialize;

mod report;

/// The guard's decision codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum GuardCode {
    /// Stands aside.
    Allow,
    /// Stands aside; a CRITICAL change (the cool-down belongs to admission).
    AllowWithCooldown,
    /// A break-glass group member: stands aside.
    BreakGlass,
    /// Outside every change window, or in a freeze.
    WindowBlocked,
    /// A ticket is required and none was presented.
    MissingTicket,
    /// The presented ticket does not exist.
    TicketNotFound,
    /// The ticket is not approved.
    TicketNotApproved,
    /// The ticket has fewer approvers than the level requires.
    InsufficientApprovals,
    /// The ticket has expired.
    TicketExpired,
    /// A single-use ticket already used for another deletion.
    TicketUsed,
    /// The ticket does not cover this request.
    TicketScope,
    /// Over a rate limit.
    RateLimited,
    /// The tickets file could not be read.
    TicketSourceUnavailable,
    /// At admission: deleting the object cascades (running pods, CRD objects, replicas) and no
    /// ticket covers it.
    CascadeBlocked,
    /// At admission, in Observe mode: the cluster view could not answer.
    ClusterUnavailable,
    /// An exclusion (namespace, principal, group) covers the request: stands aside.
    Excluded,
    /// A confirmation of a held deletion on an object that is not Terminating.
    NotTerminating,
    /// A confirmation of a held deletion by the user who asked for the deletion.
    ConfirmationByRequester,
    /// A confirmation of a held deletion whose requester is not recorded on the object (so the
    /// confirmer cannot be told apart from the deleter).
    RequesterUnknown,
    /// An UPDATE by anyone but warrant's own service account that sets, changes or removes the
    /// buffer's requester annotation.
    RequesterAnnotationReserved,
    /// A DELETE of an object carrying the buffer's finalizer, refused because its requester
    /// could not be recorded and the deletion needs a confirmation.
    RequesterNotRecorded,
    /// The requester's rate of destructive requests on this kind is far above its own baseline
    /// (`unusualDeletions`, action `Deny`, or `RequireTicket` without a valid ticket).
    UnusualDeletionRate,
}

impl GuardCode {
    /// The code as written in reasons, audit records and metric labels.
    pub fn as_str(self) -> &'static str {
        match self {
            GuardCode::Allow => "ALLOW",
            GuardCode::AllowWithCooldown => "ALLOW_WITH_COOLDOWN",
            GuardCode::BreakGlass => "BREAK_GLASS",
            GuardCode::WindowBlocked => "WINDOW_BLOCKED",
            GuardCode::MissingTicket => "MISSING_TICKET",
            GuardCode::TicketNotFound => "TICKET_NOT_FOUND",
            GuardCode::TicketNotApproved => "TICKET_NOT_APPROVED",
            GuardCode::InsufficientApprovals => "INSUFFICIENT_APPROVALS",
            GuardCode::TicketExpired => "TICKET_EXPIRED",
            GuardCode::TicketUsed => "TICKET_USED",
            GuardCode::TicketScope => "TICKET_SCOPE",
            GuardCode::RateLimited => "RATE_LIMITED",
            GuardCode::TicketSourceUnavailable => "TICKET_SOURCE_UNAVAILABLE",
            GuardCode::CascadeBlocked => "CASCADE_BLOCKED",
            GuardCode::ClusterUnavailable => "CLUSTER_UNAVAILABLE",
            GuardCode::Excluded => "EXCLUDED",
            GuardCode::NotTerminating => "NOT_TERMINATING",
            GuardCode::ConfirmationByRequester => "CONFIRMATION_BY_REQUESTER",
            GuardCode::RequesterUnknown => "REQUESTER_UNKNOWN",
            GuardCode::RequesterAnnotationReserved => "REQUESTER_ANNOTATION_RESERVED",
            GuardCode::RequesterNotRecorded => "REQUESTER_NOT_RECORDED",
            GuardCode::UnusualDeletionRate => "UNUSUAL_DELETION_RATE",
        }
    }

    /// Whether the code is a denial (in Enforce mode).
    pub fn denies(self) -> bool {
        !matches!(
            self,
            GuardCode::Allow
                | GuardCode::AllowWithCooldown
                | GuardCode::BreakGlass
                | GuardCode::Excluded
        )
    }
}

/// A risk level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum RiskLevel {
    /// Below the medium threshold.
    Low,
    /// Medium.
    Medium,
    /// High: a ticket is required.
    High,
    /// Critical: a ticket is required; stands aside with a cool-down note.
    Critical,
}

impl RiskLevel {
    /// Upper-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            RiskLevel::Low => "LOW",
            RiskLevel::Medium => "MEDIUM",
            RiskLevel::High => "HIGH",
            RiskLevel::Critical => "CRITICAL",
        }
    }
}

/// The guard's conclusion for one review in its scope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Assessment {
    /// The mode it ran in.
    pub mode: Mode,
    /// The decision code (before the Observe prefix).
    #[serde(skip)]
    pub code: GuardCode,
    /// The code as audited: `OBSERVED_<CODE>` for a would-be denial in Observe mode.
    #[serde(rename = "code")]
    pub(crate) audit_code: String,
    /// The risk score.
    pub(crate) risk_score: u32,
    /// Its level.
    pub(crate) risk_level: RiskLevel,
    /// The target's protection level, if protected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protection: Option<Level>,
    /// What made up the score.
    pub(crate) risk_reasons: Vec<String>,
    /// The ticket used, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ticket: Option<String>,
    /// The ticket used is single-use (a `DeletionTicket`): an admitted deletion marks it Used.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub single_use_ticket: bool,
    /// At admission: what deleting the object takes down.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub impact: Option<ImpactReport>,
    /// The requester's burst far above its baseline, when the unusual-deletion gate found one
    /// (whatever its action).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unusual: Option<UnusualReport>,
}

/// A burst the unusual-deletion gate found, as the audit record shows it (numbers rounded to
/// hundredths).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UnusualReport {
    /// What the burst met.
    pub action: UnusualAction,
    /// The requester's requests of this kind in the last window, this one included.
    pub in_window: f64,
    /// The requester's usual rate per hour (before the floor).
    pub baseline_per_hour: f64,
    /// The window's count above which a request is a burst.
    pub threshold: f64,
    /// The window, in seconds.
    pub window_seconds: u64,
}

impl UnusualReport {
    /// The report of a judgement under settings `s`.
    pub(crate) fn new(s: &UnusualDeletions, j: &super::baseline::Judgement) -> Self {
        let round = |v: f64| (v * 100.0).round() / 100.0;
        Self {
            action: s.action,
            in_window: round(j.in_window),
            baseline_per_hour: round(j.baseline_per_hour),
            threshold: round(j.threshold),
            window_seconds: s.window.as_secs(),
        }
    }
}

impl PartialEq for UnusualReport {
    fn eq(&self, other: &Self) -> bool {
        self.action == other.action
            && self.in_window.to_bits() == other.in_window.to_bits()
            && self.baseline_per_hour.to_bits() == other.baseline_per_hour.to_bits()
            && self.threshold.to_bits() == other.threshold.to_bits()
            && self.window_seconds == other.window_seconds
    }
}

impl Eq for UnusualReport {}

/// What deleting an object takes down, as the validation ring found it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImpactReport {
    /// The object judged: `namespace/resource.group/name` (`resource.group/name` when
    /// cluster-scoped).
    pub target: String,
    /// Running pods affected.
    pub running_pods: u32,
    /// Services selecting them (the first [`REPORT_NAMES`]; `serviceCount` has them all).
    pub services: Vec<String>,
    /// How many Services.
    pub(crate) service_count: usize,
    /// Ingresses reaching them or the object (the first [`REPORT_NAMES`]).
    pub ingresses: Vec<String>,
    /// How many Ingresses.
    pub(crate) ingress_count: usize,
    /// Bound PersistentVolumeClaims affected (the first [`REPORT_NAMES`]).
    pub bound_volumes: Vec<String>,
    /// How many bound claims.
    pub(crate) bound_volume_count: usize,
    /// Estimated requests per second through the Ingresses.
    pub(crate) estimated_qps: u64,
    /// The request rate the score used: the live rate or the estimate, and why.
    pub traffic: super::traffic::Traffic,
}

/// The most names a report lists per kind: a Namespace of thousands of claims must not make
/// every admission response and API server audit event that large.
pub(crate) const REPORT_NAMES: usize = 10;

impl ImpactReport {
    /// The report of a target's dependents, its name lists cut at [`REPORT_NAMES`].
    pub fn new(
        target: String,
        d: crate::object::Dependents,
        estimated_qps: u64,
        traffic: super::traffic::Traffic,
    ) -> Self {
        let first = |mut v: Vec<String>| {
            v.truncate(REPORT_NAMES);
            v
        };
        Self {
            target,
            running_pods: d.running_pods,
            service_count: d.services.len(),
            services: first(d.services),
            ingress_count: d.ingresses.len(),
            ingresses: first(d.ingresses),
            bound_volume_count: d.bound_volumes.len(),
            bound_volumes: first(d.bound_volumes),
            estimated_qps,
            traffic,
        }
    }
}

impl Assessment {
    /// The recorded code for a mode.
    pub(crate) fn audit_code_for(mode: Mode, code: GuardCode) -> String {
        if mode == Mode::Observe && code.denies() {
            format!("OBSERVED_{}", code.as_str())
        } else {
            code.as_str().to_owned()
        }
    }
}

impl crate::decision::VerdictDetail for Assessment {
    fn audit_key(&self) -> &'static str {
        "guard"
    }

    fn audit_value(&self) -> serde_json::Value {
        // An Assessment is plain data (strings, numbers, enums): serializing it cannot fail.
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    fn admission_annotations(&self) -> Vec<(&'static str, AnnotationValue)> {
        vec![
            ("code", self.audit_code.as_str().into()),
            ("risk-level", self.risk_level.as_str().into()),
            (
                "risk-score",
                itoa::Buffer::new().format(self.risk_score).into(),
            ),
            // Written by hand in the struct's order, escaped as it is written.
            ("report", AnnotationValue::written(|t| self.write_report(t))),
        ]
    }

    fn observed_denial(&self) -> bool {
        self.mode == Mode::Observe && self.code.denies()
    }

    fn single_use_ticket(&self) -> Option<&str> {
        let enforced = self.mode == Mode::Enforce && !self.code.denies();
        self.ticket
            .as_deref()
            .filter(|_| enforced && self.single_use_ticket)
    }
}
