//! [`DeletionGuard`]: scope, risk, then the gates in their fixed order; the first gate that stops
//! the case decides, and `conclusion` turns the finding into the verdict. The same pipeline
//! serves both rings: a SubjectAccessReview (the authorization ring, names only) and an
//! admission request (the validation ring, with the object's facts).

use super::assessment::{GuardCode, UnusualReport};
use super::case::Case;
use super::conclusion::{self, Finding};
use super::error::GuardError;
use super::metrics::GuardMetrics;
use super::objects::{self, ObjectFacts};
use super::scope::{self, Scope};
use super::state::GuardShared;
use super::tickets::{self, Demand, Ticketed};
use super::traffic::Measured;
use super::{buffered, gates, rate, risk, unusual, windows};
use crate::authorizer::metrics::Families;
use crate::authorizer::{Authorizer, AuthorizerError, BoxFuture, Deadline, Input};
use crate::config::model::guard::{GuardSpec, Level, Mode, RateLimitStage};
use crate::config::model::unusual::UnusualAction;
use crate::decision::{Decision, Reason, Verdict};
use crate::names::{AuthorizerName, Code};
use crate::object::{ObjectContext, Operation};
use std::sync::Arc;

/// A deletion guard in a chain.
#[derive(Debug)]
pub struct DeletionGuard {
    name: AuthorizerName,
    shared: Arc<GuardShared>,
    metrics: GuardMetrics,
    conditions: Option<crate::review::ConditionsMap>,
}

impl DeletionGuard {
    /// Guard `name` over shared state, counting its assessments in `families`.
    pub fn new(shared: Arc<GuardShared>, name: &AuthorizerName, families: &Families) -> Self {
        let action = shared
            .spec
            .unusual_deletions
            .as_ref()
            .map_or(UnusualAction::Observe, |u| u.action);
        let metrics = GuardMetrics::new(families, name, shared.spec.mode.as_str(), action.as_str());
        Self {
            name: name.clone(),
            shared,
            metrics,
            conditions: None,
        }
    }

    /// The same guard answering callers that handle conditions with `conditions` (its label
    /// protection as Deny conditions, KEP-5681) where it would otherwise stand aside.
    pub(crate) fn with_label_conditions(
        mut self,
        conditions: crate::review::ConditionsMap,
    ) -> Self {
        self.conditions = Some(conditions);
        self
    }

    /// Judges one SubjectAccessReview at once, without awaiting (tests, tools): what
    /// [`Self::review`] answers when no `scope: Cluster` limit has to ask the API server; an
    /// error when one would.
    pub fn judge(&self, input: &Input) -> Result<Verdict, AuthorizerError> {
        use futures_util::FutureExt;
        self.review(input, Deadline::after(std::time::Duration::from_secs(10)))
            .now_or_never()
            .unwrap_or(Err(AuthorizerError::DeadlinePassed))
    }

    /// Judges one SubjectAccessReview (the authorization ring): NoOpinion without a reason
    /// when the review is none of the guard's business, else the verdict of the first gate
    /// that stops it (or of none).
    pub async fn review(
        &self,
        input: &Input,
        deadline: Deadline,
    ) -> Result<Verdict, AuthorizerError> {
        match scope::scope(&self.shared.spec, &input.review) {
            Scope::Outside => Ok(Verdict::bare(Decision::NoOpinion)),
            Scope::Excluded(why) => Ok(self.excluded(why)),
            Scope::Judged(target) => {
                let verdict = self.conclude(input, target, None, deadline).await?;
                Ok(super::conditional::attach(
                    &self.shared,
                    self.conditions.as_ref(),
                    input,
                    verdict,
                    deadline,
                )
                .await)
            }
        }
    }

    /// NoOpinion with an `EXCLUDED` reason, counted: an exclusion leaves a trace.
    fn excluded(&self, why: String) -> Verdict {
        self.metrics.record(GuardCode::Excluded);
        let reason = Reason {
            rule: None,
            message: why,
            code: Code::new(GuardCode::Excluded.as_str()).ok(),
        };
        Verdict::new(Decision::NoOpinion, reason)
    }

    /// Judges one admission request (the validation ring): for an UPDATE of a buffer kind, the
    /// buffer's requester and confirmation rules first (`buffered`); then, for a DELETE or an
    /// UPDATE that lowers the protection label or removes the buffer's finalizer, the object's
    /// facts are gathered from the request and the cluster view, and the same gates run.
    pub async fn admit(
        &self,
        input: &Input,
        ctx: &ObjectContext,
        deadline: Deadline,
    ) -> Result<Verdict, AuthorizerError> {
        let spec = &self.shared.spec;
        let mut update = buffered::BufferUpdate::default();
        // Boxed: a confirmed deletion is rare, and this is held across every await below.
        let mut confirmed: Option<Box<Verdict>> = None;
        if ctx.operation == Operation::Update
            && let Some(target) = scope::admission_target(&input.review, ctx.operation)
        {
            update = buffered::classify(spec, &target, ctx);
            let guard = buffered::Guard {
                shared: &self.shared,
                metrics: &self.metrics,
                deadline,
            };
            // Boxed: the buffer's rules run for few updates, and their future inline would
            // make every review's larger (see `conclude`).
            match Box::pin(guard.rules(input, target, ctx, update)).await? {
                buffered::Ruled::Refused(v) => return Ok(v),
                buffered::Ruled::Confirmed(v) => confirmed = Some(Box::new(v)),
                buffered::Ruled::Nothing => {}
            }
        }
        let target = match scope::admission_scope(spec, &input.review, ctx.operation) {
            Scope::Outside => return Ok(Verdict::bare(Decision::NoOpinion)),
            Scope::Excluded(why) => match own_account_overreach(spec, input, ctx) {
                Some(target) => target,
                None => return Ok(confirmed.map_or_else(|| self.excluded(why), |v| *v)),
            },
            Scope::Judged(target) => target,
        };
        let stands_aside = || {
            confirmed
                .as_deref()
                .map_or(Verdict::bare(Decision::NoOpinion), Verdict::clone)
        };
        let is_update = ctx.operation == Operation::Update;
        if is_update && !update.finalizer_removed && !objects::lowers_label(spec, ctx) {
            return Ok(stands_aside());
        }
        // Break-glass and principals trusted at every level need no fact about the object: they
        // stand aside even while the cluster view cannot answer (the outage break-glass is for).
        // The facts are still gathered when they can be, so that the bypass is recorded at the
        // risk it really carries.
        if gates::stands_aside_anyway(spec, &target) {
            let facts = self.gather(ctx, &target, deadline).await.ok();
            return Ok(self.conclude(input, target, facts, deadline).await?);
        }
        let facts = match self.gather(ctx, &target, deadline).await {
            Ok(facts) => facts,
            Err(e) if spec.mode == Mode::Observe => {
                // Observe mode admits everything: the failure is recorded, not applied.
                let risk = risk::assess(spec, &target, input.now, None);
                let finding = Finding::new(GuardCode::ClusterUnavailable, e.to_string());
                self.metrics.record(finding.code);
                return Ok(conclusion::verdict(spec.mode, finding, risk));
            }
            Err(e) => return Err(e.into()),
        };
        let Some(facts) = judged(spec, &target, input, (is_update, update), facts) else {
            return Ok(stands_aside());
        };
        Ok(self.conclude(input, target, Some(facts), deadline).await?)
    }

    /// The object's facts, with what the live traffic source says of it.
    async fn gather(
        &self,
        ctx: &ObjectContext,
        target: &scope::Target<'_>,
        deadline: Deadline,
    ) -> Result<ObjectFacts, GuardError> {
        let mut facts = objects::gather(&self.shared.spec, ctx, target).await?;
        facts.live_traffic = self.live_traffic(ctx, target, deadline).await;
        Ok(facts)
    }

    /// What the live traffic source says of the target, when it covers its kind; a fallback to
    /// the estimate is logged and counted.
    async fn live_traffic(
        &self,
        ctx: &ObjectContext,
        target: &scope::Target<'_>,
        deadline: Deadline,
    ) -> Option<Measured> {
        let source = self.shared.traffic.as_ref()?;
        let measured = source
            .measure(target, ctx.old_object.as_ref(), deadline.0)
            .await?;
        if let Measured::Fallback { fallback, .. } = &measured {
            tracing::warn!(
                guard = %self.name,
                target = %format_args!("{}/{}.{}/{}", target.namespace, target.resource, target.group, target.name),
                reason = fallback.reason,
                error = %fallback.message,
                "live traffic unavailable: the risk uses the fixed estimate"
            );
            self.metrics.record_traffic_fallback(fallback.reason);
        }
        Some(measured)
    }

    /// Scores the case, runs the gates and records the finding. The case is built before the
    /// future is, and boxed: the future holds a pointer to it instead of the case and the
    /// arguments it was built from (an `async fn` keeps both), so the guard's whole future stays
    /// within the allocator's per-thread cache (glibc's serves up to 1,032 bytes; a larger
    /// block costs several times as much to allocate and free, on every review).
    fn conclude<'a>(
        &'a self,
        input: &'a Input,
        target: scope::Target<'a>,
        facts: Option<ObjectFacts>,
        deadline: Deadline,
    ) -> impl Future<Output = Result<Verdict, GuardError>> + 'a {
        let spec = &self.shared.spec;
        let case = Box::new(Case {
            review: &input.review,
            now: input.now,
            risk: risk::assess(spec, &target, input.now, facts.as_ref()),
            target,
            facts,
        });
        async move {
            let finding = self.decide(&case, deadline).await?;
            self.metrics.record(finding.code);
            // The facts go first: the report then takes the dependents they shared.
            let Case { risk, facts, .. } = *case;
            drop(facts);
            Ok(conclusion::verdict(spec.mode, finding, risk))
        }
    }

    /// Runs the gates in their fixed order; the first that stops the case decides. Break-glass
    /// and trusted principals stand aside before any rate limit; a request the later gates let
    /// through then spends its rate-limit tokens where `rateLimitStage` says (a denied one, or a
    /// dry run, spends none).
    async fn decide(&self, case: &Case<'_>, deadline: Deadline) -> Result<Finding, GuardError> {
        let spec = &self.shared.spec;
        let meter = rate::Meter {
            buckets: &self.shared.buckets,
            cluster: self.shared.cluster.as_ref(),
            deadline,
            advisory: case.facts.is_none() && spec.rate_limit_stage == RateLimitStage::Admission,
        };
        if let Some(stop) = gates::break_glass(spec, case) {
            return Ok(stop);
        }
        if let Some(stop) = gates::trusted(spec, case) {
            return Ok(stop);
        }
        let (checks, spends) = rate::stage(spec.rate_limit_stage, case);
        if checks && let Some(stop) = rate::gate(&meter, &spec.rate_limits, case).await? {
            return Ok(stop);
        }
        let burst = unusual::gate(&meter, spec, &self.shared.baselines, case).await?;
        let (escalation, report) = match self.unusual_action(burst) {
            Ok(acted) => acted,
            Err(stop) => return Ok(stop),
        };
        let finding = self.protection_gates(case, escalation, deadline).await?;
        if finding.code.denies() || !spends {
            return Ok(finding.with_unusual(report));
        }
        Ok(rate::spend(&meter, &spec.rate_limits, case)
            .await?
            .unwrap_or(finding)
            .with_unusual(report))
    }

    /// What a burst (if any) does, by the unusual-deletion action, counted: `Err` with the
    /// finding that stops the case (`Deny`), else the finding a ticket must lift
    /// (`RequireTicket`) and the report the audit record shows.
    fn unusual_action(&self, burst: Option<unusual::Burst>) -> Result<Escalated, Finding> {
        let Some(b) = burst else {
            return Ok((None, None));
        };
        self.metrics.record_unusual();
        let action = self
            .shared
            .spec
            .unusual_deletions
            .as_ref()
            .map(|u| u.action);
        match action {
            Some(UnusualAction::Deny) => Err(b.finding.with_unusual(Some(b.report))),
            Some(UnusualAction::RequireTicket) => Ok((Some(b.finding), Some(b.report))),
            _ => Ok((None, Some(b.report))),
        }
    }

    /// The gates of a target worth guarding: change windows and freezes, cascades, tampering,
    /// then tickets. The authorization ring guards protected targets only (and any target of a
    /// burst that must present a ticket, `escalation`); the validation ring guards every object
    /// it is sent, by its risk. Only the ticket source is awaited: the gates before it are
    /// decided before the future is made (see `conclude`).
    fn protection_gates<'a>(
        &'a self,
        case: &'a Case<'a>,
        escalation: Option<Finding>,
        deadline: Deadline,
    ) -> impl Future<Output = Result<Finding, GuardError>> + 'a {
        let spec = &self.shared.spec;
        let before = before_tickets(spec, case, escalation);
        let source = self.shared.tickets.as_deref();
        async move {
            let (level, demand) = match before {
                Ok(ticketed) => ticketed,
                Err(stop) => return Ok(stop),
            };
            Ok(
                match tickets::gate(spec, source, level, case, demand, deadline).await? {
                    Ticketed::Refused(stop) => stop,
                    Ticketed::NotRequired => Finding::passed(case.risk.level, None),
                    Ticketed::Covered(c) => {
                        Finding::passed(case.risk.level, Some(c.id)).single_use(c.single_use)
                    }
                },
            )
        }
    }
}

/// The protection gates before the tickets: `Err` with the finding that decides the case (an
/// unprotected target in the authorization ring, a change window or freeze), else the level the
/// target is guarded at and when a ticket is demanded.
fn before_tickets(
    spec: &GuardSpec,
    case: &Case<'_>,
    escalation: Option<Finding>,
) -> Result<(Level, Demand), Finding> {
    if case.risk.protection.is_none() && !case.at_admission() && escalation.is_none() {
        return Err(Finding::new(GuardCode::Allow, "target not protected"));
    }
    let level = case.risk.protection.unwrap_or(Level::Standard);
    if let Some(stop) = windows::gate(spec, case) {
        return Err(stop);
    }
    let demand = match (demand(spec, case), escalation) {
        (Demand::IfRequired, Some(burst)) => Demand::Always(burst),
        (demand, _) => demand,
    };
    Ok((level, demand))
}

/// The facts of an admission request the gates judge, `None` when the guard stands aside: an
/// UPDATE is judged only when it lowers the protection label or removes the buffer's finalizer
/// where that removal is guarded. The facts are taken and given back rather than borrowed, so
/// the caller's future does not keep a second copy of them across the gates.
fn judged(
    spec: &GuardSpec,
    target: &scope::Target<'_>,
    input: &Input,
    (is_update, update): (bool, buffered::BufferUpdate<'_>),
    mut facts: ObjectFacts,
) -> Option<ObjectFacts> {
    facts.finalizer_removed = update.finalizer_removed;
    let removal = facts.finalizer_removed && buffered::removal_guarded(spec, target, input, &facts);
    if is_update && facts.tampering.is_none() && !removal {
        return None;
    }
    facts.finalizer_removed = removal;
    Some(facts)
}

/// A burst's escalation (the finding a ticket must lift) and its report.
type Escalated = (Option<Finding>, Option<UnusualReport>);

/// When a ticket is required whatever the level and risk: a cascading deletion
/// (`CASCADE_BLOCKED` without one), a guarded removal of the buffer's finalizer and a lowered
/// protection label (`MISSING_TICKET`).
fn demand(spec: &GuardSpec, case: &Case<'_>) -> Demand {
    let Some(facts) = &case.facts else {
        return Demand::IfRequired;
    };
    if let Some(why) = &facts.cascade {
        return Demand::Always(Finding::new(
            GuardCode::CascadeBlocked,
            format!("{why}: deleting it cascades, a change ticket is required"),
        ));
    }
    if facts.finalizer_removed
        && let Some(level) = case.risk.protection
        && let Some(missing) = buffered::removal_needs_ticket(spec, level)
    {
        return Demand::Always(missing);
    }
    if let Some(t) = &facts.tampering {
        let to = t.to.map_or("removed", |l| l.as_str());
        return Demand::Always(Finding::new(
            GuardCode::MissingTicket,
            format!(
                "lowering the protection label ({} -> {to}) needs a change ticket for {}",
                t.from.as_str(),
                t.from.as_str()
            ),
        ));
    }
    Demand::IfRequired
}

impl Authorizer for DeletionGuard {
    fn authorize<'a>(
        &'a self,
        input: &'a Input,
        deadline: Deadline,
    ) -> BoxFuture<'a, Result<Verdict, AuthorizerError>> {
        match &input.object {
            None => Box::pin(self.review(input, deadline)),
            Some(ctx) => Box::pin(self.admit(input, ctx, deadline)),
        }
    }
}

/// warrant's own service account is excluded for the changes warrant makes (its finalizer, its
/// requester annotation), not for lowering a protection label, which warrant never does: an
/// UPDATE by it that lowers one is judged like anyone's (the target), so a leaked token cannot
/// strip protection unseen.
fn own_account_overreach<'a>(
    spec: &GuardSpec,
    input: &'a Input,
    ctx: &ObjectContext,
) -> Option<scope::Target<'a>> {
    let target = scope::admission_target(&input.review, ctx.operation)?;
    let own = target.user == spec.warrant_service_account
        && !crate::config::model::pattern::any(&spec.excluded_namespaces, target.namespace);
    (own && ctx.operation == Operation::Update && objects::lowers_label(spec, ctx))
        .then_some(target)
}
