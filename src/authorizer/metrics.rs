//! The metric families the chain and its authorizers record into, and the handles an entry
//! resolves from them once, when its chain is built: recording a review allocates no label and
//! walks no trace. A handle binds its series on first use, so a series still appears only once
//! something happened to it. Registering the families, and the chain-wide families (attempts,
//! duration, HTTP, reloads), belong to `telemetry::metrics`, which imports this module; this
//! module imports nothing of telemetry.
//!
//! Names are upstream's (`k8s.io/apiserver/pkg/authorization/metrics/metrics.go`,
//! `pkg/authorization/cel/metrics.go`) under the `warrant_` prefix.

use super::match_conditions::ConditionReport;
use crate::config::{AuthorizerType, FailurePolicy};
use crate::decision::Decision;
use crate::names::AuthorizerName;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use std::fmt;
use std::hash::Hash;
use std::sync::OnceLock;

/// Latency buckets in seconds: 10 µs to 10 s (a decision is usually far below upstream's 5 ms
/// first bucket).
pub const LATENCY_BUCKETS: [f64; 19] = [
    0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
    0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// A histogram with [`LATENCY_BUCKETS`].
pub(crate) fn latency_histogram() -> Histogram {
    Histogram::new(LATENCY_BUCKETS)
}

/// A family whose metrics are made by a plain function (every family here).
pub(crate) type FamilyOf<L, M> = Family<L, M, fn() -> M>;

/// One series of a family, its labels built once; the series is bound on first use.
pub(crate) struct Handle<L, M> {
    family: FamilyOf<L, M>,
    labels: L,
    series: OnceLock<M>,
}

impl<L: fmt::Debug, M> fmt::Debug for Handle<L, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handle")
            .field("labels", &self.labels)
            .finish_non_exhaustive()
    }
}

impl<L: Clone + Hash + Eq, M: Clone> Handle<L, M> {
    /// The series of `family` labelled `labels`.
    pub fn new(family: &FamilyOf<L, M>, labels: L) -> Self {
        Self {
            family: family.clone(),
            labels,
            series: OnceLock::new(),
        }
    }

    /// The series (bound now if this is its first use).
    pub fn get(&self) -> &M {
        self.series
            .get_or_init(|| self.family.get_or_create(&self.labels).clone())
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DecisionLabels {
    r#type: &'static str,
    name: String,
    decision: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FailureLabels {
    r#type: &'static str,
    name: String,
    policy: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct AuthorizerLabels {
    r#type: &'static str,
    name: String,
}

/// The labels of one policy rule's matches.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct RuleLabels {
    /// The policy authorizer.
    pub authorizer: String,
    /// The rule.
    pub rule: String,
    /// Its effect (`Allow`, `Deny`).
    pub effect: &'static str,
}

/// The labels of `warrant_shadow_decisions`: what a shadow (an entry or a rule in `mode:
/// Observe`) would have answered.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ShadowLabels {
    /// The authorizer.
    pub authorizer: String,
    /// The rule (of a shadow rule, or the one that decided inside a shadow entry), or "".
    pub rule: String,
    /// `Allow`, `Deny`, `NoOpinion`, or `Error` for a shadow rule that failed.
    pub would: &'static str,
}

/// The labels of `warrant_shadow_disagreements`: a shadow would have decided, and the chain
/// answered otherwise.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct DisagreementLabels {
    /// The authorizer.
    pub authorizer: String,
    /// The rule, or "".
    pub rule: String,
    /// What the shadow would have answered (`Allow` or `Deny`).
    pub would: &'static str,
    /// What the chain answered (`Allow`, `Deny`, `NoOpinion`).
    pub chain: &'static str,
}

/// The labels of the deletion guard's assessments.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct GuardDecisionLabels {
    /// The guard.
    pub name: String,
    /// The code, without the `OBSERVED_` prefix.
    pub code: &'static str,
    /// `Enforce` or `Observe`.
    pub mode: &'static str,
}

/// The labels of the unusual-deletion gate's bursts.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct UnusualLabels {
    /// The guard.
    pub name: String,
    /// What a burst meets: `Observe`, `RequireTicket` or `Deny`.
    pub action: &'static str,
}

/// The labels of the validation ring's live-traffic fallbacks.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct TrafficFallbackLabels {
    /// The guard.
    pub name: String,
    /// Why the fixed estimate was used: `timeout`, `unreachable`, `status`, `decode`, `empty`,
    /// `missing_label` or `client`.
    pub reason: &'static str,
}

/// A label set naming one authorizer.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct NameLabels {
    /// The authorizer.
    pub name: String,
}

/// The labels of the downstream webhook families.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct WebhookLabels {
    /// The webhook authorizer.
    pub name: String,
    /// What happened (`success`, `error`, `timeout`, `canceled`; `hit`, `miss`, ...).
    pub result: &'static str,
}

/// Every family the chain and its authorizers record into. Cloning shares the families.
#[derive(Clone, Debug)]
pub struct Families {
    decisions: FamilyOf<DecisionLabels, Counter>,
    failures: FamilyOf<FailureLabels, Counter>,
    condition_errors: FamilyOf<AuthorizerLabels, Counter>,
    condition_exclusions: FamilyOf<AuthorizerLabels, Counter>,
    condition_seconds: FamilyOf<AuthorizerLabels, Histogram>,
    /// `warrant_policy_rule_matches`.
    pub(crate) rule_matches: FamilyOf<RuleLabels, Counter>,
    /// `warrant_guard_decisions`.
    pub(crate) guard_decisions: FamilyOf<GuardDecisionLabels, Counter>,
    /// `warrant_guard_break_glass`.
    pub(crate) guard_break_glass: FamilyOf<NameLabels, Counter>,
    /// `warrant_guard_unusual_deletions`.
    pub(crate) guard_unusual: FamilyOf<UnusualLabels, Counter>,
    /// `warrant_guard_traffic_fallbacks`.
    pub(crate) guard_traffic_fallbacks: FamilyOf<TrafficFallbackLabels, Counter>,
    /// `warrant_webhook_evaluations`.
    pub(crate) webhook_evaluations: FamilyOf<WebhookLabels, Counter>,
    /// `warrant_webhook_duration_seconds`.
    pub(crate) webhook_duration: FamilyOf<WebhookLabels, Histogram>,
    /// `warrant_webhook_evaluations_fail_open`.
    pub(crate) webhook_fail_open: FamilyOf<WebhookLabels, Counter>,
    /// `warrant_webhook_cache_requests`.
    pub(crate) webhook_cache: FamilyOf<WebhookLabels, Counter>,
    /// `warrant_ticket_webhook_lookups`.
    pub(crate) ticket_lookups: FamilyOf<WebhookLabels, Counter>,
    /// `warrant_ticket_webhook_cache_requests`.
    pub(crate) ticket_cache: FamilyOf<WebhookLabels, Counter>,
    /// `warrant_shadow_decisions`.
    pub(crate) shadow_decisions: FamilyOf<ShadowLabels, Counter>,
    /// `warrant_shadow_disagreements`.
    pub(crate) shadow_disagreements: FamilyOf<DisagreementLabels, Counter>,
}

impl Default for Families {
    /// Families registered nowhere (offline tools, tests).
    fn default() -> Self {
        Self {
            decisions: Family::default(),
            failures: Family::default(),
            condition_errors: Family::default(),
            condition_exclusions: Family::default(),
            condition_seconds: Family::new_with_constructor(latency_histogram),
            rule_matches: Family::default(),
            guard_decisions: Family::default(),
            guard_break_glass: Family::default(),
            guard_unusual: Family::default(),
            guard_traffic_fallbacks: Family::default(),
            webhook_evaluations: Family::default(),
            webhook_duration: Family::new_with_constructor(latency_histogram),
            webhook_fail_open: Family::default(),
            webhook_cache: Family::default(),
            ticket_lookups: Family::default(),
            ticket_cache: Family::default(),
            shadow_decisions: Family::default(),
            shadow_disagreements: Family::default(),
        }
    }
}

impl Families {
    /// Fresh families, registered in `registry`.
    pub fn register(registry: &mut Registry) -> Self {
        let f = Self::default();
        let r = registry;
        r.register(
            "warrant_authorization_decisions",
            "Final Allow or Deny decisions per configured authorizer (NoOpinion is not counted, as upstream)",
            f.decisions.clone(),
        );
        r.register(
            "warrant_authorizer_failures",
            "Authorizer errors, by the failure policy that turned them into an answer",
            f.failures.clone(),
        );
        r.register(
            "warrant_match_condition_evaluation_errors",
            "Reviews for which an authorizer's matchConditions had an evaluation error",
            f.condition_errors.clone(),
        );
        r.register(
            "warrant_match_condition_exclusions",
            "Reviews for which a matchCondition was false, so the authorizer was not asked",
            f.condition_exclusions.clone(),
        );
        r.register(
            "warrant_match_condition_evaluation_seconds",
            "Time spent evaluating an authorizer's matchConditions for one review",
            f.condition_seconds.clone(),
        );
        r.register(
            "warrant_policy_rule_matches",
            "Reviews decided by a policy rule, by rule and effect",
            f.rule_matches.clone(),
        );
        r.register(
            "warrant_guard_decisions",
            "Deletion guard assessments, by code (without the OBSERVED_ prefix) and mode",
            f.guard_decisions.clone(),
        );
        r.register(
            "warrant_guard_break_glass",
            "Destructive requests by break-glass group members that the guard let through",
            f.guard_break_glass.clone(),
        );
        r.register(
            "warrant_guard_unusual_deletions",
            "Destructive requests the unusual-deletion gate judged a burst above the requester's baseline, by the action configured (counted whatever the action, Observe included)",
            f.guard_unusual.clone(),
        );
        r.register(
            "warrant_guard_traffic_fallbacks",
            "Admission requests whose risk used the fixed traffic estimate because the live traffic source (Prometheus) could not answer, by guard and reason",
            f.guard_traffic_fallbacks.clone(),
        );
        r.register(
            "warrant_shadow_decisions",
            "Would-be answers of authorizers and policy rules in shadow mode (mode: Observe), by authorizer, rule and what they would have answered",
            f.shadow_decisions.clone(),
        );
        r.register(
            "warrant_shadow_disagreements",
            "Reviews where a shadow would have allowed or denied and the chain answered otherwise (what enforcing it would change)",
            f.shadow_disagreements.clone(),
        );
        f.register_webhook(r);
        f
    }

    /// The `warrant_webhook_*` families, shaped like upstream's
    /// `apiserver_authorization_webhook_*` (`plugin/pkg/authorizer/webhook/metrics/metrics.go`)
    /// plus a cache family.
    fn register_webhook(&self, r: &mut Registry) {
        r.register(
            "warrant_webhook_evaluations",
            "Calls to downstream webhooks, one per attempt, by result (success, error, timeout, canceled)",
            self.webhook_evaluations.clone(),
        );
        r.register(
            "warrant_webhook_duration_seconds",
            "Duration of each downstream webhook attempt, by result",
            self.webhook_duration.clone(),
        );
        r.register(
            "warrant_webhook_evaluations_fail_open",
            "NoOpinion answers caused by a downstream webhook timeout or error",
            self.webhook_fail_open.clone(),
        );
        r.register(
            "warrant_webhook_cache_requests",
            "Downstream webhook verdict lookups, by result (hit, miss, coalesced, stale)",
            self.webhook_cache.clone(),
        );
        r.register(
            "warrant_ticket_webhook_lookups",
            "Calls to a guard's ticket webhook, by what it answered (approved, pending, rejected, expired, not_found) or why it did not (timeout, canceled, unreachable, http_error, malformed, unusable)",
            self.ticket_lookups.clone(),
        );
        r.register(
            "warrant_ticket_webhook_cache_requests",
            "Lookups of presented tickets in a guard's ticket webhook, by how they were served (hit, miss, coalesced)",
            self.ticket_cache.clone(),
        );
    }

    /// The handles of one chain entry.
    pub fn entry(&self, authorizer_type: AuthorizerType, name: &AuthorizerName) -> EntryMetrics {
        let r#type = authorizer_type.as_str();
        let name = name.to_string();
        let decision = |decision| DecisionLabels {
            r#type,
            name: name.clone(),
            decision,
        };
        let failure = |policy: FailurePolicy| FailureLabels {
            r#type,
            name: name.clone(),
            policy: policy.as_str(),
        };
        let authorizer = AuthorizerLabels {
            r#type,
            name: name.clone(),
        };
        EntryMetrics {
            allowed: Handle::new(&self.decisions, decision("allowed")),
            denied: Handle::new(&self.decisions, decision("denied")),
            conditional: Handle::new(&self.decisions, decision("conditional")),
            failed_deny: Handle::new(&self.failures, failure(FailurePolicy::Deny)),
            failed_no_opinion: Handle::new(&self.failures, failure(FailurePolicy::NoOpinion)),
            condition_seconds: Handle::new(&self.condition_seconds, authorizer.clone()),
            condition_errors: Handle::new(&self.condition_errors, authorizer.clone()),
            condition_exclusions: Handle::new(&self.condition_exclusions, authorizer),
            shadow: ShadowFamilies {
                authorizer: name,
                decisions: self.shadow_decisions.clone(),
                disagreements: self.shadow_disagreements.clone(),
            },
        }
    }
}

/// The shadow families as one entry records into them: labels are built per shadow event, since
/// the rule is known only then (shadow mode is opt-in, so enforcing entries pay nothing).
#[derive(Debug)]
struct ShadowFamilies {
    authorizer: String,
    decisions: FamilyOf<ShadowLabels, Counter>,
    disagreements: FamilyOf<DisagreementLabels, Counter>,
}

/// The series one chain entry records into, whatever its type.
#[derive(Debug)]
pub struct EntryMetrics {
    allowed: Handle<DecisionLabels, Counter>,
    denied: Handle<DecisionLabels, Counter>,
    conditional: Handle<DecisionLabels, Counter>,
    failed_deny: Handle<FailureLabels, Counter>,
    failed_no_opinion: Handle<FailureLabels, Counter>,
    condition_seconds: Handle<AuthorizerLabels, Histogram>,
    condition_errors: Handle<AuthorizerLabels, Counter>,
    condition_exclusions: Handle<AuthorizerLabels, Counter>,
    shadow: ShadowFamilies,
}

impl EntryMetrics {
    /// Handles into families registered nowhere (entries built by hand, tests).
    pub fn unregistered(authorizer_type: AuthorizerType, name: &AuthorizerName) -> Self {
        Families::default().entry(authorizer_type, name)
    }

    /// Records what the entry's matchConditions did.
    pub(crate) fn record_conditions(&self, report: &ConditionReport) {
        self.condition_seconds
            .get()
            .observe(report.elapsed.as_secs_f64());
        if report.errored {
            self.condition_errors.get().inc();
        }
        if report.excluded {
            self.condition_exclusions.get().inc();
        }
    }

    /// Counts a conditional answer of this entry (a ConditionsMap or Union given to a caller
    /// that handles conditions), as upstream's instrumented authorizer counts one
    /// (`decision="conditional"`, `pkg/authorization/metrics/metrics.go`, v0.38.0-beta.0).
    pub(crate) fn record_conditional(&self) {
        self.conditional.get().inc();
    }

    /// Records the decision the entry contributed (NoOpinion is not counted, as upstream).
    pub(crate) fn record_decision(&self, decision: Decision) {
        match decision {
            Decision::Allow => self.allowed.get().inc(),
            Decision::Deny => self.denied.get().inc(),
            Decision::NoOpinion => 0,
        };
    }

    /// Records one shadow of this entry (the entry itself in shadow mode, or one of its rules):
    /// what it would have answered (`would`, labelled `label`), and a disagreement when it would
    /// have allowed or denied and the chain answered `chain` instead.
    pub(crate) fn record_shadow(
        &self,
        rule: &str,
        label: &'static str,
        would: Decision,
        chain: Decision,
    ) {
        let s = &self.shadow;
        s.decisions
            .get_or_create(&ShadowLabels {
                authorizer: s.authorizer.clone(),
                rule: rule.to_owned(),
                would: label,
            })
            .inc();
        if would.is_final() && label == would.as_str() && would != chain {
            s.disagreements
                .get_or_create(&DisagreementLabels {
                    authorizer: s.authorizer.clone(),
                    rule: rule.to_owned(),
                    would: would.as_str(),
                    chain: chain.as_str(),
                })
                .inc();
        }
    }

    /// Records a failure of the entry and the policy that answered for it.
    pub(crate) fn record_failure(&self, policy: FailurePolicy) {
        match policy {
            FailurePolicy::Deny => self.failed_deny.get().inc(),
            FailurePolicy::NoOpinion => self.failed_no_opinion.get().inc(),
        };
    }
}

/// A fixed set of series of one family told apart by a `&'static str` result label (a
/// webhook's `success`/`error`/..., a guard's codes): looked up without allocating.
pub(crate) struct ByResult<L, M> {
    slots: Box<[(&'static str, Handle<L, M>)]>,
    family: FamilyOf<L, M>,
    labels: Box<dyn Fn(&'static str) -> L + Send + Sync>,
}

impl<L, M> fmt::Debug for ByResult<L, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let results: Vec<&str> = self.slots.iter().map(|(r, _)| *r).collect();
        f.debug_struct("ByResult")
            .field("results", &results)
            .finish_non_exhaustive()
    }
}

impl<L: Clone + Hash + Eq, M: Clone> ByResult<L, M> {
    /// Handles for `results` of `family`, labelled by `labels`.
    pub fn new(
        family: &FamilyOf<L, M>,
        results: &[&'static str],
        labels: impl Fn(&'static str) -> L + Send + Sync + 'static,
    ) -> Self {
        Self {
            slots: results
                .iter()
                .map(|r| (*r, Handle::new(family, labels(r))))
                .collect(),
            family: family.clone(),
            labels: Box::new(labels),
        }
    }

    /// Runs `f` on the series of `result`; a result outside the fixed set still counts, at the
    /// cost of building its labels.
    pub fn with(&self, result: &'static str, f: impl FnOnce(&M)) {
        match self.slots.iter().find(|(r, _)| *r == result) {
            Some((_, h)) => f(h.get()),
            None => f(&self.family.get_or_create(&(self.labels)(result))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handle_binds_its_series_on_first_use_only() {
        let mut registry = Registry::default();
        let families = Families::register(&mut registry);
        let name = AuthorizerName::new("tenants").unwrap();
        let entry = families.entry(AuthorizerType::Policy, &name);
        let text = |r: &Registry| {
            let mut out = String::new();
            prometheus_client::encoding::text::encode(&mut out, r).unwrap();
            out
        };
        assert!(!text(&registry).contains("name=\"tenants\""));
        entry.record_decision(Decision::Deny);
        entry.record_decision(Decision::Deny);
        entry.record_decision(Decision::NoOpinion);
        let out = text(&registry);
        assert!(out.contains(
            "warrant_authorization_decisions_total{type=\"Policy\",name=\"tenants\",decision=\"denied\"} 2"
        ));
        assert!(!out.contains("decision=\"allowed\""));
        assert!(!out.contains("decision=\"NoOpinion\""));
    }
}
