//! CEL for matchConditions and Policy rules: one environment shaped like kube-apiserver's
//! authorization CEL (`k8s.io/apiserver/pkg/authorization/cel`), a load-time type checker, and
//! evaluation with a step budget. Every use of the `cel` crate's API stays behind this module.
//!
//! An [`Expression`] is compiled once, at config load, and evaluated per review against a
//! [`Bound`] review, which is built once per review and shared by every expression of an
//! authorizer.

mod admission;
mod bind;
mod check;
mod constraint;
mod environment;
mod fields;
mod library;
mod limits;
mod native;
mod schema;
mod signatures;
#[cfg(test)]
mod tests;
mod tree;
mod types;

pub use admission::Admission;
pub use bind::{Binding, Bound, RequestUse};
pub(crate) use constraint::{Dimension, Requirement};
pub use limits::{MAX_EXPRESSION_BYTES, MAX_NESTING, MAX_TREE_DEPTH, STEP_BUDGET};

use check::Declarations;
use environment::Environment;
use limits::Budget;
use std::fmt;
use std::sync::Arc;
use thiserror::Error;
use tree::{children, children_mut};
use types::Ty;

use ::cel as engine;
use engine::common::ast::{CallExpr, Expr, IdedExpr, LiteralValue, operators};

/// The stack of the thread expressions are compiled on.
const COMPILE_STACK_BYTES: usize = 256 << 20;

/// Which variables an expression may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variables {
    /// `request` only: matchConditions, exactly as upstream.
    Request,
    /// `request` and `now`: Policy rules.
    RequestAndNow,
    /// The admission variables of a condition (KEP-5681): `object`, `oldObject` and `request`
    /// (the admission request), all `dyn` (see [`admission`]).
    Admission,
}

/// Why an expression was rejected at load time. The text reads like kube-apiserver's.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CompileError {
    /// Longer than [`MAX_EXPRESSION_BYTES`].
    #[error("expression is {len} bytes long; the limit is {max}")]
    TooLong {
        /// Its length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// Nested deeper than [`MAX_NESTING`] or [`MAX_TREE_DEPTH`].
    #[error("expression nests {depth} levels deep; the limit is {max}")]
    TooDeep {
        /// How deep.
        depth: usize,
        /// The limit.
        max: usize,
    },
    /// A syntax or type error, with cel-go's `ERROR: <input>:L:C: ...` report.
    #[error("compilation failed: {0}")]
    Compilation(String),
    /// The expression's type is not `bool`.
    #[error("must evaluate to bool but got {0}")]
    NotBool(String),
}

/// Why an evaluation failed. Displays as the detail kube-apiserver shows after
/// `resulted in error: `.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum EvalError {
    /// The interpreter reported an error (a missing key, an overflow, a bad argument...).
    #[error("{0}")]
    Failed(String),
    /// The step or time budget ran out.
    #[error("{}", limits::COST_EXCEEDED)]
    BudgetExceeded,
    /// The value was not a bool (only possible through `dyn`).
    #[error("eval result type should be bool but got {0}")]
    NotBool(String),
}

/// An expression that failed to evaluate, as kube-apiserver reports it
/// (`k8s.io/apiserver/pkg/authorization/cel/matcher.go`): `cel evaluation error: expression
/// '<source>' resulted in error: <detail>`. Keeps the expression and the [`EvalError`].
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("cel evaluation error: expression '{expression}' resulted in error: {cause}")]
pub struct EvaluationError {
    /// The expression's source text.
    pub expression: Arc<str>,
    /// Why it failed.
    #[source]
    pub(crate) cause: EvalError,
}

fn environment() -> Result<&'static Environment, CompileError> {
    environment::shared().map_err(|e| CompileError::Compilation(format!("CEL environment: {e}")))
}

/// A compiled, type-checked boolean expression.
#[derive(Clone)]
pub struct Expression {
    source: Arc<str>,
    ast: Arc<IdedExpr>,
    uses: RequestUse,
    reads_verb: bool,
    requirements: Arc<[Requirement]>,
    /// The expression as warrant evaluates it without the engine, when its shape allows.
    native: Option<Arc<native::Native>>,
}

impl fmt::Debug for Expression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Expression").field(&self.source).finish()
    }
}

impl PartialEq for Expression {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

impl Expression {
    /// Parses, checks and prepares `source` for evaluation with `vars` in scope.
    pub fn compile(source: &str, vars: Variables) -> Result<Self, CompileError> {
        if source.len() > MAX_EXPRESSION_BYTES {
            return Err(CompileError::TooLong {
                len: source.len(),
                max: MAX_EXPRESSION_BYTES,
            });
        }
        let nesting = limits::nesting(source);
        if nesting > MAX_NESTING {
            return Err(CompileError::TooDeep {
                depth: nesting,
                max: MAX_NESTING,
            });
        }
        if let Some(offset) = limits::find_identifier_call(source, "existsOne") {
            return Err(CompileError::Compilation(report_at(
                source,
                offset,
                "undeclared reference to 'existsOne' (in container '')",
            )));
        }
        // The parser, checker and rewrites recurse once per level of the tree, and a chain of
        // selections nests without brackets: run them on a thread with a stack large enough for
        // any expression under the length cap (deep trees are then refused by depth, and dropped
        // on that thread too).
        std::thread::scope(|scope| {
            std::thread::Builder::new()
                .name("warrant-cel-compile".into())
                .stack_size(COMPILE_STACK_BYTES)
                .spawn_scoped(scope, || Self::compile_here(source, vars))
                .map_err(|e| CompileError::Compilation(format!("cannot start the compiler: {e}")))?
                .join()
                .unwrap_or_else(|_| {
                    Err(CompileError::Compilation(
                        "internal error: the CEL compiler panicked on this expression".into(),
                    ))
                })
        })
    }

    fn compile_here(source: &str, vars: Variables) -> Result<Self, CompileError> {
        let env = environment()?;
        let program = env
            .env
            .compile(source)
            .map_err(|e| CompileError::Compilation(e.to_string()))?;
        let ast = program.expression();
        let depth = tree_depth(ast);
        if depth > MAX_TREE_DEPTH {
            return Err(CompileError::TooDeep {
                depth,
                max: MAX_TREE_DEPTH,
            });
        }
        let decls = match vars {
            Variables::Request => vec![("request", Ty::Object(&schema::REQUEST))],
            Variables::RequestAndNow => vec![
                ("request", Ty::Object(&schema::REQUEST)),
                ("now", Ty::Timestamp),
            ],
            Variables::Admission => admission::declarations(),
        };
        let ty = check::check(ast, &Declarations::new(decls)).map_err(|e| {
            CompileError::Compilation(report(source, program.source_info(), e.node, &e.message))
        })?;
        // Exactly bool, as upstream compares the checked output type: `dyn` is refused too.
        if ty != Ty::Bool {
            return Err(CompileError::NotBool(ty.to_string()));
        }
        constant_conversions(ast).map_err(|(node, message)| {
            CompileError::Compilation(report(source, program.source_info(), node, &message))
        })?;
        literal_patterns(ast).map_err(|(node, message)| {
            CompileError::Compilation(report(source, program.source_info(), node, &message))
        })?;
        let uses = request_use(ast);
        let reads_verb = selects(ast, "verb");
        // A condition's `request` is the admission request, not the review: neither what the
        // review must carry nor the review's directly read fields apply to it.
        let review = vars != Variables::Admission;
        let requirements = if review {
            constraint::requirements(ast).into()
        } else {
            Arc::default()
        };
        let native = review
            .then(|| native::Native::compile(ast))
            .flatten()
            .map(Arc::new);
        let mut ast = ast.clone();
        instrument(&mut ast);
        if review {
            fields::rewrite(&mut ast);
        }
        Ok(Self {
            source: source.into(),
            ast: Arc::new(ast),
            uses,
            reads_verb,
            requirements,
            native,
        })
    }

    /// The source text.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Which optional parts of `request` the expression reads.
    pub fn uses(&self) -> RequestUse {
        self.uses
    }

    /// Whether the expression reads a `verb` field anywhere (of `resourceAttributes` or
    /// `nonResourceAttributes`): a rule that never does constrains no verb.
    pub(crate) fn reads_verb(&self) -> bool {
        self.reads_verb
    }

    /// What the expression provably requires of the review: when one of these does not hold,
    /// it evaluates to `false` (no error, no step spent).
    pub fn requirements(&self) -> &[Requirement] {
        &self.requirements
    }

    /// Evaluates the expression against a bound review; the error names the expression.
    pub fn judge(&self, bound: &Bound<'_, '_>) -> Result<bool, EvaluationError> {
        self.evaluate(bound).map_err(|cause| EvaluationError {
            expression: Arc::clone(&self.source),
            cause,
        })
    }

    /// Evaluates the expression against a bound review: by its native tree when it has one
    /// and that tree is certain of the answer, else by the engine.
    pub fn evaluate(&self, bound: &Bound<'_, '_>) -> Result<bool, EvalError> {
        if let Some(answer) = self.native.as_ref().and_then(|n| n.eval(bound.spec())) {
            return Ok(answer);
        }
        self.evaluate_by_engine(bound)
    }

    /// Evaluates the expression with the engine, whatever its shape.
    fn evaluate_by_engine(&self, bound: &Bound<'_, '_>) -> Result<bool, EvalError> {
        let env = match environment() {
            Ok(env) => Arc::clone(&env.env),
            // Unreachable once any expression compiled; an empty env fails every evaluation.
            Err(_) => Arc::new(engine::Env::default()),
        };
        let mut context = engine::Context::with_env(env);
        context.set_variable_resolver(bound);
        self.run(&context)
    }

    /// Evaluates a condition against a bound admission request.
    pub(crate) fn evaluate_admission(&self, admission: &Admission) -> Result<bool, EvalError> {
        self.run(admission.context())
    }

    fn run(&self, context: &engine::Context<'_, '_>) -> Result<bool, EvalError> {
        Budget::start();
        let result = engine::Value::resolve(&self.ast, context);
        if Budget::exceeded() {
            return Err(EvalError::BudgetExceeded);
        }
        match result {
            Ok(engine::Value::Bool(b)) => Ok(b),
            Ok(other) => Err(EvalError::NotBool(format!("{}", other.type_of()))),
            Err(e) => Err(EvalError::Failed(detail(&e))),
        }
    }
}

/// The interpreter's error, worded as cel-go words the common cases.
fn detail(e: &engine::ExecutionError) -> String {
    use engine::ExecutionError as E;
    match e {
        E::NoSuchKey(k) => format!("no such key: {k}"),
        // A field read directly, of attributes the review lacks: what selecting it says.
        E::UndeclaredReference(name) if fields::absent_key(name).is_some() => {
            format!(
                "no such key: {}",
                fields::absent_key(name).unwrap_or_default()
            )
        }
        E::DivisionByZero(_) => "division by zero".to_owned(),
        E::RemainderByZero(_) => "modulus by zero".to_owned(),
        E::Overflow(..) => "integer overflow".to_owned(),
        E::IndexOutOfBounds(i) => format!("index out of range: {}", value_text(i)),
        E::FunctionError { message, .. } => message.clone(),
        E::NoSuchOverload(o) => format!("no such overload: {o}"),
        other => other.to_string(),
    }
}

fn value_text(v: &engine::Value) -> String {
    match v {
        engine::Value::Int(i) => i.to_string(),
        engine::Value::UInt(u) => u.to_string(),
        other => format!("{other:?}"),
    }
}

/// A cel-go style report: `ERROR: <input>:L:C: message` and the line with a caret.
fn report(
    source: &str,
    info: &engine::common::ast::SourceInfo,
    node: u64,
    message: &str,
) -> String {
    let offset = info.offset_for(node).map_or(0, |(start, _)| start as usize);
    report_at(source, offset, message)
}

/// [`report`] at a byte offset.
fn report_at(source: &str, offset: usize, message: &str) -> String {
    let mut line_no = 1;
    let mut line_start = 0;
    for (i, c) in source.char_indices() {
        if i >= offset {
            break;
        }
        if c == '\n' {
            line_no += 1;
            line_start = i + 1;
        }
    }
    let line = source[line_start..].lines().next().unwrap_or("");
    let column = source
        .get(line_start..offset.min(source.len()))
        .map_or(0, |s| s.chars().count());
    format!(
        "ERROR: <input>:{line_no}:{}: {message}\n | {line}\n | {}^",
        column + 1,
        ".".repeat(column)
    )
}

fn tree_depth(e: &IdedExpr) -> usize {
    let mut max = 0;
    children(e, &mut |c| max = max.max(tree_depth(c)));
    max + 1
}

/// Whether `e` selects `field` anywhere (`x.field` or `x.?field`).
fn selects(e: &IdedExpr, field: &str) -> bool {
    let here = match &e.expr {
        Expr::Select(s) => s.field == field,
        Expr::Call(c) if c.func_name == operators::OPT_SELECT => matches!(
            c.args.get(1),
            Some(IdedExpr { expr: Expr::Literal(LiteralValue::String(s)), .. }) if s.inner() == field
        ),
        _ => false,
    };
    let mut below = false;
    children(e, &mut |c| below = below || selects(c, field));
    here || below
}

/// The optional parts of `request` that `e` reads.
fn request_use(e: &IdedExpr) -> RequestUse {
    let mut used = selector_use(e);
    used.extra = reads_extra(e);
    used
}

/// Like upstream, notes whether `fieldSelector` / `labelSelector` is selected anywhere.
fn selector_use(e: &IdedExpr) -> RequestUse {
    let mut used = RequestUse::default();
    let field = match &e.expr {
        Expr::Select(s) => Some(s.field.as_str()),
        Expr::Call(c) if c.func_name == operators::OPT_SELECT => match c.args.get(1) {
            Some(IdedExpr {
                expr: Expr::Literal(LiteralValue::String(s)),
                ..
            }) => Some(s.inner()),
            _ => None,
        },
        _ => None,
    };
    match field {
        Some("fieldSelector") => used.field = true,
        Some("labelSelector") => used.label = true,
        _ => {}
    }
    children(e, &mut |c| used = used.union(selector_use(c)));
    used
}

/// The field `e` selects from `request` (`request.f` or `request.?f`), if that is what it is.
fn request_field(e: &IdedExpr) -> Option<&str> {
    let is_request = |o: &IdedExpr| matches!(&o.expr, Expr::Ident(name) if name == "request");
    match &e.expr {
        Expr::Select(s) if is_request(&s.operand) => Some(s.field.as_str()),
        Expr::Call(c) if c.func_name == operators::OPT_SELECT => match c.args.as_slice() {
            [
                operand,
                IdedExpr {
                    expr: Expr::Literal(LiteralValue::String(f)),
                    ..
                },
            ] if is_request(operand) => Some(f.inner()),
            _ => None,
        },
        _ => None,
    }
}

/// Whether `e` may read `request.extra`: it selects it, or uses `request` other than by
/// selecting a field of it (`dyn(request)['extra']`, say). Only an expression that surely
/// does not is evaluated without it, which saves building a map of every extra key per
/// review.
fn reads_extra(e: &IdedExpr) -> bool {
    if let Some(field) = request_field(e) {
        return field == "extra";
    }
    if matches!(&e.expr, Expr::Ident(name) if name == "request") {
        return true;
    }
    let mut reads = false;
    children(e, &mut |c| reads = reads || reads_extra(c));
    reads
}

/// Conversions of literals (`int('x')`, `duration('x')`, `uint(-1)`...) are evaluated at load
/// time, as cel-go folds them when it builds the program, so a bad one is a load error.
fn constant_conversions(e: &IdedExpr) -> Result<(), (u64, String)> {
    if let Expr::Call(c) = &e.expr
        && c.target.is_none()
        && matches!(
            c.func_name.as_str(),
            "int" | "uint" | "double" | "bool" | "timestamp" | "duration" | "string" | "bytes"
        )
        && !c.args.is_empty()
        && c.args.iter().all(is_constant)
    {
        let context = engine::Context::default();
        if let Err(err) = engine::Value::resolve(e, &context) {
            return Err((e.id, detail(&err)));
        }
    }
    let mut outcome = Ok(());
    children(e, &mut |c| {
        if outcome.is_ok() {
            outcome = constant_conversions(c);
        }
    });
    outcome
}

/// A literal, or a negated literal (`-1` parses as a call on some paths).
fn is_constant(e: &IdedExpr) -> bool {
    match &e.expr {
        Expr::Literal(_) => true,
        Expr::Call(c) if c.func_name == operators::NEGATE => c.args.iter().all(is_constant),
        _ => false,
    }
}

/// Literal regular expressions are compiled at load time, so a bad pattern is a load error.
fn literal_patterns(e: &IdedExpr) -> Result<(), (u64, String)> {
    if let Expr::Call(c) = &e.expr
        && matches!(c.func_name.as_str(), "matches" | "find" | "findAll")
    {
        let pattern = if c.target.is_some() {
            c.args.first()
        } else {
            c.args.get(1)
        };
        if let Some(IdedExpr {
            expr: Expr::Literal(LiteralValue::String(p)),
            id,
        }) = pattern
        {
            library::regex(p.inner()).map_err(|e| (*id, e.to_string()))?;
        }
    }
    let mut outcome = Ok(());
    children(e, &mut |c| {
        if outcome.is_ok() {
            outcome = literal_patterns(c);
        }
    });
    outcome
}

/// Rewrites the checked tree for evaluation: every comprehension step spends one step of the
/// budget, `matches` goes through the regex cache, and `replace` and `join` go through
/// warrant's own implementations, which charge their result's size before building it.
fn instrument(e: &mut IdedExpr) {
    match &mut e.expr {
        Expr::Comprehension(c) => {
            let step = std::mem::take(&mut c.loop_step);
            c.loop_step = IdedExpr {
                id: step.id,
                expr: Expr::Call(CallExpr {
                    func_name: library::TICK.to_owned(),
                    target: None,
                    args: vec![step],
                }),
            };
        }
        Expr::Call(c) if ["matches", "replace", "join"].contains(&c.func_name.as_str()) => {
            c.func_name = match c.func_name.as_str() {
                "matches" => library::MATCHES,
                "replace" => library::REPLACE,
                _ => library::JOIN,
            }
            .to_owned();
            if let Some(t) = c.target.take() {
                c.args.insert(0, *t);
            }
        }
        _ => {}
    }
    children_mut(e, &mut instrument);
    // Functions whose result can be much larger than their input spend its size, so that
    // repeated `replace` or concatenation cannot allocate without bound.
    if let Expr::Call(c) = &e.expr
        && grows(c)
    {
        let call = std::mem::take(e);
        *e = IdedExpr {
            id: call.id,
            expr: Expr::Call(CallExpr {
                func_name: library::SIZE.to_owned(),
                target: None,
                args: vec![call],
            }),
        };
    }
}

/// Whether a call can build a value larger than its arguments. A comprehension's own
/// accumulation (`@result + [x]`) counts too: each step copies the list built so far, so a
/// `map` or `filter` costs in proportion to the square of its length, as its time does; cel-go
/// charges that growth as well, and counting it keeps nested comprehensions
/// (`l.map(a, l.map(b, a + b))`) from reaching only the wall-clock bound, whose outcome would
/// then depend on the machine's speed.
fn grows(c: &CallExpr) -> bool {
    matches!(
        c.func_name.as_str(),
        "split" | "format" | "strings.quote" | "lowerAscii" | "upperAscii" | "_+_"
    )
}
