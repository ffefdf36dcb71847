//! The chain: authorizers run in file order, the first Allow or Deny wins, and when none decides
//! the answer is NoOpinion with every reason joined by newlines and every error kept
//! (`k8s.io/apiserver/pkg/authorization/union/union.go`). Failure policy is applied here, once,
//! for every type, and so is shadow mode: an entry in `mode: Observe` is evaluated where it
//! stands, its would-be answer is kept in the trace and counted, and the chain goes on as if it
//! had answered NoOpinion.

use super::conditional::{self, Catalog, Union};
use super::metrics::{EntryMetrics, Families};
use super::webhook::cache::CacheBytes;
use super::webhook::retry::Backoff;
use super::webhook::{self, WebhookRuntime, WebhookStates};
use super::{
    AlwaysAllow, AlwaysDeny, Authorizer, AuthorizerError, ConditionReport, Deadline, Input,
    MatchConditions, MatchOutcome, Policy,
};
use crate::cel::{Admission, Binding};
use crate::config::model::buffer::BufferSettings;
use crate::config::model::guard::Mode as GuardMode;
use crate::config::model::{ConditionsSettings, WhenUnsupported};
use crate::config::{AuthorizerSpec, AuthorizerType, Config, FailurePolicy, Mode};
use crate::decision::{AttributedReason, Decision, Reason, Verdict};
use crate::names::{AuthorizerName, Code, RuleName};
use crate::review::{ConditionsAwareDecision, ConditionsReview, DecisionType};
use k8s_openapi::api::authorization::v1::SubjectAccessReviewStatus;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};
use thiserror::Error;

/// Why a chain could not be built from a configuration.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BuildError {
    /// A chain needs at least one authorizer.
    #[error("a chain needs at least one authorizer")]
    Empty,
    /// Two entries share a name.
    #[error("authorizer name {:?} is used twice", .0.as_str())]
    DuplicateName(AuthorizerName),
    /// A webhook authorizer's connection could not be set up (its kubeconfig, typically).
    #[error("authorizer {:?}: {source}", name.as_str())]
    Webhook {
        /// The authorizer.
        name: AuthorizerName,
        /// What failed.
        source: webhook::BuildError,
    },
}

/// What a build needs beyond the validated configuration: runtime handles and the chain being
/// replaced, whose webhook state (caches, connection pools) carries over for every webhook whose
/// settings and kubeconfig are unchanged.
#[derive(Debug, Default)]
pub struct BuildContext<'a> {
    /// The families every entry resolves its metric handles from, once, at build.
    pub metrics: Families,
    /// The retry schedule of webhook authorizers (upstream's unless a test changed it).
    pub webhook_backoff: Backoff,
    /// The byte bound of each webhook's verdict cache (`--webhook-cache-max-bytes`).
    pub webhook_cache: CacheBytes,
    /// The chain being replaced, if any.
    pub previous: Option<&'a Chain>,
    /// Where `scope: Cluster` rate limits keep their buckets (none without a cluster).
    pub cluster_buckets: Option<Arc<dyn super::deletion_guard::ClusterBuckets>>,
}

/// One configured authorizer in the chain.
#[derive(Debug)]
pub struct Entry {
    /// Its unique name.
    pub name: AuthorizerName,
    /// Its type, for traces and metric labels.
    pub authorizer_type: AuthorizerType,
    /// What its errors yield.
    pub failure_policy: FailurePolicy,
    /// `Observe`: shadow mode, its answers are recorded and never the chain's.
    pub mode: Mode,
    /// The authorizer itself.
    pub authorizer: Box<dyn Authorizer>,
    /// Its matchConditions, evaluated before it on every review.
    pub match_conditions: MatchConditions,
    /// Its series of the decision, failure and matchCondition families.
    pub metrics: EntryMetrics,
    /// Its `conditions:` settings (KEP-5681).
    pub conditions: Option<ConditionsSettings>,
    /// The conditions it may author, evaluated when the API server asks back.
    pub catalog: Catalog,
}

/// An immutable, ordered list of authorizers. A review loads one `Chain` snapshot and never sees
/// two configurations.
#[derive(Debug)]
pub struct Chain {
    entries: Box<[Entry]>,
    webhooks: WebhookStates,
    guards: super::deletion_guard::GuardStates,
}

/// What happened at one authorizer.
#[derive(Debug, Clone, PartialEq)]
pub enum StepOutcome {
    /// It answered.
    Verdict(Verdict),
    /// A matchCondition was false: it was not asked (no opinion, no error).
    Excluded,
    /// It failed; `policy` says what the failure yielded.
    Failed {
        /// The failure.
        error: AuthorizerError,
        /// The failure policy that was applied.
        policy: FailurePolicy,
    },
}

/// One authorizer consulted for a review.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// Which authorizer.
    pub authorizer: AuthorizerName,
    /// Its type.
    pub authorizer_type: AuthorizerType,
    /// What it did.
    pub outcome: StepOutcome,
    /// How long it took, matchConditions included.
    pub elapsed: Duration,
    /// What its matchConditions did, when it has any.
    pub conditions: Option<ConditionReport>,
    /// Its entry's mode: in `Observe` the step never contributes to the answer.
    pub mode: Mode,
}

impl Step {
    /// The decision this step contributed to the chain: NoOpinion in shadow mode, else
    /// [`Step::would_have`].
    pub fn decision(&self) -> Decision {
        if self.mode.is_observe() {
            Decision::NoOpinion
        } else {
            self.would_have()
        }
    }

    /// Whether the step ran in shadow mode and was evaluated (not excluded by its
    /// matchConditions): its would-be answer is recorded.
    pub fn is_shadow(&self) -> bool {
        self.mode.is_observe() && !matches!(self.outcome, StepOutcome::Excluded)
    }

    /// The decision this step's outcome gives after failure policy, whatever the mode: in shadow
    /// mode, what enforcing it would have contributed (`wouldHave`).
    pub fn would_have(&self) -> Decision {
        match &self.outcome {
            StepOutcome::Verdict(v) => v.decision,
            StepOutcome::Excluded => Decision::NoOpinion,
            StepOutcome::Failed {
                policy: FailurePolicy::Deny,
                ..
            } => Decision::Deny,
            StepOutcome::Failed {
                policy: FailurePolicy::NoOpinion,
                ..
            } => Decision::NoOpinion,
        }
    }
}

/// The chain's answer to one review: maps field for field onto `SubjectAccessReviewStatus`, plus
/// the trace of every authorizer consulted.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The final decision.
    pub decision: Decision,
    /// The authorizer that decided; `None` for NoOpinion.
    pub decided_by: Option<AuthorizerName>,
    /// The rule that decided, if the deciding authorizer has rules.
    pub rule: Option<RuleName>,
    /// The deciding code, if any.
    pub code: Option<Code>,
    /// The user-facing reason (`<authorizer>/<rule>: <message> [<code>]`; NoOpinion reasons are
    /// joined by newlines).
    pub reason: String,
    /// Errors met on the way, each as `<authorizer>: <error>`.
    pub errors: Vec<String>,
    /// One step per authorizer consulted, in order.
    pub trace: Vec<Step>,
    /// The conditional decision (KEP-5681), when the caller handles conditions and the answer
    /// depends on the object; it is then the answer, and `decision` only what the chain
    /// settled on before it.
    pub conditional: Option<ConditionsAwareDecision>,
}

impl Answer {
    /// The errors as upstream renders an aggregate: one error keeps its text, several become
    /// `[e1, e2]`.
    pub fn evaluation_error(&self) -> Option<String> {
        match self.errors.as_slice() {
            [] => None,
            [one] => Some(one.clone()),
            many => Some(format!("[{}]", many.join(", "))),
        }
    }

    /// The status kube-apiserver's own SAR endpoint would give for this chain result:
    /// `allowed = Allow`, `denied = Deny`, the reason and the error text.
    pub fn status(&self) -> SubjectAccessReviewStatus {
        SubjectAccessReviewStatus {
            allowed: self.decision == Decision::Allow,
            denied: (self.decision == Decision::Deny).then_some(true),
            reason: (!self.reason.is_empty()).then(|| self.reason.clone()),
            evaluation_error: self.evaluation_error(),
        }
    }
}

impl Chain {
    /// A chain of the given entries, checked as `union.New` checks them: not empty, names unique.
    pub fn new(entries: Vec<Entry>) -> Result<Self, BuildError> {
        if entries.is_empty() {
            return Err(BuildError::Empty);
        }
        let mut seen = HashSet::new();
        for e in &entries {
            if !seen.insert(e.name.clone()) {
                return Err(BuildError::DuplicateName(e.name.clone()));
            }
        }
        Ok(Self {
            entries: entries.into_boxed_slice(),
            webhooks: WebhookStates::default(),
            guards: Default::default(),
        })
    }

    /// Builds the chain a validated configuration describes, with fresh state and unregistered
    /// metrics (offline tools, tests).
    pub fn build(config: &Config) -> Result<Self, BuildError> {
        Self::build_in(config, &BuildContext::default())
    }

    /// Builds the chain a validated configuration describes, carrying webhook state over from
    /// `ctx.previous` where it still applies.
    pub fn build_in(config: &Config, ctx: &BuildContext<'_>) -> Result<Self, BuildError> {
        let mut webhooks = WebhookStates::default();
        let mut guards = super::deletion_guard::GuardStates::default();
        let mut entries = Vec::with_capacity(config.authorizers.len());
        for a in &config.authorizers {
            let authorizer_type = a.spec.authorizer_type();
            let mut catalog = Catalog::default();
            let authorizer: Box<dyn Authorizer> = match &a.spec {
                AuthorizerSpec::AlwaysAllow => Box::new(AlwaysAllow),
                AuthorizerSpec::AlwaysDeny => Box::new(AlwaysDeny),
                AuthorizerSpec::Policy(p) => {
                    catalog = conditional::policy_catalog(p);
                    Box::new(Policy::new(p, &a.name, &ctx.metrics))
                }
                AuthorizerSpec::Webhook(settings) => {
                    let core = build_webhook(a, settings, ctx)?;
                    webhooks.insert(core.clone());
                    Box::new(webhook::Webhook::new(core))
                }
                AuthorizerSpec::DeletionGuard(g) => {
                    let previous = ctx.previous.and_then(|c| c.guards.get(&a.name));
                    let shared = super::deletion_guard::GuardShared::reuse_or_new(
                        previous,
                        g,
                        a.failure_policy,
                        ctx.cluster_buckets.clone().map(|store| {
                            super::deletion_guard::SharedBuckets {
                                guard: a.name.to_string(),
                                store,
                            }
                        }),
                    );
                    guards.insert(a.name.clone(), shared.clone());
                    let mut guard =
                        super::deletion_guard::DeletionGuard::new(shared, &a.name, &ctx.metrics);
                    if a.conditions.is_some()
                        && let Some((map, authored)) = conditional::guard_conditions(g)
                    {
                        guard = guard.with_label_conditions(map);
                        catalog = authored;
                    }
                    Box::new(guard)
                }
            };
            entries.push(Entry {
                name: a.name.clone(),
                authorizer_type,
                failure_policy: a.failure_policy,
                mode: entry_mode(a),
                authorizer,
                match_conditions: MatchConditions::new(a.match_conditions.clone()),
                metrics: ctx.metrics.entry(authorizer_type, &a.name),
                conditions: a.conditions,
                catalog,
            });
        }
        let mut chain = Self::new(entries)?;
        chain.webhooks = webhooks;
        chain.guards = guards;
        Ok(chain)
    }

    /// The live state of this chain's webhook authorizers.
    pub fn webhook_states(&self) -> &WebhookStates {
        &self.webhooks
    }

    /// The entries, in order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Runs the chain for one review. Each authorizer is bounded by `deadline`; one that misses
    /// it has failed, and its failure policy applies.
    pub async fn authorize(&self, input: &Input, deadline: Deadline) -> Answer {
        self.run(input, deadline, |_| true).await
    }

    /// Runs the validation ring for one admission request (`input.object` set): the chain's
    /// DeletionGuard entries, in order, with their matchConditions over the request mapped onto
    /// a review. The other types judge SubjectAccessReviews only and are not consulted. The first
    /// Deny wins, as in [`Chain::authorize`]; no Deny means the request is admitted.
    pub async fn admit(&self, input: &Input, deadline: Deadline) -> Answer {
        self.run(input, deadline, |e| {
            e.authorizer_type == AuthorizerType::DeletionGuard
        })
        .await
    }

    /// Evaluates a conditional decision warrant answered, when kube-apiserver asks back at
    /// admission with an `AuthorizationConditionsReview` (union.go's `EvaluateConditions`): each
    /// sub-decision in order, a ConditionsMap of warrant's own evaluated by its entry, one a
    /// downstream webhook authored sent back to it; the first Allow or Deny decides, else
    /// NoOpinion. A sub-decision evaluated to an outcome it could not reach fails closed.
    pub async fn evaluate_conditions(
        &self,
        review: &ConditionsReview,
        deadline: Deadline,
    ) -> ConditionsAwareDecision {
        let d = &review.decision;
        if d.decision_type != DecisionType::Union {
            return conditional::failure(
                d,
                "failed closed",
                "warrant answers with a Union decision only",
            );
        }
        let bound = Admission::new(&review.admission_request);
        let mut reasons = Vec::new();
        for member in &d.union {
            let sub = &member.decision;
            let result = match sub.decision_type {
                DecisionType::Allow | DecisionType::Deny => return sub.clone(),
                DecisionType::NoOpinion => continue,
                DecisionType::ConditionsMap | DecisionType::Union => {
                    let evaluated = self
                        .evaluate_member(&member.authorizer_name, sub, review, &bound, deadline)
                        .await;
                    if sub.outcomes().has(evaluated.decision_type) {
                        evaluated
                    } else {
                        conditional::failure(
                            sub,
                            "failed closed",
                            &format!(
                                "evaluated to decision {:?}, but only {:?} were possible",
                                evaluated.decision_type,
                                sub.outcomes()
                            ),
                        )
                    }
                }
            };
            match result.decision_type {
                DecisionType::Allow | DecisionType::Deny => return result,
                _ => {
                    let (reason, _) = result.parts();
                    if !reason.is_empty() {
                        reasons.push(format!("{}: {reason}", member.authorizer_name));
                    }
                }
            }
        }
        ConditionsAwareDecision::no_opinion(&reasons.join("\n"), "")
    }

    /// One conditional sub-decision, by the entry that authored it.
    async fn evaluate_member(
        &self,
        name: &str,
        sub: &ConditionsAwareDecision,
        review: &ConditionsReview,
        bound: &Admission,
        deadline: Deadline,
    ) -> ConditionsAwareDecision {
        let Some(entry) = self.entry(name) else {
            let error = format!("no authorizer {name:?} in this configuration");
            return conditional::failure(sub, "failed closed", &error);
        };
        if let Some(core) = self.webhooks.get(&entry.name) {
            return core
                .evaluate_conditions(sub, &review.admission_request, deadline)
                .await;
        }
        match (&sub.decision_type, &sub.conditions_map) {
            (DecisionType::ConditionsMap, Some(map)) => {
                conditional::evaluate_map(&entry.catalog, map, bound, entry.name.as_str())
            }
            _ => conditional::failure(
                sub,
                "failed closed",
                &format!(
                    "authorizer {name:?} authors no such conditions (nested unions come from webhooks only)"
                ),
            ),
        }
    }

    fn entry(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.name.as_str() == name)
    }

    /// The buffer settings of the chain's DeletionGuard entries that have a `buffer:` block, in
    /// chain order, with the entry's name and whether it enforces (the validation ring records
    /// who asks for the deletion of an object carrying one of their finalizers).
    pub fn buffers(&self) -> impl Iterator<Item = (&AuthorizerName, &BufferSettings, bool)> {
        self.entries
            .iter()
            .filter(|e| e.authorizer_type == AuthorizerType::DeletionGuard)
            .filter_map(|e| {
                let shared = self.guards.get(&e.name)?;
                let buffer = shared.spec.buffer.as_ref()?;
                Some((&e.name, buffer, shared.spec.mode == GuardMode::Enforce))
            })
    }

    /// Whether any entry judges admission requests (the validation ring needs a cluster view).
    pub fn admits(&self) -> bool {
        self.entries
            .iter()
            .any(|e| e.authorizer_type == AuthorizerType::DeletionGuard)
    }

    async fn run(
        &self,
        input: &Input,
        deadline: Deadline,
        consulted: fn(&Entry) -> bool,
    ) -> Answer {
        let budget_ms = deadline
            .0
            .saturating_duration_since(tokio::time::Instant::now())
            .as_millis() as u64;
        let mut run = Run::with_capacity(self.entries.len());
        run.conditional = input.review.supports_conditions();
        let mut answer = None;
        // Bound once, for the matchConditions and rules of every entry.
        let binding = Binding::new(input.review.spec(), input.now);
        for entry in self.entries.iter().filter(|e| consulted(e)) {
            let step = entry.run(input, &binding, deadline, budget_ms).await;
            entry.record(&step, run.conditional);
            if let Some(decided) = run.push(entry, step) {
                answer = Some(decided);
                break;
            }
        }
        let answer = answer.unwrap_or_else(|| run.no_opinion());
        // The trace holds one step per consulted entry, in order, up to the one that decided.
        for (entry, step) in self
            .entries
            .iter()
            .filter(|e| consulted(e))
            .zip(&answer.trace)
        {
            entry.record_shadows(step, answer.decision);
        }
        answer
    }
}

/// The mode of an entry: its own, and Observe for a guard whose settings say so (validation
/// makes the two agree; a configuration built by hand cannot make a guard in Observe deny).
fn entry_mode(a: &crate::config::AuthorizerConfig) -> Mode {
    match &a.spec {
        AuthorizerSpec::DeletionGuard(g) if g.mode.is_observe() => Mode::Observe,
        _ => a.mode,
    }
}

/// Builds (or carries over) the live core of a webhook entry.
fn build_webhook(
    a: &crate::config::AuthorizerConfig,
    settings: &crate::config::WebhookConfig,
    ctx: &BuildContext<'_>,
) -> Result<std::sync::Arc<webhook::Core>, BuildError> {
    let previous = ctx.previous.and_then(|c| c.webhooks.get(&a.name));
    let runtime = WebhookRuntime {
        metrics: ctx.metrics.clone(),
        backoff: ctx.webhook_backoff,
        cache_bytes: ctx.webhook_cache,
    };
    webhook::Core::build(&a.name, settings, a.failure_policy, &runtime, previous).map_err(
        |source| BuildError::Webhook {
            name: a.name.clone(),
            source,
        },
    )
}

impl Entry {
    /// Consults this entry for one review: its matchConditions, then (if they hold) its
    /// authorizer within the deadline.
    async fn run(
        &self,
        input: &Input,
        binding: &Binding<'_>,
        deadline: Deadline,
        budget_ms: u64,
    ) -> Step {
        let started = Instant::now();
        let (matched, conditions) = self.match_conditions.evaluate_bound(binding);
        let outcome = match matched {
            MatchOutcome::Excluded => StepOutcome::Excluded,
            MatchOutcome::Failed(errors) => StepOutcome::Failed {
                error: AuthorizerError::MatchConditions(errors),
                policy: self.failure_policy,
            },
            MatchOutcome::Matched => {
                if let Some(judged) = self.authorizer.judge_bound(input, binding, deadline) {
                    judged.map_or_else(
                        |error| StepOutcome::Failed {
                            error,
                            policy: self.failure_policy,
                        },
                        |verdict| StepOutcome::Verdict(self.settle(verdict, input)),
                    )
                } else {
                    self.call(input, deadline, budget_ms).await
                }
            }
        };
        Step {
            authorizer: self.name.clone(),
            authorizer_type: self.authorizer_type,
            outcome,
            elapsed: started.elapsed(),
            conditions,
            mode: self.mode,
        }
    }

    /// Asks the authorizer within the deadline.
    async fn call(&self, input: &Input, deadline: Deadline, budget_ms: u64) -> StepOutcome {
        let call = self.authorizer.authorize(input, deadline);
        match tokio::time::timeout_at(deadline.0, call).await {
            Ok(Ok(verdict)) => StepOutcome::Verdict(self.settle(verdict, input)),
            Ok(Err(error)) => StepOutcome::Failed {
                error,
                policy: self.failure_policy,
            },
            Err(_) => StepOutcome::Failed {
                error: AuthorizerError::DeadlineExceeded { budget_ms },
                policy: self.failure_policy,
            },
        }
    }

    /// A conditional verdict for a caller that cannot handle conditions: the fold the
    /// authorizer gave, or NoOpinion when `whenUnsupported: ValidationRing` leaves the object
    /// checks to the validation ring.
    fn settle(
        &self,
        mut verdict: crate::decision::Verdict,
        input: &Input,
    ) -> crate::decision::Verdict {
        if verdict.conditions.is_some() && !input.review.supports_conditions() {
            let when = self.conditions.unwrap_or_default().when_unsupported;
            if when == WhenUnsupported::ValidationRing {
                verdict.decision = Decision::NoOpinion;
            }
        }
        verdict
    }

    /// Counts what this entry's shadows would have answered, and where that disagrees with the
    /// chain's `answer`: the entry's own would-be answer in shadow mode, and each shadow rule
    /// its verdict reports.
    fn record_shadows(&self, step: &Step, answer: Decision) {
        let verdict = match &step.outcome {
            StepOutcome::Verdict(v) => Some(v),
            _ => None,
        };
        if step.is_shadow() {
            let rule = verdict
                .and_then(|v| v.reason.as_ref())
                .and_then(|r| r.rule.as_ref())
                .map_or("", |r| r.as_str());
            let would = step.would_have();
            self.metrics
                .record_shadow(rule, would.as_str(), would, answer);
        }
        for shadow in verdict.map(|v| v.shadows.as_slice()).unwrap_or_default() {
            let rule = shadow.reason.rule.as_ref().map_or("", |r| r.as_str());
            self.metrics
                .record_shadow(rule, shadow.would_label(), shadow.would, answer);
        }
    }

    /// Records one step of this entry in its metrics; `conditional`: the caller handles
    /// conditions, so a verdict with conditions is counted as `conditional` (not as its fold).
    fn record(&self, step: &Step, conditional: bool) {
        if let Some(report) = &step.conditions {
            self.metrics.record_conditions(report);
        }
        let enforced_conditions = conditional
            && !step.mode.is_observe()
            && matches!(&step.outcome, StepOutcome::Verdict(v) if v.conditions.is_some());
        if enforced_conditions {
            self.metrics.record_conditional();
        } else {
            self.metrics.record_decision(step.decision());
        }
        if let StepOutcome::Failed { policy, .. } = &step.outcome {
            self.metrics.record_failure(*policy);
        }
    }
}

/// The chain's progress through one review: the steps so far, and the NoOpinion reasons and
/// errors collected on the way, as `union.go` collects them.
struct Run {
    trace: Vec<Step>,
    reasons: Vec<String>,
    errors: Vec<String>,
    /// The caller handles conditions: conditional verdicts join `union` and do not decide.
    conditional: bool,
    union: Union,
}

impl Run {
    fn with_capacity(n: usize) -> Self {
        Self {
            trace: Vec::with_capacity(n),
            reasons: Vec::new(),
            errors: Vec::new(),
            conditional: false,
            union: Union::default(),
        }
    }

    /// Adds the step of `entry`; the answer, if the step decides. A step in shadow mode never
    /// decides and leaves no reason or error in the answer: a shadow (a Webhook's downstream
    /// failure included) never changes what the chain answers.
    fn push(&mut self, entry: &Entry, step: Step) -> Option<Answer> {
        if step.mode.is_observe() {
            self.trace.push(step);
            return None;
        }
        match &step.outcome {
            StepOutcome::Excluded => {}
            StepOutcome::Verdict(verdict) if self.conditional && verdict.conditions.is_some() => {
                if let Some(d) = &verdict.conditions {
                    self.union.add(entry.name.as_str(), (**d).clone());
                    // As union.go: a sub-decision holding an unconditional Allow or Deny (a
                    // downstream's union) ends the chain.
                    if d.contains_unconditional() {
                        self.trace.push(step);
                        return Some(self.decided_conditional(entry));
                    }
                }
            }
            StepOutcome::Verdict(verdict) => {
                let (decision, reason) = (verdict.decision, verdict.reason.clone());
                if decision.is_final() {
                    // As union.go: a decision carries only its own authorizer's error; earlier
                    // failures stay in the trace.
                    self.trace.push(step);
                    return Some(self.decided(entry, decision, reason, Vec::new()));
                }
                if let Some(r) = &reason {
                    self.reasons.push(attributed(&entry.name, r));
                }
            }
            StepOutcome::Failed { error, policy } => {
                let text = format!("{}: {error}", entry.name);
                if *policy == FailurePolicy::Deny {
                    let reason = Reason::message(error.to_string());
                    self.trace.push(step);
                    return Some(self.decided(entry, Decision::Deny, Some(reason), vec![text]));
                }
                self.errors.push(text);
            }
        }
        self.trace.push(step);
        None
    }

    fn decided(
        &mut self,
        entry: &Entry,
        decision: Decision,
        reason: Option<Reason>,
        errors: Vec<String>,
    ) -> Answer {
        let (rule, code, text) = match reason {
            Some(r) => (r.rule.clone(), r.code.clone(), attributed(&entry.name, &r)),
            None => (None, None, String::new()),
        };
        let conditional = self.union.is_conditional().then(|| {
            let error = errors.join(", ");
            let leaf = match decision {
                Decision::Allow => ConditionsAwareDecision::allow(&text, &error),
                _ => ConditionsAwareDecision::deny(&text, &error),
            };
            let mut union = std::mem::take(&mut self.union);
            union.add(entry.name.as_str(), leaf);
            union.to_decision()
        });
        Answer {
            conditional: conditional.flatten(),
            decision,
            decided_by: Some(entry.name.clone()),
            rule,
            code,
            reason: text,
            errors,
            trace: std::mem::take(&mut self.trace),
        }
    }

    /// The answer when a conditional sub-decision ended the chain: the union, or the one
    /// outcome it can have.
    fn decided_conditional(&mut self, entry: &Entry) -> Answer {
        let union = std::mem::take(&mut self.union).into_decision();
        let outcomes = union.outcomes();
        let decision = if outcomes.deny {
            Decision::Deny
        } else if outcomes.allow {
            Decision::Allow
        } else {
            Decision::NoOpinion
        };
        Answer {
            conditional: (outcomes.count() > 1).then_some(union),
            decision,
            decided_by: Some(entry.name.clone()),
            rule: None,
            code: None,
            reason: String::new(),
            errors: Vec::new(),
            trace: std::mem::take(&mut self.trace),
        }
    }

    /// The answer when no authorizer decided.
    fn no_opinion(self) -> Answer {
        let conditional = if self.union.is_conditional() {
            self.union.to_decision()
        } else {
            None
        };
        Answer {
            conditional,
            decision: Decision::NoOpinion,
            decided_by: None,
            rule: None,
            code: None,
            reason: self.reasons.join("\n"),
            errors: self.errors,
            trace: self.trace,
        }
    }
}

fn attributed(name: &AuthorizerName, reason: &Reason) -> String {
    AttributedReason {
        authorizer: name,
        reason,
    }
    .to_string()
}

#[cfg(test)]
mod tests;
