//! Conditional decisions asked back at admission (KEP-5681): an
//! `AuthorizationConditionsReview` names the sub-decisions warrant answered with, and each is
//! evaluated by the entry that authored it (union.go's `EvaluateConditions`).

use super::entry::Entry;
use super::union::Chain;
use crate::authorizer::Deadline;
use crate::authorizer::conditional;
use crate::cel::Admission;
use crate::config::AuthorizerType;
use crate::review::{ConditionsAwareDecision, ConditionsReview, DecisionType};

impl Chain {
    /// Evaluates a conditional decision warrant answered, when kube-apiserver asks back at
    /// admission with an `AuthorizationConditionsReview` (union.go's `EvaluateConditions`): each
    /// sub-decision in order, a ConditionsMap of warrant's own evaluated by its entry, one a
    /// downstream webhook authored sent back to it; the first Allow or Deny decides, else
    /// NoOpinion. A sub-decision evaluated to an outcome it could not reach fails closed.
    pub(crate) async fn evaluate_conditions(
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
        let (mut reasons, mut errors) = (Vec::new(), Vec::new());
        for member in &d.union {
            let sub = &member.decision;
            let result = match sub.decision_type {
                DecisionType::Deny => return sub.clone(),
                DecisionType::Allow if self.may_allow(&member.authorizer_name) => {
                    return sub.clone();
                }
                DecisionType::Allow => conditional::failure(
                    sub,
                    "failed closed",
                    &format!(
                        "authorizer {:?} of this configuration never answers Allow unconditionally",
                        member.authorizer_name
                    ),
                ),
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
                    let (reason, error) = result.parts();
                    if !reason.is_empty() {
                        reasons.push(format!("{}: {reason}", member.authorizer_name));
                    }
                    if !error.is_empty() {
                        errors.push(format!("{}: {error}", member.authorizer_name));
                    }
                }
            }
        }
        // Evaluation errors (a cost limit hit) are answered, not dropped; lists are capped.
        let reason = conditional::bounded::join(&reasons, "\n");
        ConditionsAwareDecision::no_opinion(&reason, &conditional::bounded::join(&errors, "\n"))
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

    /// Whether the entry `name` can answer Allow unconditionally, so that a union member saying
    /// so may be one warrant authored: AlwaysAllow, a Webhook (whatever its downstream said) or
    /// a Policy with an enforced unconditional Allow rule; never a DeletionGuard or AlwaysDeny.
    fn may_allow(&self, name: &str) -> bool {
        self.entry(name).is_some_and(|e| match e.authorizer_type {
            AuthorizerType::AlwaysAllow | AuthorizerType::Webhook => true,
            AuthorizerType::Policy => e.catalog.allows_unconditionally(),
            AuthorizerType::AlwaysDeny | AuthorizerType::DeletionGuard => false,
        })
    }
}
