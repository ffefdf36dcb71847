//! The deletion guard's families: `warrant_guard_decisions_total{name,code,mode}` (every
//! assessment, would-be denials in Observe mode included) and
//! `warrant_guard_break_glass_total{name}`.

use crate::authorizer::deletion_guard::GuardCode;
use crate::authorizer::{Step, StepOutcome};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DecisionLabels {
    name: String,
    code: &'static str,
    mode: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct NameLabels {
    name: String,
}

/// The guard families, registered in the shared registry.
#[derive(Debug)]
pub struct GuardMetrics {
    decisions: Family<DecisionLabels, Counter>,
    break_glass: Family<NameLabels, Counter>,
}

impl GuardMetrics {
    /// Registers the families in `registry`.
    pub fn register(registry: &mut Registry) -> Self {
        let decisions = Family::<DecisionLabels, Counter>::default();
        registry.register(
            "warrant_guard_decisions",
            "Deletion guard assessments, by code (without the OBSERVED_ prefix) and mode",
            decisions.clone(),
        );
        let break_glass = Family::<NameLabels, Counter>::default();
        registry.register(
            "warrant_guard_break_glass",
            "Destructive requests by break-glass group members that the guard let through",
            break_glass.clone(),
        );
        Self {
            decisions,
            break_glass,
        }
    }

    /// Records what one step of the chain did, when it is a guard assessment.
    pub fn record(&self, step: &Step) {
        let StepOutcome::Verdict(v) = &step.outcome else {
            return;
        };
        let Some(a) = &v.detail else { return };
        let name = step.authorizer.to_string();
        if a.code == GuardCode::BreakGlass {
            self.break_glass
                .get_or_create(&NameLabels { name: name.clone() })
                .inc();
        }
        self.decisions
            .get_or_create(&DecisionLabels {
                name,
                code: a.code.as_str(),
                mode: a.mode.as_str(),
            })
            .inc();
    }
}
