//! [`FollowUps`]: performs an admission decision's follow-ups within the request's time budget,
//! and applies the failure rule once for every kind: a follow-up that fails is logged and
//! counted; one whose [`OnFailure`] is `Refuse` also turns the answer into a Deny by the guard
//! that owed it, with a step saying why, and nothing after it is performed.

use super::admission::Admission;
use super::follow_up::{FollowUp, MarkTicketUsed, OnFailure, RecordRequester};
use super::metrics::{DefenseMetrics, RequesterOutcome};
use crate::authorizer::{Answer, Step, StepOutcome};
use crate::cluster::{AnnotateError, Annotator, MarkError};
use crate::config::{AuthorizerType, Mode};
use crate::decision::{AttributedReason, Decision, Reason, Verdict};
use crate::names::AuthorizerName;
use futures_util::future::Either;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};
use thiserror::Error;

/// Why a follow-up was not performed.
#[derive(Debug, Error)]
pub enum FollowUpError {
    /// warrant has no cluster connection to write with.
    #[error("no cluster connection is configured")]
    NoCluster,
    /// The API server refused the write, or it could not be sent.
    #[error(transparent)]
    Annotate(#[from] AnnotateError),
    /// A single-use ticket could not be marked Used.
    #[error(transparent)]
    MarkUsed(#[from] MarkError),
    /// The request's time budget ran out first.
    #[error("no answer within the request's time budget ({budget:?})")]
    Timeout {
        /// What was left of the budget.
        budget: Duration,
    },
}

/// What performing follow-ups needs: warrant's client for the cluster (none without a cluster
/// connection: every write then fails) and the series that count the outcomes.
#[derive(Debug, Default)]
pub struct FollowUps {
    /// Writes annotations as warrant's own identity.
    pub(crate) annotator: Option<Arc<Annotator>>,
    /// The defense's series.
    pub metrics: DefenseMetrics,
}

impl FollowUps {
    /// Performs every follow-up of `admission` in order before `deadline`; the answer to send.
    /// Most admissions have none: their answer is ready, and the API server calls' future
    /// (kilobytes of client state) is made, boxed, only for one that has some, so that every
    /// admission's future does not carry its size.
    pub(crate) fn perform<'a>(
        &'a self,
        admission: Admission<'a>,
        deadline: Instant,
    ) -> impl Future<Output = Answer> + Send + 'a {
        if admission.follow_ups.is_empty() {
            Either::Left(std::future::ready(admission.answer))
        } else {
            Either::Right(Box::pin(self.perform_all(admission, deadline)))
        }
    }

    /// [`Self::perform`] for an admission with follow-ups.
    async fn perform_all(&self, admission: Admission<'_>, deadline: Instant) -> Answer {
        let Admission {
            mut answer,
            follow_ups,
        } = admission;
        for follow_up in &follow_ups {
            let left = deadline.saturating_duration_since(Instant::now());
            let Err(error) = self.perform_one(follow_up, left).await else {
                continue;
            };
            if follow_up.on_failure() == OnFailure::Refuse {
                let reason = follow_up.refusal(&error.to_string());
                refuse(&mut answer, follow_up.guard(), reason);
                break;
            }
        }
        answer
    }

    /// Performs one follow-up within `left`.
    async fn perform_one(
        &self,
        follow_up: &FollowUp<'_>,
        left: Duration,
    ) -> Result<(), FollowUpError> {
        match follow_up {
            FollowUp::RecordRequester(r) => self.record_requester(r, left).await,
            FollowUp::MarkTicketUsed(m) => self.mark_used(m, left).await,
        }
    }

    /// Marks a single-use ticket Used (nothing when it already is, for this object).
    async fn mark_used(&self, m: &MarkTicketUsed<'_>, left: Duration) -> Result<(), FollowUpError> {
        let result = match self.annotator.as_deref() {
            None => Err(FollowUpError::NoCluster),
            Some(a) => {
                match tokio::time::timeout(left, a.mark_used(&m.ticket, &m.object, m.at)).await {
                    Ok(marked) => marked.map_err(FollowUpError::from),
                    Err(_) => Err(FollowUpError::Timeout { budget: left }),
                }
            }
        };
        match &result {
            Ok(()) => {
                tracing::info!(ticket = %m.ticket, namespace = m.object.namespace, name = m.object.name, resource = m.object.resource, "single-use ticket marked Used")
            }
            Err(error) => {
                tracing::warn!(ticket = %m.ticket, namespace = m.object.namespace, name = m.object.name, error = %error, "could not mark a single-use ticket Used; the deletion is refused")
            }
        }
        result
    }

    /// Writes the requester annotation unless it already names the user.
    async fn record_requester(
        &self,
        r: &RecordRequester<'_>,
        left: Duration,
    ) -> Result<(), FollowUpError> {
        if r.recorded == Some(r.user) {
            self.metrics.record_requester(RequesterOutcome::Unchanged);
            return Ok(());
        }
        let result = match self.annotator.as_deref() {
            None => Err(FollowUpError::NoCluster),
            Some(a) => {
                let write = a.annotate(&r.object, r.annotation, r.user);
                match tokio::time::timeout(left, write).await {
                    Ok(written) => written.map_err(FollowUpError::from),
                    Err(_) => Err(FollowUpError::Timeout { budget: left }),
                }
            }
        };
        match &result {
            Ok(()) => self.metrics.record_requester(RequesterOutcome::Recorded),
            Err(error) => {
                self.metrics.record_requester(RequesterOutcome::Failed);
                tracing::warn!(
                    namespace = r.object.namespace,
                    name = r.object.name,
                    resource = r.object.resource,
                    annotation = r.annotation,
                    user = r.user,
                    error = %error,
                    "could not record who asked for a held deletion"
                );
            }
        }
        result
    }
}

/// Turns the answer into a refusal by `guard` for `reason`, with a step of the guard saying
/// why.
fn refuse(answer: &mut Answer, guard: &AuthorizerName, reason: Reason) {
    answer.reason = AttributedReason {
        authorizer: guard,
        reason: &reason,
    }
    .to_string();
    answer.decision = Decision::Deny;
    answer.decided_by = Some(guard.clone());
    answer.code = reason.code.clone();
    answer.trace.push(Step {
        authorizer: guard.clone(),
        authorizer_type: AuthorizerType::DeletionGuard,
        outcome: StepOutcome::Verdict(Verdict::new(Decision::Deny, reason)),
        elapsed: Duration::ZERO,
        conditions: None,
        mode: Mode::Enforce,
    });
}
