//! `type: Policy`: CEL rules with explicit Allow and Deny. Any matching Deny rule denies; else
//! any matching Allow rule allows; else no opinion. Deny rules run first, in file order, and the
//! first match decides; then Allow rules. A rule that fails to evaluate never lets a review
//! through: an erroring Deny rule with no other Deny match fails the authorizer (its
//! failurePolicy applies, Deny by default), and so does an erroring Allow rule when no Allow rule
//! matched.

use super::{Authorizer, AuthorizerError, BoxFuture, Deadline, Input};
use crate::cel::{Bound, SelectorUse};
use crate::config::model::{Effect, PolicyRule, PolicySpec};
use crate::decision::{Decision, Reason, Verdict};

/// A compiled policy.
#[derive(Debug)]
pub struct Policy {
    deny: Box<[PolicyRule]>,
    allow: Box<[PolicyRule]>,
    selectors: SelectorUse,
}

impl Policy {
    /// The policy of a validated spec.
    pub fn new(spec: &PolicySpec) -> Self {
        let (deny, allow): (Vec<_>, Vec<_>) = spec
            .rules
            .iter()
            .cloned()
            .partition(|r| r.effect == Effect::Deny);
        let selectors = spec.rules.iter().fold(SelectorUse::default(), |u, r| {
            u.union(r.expression.selectors())
        });
        Self {
            deny: deny.into_boxed_slice(),
            allow: allow.into_boxed_slice(),
            selectors,
        }
    }

    /// Judges one review synchronously; gives up (an error) once `deadline` has passed, checked
    /// before each rule.
    pub fn judge(&self, input: &Input, deadline: Deadline) -> Result<Verdict, AuthorizerError> {
        let bound = Bound::new(input.review.spec(), input.now, self.selectors);
        for (rules, decision) in [(&self.deny, Decision::Deny), (&self.allow, Decision::Allow)] {
            let mut failure = None;
            for rule in rules.iter() {
                deadline.check()?;
                match rule.expression.judge(&bound) {
                    Ok(true) => return Ok(Verdict::new(decision, reason(rule))),
                    Ok(false) => {}
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
        Ok(Verdict::bare(Decision::NoOpinion))
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
}

#[cfg(test)]
mod tests;
