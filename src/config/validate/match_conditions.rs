//! CEL match conditions, of a `webhook:` block (upstream) or of any entry (warrant.dev): at most
//! [`MAX_MATCH_CONDITIONS`], each expression required, unique, and compiling to a bool over
//! `request`. Mirrors `ValidateAndCompileMatchConditions` in
//! `k8s.io/apiserver/pkg/apis/apiserver/validation/validation.go`. Where the list is taken from,
//! and whether it may be set at all, is decided in [`super::entry`].

use super::{Checker, invalid, line};
use crate::cel::{Expression, Variables};
use crate::config::error::ErrorKind;
use crate::config::schema::{self, At};
use std::collections::HashSet;

/// The most match conditions one authorizer may carry (upstream `maxMatchConditions`).
pub(crate) const MAX_MATCH_CONDITIONS: usize = 64;

/// Upstream's matchCondition rules (count first, then per entry: Required, Duplicate, then
/// compile), returning the compiled conditions. `path` is the list's field path.
pub(super) fn check(
    c: &mut Checker,
    path: &str,
    mc: &At<Vec<At<schema::MatchCondition>>>,
) -> Vec<Expression> {
    if mc.value.len() > MAX_MATCH_CONDITIONS {
        c.push(
            line(mc),
            path,
            ErrorKind::TooMany {
                actual: mc.value.len(),
                max: MAX_MATCH_CONDITIONS,
            },
        );
        return Vec::new();
    }
    let mut seen = HashSet::new();
    let mut compiled = Vec::new();
    for (i, cond) in mc.value.iter().enumerate() {
        let p = format!("{path}[{i}].expression");
        match &cond.value.expression {
            None => c.push(line(cond), p, ErrorKind::Required(None)),
            Some(e) if e.value.trim().is_empty() => c.push(line(e), p, ErrorKind::Required(None)),
            Some(e) if !seen.insert(e.value.clone()) => {
                c.push(line(e), p, ErrorKind::Duplicate(e.value.clone()))
            }
            Some(e) => match Expression::compile(&e.value, Variables::Request) {
                Ok(x) => compiled.push(x),
                Err(err) => c.push(line(e), p, invalid(&e.value, err)),
            },
        }
    }
    compiled
}
