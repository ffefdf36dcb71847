//! The functions warrant adds to the `cel` crate's standard library: the Kubernetes list and
//! regex libraries (`k8s.io/apiserver/pkg/cel/library/{lists,regex}.go`), the sets extension
//! (cel-go `ext/sets.go`), a `matches` that caches compiled patterns, and the step
//! counter that bounds every evaluation. The crate takes plain `fn` pointers, so the per-call
//! budget lives in a thread-local: evaluation is synchronous, one expression at a time per
//! thread.

use super::limits::Budget;
use cel::common::types::{CelBool, CelList, CelMap, CelString, DYN_TYPE};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError, Value};
use regex::Regex;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, RwLock};

/// The internal function the checker-approved AST calls once per comprehension iteration.
pub(crate) const TICK: &str = "@warrant_tick";
/// The internal function that spends the size of the value it passes through.
pub(crate) const SIZE: &str = "@warrant_size";
/// The internal function `matches` calls are rewritten to.
pub(crate) const MATCHES: &str = "@warrant_matches";
/// The internal function `replace` calls are rewritten to (its size is charged before it is built).
pub(crate) const REPLACE: &str = "@warrant_replace";
/// The internal function `join` calls are rewritten to (its size is charged before it is built).
pub(crate) const JOIN: &str = "@warrant_join";

/// Registers everything on `env`.
pub fn register(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_overload(TICK, "warrant_tick_dyn", vec![DYN_TYPE], tick)?;
    env.add_overload(SIZE, "warrant_size_dyn", vec![DYN_TYPE], size)?;
    env.add_overload(
        MATCHES,
        "warrant_matches",
        vec![DYN_TYPE, DYN_TYPE],
        matches,
    )?;
    env.add_overload(
        REPLACE,
        "warrant_replace_3",
        vec![DYN_TYPE, DYN_TYPE, DYN_TYPE],
        replace,
    )?;
    env.add_overload(
        REPLACE,
        "warrant_replace_4",
        vec![DYN_TYPE, DYN_TYPE, DYN_TYPE, DYN_TYPE],
        replace,
    )?;
    env.add_overload(JOIN, "warrant_join_1", vec![DYN_TYPE], join)?;
    env.add_overload(JOIN, "warrant_join_2", vec![DYN_TYPE, DYN_TYPE], join)?;
    let member = |env: &mut Env, name: &str, arity: usize, f: cel::common::functions::Function| {
        let args = (0..arity).map(|_| DYN_TYPE).collect();
        env.add_member_overload(
            name,
            &format!("warrant_list_{name}_{arity}"),
            cel::common::types::LIST_TYPE,
            args,
            f,
        )
    };
    member(env, "isSorted", 0, is_sorted)?;
    member(env, "sum", 0, sum)?;
    member(env, "min", 0, min)?;
    member(env, "max", 0, max)?;
    member(env, "indexOf", 1, index_of)?;
    member(env, "lastIndexOf", 1, last_index_of)?;
    env.add_member_overload(
        "find",
        "warrant_string_find",
        cel::common::types::STRING_TYPE,
        vec![DYN_TYPE],
        find,
    )?;
    env.add_member_overload(
        "findAll",
        "warrant_string_find_all",
        cel::common::types::STRING_TYPE,
        vec![DYN_TYPE],
        find_all,
    )?;
    env.add_member_overload(
        "findAll",
        "warrant_string_find_all_n",
        cel::common::types::STRING_TYPE,
        vec![DYN_TYPE, DYN_TYPE],
        find_all_n,
    )?;
    env.add_overload(
        "sets.contains",
        "warrant_sets_contains",
        vec![DYN_TYPE, DYN_TYPE],
        sets_contains,
    )?;
    env.add_overload(
        "sets.equivalent",
        "warrant_sets_equivalent",
        vec![DYN_TYPE, DYN_TYPE],
        sets_equivalent,
    )?;
    env.add_overload(
        "sets.intersects",
        "warrant_sets_intersects",
        vec![DYN_TYPE, DYN_TYPE],
        sets_intersects,
    )?;
    Ok(())
}

/// A list value's elements.
type List = Arc<Vec<Value>>;

type Args<'b, 'v> = Vec<CowVal<'b, 'v>>;
type Out<'b, 'v> = Result<CowVal<'b, 'v>, ExecutionError>;

/// The arguments as owned values.
fn values(args: &[CowVal<'_, '_>]) -> Result<Vec<Value>, ExecutionError> {
    args.iter().map(|a| Value::try_from(a.as_ref())).collect()
}

fn out<'b, 'v>(value: Value) -> Out<'b, 'v> {
    let boxed: Box<dyn Val> = Box::<dyn Val>::try_from(value)?;
    Ok(CowVal::Owned(boxed))
}

fn tick<'b, 'v>(mut args: Args<'b, 'v>) -> Out<'b, 'v> {
    Budget::spend(1)?;
    args.pop()
        .ok_or_else(|| ExecutionError::invalid_argument_count(1, 0))
}

/// Spends one step per byte of a string or bytes value and per element of a list or map, then
/// passes the value on.
fn size<'b, 'v>(mut args: Args<'b, 'v>) -> Out<'b, 'v> {
    let v = args
        .pop()
        .ok_or_else(|| ExecutionError::invalid_argument_count(1, 0))?;
    let val = v.as_ref();
    let n = if let Some(s) = val.downcast_ref::<CelString>() {
        s.inner().len()
    } else if let Some(l) = val.downcast_ref::<CelList>() {
        l.inner().len()
    } else if let Some(m) = val.downcast_ref::<CelMap>() {
        m.inner().len()
    } else {
        1
    };
    Budget::spend(n as u64)?;
    Ok(v)
}

/// A process-wide cache of compiled patterns; patterns written in policies are few and fixed,
/// so it is bounded only as a guard against patterns built at run time.
static REGEXES: LazyLock<RwLock<HashMap<String, Arc<Regex>>>> =
    LazyLock::new(|| RwLock::new(HashMap::new()));
const REGEX_CACHE_ENTRIES: usize = 1024;

/// Why a pattern does not compile, in cel-go's words.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RegexError {
    /// A repeat count above RE2's limit, which the regex crate would accept.
    #[error(
        "error parsing regexp: invalid repeat count: {{{0}}} (RE2 allows at most {MAX_REPEAT})"
    )]
    RepeatCount(u64),
    /// The regex crate refused the pattern.
    #[error("error parsing regexp: {0}")]
    Syntax(#[source] regex::Error),
}

/// Compiles `pattern` (RE2 syntax, as cel-go), from the cache when it was seen before.
pub fn regex(pattern: &str) -> Result<Arc<Regex>, RegexError> {
    if let Ok(cache) = REGEXES.read()
        && let Some(r) = cache.get(pattern)
    {
        return Ok(Arc::clone(r));
    }
    if let Some(n) = largest_repeat(pattern)
        && n > MAX_REPEAT
    {
        return Err(RegexError::RepeatCount(n));
    }
    let compiled = Arc::new(
        regex::RegexBuilder::new(pattern)
            .size_limit(1 << 20)
            .build()
            .map_err(RegexError::Syntax)?,
    );
    if let Ok(mut cache) = REGEXES.write()
        && cache.len() < REGEX_CACHE_ENTRIES
    {
        cache.insert(pattern.to_owned(), Arc::clone(&compiled));
    }
    Ok(compiled)
}

/// RE2's largest repeat count, which cel-go enforces and the regex crate does not.
const MAX_REPEAT: u64 = 1000;

/// The largest `{n}` / `{n,m}` count in `pattern` (escaped braces skipped).
fn largest_repeat(pattern: &str) -> Option<u64> {
    let b = pattern.as_bytes();
    let mut largest = None;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'{' => {
                let mut j = i + 1;
                let mut n: u64 = 0;
                let mut any = false;
                while j < b.len() && (b[j].is_ascii_digit() || b[j] == b',') {
                    if b[j] == b',' {
                        largest = largest.max(any.then_some(n));
                        n = 0;
                        any = false;
                    } else {
                        n = n.saturating_mul(10).saturating_add(u64::from(b[j] - b'0'));
                        any = true;
                    }
                    j += 1;
                }
                if j < b.len() && b[j] == b'}' {
                    largest = largest.max(any.then_some(n));
                }
                i = j;
            }
            _ => i += 1,
        }
    }
    largest
}

fn string_arg<'a>(v: &'a Value, function: &str) -> Result<&'a str, ExecutionError> {
    match v {
        Value::String(s) => Ok(s.as_str()),
        other => Err(ExecutionError::function_error(
            function,
            format!("expected a string, got {:?}", other.type_of()),
        )),
    }
}

fn compiled(pattern: &Value, function: &str) -> Result<Arc<Regex>, ExecutionError> {
    regex(string_arg(pattern, function)?)
        .map_err(|e| ExecutionError::function_error(function, e.to_string()))
}

/// A string argument, borrowed from the engine's value (no copy: `matches` runs on the review
/// path).
fn str_arg<'a>(v: &'a CowVal<'_, '_>, function: &str) -> Result<&'a str, ExecutionError> {
    v.as_ref()
        .downcast_ref::<CelString>()
        .map(|s| s.inner())
        .ok_or_else(|| {
            ExecutionError::function_error(
                function,
                format!("expected a string, got {}", v.as_ref().get_type().name()),
            )
        })
}

fn matches<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let [s, p] = args.as_slice() else {
        return Err(ExecutionError::invalid_argument_count(2, args.len()));
    };
    let re = regex(str_arg(p, "matches")?)
        .map_err(|e| ExecutionError::function_error("matches", e.to_string()))?;
    let haystack = str_arg(s, "matches")?;
    Budget::spend(haystack.len() as u64 / 8 + 1)?;
    Ok(CowVal::owned(CelBool::from(re.is_match(haystack))))
}

/// `s.replace(old, new[, n])` as cel-go's strings extension (Go's `strings.Replace`: `n < 0`
/// replaces all; an empty `old` matches before every character and at the end). The size of
/// the result is computed and charged before it is built, so
/// `request.uid.replace('', request.uid)` fails on the budget without allocating.
fn replace<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let v = values(&args)?;
    let (s, old, new, n) = match v.as_slice() {
        [s, o, w] => (s, o, w, -1),
        [s, o, w, Value::Int(n)] => (s, o, w, *n),
        _ => return Err(ExecutionError::invalid_argument_count(3, v.len())),
    };
    let (s, old, new) = (
        string_arg(s, "replace")?,
        string_arg(old, "replace")?,
        string_arg(new, "replace")?,
    );
    let limit = usize::try_from(n).unwrap_or(usize::MAX);
    let found = if old.is_empty() {
        s.chars().count() + 1
    } else {
        s.matches(old).count()
    }
    .min(limit);
    let size =
        (s.len() - found * old.len()) as u64 + (found as u64).saturating_mul(new.len() as u64);
    Budget::spend(size)?;
    let replaced = if limit == usize::MAX {
        s.replace(old, new)
    } else {
        s.replacen(old, new, limit)
    };
    out(Value::String(Arc::new(replaced)))
}

/// `list.join([separator])` as cel-go's strings extension; the size of the result is charged
/// before it is built.
fn join<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let v = values(&args)?;
    let (list, separator) = match v.as_slice() {
        [Value::List(l)] => (l, ""),
        [Value::List(l), sep] => (l, string_arg(sep, "join")?),
        _ => {
            return Err(ExecutionError::function_error(
                "join",
                "expected a list of strings",
            ));
        }
    };
    let parts = list
        .iter()
        .map(|e| string_arg(e, "join"))
        .collect::<Result<Vec<_>, _>>()?;
    let size = parts.iter().map(|p| p.len() as u64).sum::<u64>()
        + (separator.len() as u64).saturating_mul(parts.len().saturating_sub(1) as u64);
    Budget::spend(size)?;
    out(Value::String(Arc::new(parts.join(separator))))
}

fn find<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let v = values(&args)?;
    let [s, p] = v.as_slice() else {
        return Err(ExecutionError::invalid_argument_count(2, v.len()));
    };
    let re = compiled(p, "find")?;
    let haystack = string_arg(s, "find")?;
    Budget::spend(haystack.len() as u64 / 8 + 1)?;
    let found = re
        .find(haystack)
        .map(|m| m.as_str().to_owned())
        .unwrap_or_default();
    out(Value::String(Arc::new(found)))
}

fn find_all_limited<'b, 'v>(v: &[Value], limit: i64) -> Out<'b, 'v> {
    let (s, p) = (&v[0], &v[1]);
    let re = compiled(p, "findAll")?;
    let haystack = string_arg(s, "findAll")?;
    Budget::spend(haystack.len() as u64 / 8 + 1)?;
    let limit = if limit < 0 {
        usize::MAX
    } else {
        limit as usize
    };
    let found: Vec<Value> = re
        .find_iter(haystack)
        .take(limit)
        .map(|m| Value::String(Arc::new(m.as_str().to_owned())))
        .collect();
    Budget::spend(found.len() as u64)?;
    out(Value::List(Arc::new(found)))
}

fn find_all<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let v = values(&args)?;
    if v.len() != 2 {
        return Err(ExecutionError::invalid_argument_count(2, v.len()));
    }
    find_all_limited(&v, -1)
}

fn find_all_n<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let v = values(&args)?;
    let [_, _, Value::Int(n)] = v.as_slice() else {
        return Err(ExecutionError::function_error(
            "findAll",
            "expected (string, string, int)",
        ));
    };
    find_all_limited(&v, *n)
}

/// The receiver list of a list member function.
fn list_receiver(v: &[Value], function: &str) -> Result<Arc<Vec<Value>>, ExecutionError> {
    match v.first() {
        Some(Value::List(l)) => {
            Budget::spend(l.len() as u64)?;
            Ok(Arc::clone(l))
        }
        _ => Err(ExecutionError::function_error(function, "expected a list")),
    }
}

fn is_sorted<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let v = values(&args)?;
    let list = list_receiver(&v, "isSorted")?;
    let mut sorted = true;
    for pair in list.windows(2) {
        match pair[0].partial_cmp(&pair[1]) {
            Some(std::cmp::Ordering::Greater) => {
                sorted = false;
                break;
            }
            Some(_) => {}
            None => {
                return Err(ExecutionError::function_error(
                    "isSorted",
                    "list elements must be comparable",
                ));
            }
        }
    }
    out(Value::Bool(sorted))
}

fn sum<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let v = values(&args)?;
    let list = list_receiver(&v, "sum")?;
    let mut total: Option<Value> = None;
    for item in list.iter() {
        total = Some(match total {
            None => item.clone(),
            Some(acc) => (acc + item.clone())?,
        });
    }
    // An empty list sums to zero; its element type is unknown at run time, so int, as the
    // Kubernetes library does for list(dyn).
    out(total.unwrap_or(Value::Int(0)))
}

fn extreme<'b, 'v>(args: Args<'b, 'v>, function: &str, want: std::cmp::Ordering) -> Out<'b, 'v> {
    let v = values(&args)?;
    let list = list_receiver(&v, function)?;
    let mut best: Option<&Value> = None;
    for item in list.iter() {
        best = Some(match best {
            None => item,
            Some(b) => match item.partial_cmp(b) {
                Some(o) if o == want => item,
                Some(_) => b,
                None => {
                    return Err(ExecutionError::function_error(
                        function,
                        "list elements must be comparable",
                    ));
                }
            },
        });
    }
    match best {
        Some(b) => out(b.clone()),
        None => Err(ExecutionError::function_error(
            function,
            format!("{function} called on empty list"),
        )),
    }
}

fn min<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    extreme(args, "min", std::cmp::Ordering::Less)
}

fn max<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    extreme(args, "max", std::cmp::Ordering::Greater)
}

fn position<'b, 'v>(args: Args<'b, 'v>, function: &str, last: bool) -> Out<'b, 'v> {
    let v = values(&args)?;
    let list = list_receiver(&v, function)?;
    let needle = &v[1];
    let found = if last {
        list.iter().rposition(|x| x == needle)
    } else {
        list.iter().position(|x| x == needle)
    };
    out(Value::Int(found.map_or(-1, |i| i as i64)))
}

fn index_of<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    position(args, "indexOf", false)
}

fn last_index_of<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    position(args, "lastIndexOf", true)
}

fn two_lists(args: &[CowVal<'_, '_>], function: &str) -> Result<(List, List), ExecutionError> {
    let v = values(args)?;
    match v.as_slice() {
        [Value::List(a), Value::List(b)] => {
            Budget::spend((a.len() as u64).saturating_mul(b.len() as u64))?;
            Ok((Arc::clone(a), Arc::clone(b)))
        }
        _ => Err(ExecutionError::function_error(
            function,
            "expected two lists",
        )),
    }
}

fn contains_all(a: &[Value], b: &[Value]) -> bool {
    b.iter().all(|x| a.contains(x))
}

fn sets_contains<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let (a, b) = two_lists(&args, "sets.contains")?;
    out(Value::Bool(contains_all(&a, &b)))
}

fn sets_equivalent<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let (a, b) = two_lists(&args, "sets.equivalent")?;
    out(Value::Bool(contains_all(&a, &b) && contains_all(&b, &a)))
}

fn sets_intersects<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let (a, b) = two_lists(&args, "sets.intersects")?;
    out(Value::Bool(a.iter().any(|x| b.contains(x))))
}
