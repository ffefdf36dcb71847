//! The deletion guard's series, resolved when the guard is built:
//! `warrant_guard_decisions_total{name,code,mode}` (every assessment, would-be denials in Observe
//! mode included), `warrant_guard_break_glass_total{name}` and
//! `warrant_guard_unusual_deletions_total{name,action}` and
//! `warrant_guard_traffic_fallbacks_total{name,reason}`.

use super::assessment::GuardCode;
use crate::authorizer::metrics::{
    ByResult, Families, GuardDecisionLabels, Handle, NameLabels, TrafficFallbackLabels,
    UnusualLabels,
};
use crate::names::AuthorizerName;
use prometheus_client::metrics::counter::Counter;

/// Every code an assessment can carry.
const CODES: [GuardCode; 21] = [
    GuardCode::Allow,
    GuardCode::AllowWithCooldown,
    GuardCode::BreakGlass,
    GuardCode::WindowBlocked,
    GuardCode::MissingTicket,
    GuardCode::TicketNotFound,
    GuardCode::TicketNotApproved,
    GuardCode::InsufficientApprovals,
    GuardCode::TicketExpired,
    GuardCode::TicketScope,
    GuardCode::RateLimited,
    GuardCode::TicketSourceUnavailable,
    GuardCode::CascadeBlocked,
    GuardCode::ClusterUnavailable,
    GuardCode::Excluded,
    GuardCode::NotTerminating,
    GuardCode::ConfirmationByRequester,
    GuardCode::RequesterUnknown,
    GuardCode::RequesterAnnotationReserved,
    GuardCode::RequesterNotRecorded,
    GuardCode::UnusualDeletionRate,
];

/// Every reason the live traffic source falls back to the estimate.
const FALLBACK_REASONS: [&str; 7] = [
    "timeout",
    "unreachable",
    "status",
    "decode",
    "empty",
    "missing_label",
    "client",
];

/// The series of one guard.
#[derive(Debug)]
pub(crate) struct GuardMetrics {
    decisions: ByResult<GuardDecisionLabels, Counter>,
    break_glass: Handle<NameLabels, Counter>,
    unusual: Handle<UnusualLabels, Counter>,
    traffic_fallbacks: ByResult<TrafficFallbackLabels, Counter>,
}

impl GuardMetrics {
    /// The series of guard `name`, running in `mode`, in `families`.
    pub fn new(
        families: &Families,
        name: &AuthorizerName,
        mode: &'static str,
        unusual_action: &'static str,
    ) -> Self {
        let codes: Vec<&'static str> = CODES.iter().map(|c| c.as_str()).collect();
        let label_name = name.to_string();
        let fallback_name = name.to_string();
        Self {
            decisions: ByResult::new(&families.guard_decisions, &codes, move |code| {
                GuardDecisionLabels {
                    name: label_name.clone(),
                    code,
                    mode,
                }
            }),
            break_glass: Handle::new(
                &families.guard_break_glass,
                NameLabels {
                    name: name.to_string(),
                },
            ),
            traffic_fallbacks: ByResult::new(
                &families.guard_traffic_fallbacks,
                &FALLBACK_REASONS,
                move |reason| TrafficFallbackLabels {
                    name: fallback_name.clone(),
                    reason,
                },
            ),
            unusual: Handle::new(
                &families.guard_unusual,
                UnusualLabels {
                    name: name.to_string(),
                    action: unusual_action,
                },
            ),
        }
    }

    /// Records one burst the unusual-deletion gate found.
    pub fn record_unusual(&self) {
        self.unusual.get().inc();
    }

    /// Records one use of the fixed estimate because the live traffic source could not answer.
    pub fn record_traffic_fallback(&self, reason: &'static str) {
        self.traffic_fallbacks.with(reason, |c| {
            c.inc();
        });
    }

    /// Records one assessment by its code (without the `OBSERVED_` prefix).
    pub fn record(&self, code: GuardCode) {
        if code == GuardCode::BreakGlass {
            self.break_glass.get().inc();
        }
        self.decisions.with(code.as_str(), |c| {
            c.inc();
        });
    }
}
