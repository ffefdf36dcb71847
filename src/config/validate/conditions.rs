//! Conditional authorization (KEP-5681) in a file: an entry's `conditions:` block (Policy and
//! DeletionGuard only) and a Policy rule's `condition:`, compiled over the admission variables
//! and checked against the limits kube-apiserver enforces on a ConditionsMap
//! ([`crate::review::check_condition`]), so that no condition warrant sends is failed closed
//! for its shape.

use super::{Checker, invalid, line};
use crate::cel::{Expression, Variables};
use crate::config::error::ErrorKind;
use crate::config::model::conditions::CONDITION_DOMAIN;
use crate::config::model::{ConditionsSettings, RuleCondition, WhenUnsupported};
use crate::config::schema::{self, At};
use crate::names::{Code, RuleName};
use crate::review::{CEL_CONDITION_TYPE, Condition, check_condition};

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
