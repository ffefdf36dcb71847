//! From the gates' [`Finding`] to the verdict: the decision the mode gives it, the reason
//! (`observed, not enforced: ` before a would-be denial in Observe mode, `(risk=X score=N:
//! reasons)` after every message, the `OBSERVED_<CODE>` code) and the [`Assessment`] attached
//! for audit and metrics.

use super::assessment::{Assessment, GuardCode, ImpactReport, RiskLevel, UnusualReport};
use super::risk::Risk;
use crate::config::model::guard::Mode;
use crate::decision::{Decision, Reason, Verdict};
use crate::names::Code;
use std::sync::Arc;

/// What the gates found: a code, its message (before the risk suffix) and the ticket used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Finding {
    /// The code.
    pub(super) code: GuardCode,
    /// The message, without the Observe prefix and the risk suffix.
    pub(super) message: String,
    /// The ticket presented or found, if any.
    pub(super) ticket: Option<String>,
    /// The ticket is single-use: an admitted deletion marks it Used.
    pub(super) single_use: bool,
    /// A burst the unusual-deletion gate found on the way, if any.
    pub(super) unusual: Option<UnusualReport>,
}

impl Finding {
    /// A finding without a ticket.
    pub(super) fn new(code: GuardCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            ticket: None,
            single_use: false,
            unusual: None,
        }
    }

    /// The same finding reporting the burst the unusual-deletion gate found.
    pub(super) fn with_unusual(mut self, unusual: Option<UnusualReport>) -> Self {
        self.unusual = unusual;
        self
    }

    /// The same finding naming the ticket used.
    pub(super) fn with_ticket(mut self, ticket: Option<String>) -> Self {
        self.ticket = ticket;
        self
    }

    /// The same finding, its ticket single-use.
    pub(super) fn single_use(mut self, single_use: bool) -> Self {
        self.single_use = single_use;
        self
    }

    /// Every gate passed: `ALLOW`, or `ALLOW_WITH_COOLDOWN` at CRITICAL risk.
    pub(super) fn passed(risk: RiskLevel, ticket: Option<String>) -> Self {
        let finding = if risk == RiskLevel::Critical {
            Self::new(
                GuardCode::AllowWithCooldown,
                "critical change: stands aside (cool-down applies at admission)",
            )
        } else {
            Self::new(GuardCode::Allow, "checks passed")
        };
        finding.with_ticket(ticket)
    }
}

/// The verdict for a finding: Deny for a denial, NoOpinion otherwise, with the reason and the
/// assessment. In Observe mode the verdict is still what enforcing would answer, marked as
/// observed (`OBSERVED_<CODE>`, `observed, not enforced: `): the guard's entry is then in shadow
/// mode too (one setting), so the chain records it as `wouldHave` and answers NoOpinion.
pub(super) fn verdict(mode: Mode, finding: Finding, risk: Risk) -> Verdict {
    let denies = finding.code.denies();
    let decision = if denies {
        Decision::Deny
    } else {
        Decision::NoOpinion
    };
    let observed = if mode == Mode::Observe && denies {
        "observed, not enforced: "
    } else {
        ""
    };
    let message = message(observed, &finding.message, &risk);
    let audit_code = Assessment::audit_code_for(mode, finding.code);
    let reason = Reason {
        rule: None,
        message,
        code: Code::new(&audit_code).ok(),
    };
    let assessment = Assessment {
        mode,
        code: finding.code,
        audit_code,
        risk_score: risk.score,
        risk_level: risk.level,
        protection: risk.protection,
        risk_reasons: risk.reasons,
        ticket: finding.ticket,
        single_use_ticket: finding.single_use,
        impact: risk.impact.map(|i| {
            // The facts are gone by now where the pipeline concludes, so the lists move.
            let dependents = Arc::unwrap_or_clone(i.dependents);
            ImpactReport::new(i.target, dependents, i.estimated_qps, i.traffic)
        }),
        unusual: finding.unusual,
    };
    Verdict::new(decision, reason).with_detail(Arc::new(assessment))
}

/// `<observed><message> (risk=<LEVEL> score=<n>: <reason>, <reason>)`, written once at its
/// length (every decision has one; `format!` and a join cost several times this).
fn message(observed: &str, message: &str, risk: &Risk) -> String {
    let mut buffer = itoa::Buffer::new();
    let head = [observed, message, " (risk=", risk.level.as_str(), " score="];
    let score = buffer.format(risk.score);
    let reasons: usize = risk.reasons.iter().map(|r| r.len() + ", ".len()).sum();
    let len = head.iter().map(|p| p.len()).sum::<usize>() + score.len() + reasons + ")".len();
    let mut out = String::with_capacity(len);
    head.iter().for_each(|p| out.push_str(p));
    out.push_str(score);
    for (i, reason) in risk.reasons.iter().enumerate() {
        out.push_str(if i == 0 { ": " } else { ", " });
        out.push_str(reason);
    }
    out.push(')');
    out
}
