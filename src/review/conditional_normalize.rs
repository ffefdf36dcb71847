//! A conditional decision received from another authorizer (a downstream webhook's
//! `status.conditionalDecision`), read the way kube-apiserver reads it:
//! `ToAuthorizerConditionsAwareDecision` (`k8s.io/apiserver/pkg/apis/authorization/v1/
//! encoding.go`), which rebuilds maps with `ConditionsAwareDecisionConditionsMap`
//! (`conditionsmap.go`: a map without conditions or with only NoOpinion conditions is a
//! NoOpinion, a map breaking a limit fails closed) and unions with
//! `ConditionsAwareDecisionUnion.Add` / `ToDecision` (`conditionsunion.go`: members after the
//! first unconditional Allow or Deny are dropped, bad names fail closed, a union with one
//! possible outcome folds to it). All v0.38.0-beta.0.

use super::conditional::{ConditionsAwareDecision, DecisionType, NamedDecision};
use super::conditional_limits::{MAX_CONDITIONS_PER_MAP, check_map, is_dns1123_subdomain};

const FAILED_CLOSED: &str = "failed closed";

/// The decision as kube-apiserver would hold it after decoding.
pub fn normalize(d: ConditionsAwareDecision) -> ConditionsAwareDecision {
    match d.decision_type {
        DecisionType::Allow | DecisionType::Deny | DecisionType::NoOpinion => d,
        DecisionType::ConditionsMap => normalize_map(d),
        DecisionType::Union => fold_union(d.union.into_iter().map(|m| NamedDecision {
            authorizer_name: m.authorizer_name,
            decision: normalize(m.decision),
        })),
    }
}

fn normalize_map(d: ConditionsAwareDecision) -> ConditionsAwareDecision {
    let Some(map) = d.conditions_map.as_ref() else {
        return no_conditions();
    };
    if map.is_empty() {
        return no_conditions();
    }
    let fail = |error: String| {
        if map.deny_conditions.is_empty() {
            ConditionsAwareDecision::no_opinion(FAILED_CLOSED, &error)
        } else {
            ConditionsAwareDecision::deny(FAILED_CLOSED, &error)
        }
    };
    if map.len() > MAX_CONDITIONS_PER_MAP {
        return fail(format!(
            "too many conditions: {} exceeds maximum of {MAX_CONDITIONS_PER_MAP}",
            map.len()
        ));
    }
    if map.deny_conditions.is_empty() && map.allow_conditions.is_empty() {
        return ConditionsAwareDecision::no_opinion(
            "only NoOpinion conditions always evaluate to NoOpinion",
            "",
        );
    }
    if let Err(e) = check_map(map) {
        return fail(format!("invalid condition: {e}"));
    }
    d
}

fn no_conditions() -> ConditionsAwareDecision {
    ConditionsAwareDecision::no_opinion(
        "no conditions",
        "at least one condition must be passed to ConditionsAwareDecisionConditionsMap(), got none",
    )
}

/// A union of `members` (already normalized), as `ToDecision` makes it.
pub fn fold_union(members: impl IntoIterator<Item = NamedDecision>) -> ConditionsAwareDecision {
    let mut kept: Vec<NamedDecision> = Vec::new();
    let mut errors = Vec::new();
    for m in members {
        if kept.iter().any(|k| k.decision.contains_unconditional()) {
            break;
        }
        if !is_dns1123_subdomain(&m.authorizer_name) {
            errors.push(format!("invalid authorizerName {:?}", m.authorizer_name));
        }
        if kept.iter().any(|k| k.authorizer_name == m.authorizer_name) {
            errors.push(format!("duplicate authorizerName {:?}", m.authorizer_name));
        }
        kept.push(m);
    }
    let union = ConditionsAwareDecision::union(kept);
    if !errors.is_empty() {
        let error = errors.join(", ");
        return match union.failure_type() {
            DecisionType::Deny => ConditionsAwareDecision::deny(FAILED_CLOSED, &error),
            _ => ConditionsAwareDecision::no_opinion(FAILED_CLOSED, &error),
        };
    }
    let outcomes = union.outcomes();
    if outcomes.count() != 1 {
        return union;
    }
    let only = if outcomes.allow {
        DecisionType::Allow
    } else if outcomes.deny {
        DecisionType::Deny
    } else {
        DecisionType::NoOpinion
    };
    let (mut reasons, mut errors) = (Vec::new(), Vec::new());
    for m in &union.union {
        collect(
            &[&m.authorizer_name],
            &m.decision,
            only,
            &mut reasons,
            &mut errors,
        );
    }
    let (reason, error) = (reasons.join(", "), errors.join(", "));
    match only {
        DecisionType::Allow => ConditionsAwareDecision::allow(&reason, &error),
        DecisionType::Deny => ConditionsAwareDecision::deny(&reason, &error),
        _ => ConditionsAwareDecision::no_opinion(&reason, &error),
    }
}

/// The reasons and errors of the leaves with the decision `only`, prefixed with their path of
/// authorizer names (`collectReasonsAndErrors`).
fn collect(
    path: &[&str],
    d: &ConditionsAwareDecision,
    only: DecisionType,
    reasons: &mut Vec<String>,
    errors: &mut Vec<String>,
) {
    if d.decision_type == only {
        let (reason, error) = d.parts();
        let prefix = path.join(": ");
        if !reason.is_empty() {
            reasons.push(format!("{prefix}: {{{reason}}}"));
        }
        if !error.is_empty() {
            errors.push(format!("{prefix}: {error}"));
        }
        return;
    }
    for m in &d.union {
        let mut deeper = path.to_vec();
        deeper.push(&m.authorizer_name);
        collect(&deeper, &m.decision, only, reasons, errors);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::{Condition, ConditionsMap};

    fn cond(id: &str) -> Condition {
        Condition {
            id: id.into(),
            condition: "true".into(),
            ..Default::default()
        }
    }

    fn named(name: &str, decision: ConditionsAwareDecision) -> NamedDecision {
        NamedDecision {
            authorizer_name: name.into(),
            decision,
        }
    }

    #[test]
    fn maps_fold_when_they_cannot_allow_or_deny() {
        let empty = ConditionsAwareDecision::conditions(ConditionsMap::default());
        assert_eq!(normalize(empty).decision_type, DecisionType::NoOpinion);
        let only_no_opinion = ConditionsAwareDecision::conditions(ConditionsMap {
            no_opinion_conditions: vec![cond("a.dev/x")],
            ..Default::default()
        });
        assert_eq!(
            normalize(only_no_opinion).decision_type,
            DecisionType::NoOpinion
        );
        let bad_deny = ConditionsAwareDecision::conditions(ConditionsMap {
            deny_conditions: vec![cond("no-prefix")],
            ..Default::default()
        });
        let d = normalize(bad_deny);
        assert_eq!(d.decision_type, DecisionType::Deny);
        assert_eq!(d.parts().0, FAILED_CLOSED);
        let good = ConditionsAwareDecision::conditions(ConditionsMap {
            allow_conditions: vec![cond("a.dev/x")],
            ..Default::default()
        });
        assert_eq!(normalize(good.clone()), good);
    }

    #[test]
    fn unions_fold_to_their_only_outcome_and_fail_closed_on_bad_names() {
        let allow = ConditionsAwareDecision::allow("ok", "");
        let folded = normalize(ConditionsAwareDecision::union(vec![named(
            "a",
            allow.clone(),
        )]));
        assert_eq!(folded, ConditionsAwareDecision::allow("a: {ok}", ""));
        let map = ConditionsAwareDecision::conditions(ConditionsMap {
            deny_conditions: vec![cond("a.dev/x")],
            ..Default::default()
        });
        let mixed = normalize(ConditionsAwareDecision::union(vec![
            named("m", map.clone()),
            named("a", allow.clone()),
            named("dropped", map.clone()),
        ]));
        assert_eq!(mixed.decision_type, DecisionType::Union);
        assert_eq!(mixed.union.len(), 2, "members after an Allow are dropped");
        let bad = normalize(ConditionsAwareDecision::union(vec![
            named("Bad_Name", map.clone()),
            named("Bad_Name", map),
        ]));
        assert_eq!(bad.decision_type, DecisionType::Deny);
        assert!(bad.parts().1.contains("duplicate"), "{bad:?}");
    }
}
