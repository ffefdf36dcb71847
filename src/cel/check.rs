//! The load-time type checker. The `cel` crate has none, so without this a typo in a policy
//! would compile and then quietly never match. It walks the parsed (macro-expanded) AST with
//! the declared types of the variables and the signatures of every function warrant binds, and
//! rejects what cel-go's checker rejects: undeclared references, undefined fields, overloads the
//! static types rule out, and results that are not `bool`. Where a type is `dyn` (a map value
//! of unknown shape, a function returning anything) it accepts, as cel-go does.

use super::signatures::{self, Resolution};
use super::types::Ty;
use cel::common::ast::{
    CallExpr, ComprehensionExpr, EntryExpr, Expr, IdedExpr, LiteralValue, SelectExpr, operators,
};

/// A type error at one node of the expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TypeError {
    /// The node the error is about (for its position).
    pub node: u64,
    /// The message, worded as cel-go words it.
    pub message: String,
}

/// The variables an expression may name, with their declared types.
#[derive(Debug, Clone)]
pub(crate) struct Declarations {
    vars: Vec<(String, Ty)>,
}

impl Declarations {
    /// Declarations with the given top-level variables.
    pub fn new(vars: impl IntoIterator<Item = (&'static str, Ty)>) -> Self {
        Self {
            vars: vars.into_iter().map(|(n, t)| (n.to_owned(), t)).collect(),
        }
    }
}

/// Checks `expr` against `decls` and returns its type.
pub fn check(expr: &IdedExpr, decls: &Declarations) -> Result<Ty, TypeError> {
    let mut checker = Checker {
        scopes: decls.vars.clone(),
    };
    checker.check(expr)
}

/// Type names usable as values (`type(x) == string`).
const TYPE_IDENTS: &[&str] = &[
    "bool",
    "int",
    "uint",
    "double",
    "string",
    "bytes",
    "list",
    "map",
    "null_type",
    "type",
];

struct Checker {
    /// Variables in scope, innermost last.
    scopes: Vec<(String, Ty)>,
}

fn err(node: u64, message: impl Into<String>) -> TypeError {
    TypeError {
        node,
        message: message.into(),
    }
}

impl Checker {
    fn lookup(&self, name: &str) -> Option<&Ty> {
        self.scopes
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, t)| t)
    }

    fn check(&mut self, e: &IdedExpr) -> Result<Ty, TypeError> {
        match &e.expr {
            Expr::Unspecified => Err(err(e.id, "unspecified expression")),
            Expr::Literal(lit) => Ok(literal(lit)),
            Expr::Ident(name) => self.ident(e.id, name),
            Expr::Select(select) => self.select(e.id, select),
            Expr::Call(call) => self.call(e.id, call),
            Expr::List(list) => {
                let mut elem = Ty::Dyn;
                let mut first: Option<Ty> = None;
                for (i, item) in list.elements.iter().enumerate() {
                    let mut t = self.check(item)?;
                    // `?optional.none()` adds nothing, so its `dyn` takes no part.
                    if list.optional_indices.contains(&i) && t == Ty::optional(Ty::Dyn) {
                        continue;
                    }
                    if list.optional_indices.contains(&i) {
                        t = match t {
                            Ty::Optional(inner) => *inner,
                            Ty::Dyn => Ty::Dyn,
                            other => {
                                return Err(err(
                                    item.id,
                                    format!("expected type 'optional_type' but found '{other}'"),
                                ));
                            }
                        };
                    }
                    elem = homogeneous(item.id, &mut first, elem, t)?;
                }
                Ok(Ty::list(elem))
            }
            Expr::Map(map) => {
                let (mut key, mut value) = (Ty::Dyn, Ty::Dyn);
                let (mut first_key, mut first_value) = (None, None);
                for entry in &map.entries {
                    let EntryExpr::MapEntry(entry) = &entry.expr else {
                        return Err(err(e.id, "unexpected struct field in a map literal"));
                    };
                    let k = self.check(&entry.key)?;
                    if !matches!(k, Ty::Dyn | Ty::Int | Ty::Uint | Ty::Bool | Ty::String) {
                        return Err(err(entry.key.id, format!("unsupported map key type: {k}")));
                    }
                    let mut v = self.check(&entry.value)?;
                    if entry.optional && v == Ty::optional(Ty::Dyn) {
                        continue;
                    }
                    if entry.optional {
                        v = match v {
                            Ty::Optional(inner) => *inner,
                            Ty::Dyn => Ty::Dyn,
                            other => {
                                return Err(err(
                                    entry.value.id,
                                    format!(
                                        "expected type 'optional_type({other})' but found '{other}'"
                                    ),
                                ));
                            }
                        };
                    }
                    key = homogeneous(entry.key.id, &mut first_key, key, k)?;
                    value = homogeneous(entry.value.id, &mut first_value, value, v)?;
                }
                Ok(Ty::map(key, value))
            }
            Expr::Struct(s) => Err(err(
                e.id,
                format!(
                    "undeclared reference to '{}' (in container '')",
                    s.type_name
                ),
            )),
            Expr::Comprehension(c) => self.comprehension(c),
        }
    }

    fn ident(&self, id: u64, name: &str) -> Result<Ty, TypeError> {
        if let Some(t) = self.lookup(name) {
            return Ok(t.clone());
        }
        if TYPE_IDENTS.contains(&name) {
            return Ok(Ty::Type);
        }
        Err(undeclared(id, name))
    }

    fn select(&mut self, id: u64, select: &SelectExpr) -> Result<Ty, TypeError> {
        let operand = self.check(&select.operand)?;
        let field = field_type(id, &operand, &select.field)?;
        if select.test {
            return Ok(Ty::Bool);
        }
        Ok(field)
    }

    fn call(&mut self, id: u64, call: &CallExpr) -> Result<Ty, TypeError> {
        match call.func_name.as_str() {
            operators::OPT_SELECT => {
                let [operand, field] = call.args.as_slice() else {
                    return Err(err(id, "malformed optional selection"));
                };
                let Expr::Literal(LiteralValue::String(name)) = &field.expr else {
                    return Err(err(field.id, "optional selection needs a field name"));
                };
                let operand = self.check(operand)?;
                let field = field_type(id, &operand, name.inner())?;
                return Ok(match field {
                    Ty::Optional(t) => Ty::Optional(t),
                    t => Ty::optional(t),
                });
            }
            operators::CONDITIONAL => {
                let [cond, a, b] = call.args.as_slice() else {
                    return Err(err(id, "malformed conditional"));
                };
                let c = self.check(cond)?;
                let (ta, tb) = (self.check(a)?, self.check(b)?);
                if !c.compatible(&Ty::Bool) || !ta.compatible(&tb) {
                    return Err(no_overload(id, "_?_:_", None, &[c, ta, tb]));
                }
                return Ok(ta.join(&tb));
            }
            _ => {}
        }
        // A function warrant does not offer is named before its arguments are checked (the
        // arguments of a two-variable comprehension would otherwise read as undeclared).
        if let Some(why) =
            signatures::unsupported(&call.func_name, call.target.is_some(), call.args.len())
        {
            return Err(err(
                id,
                format!(
                    "function '{}' is not supported by warrant: {why}",
                    call.func_name
                ),
            ));
        }
        let target = match &call.target {
            Some(t) => {
                // `ns.fn(...)` where `ns` is not a variable is a namespaced global function.
                if let Some(ns) = qualified_name(&t.expr)
                    && let name = format!("{ns}.{}", call.func_name)
                    && self.namespaced(&ns, &name)
                {
                    let args = self.check_all(&call.args)?;
                    return self.resolve(id, &name, None, &args);
                }
                Some(self.check(t)?)
            }
            None => None,
        };
        let args = if call.func_name == "format" {
            // `format` takes a list of anything: its literal argument need not be homogeneous.
            call.args
                .iter()
                .map(|a| match &a.expr {
                    Expr::List(l) => {
                        for item in &l.elements {
                            self.check(item)?;
                        }
                        Ok(Ty::list(Ty::Dyn))
                    }
                    _ => self.check(a),
                })
                .collect::<Result<Vec<_>, _>>()?
        } else {
            self.check_all(&call.args)?
        };
        self.resolve(id, &call.func_name, target.as_ref(), &args)
    }

    /// Whether `ns.fn(...)` names a namespaced global function (`sets.contains`,
    /// `optional.of`, ...) rather than a member call on a variable.
    fn namespaced(&self, ns: &str, name: &str) -> bool {
        let root = ns.split('.').next().unwrap_or(ns);
        self.lookup(root).is_none() && signatures::is_global(name)
    }

    fn check_all(&mut self, args: &[IdedExpr]) -> Result<Vec<Ty>, TypeError> {
        args.iter().map(|a| self.check(a)).collect()
    }

    fn resolve(
        &self,
        id: u64,
        name: &str,
        target: Option<&Ty>,
        args: &[Ty],
    ) -> Result<Ty, TypeError> {
        match signatures::resolve(name, target, args) {
            Resolution::Ok(t) => Ok(t),
            Resolution::NoOverload => Err(no_overload(id, name, target, args)),
            Resolution::Unknown => Err(undeclared(id, name)),
            Resolution::Unsupported(why) => Err(err(
                id,
                format!("function '{name}' is not supported by warrant: {why}"),
            )),
        }
    }

    fn comprehension(&mut self, c: &ComprehensionExpr) -> Result<Ty, TypeError> {
        let range = self.check(&c.iter_range)?;
        let (var1, var2) = match (&range, c.iter_var2.is_some()) {
            (Ty::List(t), false) => ((**t).clone(), None),
            (Ty::List(t), true) => (Ty::Int, Some((**t).clone())),
            (Ty::Map(k, _), false) => ((**k).clone(), None),
            (Ty::Map(k, v), true) => ((**k).clone(), Some((**v).clone())),
            (Ty::Dyn, two) => (Ty::Dyn, two.then_some(Ty::Dyn)),
            (other, _) => {
                return Err(err(
                    c.iter_range.id,
                    format!(
                        "expression of type '{other}' cannot be the range of a comprehension (must be list, map, or dynamic)"
                    ),
                ));
            }
        };
        let init = self.check(&c.accu_init)?;
        let depth = self.scopes.len();
        self.scopes.push((c.accu_var.clone(), init.clone()));
        self.scopes.push((c.iter_var.clone(), var1));
        if let (Some(name), Some(t)) = (&c.iter_var2, var2) {
            self.scopes.push((name.clone(), t));
        }
        let outcome = (|| {
            let cond = self.check(&c.loop_cond)?;
            if !cond.compatible(&Ty::Bool) {
                return Err(err(
                    c.loop_cond.id,
                    format!("expected type 'bool' but found '{cond}'"),
                ));
            }
            let mut step = self.check(&c.loop_step)?;
            if !step.compatible(&init) {
                return Err(err(
                    c.loop_step.id,
                    format!("expected type '{init}' but found '{step}'"),
                ));
            }
            // The accumulator may start less precise (`[]`) than its steps make it.
            let accu = init.join(&step);
            if accu != init {
                self.scopes[depth].1 = accu.clone();
                step = self.check(&c.loop_step)?;
            }
            Ok(step)
        })();
        // The result sees the accumulator, not the iteration variables.
        self.scopes.truncate(depth + 1);
        let outcome = outcome.and_then(|_| self.check(&c.result));
        self.scopes.truncate(depth);
        outcome
    }
}

/// The type of `field` selected on a value of type `operand` (an optional operand yields an
/// optional field).
fn field_type(id: u64, operand: &Ty, field: &str) -> Result<Ty, TypeError> {
    match operand {
        Ty::Object(o) => o
            .field(field)
            .ok_or_else(|| err(id, format!("undefined field '{field}'"))),
        Ty::Map(_, v) => Ok((**v).clone()),
        Ty::Dyn => Ok(Ty::Dyn),
        Ty::Optional(inner) => Ok(Ty::optional(field_type(id, inner, field)?)),
        other => Err(err(
            id,
            format!("type '{other}' does not support field selection"),
        )),
    }
}

fn literal(lit: &LiteralValue) -> Ty {
    match lit {
        LiteralValue::Boolean(_) => Ty::Bool,
        LiteralValue::Bytes(_) => Ty::Bytes,
        LiteralValue::Double(_) => Ty::Double,
        LiteralValue::Int(_) => Ty::Int,
        LiteralValue::Null => Ty::Null,
        LiteralValue::String(_) => Ty::String,
        LiteralValue::UInt(_) => Ty::Uint,
    }
}

/// Kubernetes enables homogeneous aggregate literals: every element of a list (key or value of
/// a map) literal has one type.
fn homogeneous(id: u64, first: &mut Option<Ty>, acc: Ty, t: Ty) -> Result<Ty, TypeError> {
    match first {
        None => {
            *first = Some(t.clone());
            Ok(t)
        }
        // An explicit `dyn` element is a type of its own here, as in cel-go.
        Some(f) if f.compatible(&t) && f.is_dyn() == t.is_dyn() => Ok(acc.join(&t)),
        Some(f) => Err(err(id, format!("expected type '{f}' but found '{t}'"))),
    }
}

/// `a.b.c` as a dotted name, when the expression is only identifiers and selections.
fn qualified_name(e: &Expr) -> Option<String> {
    match e {
        Expr::Ident(name) => Some(name.clone()),
        Expr::Select(s) if !s.test => {
            qualified_name(&s.operand.expr).map(|base| format!("{base}.{}", s.field))
        }
        _ => None,
    }
}

fn undeclared(id: u64, name: &str) -> TypeError {
    err(
        id,
        format!("undeclared reference to '{name}' (in container '')"),
    )
}

fn no_overload(id: u64, name: &str, target: Option<&Ty>, args: &[Ty]) -> TypeError {
    let list = args
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let shown = match target {
        Some(t) => format!("{t}.({list})"),
        None => format!("({list})"),
    };
    err(
        id,
        format!("found no matching overload for '{name}' applied to '{shown}'"),
    )
}
