//! The CEL metric families: matchCondition evaluation time, errors and exclusions per
//! authorizer (upstream's `apiserver_authorization_match_condition_*`,
//! `k8s.io/apiserver/pkg/authorization/cel/metrics.go`), and policy rule matches.

use crate::authorizer::{Step, StepOutcome};
use crate::config::AuthorizerType;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct AuthorizerLabels {
    r#type: &'static str,
    name: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RuleLabels {
    authorizer: String,
    rule: String,
    effect: &'static str,
}

/// The CEL families, registered in the shared registry.
#[derive(Debug)]
pub struct CelMetrics {
    errors: Family<AuthorizerLabels, Counter>,
    exclusions: Family<AuthorizerLabels, Counter>,
    seconds: Family<AuthorizerLabels, Histogram, fn() -> Histogram>,
    rule_matches: Family<RuleLabels, Counter>,
}

impl CelMetrics {
    /// Registers the families in `registry`.
    pub fn register(registry: &mut Registry) -> Self {
        let errors = Family::<AuthorizerLabels, Counter>::default();
        registry.register(
            "warrant_match_condition_evaluation_errors",
            "Reviews for which an authorizer's matchConditions had an evaluation error",
            errors.clone(),
        );
        let exclusions = Family::<AuthorizerLabels, Counter>::default();
        registry.register(
            "warrant_match_condition_exclusions",
            "Reviews for which a matchCondition was false, so the authorizer was not asked",
            exclusions.clone(),
        );
        let seconds =
            Family::<AuthorizerLabels, Histogram, fn() -> Histogram>::new_with_constructor(|| {
                Histogram::new(super::metrics::LATENCY_BUCKETS)
            });
        registry.register(
            "warrant_match_condition_evaluation_seconds",
            "Time spent evaluating an authorizer's matchConditions for one review",
            seconds.clone(),
        );
        let rule_matches = Family::<RuleLabels, Counter>::default();
        registry.register(
            "warrant_policy_rule_matches",
            "Reviews decided by a policy rule, by rule and effect",
            rule_matches.clone(),
        );
        Self {
            errors,
            exclusions,
            seconds,
            rule_matches,
        }
    }

    /// Records what one step of the chain did.
    pub fn record(&self, step: &Step) {
        if let Some(report) = &step.conditions {
            let labels = AuthorizerLabels {
                r#type: step.authorizer_type.as_str(),
                name: step.authorizer.to_string(),
            };
            self.seconds
                .get_or_create(&labels)
                .observe(report.elapsed.as_secs_f64());
            if report.errored {
                self.errors.get_or_create(&labels).inc();
            }
            if report.excluded {
                self.exclusions.get_or_create(&labels).inc();
            }
        }
        if step.authorizer_type == AuthorizerType::Policy
            && let StepOutcome::Verdict(v) = &step.outcome
            && let Some(rule) = v.reason.as_ref().and_then(|r| r.rule.as_ref())
        {
            self.rule_matches
                .get_or_create(&RuleLabels {
                    authorizer: step.authorizer.to_string(),
                    rule: rule.to_string(),
                    effect: v.decision.as_str(),
                })
                .inc();
        }
    }
}
