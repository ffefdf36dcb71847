//! The conditional part of a policy's answer (KEP-5681): rules whose `expression` matched and
//! that carry a `condition:` are collected into one ConditionsMap, Deny rules as Deny
//! conditions and Allow rules as Allow conditions. The map's precedence (Deny over Allow) is the
//! policy's own, so an unconditional Allow rule matched after conditional Deny rules joins the
//! map as an Allow condition that always holds.

use crate::config::model::PolicyRule;
use crate::config::model::conditions::CONDITION_DOMAIN;
use crate::decision::{Decision, Reason, Verdict};
use crate::review::{CEL_CONDITION_TYPE, Condition, ConditionsMap};

/// The source of the Allow condition an unconditional Allow rule contributes.
pub(crate) const ALWAYS: &str = "true";

/// The conditions collected so far in one judgement.
#[derive(Debug, Default)]
pub(super) struct Collected {
    map: ConditionsMap,
    first: Option<Reason>,
}

impl Collected {
    /// Adds a conditional rule that matched.
    pub(super) fn add(&mut self, rule: &PolicyRule, decision: Decision, reason: Reason) {
        let Some(c) = &rule.condition else { return };
        match decision {
            Decision::Deny => self.map.deny_conditions.push(c.wire.clone()),
            _ => self.map.allow_conditions.push(c.wire.clone()),
        }
        self.first.get_or_insert(reason);
    }

    /// The verdict when an unconditional rule matched with `decision`: the plain verdict,
    /// unless Deny conditions are pending and the rule allows (then the map, with the rule as an
    /// Allow condition that always holds).
    pub(super) fn decided(self, rule: &PolicyRule, decision: Decision, reason: Reason) -> Verdict {
        if decision == Decision::Deny || self.map.deny_conditions.is_empty() {
            return Verdict::new(decision, reason);
        }
        let mut map = self.map;
        map.allow_conditions.push(always(rule, &reason));
        Verdict::conditional(map, self.first)
    }

    /// The verdict when no unconditional rule matched: the map, if any rule was collected.
    pub(super) fn finish(self) -> Option<Verdict> {
        (!self.map.is_empty()).then(|| Verdict::conditional(self.map, self.first))
    }
}

/// The Allow condition of an unconditional Allow rule.
pub(crate) fn always(rule: &PolicyRule, reason: &Reason) -> Condition {
    let mut description = format!("{}: {}", rule.name, reason.message);
    if let Some(code) = &reason.code {
        description.push_str(&format!(" [{code}]"));
    }
    Condition {
        id: format!("{CONDITION_DOMAIN}/{}", rule.name),
        condition: ALWAYS.to_owned(),
        condition_type: CEL_CONDITION_TYPE.to_owned(),
        description,
    }
}
