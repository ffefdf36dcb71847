//! The bounds that keep an expression from stalling a review or the process: a length cap and a
//! nesting cap checked before parsing (the parser recurses per nesting level), a depth cap on
//! the parsed tree (evaluation recurses per level), and a per-evaluation step budget spent by
//! every comprehension iteration and by the list and regex functions in proportion to their
//! input, checked against a wall-clock bound as well.

use cel::ExecutionError;
use std::cell::Cell;
use std::time::{Duration, Instant};

/// The longest expression accepted, in bytes. cel-go allows 100,000 code points; authorization
/// policies are a line or two, and a smaller bound keeps load-time work small.
pub const MAX_EXPRESSION_BYTES: usize = 20_000;
/// The deepest bracket nesting accepted, `(`, `[` and `{` together, counted before parsing.
pub const MAX_NESTING: usize = 64;
/// The deepest parsed tree accepted (long operator chains nest too).
pub const MAX_TREE_DEPTH: usize = 200;
/// Steps one evaluation may take: comprehension iterations plus elements handled by list and
/// regex functions. Kubernetes bounds each expression by a cost of 1,000,000 units, counted
/// differently; see the known differences.
pub const STEP_BUDGET: u64 = 1_000_000;
/// Wall-clock bound of one evaluation, checked as steps are spent: a last resort, since every
/// costly operation (iterations, string building, regex scans in proportion to their input)
/// already spends steps. Loose enough that a loaded machine running an unoptimised build
/// never reaches it before the step budget, so outcomes stay deterministic.
pub(crate) const TIME_BUDGET: Duration = Duration::from_secs(2);

/// The message of an exceeded budget, as cel-go words it.
pub(crate) const COST_EXCEEDED: &str = "operation cancelled: actual cost limit exceeded";

thread_local! {
    static REMAINING: Cell<u64> = const { Cell::new(u64::MAX) };
    static STARTED: Cell<Option<Instant>> = const { Cell::new(None) };
    static EXCEEDED: Cell<bool> = const { Cell::new(false) };
}

/// The step budget of the evaluation running on this thread.
pub(crate) struct Budget;

impl Budget {
    /// Starts a fresh budget for one evaluation on this thread.
    pub fn start() {
        REMAINING.with(|r| r.set(STEP_BUDGET));
        // The clock starts at the first step spent: only then can the bound be checked, and an
        // expression that spends nothing (most) never reads it.
        STARTED.with(|s| s.set(None));
        EXCEEDED.with(|e| e.set(false));
    }

    /// Whether the evaluation that just ran overspent (even if the error was absorbed by `||`
    /// or `&&`: like Kubernetes, an overspent evaluation fails as a whole).
    pub(crate) fn exceeded() -> bool {
        EXCEEDED.with(Cell::get)
    }

    /// Spends `n` steps; an error once the budget or the time bound is gone.
    pub fn spend(n: u64) -> Result<(), ExecutionError> {
        let left = REMAINING.with(|r| {
            let left = r.get().saturating_sub(n);
            r.set(left);
            left
        });
        // The clock is read every 64 steps, and on every larger spend.
        let started = STARTED.with(|s| match s.get() {
            Some(t) => t,
            None => {
                let now = Instant::now();
                s.set(Some(now));
                now
            }
        });
        let late = (n > 1 || left.is_multiple_of(64)) && started.elapsed() > TIME_BUDGET;
        if left == 0 || late {
            EXCEEDED.with(|e| e.set(true));
            return Err(ExecutionError::function_error("cost", COST_EXCEEDED));
        }
        Ok(())
    }
}

/// The deepest bracket nesting of `source`, outside string literals.
pub(crate) fn nesting(source: &str) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in source.chars() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '\'' | '"' => quote = Some(c),
            '(' | '[' | '{' => {
                depth += 1;
                max = max.max(depth);
            }
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// The byte offset of the first call `name(` in `source` outside string literals and `//`
/// comments, where `name` is a whole identifier (used for macro spellings the engine accepts and
/// Kubernetes does not). Works on bytes, so any UTF-8 input is safe.
pub(crate) fn find_identifier_call(source: &str, name: &str) -> Option<usize> {
    let bytes = source.as_bytes();
    let needle = name.as_bytes();
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut quote: Option<u8> = None;
    let mut escaped = false;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == b'\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            i += 1;
            continue;
        }
        if c == b'\'' || c == b'"' {
            quote = Some(c);
        } else if c == b'/' && bytes.get(i + 1) == Some(&b'/') {
            // A comment runs to the end of the line.
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
            continue;
        } else if bytes[i..].starts_with(needle)
            && (i == 0 || !ident(bytes[i - 1]))
            && bytes.get(i + needle.len()).is_none_or(|b| !ident(*b))
        {
            let rest = &bytes[i + needle.len()..];
            let next = rest.iter().find(|b| !b.is_ascii_whitespace());
            if next == Some(&b'(') {
                return Some(i);
            }
        }
        i += 1;
    }
    None
}
