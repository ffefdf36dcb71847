//! Conditional authorization (KEP-5681) in a file: an entry's `conditions:` block (Policy and
//! DeletionGuard only) and a Policy rule's `condition:`, compiled over the admission variables
//! and checked against the limits kube-apiserver enforces on a ConditionsMap
//! ([`crate::review::check_condition`]), so that no condition warrant sends is failed closed
//! for its shape.

use super::{Checker, invalid, line};
use crate::cel::{Expression, Variables};
use crate::config::error::ErrorKind;
use crate::config::model::conditions::CONDITION_DOMAIN;
use crate::config::model::{
    ConditionsSettings, Effect, PolicyRule, RuleCondition, WhenUnsupported,
};
use crate::config::schema::{self, At};
use crate::names::{Code, RuleName};
use crate::review::{CEL_CONDITION_TYPE, Condition, MAX_CONDITIONS_PER_MAP, check_condition};

/// `conditions:` of the entry at `base`: `None` when absent or wrong (errors recorded).
pub(super) fn check_block(
    c: &mut Checker,
    base: &str,
    block: Option<&At<schema::Conditions>>,
) -> Option<ConditionsSettings> {
    let block = block?;
    let when = match &block.value.when_unsupported {
        None => WhenUnsupported::default(),
        Some(w) => match WhenUnsupported::ALL
            .into_iter()
            .find(|x| x.as_str() == w.value)
        {
            Some(x) => x,
            None => {
                c.push(
                    line(w),
                    format!("{base}.conditions.whenUnsupported"),
                    ErrorKind::NotSupported {
                        value: w.value.clone(),
                        supported: WhenUnsupported::ALL.map(WhenUnsupported::as_str).to_vec(),
                        detail: None,
                    },
                );
                return None;
            }
        },
    };
    Some(ConditionsSettings {
        when_unsupported: when,
    })
}

/// `conditions.whenUnsupported: ValidationRing` of a Policy entry is refused: a caller that did
/// not opt in to conditions would get NoOpinion instead of the Deny of a rule with a
/// `condition`, and the validation ring (`/admit`) consults only DeletionGuard entries, so
/// nothing would enforce that Deny. A Policy folds (`Fold`, the default).
pub(super) fn refuse_validation_ring(
    c: &mut Checker,
    base: &str,
    block: Option<&At<schema::Conditions>>,
) {
    let Some(w) = block.and_then(|b| b.value.when_unsupported.as_ref()) else {
        return;
    };
    if w.value == WhenUnsupported::ValidationRing.as_str() {
        c.push(
            line(w),
            format!("{base}.conditions.whenUnsupported"),
            invalid(
                &w.value,
                "may only be specified when type=DeletionGuard: the validation ring judges no Policy rule, so nothing would enforce a Policy's conditional Deny for callers that do not handle conditions; use Fold",
            ),
        );
    }
}

/// The conditions one answer of a policy may carry, all in one ConditionsMap: every enforced
/// rule with a `condition:`, and, once there is one, every enforced unconditional Allow rule
/// (which joins the map as an Allow condition that always holds). kube-apiserver refuses a map
/// of more than [`MAX_CONDITIONS_PER_MAP`], so a policy that could author one is refused.
pub(super) fn check_map_size(c: &mut Checker, l: u32, path: &str, rules: &[PolicyRule]) {
    let enforced = rules.iter().filter(|r| !r.mode.is_observe());
    let conditional = enforced.clone().filter(|r| r.condition.is_some()).count();
    if conditional == 0 {
        return;
    }
    let always = enforced
        .filter(|r| r.condition.is_none() && r.effect == Effect::Allow)
        .count();
    let most = conditional + always;
    if most > MAX_CONDITIONS_PER_MAP {
        c.push(
            l,
            path.to_owned(),
            invalid(
                &format!("{most} conditions"),
                format!(
                    "one answer may carry {conditional} rule conditions and {always} always-true Allow conditions in one map, above kube-apiserver's limit of {MAX_CONDITIONS_PER_MAP} conditions per map"
                ),
            ),
        );
    }
}

/// The parts of a rule a condition is built from.
pub(super) struct RuleParts<'a> {
    /// The rule's name.
    pub name: Option<&'a RuleName>,
    /// Its message.
    pub message: Option<&'a str>,
    /// Its code.
    pub code: Option<&'a Code>,
}

/// A rule's `condition:` at path `p`: `Some(None)` when absent, `None` when wrong.
pub(super) fn check_rule_condition(
    c: &mut Checker,
    p: &str,
    condition: Option<&At<String>>,
    parts: RuleParts<'_>,
) -> Option<Option<RuleCondition>> {
    let Some(cond) = condition else {
        return Some(None);
    };
    let path = format!("{p}.condition");
    if cond.value.trim().is_empty() {
        c.push(line(cond), path, ErrorKind::Required(None));
        return None;
    }
    let expression = match Expression::compile(&cond.value, Variables::Admission) {
        Ok(x) => x,
        Err(err) => {
            c.push(line(cond), path, invalid(&cond.value, err));
            return None;
        }
    };
    // Without a valid name and message the rule is already reported; nothing more to say.
    let name = parts.name?;
    let mut description = format!("{name}: {}", parts.message?);
    if let Some(code) = parts.code {
        description.push_str(&format!(" [{code}]"));
    }
    let wire = Condition {
        id: format!("{CONDITION_DOMAIN}/{name}"),
        condition: cond.value.clone(),
        condition_type: CEL_CONDITION_TYPE.to_owned(),
        description,
    };
    if let Err(e) = check_condition(&wire) {
        c.push(line(cond), path, invalid(&cond.value, e));
        return None;
    }
    Some(Some(RuleCondition { expression, wire }))
}
