//! `--selector` (`-l`) of `ticket request`, in kubectl's spelling: requirements separated by
//! commas, each `key=value` (or `==`), `key!=value`, `key in (a,b)`, `key notin (a,b)`, `key`
//! or `!key`, read into a [`TargetSelector`] (`!=` is `NotIn` with one value, as
//! k8s.io/apimachinery/pkg/labels/selector.go reads it).

use crate::tickets::TargetSelector;
use crate::tickets::selector::{Operator, SelectorRequirement};

/// The selector `text` says, or what is wrong with it.
pub fn parse(text: &str) -> Result<TargetSelector, String> {
    let mut out = TargetSelector::default();
    for part in split(text)? {
        let part = part.trim();
        if part.is_empty() {
            return Err(format!("selector {text:?}: an empty requirement"));
        }
        requirement(part, &mut out).map_err(|e| format!("selector {text:?}: {e}"))?;
    }
    if out.is_empty() {
        return Err("an empty selector would cover every object of the kind".into());
    }
    Ok(out)
}

/// The requirements of `text`: split at the commas outside parentheses.
fn split(text: &str) -> Result<Vec<&str>, String> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0u32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth = depth
                    .checked_sub(1)
                    .ok_or_else(|| format!("selector {text:?}: an unopened ')'"))?
            }
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(format!("selector {text:?}: an unclosed '('"));
    }
    parts.push(&text[start..]);
    Ok(parts)
}

/// Adds the requirement `part` to `out`.
fn requirement(part: &str, out: &mut TargetSelector) -> Result<(), String> {
    let expression = |key: &str, operator, values: Vec<String>| SelectorRequirement {
        key: key.trim().to_owned(),
        operator,
        values,
    };
    if let Some((key, value)) = part.split_once("!=") {
        out.match_expressions.push(expression(
            key,
            Operator::NotIn,
            vec![value.trim().to_owned()],
        ));
    } else if let Some((key, value)) = part.split_once("==").or_else(|| part.split_once('=')) {
        out.match_labels
            .insert(key.trim().to_owned(), value.trim().to_owned());
    } else if let Some((key, set)) = set_of(part, " notin ") {
        out.match_expressions
            .push(expression(key, Operator::NotIn, set?));
    } else if let Some((key, set)) = set_of(part, " in ") {
        out.match_expressions
            .push(expression(key, Operator::In, set?));
    } else if let Some(key) = part.strip_prefix('!') {
        out.match_expressions
            .push(expression(key, Operator::DoesNotExist, Vec::new()));
    } else {
        out.match_expressions
            .push(expression(part, Operator::Exists, Vec::new()));
    }
    let bad_key = out
        .match_labels
        .keys()
        .chain(out.match_expressions.iter().map(|r| &r.key))
        .find(|k| k.is_empty() || k.contains(char::is_whitespace));
    match bad_key {
        Some(k) => Err(format!("{part:?}: the label key {k:?} is not a key")),
        None => Ok(()),
    }
}

/// `key OP (a,b)` split at `op`: the key and the values.
fn set_of<'a>(part: &'a str, op: &str) -> Option<(&'a str, Result<Vec<String>, String>)> {
    let (key, rest) = part.split_once(op)?;
    let values = rest
        .trim()
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .map(|inner| {
            inner
                .split(',')
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
                .collect::<Vec<_>>()
        })
        .filter(|v| !v.is_empty())
        .ok_or_else(|| format!("{part:?}: want {}(a,b)", op.trim_start()));
    Some((key, values))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubectl_selectors_read_into_match_labels_and_expressions() {
        let s = parse("app=db, tier in (data, cache),env notin (prod),owner,!legacy,zone!=a,x==y")
            .unwrap();
        assert_eq!(
            s.to_string(),
            "app=db,x=y,tier in (data,cache),env notin (prod),owner,!legacy,zone notin (a)"
        );
    }

    #[test]
    fn malformed_selectors_are_refused_with_what_is_wrong() {
        for (text, says) in [
            ("", "empty"),
            ("app=db,", "an empty requirement"),
            ("tier in (a", "unclosed"),
            ("tier in a)", "unopened"),
            ("tier in ()", "want in (a,b)"),
            ("a b", "is not a key"),
            ("=x", "is not a key"),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.contains(says), "{text:?}: {e}");
        }
    }
}
