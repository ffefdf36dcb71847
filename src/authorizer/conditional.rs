//! Conditional authorization (KEP-5681) in the chain: the conditions an entry may author (its
//! [`Catalog`]), the composition of conditional answers as upstream's conditions-aware union
//! composes them ([`Union`]), and the evaluation of warrant's own conditions when kube-apiserver
//! asks back with an `AuthorizationConditionsReview` ([`evaluate_map`]).
//!
//! Checked against k8s.io/apiserver v0.38.0-beta.0: `pkg/authorization/union/union.go`
//! (`ConditionsAwareAuthorize`: sub-decisions are collected until one contains an unconditional
//! Allow or Deny), `pkg/authorization/authorizer/conditionsunion.go` (`ToDecision`: a union
//! whose possible outcomes are one is folded to that outcome) and `evaluate.go` (Deny over
//! NoOpinion over Allow; a true or erroring Deny condition denies, an erroring Allow condition
//! is ignored).

use crate::cel::{Admission, Expression, Variables};
use crate::config::model::conditions::CONDITION_DOMAIN;
use crate::config::model::guard::{GuardSpec, Level};
use crate::review::{
    CEL_CONDITION_TYPE, Condition, ConditionsAwareDecision, ConditionsMap, DecisionType,
    NamedDecision,
};
use std::collections::HashMap;

pub mod bounded;

/// One condition an entry authored: what it evaluates and the reason it gives when it applies.
#[derive(Debug, Clone)]
pub(crate) struct Authored {
    /// The compiled condition.
    pub expression: Expression,
    /// Its wire form, compared with what the API server sends back.
    pub wire: Condition,
    /// The effect it was authored under (the map it is sent in): a condition sent back under
    /// another effect is refused, not evaluated there.
    pub effect: DecisionType,
}

/// The conditions an entry may author, by id.
#[derive(Debug, Clone, Default)]
pub(crate) struct Catalog {
    by_id: HashMap<String, Authored>,
}

impl Catalog {
    /// Adds a condition.
    pub fn insert(&mut self, authored: Authored) {
        self.by_id.insert(authored.wire.id.clone(), authored);
    }

    /// The condition of `id`.
    pub fn get(&self, id: &str) -> Option<&Authored> {
        self.by_id.get(id)
    }

    /// Whether the entry has an enforced unconditional Allow rule (authored as an Allow
    /// condition that always holds when it joins a map), so that it may also answer Allow
    /// unconditionally.
    pub fn allows_unconditionally(&self) -> bool {
        self.by_id.values().any(|a| {
            a.effect == DecisionType::Allow
                && a.wire.condition == super::policy::conditional::ALWAYS
        })
    }
}

/// The levels whose label a guard always protects with a Deny condition: a delete at these
/// levels scores HIGH or CRITICAL risk with the default weights, so the validation ring would
/// demand a ticket.
const GUARDED_LEVELS: [Level; 2] = [Level::Critical, Level::High];

/// The levels a guard protects with Deny conditions, most protected first: critical and high,
/// and every level its `tickets.requiredFor` names (the levels the validation ring always
/// refuses without a ticket).
pub(crate) fn guarded_levels(spec: &GuardSpec) -> Vec<Level> {
    let mut levels: Vec<Level> = GUARDED_LEVELS
        .iter()
        .chain(&spec.tickets.required_for)
        .copied()
        .collect();
    levels.sort_by(|a, b| b.cmp(a));
    levels.dedup();
    levels
}

/// The Deny conditions of a guard's label protection on `label`: one per level, reading
/// `oldObject.metadata.labels` with every lookup guarded (an erroring Deny condition denies).
pub(crate) fn guard_conditions(spec: &GuardSpec) -> Option<(ConditionsMap, Catalog)> {
    let label = spec.objects.protection_label.as_deref()?;
    let mut map = ConditionsMap::default();
    let mut catalog = Catalog::default();
    for level in guarded_levels(spec) {
        let quoted = serde_json::to_string(label).ok()?.replace('\'', "\\'");
        let reads_as = level.cel_reads_as(&format!("oldObject.metadata.labels[{quoted}]"));
        let level = level.as_str();
        let source = format!(
            "has(oldObject.metadata.labels) && {quoted} in oldObject.metadata.labels && {reads_as}"
        );
        let expression = Expression::compile(&source, Variables::Admission).ok()?;
        let wire = Condition {
            id: format!("{CONDITION_DOMAIN}/protection-{level}"),
            condition: source,
            condition_type: CEL_CONDITION_TYPE.to_owned(),
            description: format!(
                "protection-{level}: deleting an object labelled {label}={level} is refused; present a ticket to have the validation ring judge it [LABEL_PROTECTED]"
            ),
        };
        map.deny_conditions.push(wire.clone());
        catalog.insert(Authored {
            expression,
            wire,
            effect: DecisionType::Deny,
        });
    }
    Some((map, catalog))
}

/// The sub-decisions of one chain run, collected as union.go collects them.
#[derive(Debug, Default)]
pub struct Union {
    members: Vec<NamedDecision>,
}

impl Union {
    /// Adds an entry's decision.
    pub fn add(&mut self, name: &str, decision: ConditionsAwareDecision) {
        self.members.push(NamedDecision {
            authorizer_name: name.to_owned(),
            decision,
        });
    }

    /// Whether any conditional sub-decision was added.
    pub(crate) fn is_conditional(&self) -> bool {
        self.members.iter().any(|m| {
            matches!(
                m.decision.decision_type,
                DecisionType::ConditionsMap | DecisionType::Union
            )
        })
    }

    /// The union, or `None` when one outcome is certain (then the unconditional answer stands).
    #[allow(
        clippy::wrong_self_convention,
        reason = "the union is consumed, and the answer may be none"
    )]
    pub(crate) fn to_decision(self) -> Option<ConditionsAwareDecision> {
        let union = ConditionsAwareDecision::union(self.members);
        (union.outcomes().count() > 1).then_some(union)
    }

    /// The union as it stands, however many outcomes it has.
    pub(crate) fn into_decision(self) -> ConditionsAwareDecision {
        ConditionsAwareDecision::union(self.members)
    }
}

/// Evaluates a ConditionsMap warrant authored, against the bound admission request: the
/// unconditional decision and, for a condition that applied, its id and description.
pub(crate) fn evaluate_map(
    catalog: &Catalog,
    map: &ConditionsMap,
    bound: &Admission,
    prefix: &str,
) -> ConditionsAwareDecision {
    let groups = [
        (&map.deny_conditions, DecisionType::Deny),
        (&map.no_opinion_conditions, DecisionType::NoOpinion),
        (&map.allow_conditions, DecisionType::Allow),
    ];
    for (conditions, effect) in groups {
        let mut errors = Vec::new();
        for c in conditions {
            match evaluate_one(catalog, c, effect, bound) {
                Ok(true) => {
                    let reason = format!("{prefix}/{}", c.description);
                    return unconditional(effect, &reason, "");
                }
                Ok(false) => {}
                Err(e) => errors.push(format!(
                    "condition {:?} with effect={effect:?} evaluated to an error: {e}",
                    c.id
                )),
            }
        }
        if !errors.is_empty() {
            let error = bounded::join(&errors, ", ");
            let reason = "one or more conditional evaluation errors occurred";
            // An erroring Deny condition denies; erroring NoOpinion and Allow conditions give
            // NoOpinion (evaluate.go).
            let effect = if effect == DecisionType::Deny {
                DecisionType::Deny
            } else {
                DecisionType::NoOpinion
            };
            return unconditional(effect, reason, &error);
        }
    }
    ConditionsAwareDecision::no_opinion("no conditions matched", "")
}

fn unconditional(effect: DecisionType, reason: &str, error: &str) -> ConditionsAwareDecision {
    match effect {
        DecisionType::Deny => ConditionsAwareDecision::deny(reason, error),
        DecisionType::Allow => ConditionsAwareDecision::allow(reason, error),
        _ => ConditionsAwareDecision::no_opinion(reason, error),
    }
}

/// One condition sent back under `effect`: it must be one warrant authored, unchanged (text
/// and type), under the effect it was authored with.
fn evaluate_one(
    catalog: &Catalog,
    c: &Condition,
    effect: DecisionType,
    bound: &Admission,
) -> Result<bool, String> {
    let authored = catalog.get(&c.id).ok_or_else(|| {
        "not a condition this authorizer authors (configuration changed?)".to_owned()
    })?;
    if authored.wire.condition != c.condition {
        return Err(
            "its text differs from what this authorizer authors (configuration changed?)".into(),
        );
    }
    if authored.wire.condition_type != c.condition_type {
        return Err(format!(
            "its type {:?} is not the type this authorizer authors it with",
            c.condition_type
        ));
    }
    if authored.effect != effect {
        return Err(format!(
            "it was authored with effect={:?}, not {effect:?}",
            authored.effect
        ));
    }
    authored
        .expression
        .evaluate_admission(bound)
        .map_err(|e| e.to_string())
}

/// The conditions a policy may author: its rules' `condition:`s, and an always-true Allow
/// condition per enforced unconditional Allow rule (see `policy::conditional`).
pub(crate) fn policy_catalog(spec: &crate::config::model::PolicySpec) -> Catalog {
    use crate::config::model::Effect;
    let mut catalog = Catalog::default();
    let always = Expression::compile(super::policy::conditional::ALWAYS, Variables::Admission);
    for rule in &spec.rules {
        if let Some(c) = &rule.condition {
            catalog.insert(Authored {
                expression: c.expression.clone(),
                wire: c.wire.clone(),
                effect: match rule.effect {
                    Effect::Deny => DecisionType::Deny,
                    Effect::Allow => DecisionType::Allow,
                },
            });
        } else if rule.effect == Effect::Allow
            && !rule.mode.is_observe()
            && let Ok(expression) = &always
        {
            let reason = crate::decision::Reason {
                rule: Some(rule.name.clone()),
                message: rule.message.clone(),
                code: rule.code.clone(),
            };
            catalog.insert(Authored {
                expression: expression.clone(),
                wire: super::policy::conditional::always(rule, &reason),
                effect: DecisionType::Allow,
            });
        }
    }
    catalog
}

/// The decision to fail closed to for `d` (`FailureDecision`): Deny when Deny is possible.
pub fn failure(d: &ConditionsAwareDecision, reason: &str, error: &str) -> ConditionsAwareDecision {
    if d.outcomes().deny {
        ConditionsAwareDecision::deny(reason, error)
    } else {
        ConditionsAwareDecision::no_opinion(reason, error)
    }
}

#[cfg(test)]
mod tests;
