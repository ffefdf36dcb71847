//! The deletion guard's series, resolved when the guard is built:
//! `warrant_guard_decisions_total{name,code,mode}` (every assessment, would-be denials in Observe
//! mode included) and `warrant_guard_break_glass_total{name}`.

use super::assessment::GuardCode;
use crate::authorizer::metrics::{ByResult, Families, GuardDecisionLabels, Handle, NameLabels};
use crate::names::AuthorizerName;
use prometheus_client::metrics::counter::Counter;

/// Every code an assessment can carry.
const CODES: [GuardCode; 19] = [
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
];

/// The series of one guard.
#[derive(Debug)]
pub(crate) struct GuardMetrics {
    decisions: ByResult<GuardDecisionLabels, Counter>,
    break_glass: Handle<NameLabels, Counter>,
}

impl GuardMetrics {
    /// The series of guard `name`, running in `mode`, in `families`.
    pub fn new(families: &Families, name: &AuthorizerName, mode: &'static str) -> Self {
        let codes: Vec<&'static str> = CODES.iter().map(|c| c.as_str()).collect();
        let label_name = name.to_string();
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
        }
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
