//! The `policy` block of a `Policy` authorizer: at least one rule, unique rule names, an effect,
//! an expression that compiles to a bool over `request` and `now`, a message, an optional code
//! and an optional `mode` (`Observe`: the rule is only recorded when it matches).

use super::conditions::{self, RuleParts};
use super::{Checker, invalid, line, parse_mode};
use crate::cel::{Expression, Variables};
use crate::config::error::ErrorKind;
use crate::config::model::{Effect, Mode, PolicyRule, PolicySpec};
use crate::config::schema::{self, At};
use crate::names::{Code, NameError, RuleName};
use std::collections::HashSet;

/// The most rules one policy may hold.
pub(crate) const MAX_RULES: usize = 1024;

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
    if c.errors.len() == before {
        conditions::check_map_size(c, line(rules), &path, &out);
    }
    (c.errors.len() == before).then_some(PolicySpec { rules: out })
}

/// One rule at path `p` (line `rl`): every field is checked, in this order (the order errors on
/// one line are reported in), before the rule is kept.
fn check_rule(
    c: &mut Checker,
    p: &str,
    rl: u32,
    rule: &schema::Rule,
    names: &mut HashSet<String>,
) -> Option<PolicyRule> {
    let name = check_name(c, p, rl, rule.name.as_ref(), names);
    let effect = check_effect(c, p, rl, rule.effect.as_ref());
    let expression = check_expression(c, p, rl, rule.expression.as_ref());
    let message = check_message(c, p, rl, rule.message.as_ref());
    let code = check_code(c, p, rule.code.as_ref());
    let mode = match &rule.mode {
        None => Some(Mode::Enforce),
        Some(m) => parse_mode(c, line(m), &format!("{p}.mode"), &m.value),
    };
    let condition = conditions::check_rule_condition(
        c,
        p,
        rule.condition.as_ref(),
        RuleParts {
            name: name.as_ref(),
            message: message.as_deref(),
            code: code.as_ref().and_then(Option::as_ref),
        },
    );
    if let (Some(Effect::Allow), Some(e)) = (effect, &expression)
        && !e.reads_verb()
    {
        c.warn(rl, format!("{p}.expression"), UNCONSTRAINED_VERB);
    }
    if let Some(text) = &rule.expression {
        super::shapes::deleting_verbs(c, rl, &format!("{p}.expression"), &text.value);
    }
    Some(PolicyRule {
        name: name?,
        effect: effect?,
        expression: expression?,
        message: message?,
        code: code?,
        mode: mode?,
        condition: condition?,
    })
}

/// `name`: required, a valid [`RuleName`], unique within the policy.
fn check_name(
    c: &mut Checker,
    p: &str,
    rl: u32,
    n: Option<&At<String>>,
    names: &mut HashSet<String>,
) -> Option<RuleName> {
    let path = format!("{p}.name");
    let Some(n) = n else {
        c.push(rl, path, ErrorKind::Required(None));
        return None;
    };
    match RuleName::new(&n.value) {
        Err(NameError::Empty) => c.push(line(n), path, ErrorKind::Required(None)),
        Err(NameError::Format(m)) => c.push(line(n), path, invalid(&n.value, m)),
        Ok(_) if !names.insert(n.value.clone()) => {
            c.push(line(n), path, ErrorKind::Duplicate(n.value.clone()))
        }
        Ok(v) => return Some(v),
    }
    None
}

/// The warning for an Allow rule that reads no verb.
const UNCONSTRAINED_VERB: &str = "this Allow rule constrains no verb, so it also grants verbs it was not written for, including those Kubernetes adds: 1.36's constrained impersonation (impersonate:user-info, impersonate:serviceaccount, impersonate:arbitrary-node, impersonate:associated-node, impersonate-on:<mode>:<verb>) and DRA's associated-node:<verb> / arbitrary-node:<verb>; test request.resourceAttributes.verb (or nonResourceAttributes.verb)";

/// The effects, in the order `Unsupported value` lists them.
const EFFECTS: [Effect; 2] = [Effect::Allow, Effect::Deny];

/// `effect`: required, `Allow` or `Deny`.
fn check_effect(c: &mut Checker, p: &str, rl: u32, e: Option<&At<String>>) -> Option<Effect> {
    let Some(e) = e else {
        c.push(rl, format!("{p}.effect"), ErrorKind::Required(None));
        return None;
    };
    let effect = EFFECTS.into_iter().find(|x| x.as_str() == e.value);
    if effect.is_none() {
        c.push(
            line(e),
            format!("{p}.effect"),
            ErrorKind::NotSupported {
                value: e.value.clone(),
                supported: EFFECTS.map(Effect::as_str).to_vec(),
                detail: None,
            },
        );
    }
    effect
}

/// `expression`: required, a CEL bool over `request` and `now`.
fn check_expression(
    c: &mut Checker,
    p: &str,
    rl: u32,
    e: Option<&At<String>>,
) -> Option<Expression> {
    let path = format!("{p}.expression");
    match e {
        None => c.push(rl, path, ErrorKind::Required(None)),
        Some(e) if e.value.trim().is_empty() => c.push(line(e), path, ErrorKind::Required(None)),
        Some(e) => match Expression::compile(&e.value, Variables::RequestAndNow) {
            Ok(x) => return Some(x),
            Err(err) => c.push(line(e), path, invalid(&e.value, err)),
        },
    }
    None
}

/// `message`: required and not blank.
fn check_message(c: &mut Checker, p: &str, rl: u32, m: Option<&At<String>>) -> Option<String> {
    let path = format!("{p}.message");
    match m {
        Some(m) if !m.value.trim().is_empty() => return Some(m.value.clone()),
        Some(m) => c.push(line(m), path, ErrorKind::Required(None)),
        None => c.push(
            rl,
            path,
            ErrorKind::Required(Some(
                "the reason a user is shown when this rule decides".into(),
            )),
        ),
    }
    None
}

/// `code`: optional, a valid [`Code`]. `None` when it is set and invalid.
fn check_code(c: &mut Checker, p: &str, k: Option<&At<String>>) -> Option<Option<Code>> {
    let Some(k) = k else {
        return Some(None);
    };
    match Code::new(&k.value) {
        Ok(code) => Some(Some(code)),
        Err(e) => {
            c.push(line(k), format!("{p}.code"), invalid(&k.value, e));
            None
        }
    }
}
