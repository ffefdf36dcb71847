//! `type: Policy`: CEL rules with explicit Allow and Deny. Any matching Deny rule denies; else
//! any matching Allow rule allows; else no opinion. Deny rules run first, in file order, and the
//! first match decides; then Allow rules. A rule that fails to evaluate never lets a review
//! through: an erroring Deny rule with no other Deny match fails the authorizer (its
//! failurePolicy applies, Deny by default), and so does an erroring Allow rule when no Allow rule
//! matched. A rule in shadow mode (`mode: Observe`) is evaluated in its place, and when it matches
//! it is recorded as a [`Shadow`] of the verdict and skipped. A rule with a `condition:` whose
//! expression matches makes the answer conditional instead (`conditional`).
//!
//! A review evaluates only the rules that can match it (`index`): a rule whose expression
//! provably evaluates to `false` on the review (a top-level conjunct on another verb, resource,
//! API group, namespace, kind of review or group) is left out, which changes nothing but the work
//! done.

use super::metrics::{Families, Handle, RuleLabels};
use super::{Authorizer, AuthorizerError, BoxFuture, Deadline, Input};
use crate::cel::{Binding, RequestUse};
use crate::config::model::{Effect, PolicyRule, PolicySpec};
use crate::decision::{Decision, Reason, Shadow, Verdict};
use crate::names::AuthorizerName;
use conditional::Collected;
use index::RuleIndex;
use prometheus_client::metrics::counter::Counter;

/// A compiled policy.
#[derive(Debug)]
pub struct Policy {
    deny: Box<[Rule]>,
    allow: Box<[Rule]>,
    uses: RequestUse,
    /// The indexes of `deny` and `allow`; `None` evaluates every rule.
    index: Option<[RuleIndex; 2]>,
}

/// A rule and its `warrant_policy_rule_matches` series.
#[derive(Debug)]
struct Rule {
    rule: PolicyRule,
    matches: Handle<RuleLabels, Counter>,
}

impl Policy {
    /// The policy of a validated spec, counting its rules' matches in `metrics` under
    /// authorizer `name`.
    pub fn new(spec: &PolicySpec, name: &AuthorizerName, metrics: &Families) -> Self {
        let rule = |r: &PolicyRule| Rule {
            rule: r.clone(),
            matches: Handle::new(
                &metrics.rule_matches,
                RuleLabels {
                    authorizer: name.to_string(),
                    rule: r.name.to_string(),
                    effect: r.effect.as_str(),
                },
            ),
        };
        let (deny, allow): (Vec<_>, Vec<_>) =
            spec.rules.iter().partition(|r| r.effect == Effect::Deny);
        let uses = spec
            .rules
            .iter()
            .fold(RequestUse::default(), |u, r| u.union(r.expression.uses()));
        let deny: Box<[Rule]> = deny.into_iter().map(rule).collect();
        let allow: Box<[Rule]> = allow.into_iter().map(rule).collect();
        let index = |rules: &[Rule]| {
            RuleIndex::new(
                rules
                    .iter()
                    .map(|r| r.rule.expression.requirements().into())
                    .collect(),
            )
        };
        Self {
            index: Some([index(&deny), index(&allow)]),
            deny,
            allow,
            uses,
        }
    }

    /// The same policy evaluating every rule of every review, without its index: the reference
    /// the index is tested against (same verdicts, more work).
    pub fn without_index(mut self) -> Self {
        self.index = None;
        self
    }

    /// Judges one review synchronously; gives up (an error) once `deadline` has passed, checked
    /// before each rule. A rule in shadow mode (`mode: Observe`) that matches or fails is
    /// recorded in the verdict's shadows and skipped, so it never decides and never fails the
    /// policy. (When an enforced rule fails the policy, the error is the answer and the shadows
    /// met before it are not reported.)
    pub fn judge(&self, input: &Input, deadline: Deadline) -> Result<Verdict, AuthorizerError> {
        self.judge_binding(&Binding::new(input.review.spec(), input.now), deadline)
    }

    /// [`Policy::judge`] on a review already bound for CEL.
    pub(crate) fn judge_binding(
        &self,
        binding: &Binding<'_>,
        deadline: Deadline,
    ) -> Result<Verdict, AuthorizerError> {
        let bound = binding.with(self.uses);
        let spec = binding.spec();
        let mut shadows = Vec::new();
        let mut collected = Collected::default();
        for (side, (rules, decision)) in
            [(&self.deny, Decision::Deny), (&self.allow, Decision::Allow)]
                .into_iter()
                .enumerate()
        {
            let mut failure = None;
            // The rules that can match, in order (every rule without the index).
            let mut indexed = self.index.as_ref().map(|i| i[side].candidates(spec));
            let mut every = 0..rules.len();
            let positions = std::iter::from_fn(|| match &mut indexed {
                Some(candidates) => candidates.next(),
                None => every.next(),
            });
            for Rule { rule, matches } in positions.filter_map(|p| rules.get(p)) {
                deadline.check()?;
                let shadow = rule.mode.is_observe();
                match rule.expression.judge(&bound) {
                    Ok(true) if shadow => shadows.push(Shadow {
                        would: decision,
                        reason: reason(rule),
                        error: None,
                    }),
                    Ok(true) if rule.condition.is_some() => {
                        matches.get().inc();
                        collected.add(rule, decision, reason(rule));
                    }
                    Ok(true) => {
                        matches.get().inc();
                        let verdict = collected.decided(rule, decision, reason(rule));
                        return Ok(verdict.with_shadows(shadows));
                    }
                    Ok(false) => {}
                    Err(error) if shadow => shadows.push(Shadow {
                        would: Decision::NoOpinion,
                        reason: reason(rule),
                        error: Some(error.to_string()),
                    }),
                    Err(error) => {
                        failure.get_or_insert_with(|| AuthorizerError::Rule {
                            rule: rule.name.clone(),
                            error,
                        });
                    }
                }
            }
            if let Some(f) = failure {
                return Err(f);
            }
        }
        let verdict = collected
            .finish()
            .unwrap_or_else(|| Verdict::bare(Decision::NoOpinion));
        Ok(verdict.with_shadows(shadows))
    }
}

fn reason(rule: &PolicyRule) -> Reason {
    Reason {
        rule: Some(rule.name.clone()),
        message: rule.message.clone(),
        code: rule.code.clone(),
    }
}

impl Authorizer for Policy {
    fn authorize<'a>(
        &'a self,
        input: &'a Input,
        deadline: Deadline,
    ) -> BoxFuture<'a, Result<Verdict, AuthorizerError>> {
        Box::pin(std::future::ready(self.judge(input, deadline)))
    }

    fn judge_bound(
        &self,
        _input: &Input,
        binding: &Binding<'_>,
        deadline: Deadline,
    ) -> Option<Result<Verdict, AuthorizerError>> {
        Some(self.judge_binding(binding, deadline))
    }
}

pub(crate) mod conditional;
mod index;
#[cfg(test)]
mod tests;
