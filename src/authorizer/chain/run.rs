//! [`Run`]: the chain's progress through one review, as `union.go` keeps it: the steps so far,
//! the NoOpinion reasons and errors collected on the way, and the conditional sub-decisions of a
//! caller that handles conditions; the [`Answer`] once a step decides or none does.

use super::answer::{Answer, Step, StepOutcome};
use super::entry::Entry;
use crate::authorizer::conditional::Union;
use crate::config::FailurePolicy;
use crate::decision::{AttributedReason, Decision, Reason};
use crate::names::AuthorizerName;
use crate::review::ConditionsAwareDecision;

/// The chain's progress through one review: the steps so far, and the NoOpinion reasons and
/// errors collected on the way, as `union.go` collects them.
pub(super) struct Run {
    trace: Vec<Step>,
    reasons: Vec<String>,
    errors: Vec<String>,
    /// The caller handles conditions: conditional verdicts join `union` and do not decide.
    pub(super) conditional: bool,
    union: Union,
}

impl Run {
    pub(super) fn with_capacity(n: usize) -> Self {
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
    pub(super) fn push(&mut self, entry: &Entry, step: Step) -> Option<Answer> {
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
    pub(super) fn no_opinion(self) -> Answer {
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
    use std::fmt::Write as _;
    // Sized for the whole text first: a guard's reason runs to a few hundred bytes, and
    // growing a string to it copies it several times.
    let rule = reason.rule.as_ref().map_or(0, |r| r.as_str().len() + 1);
    let code = reason.code.as_ref().map_or(0, |c| c.as_str().len() + 3);
    let mut text =
        String::with_capacity(name.as_str().len() + rule + 2 + reason.message.len() + code);
    let attributed = AttributedReason {
        authorizer: name,
        reason,
    };
    // Writing into a String cannot fail.
    let _ = write!(text, "{attributed}");
    text
}
