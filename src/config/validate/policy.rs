//! The `policy` block of a `Policy` authorizer: at least one rule, unique rule names, an effect,
//! an expression that compiles to a bool over `request` and `now`, a message, and an optional
//! code.

use super::{Checker, invalid, line};
use crate::cel::{Expression, Variables};
use crate::config::error::ErrorKind;
use crate::config::model::{Effect, PolicyRule, PolicySpec};
use crate::config::schema::{self, At};
use crate::names::{Code, NameError, RuleName};
use std::collections::HashSet;

/// The most rules one policy may hold.
pub const MAX_RULES: usize = 1024;

/// Checks the block of the entry at `base`; `None` when anything is wrong (errors recorded).
pub(super) fn check(
    c: &mut Checker,
    base: &str,
    entry_line: u32,
    policy: Option<&At<schema::Policy>>,
) -> Option<PolicySpec> {
    let before = c.errors.len();
    let Some(policy) = policy else {
        c.push(
            entry_line,
            format!("{base}.policy"),
            ErrorKind::Required(Some("required when type=Policy".into())),
        );
        return None;
    };
    let path = format!("{base}.policy.rules");
    let rules = match &policy.value.rules {
        Some(r) if !r.value.is_empty() => r,
        other => {
            let l = other.as_ref().map_or(line(policy), line);
            c.push(
                l,
                path,
                ErrorKind::Required(Some("a policy needs at least one rule".into())),
            );
            return None;
        }
    };
    if rules.value.len() > MAX_RULES {
        c.push(
            line(rules),
            path,
            ErrorKind::TooMany {
                actual: rules.value.len(),
                max: MAX_RULES,
            },
        );
        return None;
    }
    let mut names = HashSet::new();
    let mut out = Vec::new();
    for (i, rule) in rules.value.iter().enumerate() {
        let p = format!("{path}[{i}]");
        let rl = line(rule);
        if let Some(r) = check_rule(c, &p, rl, &rule.value, &mut names) {
            out.push(r);
        }
    }
    (c.errors.len() == before).then_some(PolicySpec { rules: out })
}

fn check_rule(
    c: &mut Checker,
    p: &str,
    rl: u32,
    rule: &schema::Rule,
    names: &mut HashSet<String>,
) -> Option<PolicyRule> {
    let name = match &rule.name {
        None => {
            c.push(rl, format!("{p}.name"), ErrorKind::Required(None));
            None
        }
        Some(n) => match RuleName::new(&n.value) {
            Err(NameError::Empty) => {
                c.push(line(n), format!("{p}.name"), ErrorKind::Required(None));
                None
            }
            Err(NameError::Format(m)) => {
                c.push(line(n), format!("{p}.name"), invalid(&n.value, m));
                None
            }
            Ok(_) if !names.insert(n.value.clone()) => {
                c.push(
                    line(n),
                    format!("{p}.name"),
                    ErrorKind::Duplicate(n.value.clone()),
                );
                None
            }
            Ok(v) => Some(v),
        },
    };
    let effect = match &rule.effect {
        None => {
            c.push(rl, format!("{p}.effect"), ErrorKind::Required(None));
            None
        }
        Some(e) => match e.value.as_str() {
            "Allow" => Some(Effect::Allow),
            "Deny" => Some(Effect::Deny),
            other => {
                c.push(
                    line(e),
                    format!("{p}.effect"),
                    ErrorKind::NotSupported {
                        value: other.into(),
                        supported: vec!["Allow", "Deny"],
                        detail: None,
                    },
                );
                None
            }
        },
    };
    let expression = match &rule.expression {
        None => {
            c.push(rl, format!("{p}.expression"), ErrorKind::Required(None));
            None
        }
        Some(e) if e.value.trim().is_empty() => {
            c.push(
                line(e),
                format!("{p}.expression"),
                ErrorKind::Required(None),
            );
            None
        }
        Some(e) => match Expression::compile(&e.value, Variables::RequestAndNow) {
            Ok(x) => Some(x),
            Err(err) => {
                c.push(line(e), format!("{p}.expression"), invalid(&e.value, err));
                None
            }
        },
    };
    let message = match &rule.message {
        Some(m) if !m.value.trim().is_empty() => Some(m.value.clone()),
        Some(m) => {
            c.push(line(m), format!("{p}.message"), ErrorKind::Required(None));
            None
        }
        None => {
            c.push(
                rl,
                format!("{p}.message"),
                ErrorKind::Required(Some(
                    "the reason a user is shown when this rule decides".into(),
                )),
            );
            None
        }
    };
    let code = match &rule.code {
        None => Some(None),
        Some(k) => match Code::new(&k.value) {
            Ok(code) => Some(Some(code)),
            Err(e) => {
                c.push(line(k), format!("{p}.code"), invalid(&k.value, e));
                None
            }
        },
    };
    Some(PolicyRule {
        name: name?,
        effect: effect?,
        expression: expression?,
        message: message?,
        code: code?,
    })
}
