//! Expressions warrant evaluates itself: the shapes that make up most matchConditions and rules
//! (`has(request.resourceAttributes)`, `'g' in request.groups`, `request.user.startsWith('x')`,
//! a field compared with literals, joined by `!`, `&&` and `||`) are compiled at load time into
//! a small tree read straight from the review, skipping the engine's context and dynamic
//! values on every evaluation.
//!
//! The tree answers only when its answer is certain: wherever the engine would report an error
//! (a field of attributes the review lacks), it answers nothing and the engine evaluates the
//! expression instead, so results and error messages are the engine's in every case. None of
//! these shapes spends a step of the budget, so skipping the engine skips no budget check.
//! `&&` and `||` follow CEL's commutative rules: a `false` (`true`) on either side decides,
//! whatever the other side gives.

use super::constraint::string_literal as literal;
use super::fields::{Field, selected};
use cel::common::ast::{Expr, IdedExpr, LiteralValue, operators};
use k8s_openapi::api::authorization::v1::SubjectAccessReviewSpec;

/// A string the tree reads: a field of the review or a literal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Text {
    /// A string field of the review.
    Field(Field),
    /// A string literal.
    Literal(Box<str>),
}

/// A string test of [`Native::Test`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StringTest {
    /// `==`.
    Equals,
    /// `startsWith`.
    StartsWith,
    /// `endsWith`.
    EndsWith,
    /// `contains`.
    Contains,
}

/// A compiled expression of the shapes above.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Native {
    /// `true` or `false`.
    Constant(bool),
    /// A boolean field: `has(request.resourceAttributes)` and its kin.
    Flag(Field),
    /// `!e`.
    Not(Box<Native>),
    /// `a && b`.
    And(Box<Native>, Box<Native>),
    /// `a || b`.
    Or(Box<Native>, Box<Native>),
    /// `a == b`, `a.startsWith(b)`, `a.endsWith(b)`, `a.contains(b)` on strings.
    Test(StringTest, Text, Text),
    /// `a in ['x', ...]`.
    OneOf(Text, Box<[Box<str>]>),
    /// `a in request.groups`.
    InGroups(Text),
}

impl Native {
    /// The tree of a checked (not yet rewritten) expression, when every part of it has one of
    /// the shapes above.
    pub(crate) fn compile(e: &IdedExpr) -> Option<Native> {
        if let Some(field) = selected(&e.expr) {
            return match field {
                Field::Present | Field::HasResource | Field::HasNonResource => {
                    Some(Native::Flag(field))
                }
                _ => None,
            };
        }
        match &e.expr {
            Expr::Literal(LiteralValue::Boolean(b)) => Some(Native::Constant(*b.inner())),
            Expr::Call(c) => {
                let name = c.func_name.as_str();
                match (c.target.as_deref(), c.args.as_slice()) {
                    (None, [a]) if name == operators::LOGICAL_NOT => {
                        Some(Native::Not(Box::new(Native::compile(a)?)))
                    }
                    (None, [a, b]) => Native::binary(name, a, b),
                    (Some(t), [a]) => {
                        let test = match name {
                            "startsWith" => StringTest::StartsWith,
                            "endsWith" => StringTest::EndsWith,
                            "contains" => StringTest::Contains,
                            _ => return None,
                        };
                        Some(Native::Test(test, text(t)?, text(a)?))
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    fn binary(name: &str, a: &IdedExpr, b: &IdedExpr) -> Option<Native> {
        let both = |f: fn(Box<Native>, Box<Native>) -> Native| {
            Some(f(
                Box::new(Native::compile(a)?),
                Box::new(Native::compile(b)?),
            ))
        };
        match name {
            operators::LOGICAL_AND => both(Native::And),
            operators::LOGICAL_OR => both(Native::Or),
            operators::EQUALS => Some(Native::Test(StringTest::Equals, text(a)?, text(b)?)),
            operators::NOT_EQUALS => Some(Native::Not(Box::new(Native::Test(
                StringTest::Equals,
                text(a)?,
                text(b)?,
            )))),
            operators::IN => {
                if matches!(selected(&b.expr), Some(Field::Groups)) {
                    return Some(Native::InGroups(text(a)?));
                }
                let Expr::List(list) = &b.expr else {
                    return None;
                };
                if !list.optional_indices.is_empty() {
                    return None;
                }
                let values = list
                    .elements
                    .iter()
                    .map(literal)
                    .collect::<Option<Box<[_]>>>()?;
                Some(Native::OneOf(text(a)?, values))
            }
            _ => None,
        }
    }

    /// The expression's value for `spec`; `None` where the engine would report an error.
    pub(crate) fn eval(&self, spec: &SubjectAccessReviewSpec) -> Option<bool> {
        match self {
            Native::Constant(b) => Some(*b),
            Native::Flag(Field::HasResource) => Some(spec.resource_attributes.is_some()),
            Native::Flag(Field::HasNonResource) => Some(spec.non_resource_attributes.is_some()),
            Native::Flag(_) => Some(true),
            Native::Not(e) => e.eval(spec).map(|b| !b),
            Native::And(a, b) => match (a.eval(spec), b.eval(spec)) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            },
            Native::Or(a, b) => match (a.eval(spec), b.eval(spec)) {
                (Some(true), _) | (_, Some(true)) => Some(true),
                (Some(false), Some(false)) => Some(false),
                _ => None,
            },
            Native::Test(test, a, b) => {
                let (a, b) = (read(a, spec)?, read(b, spec)?);
                Some(match test {
                    StringTest::Equals => a == b,
                    StringTest::StartsWith => a.starts_with(b),
                    StringTest::EndsWith => a.ends_with(b),
                    StringTest::Contains => a.contains(b),
                })
            }
            Native::OneOf(a, values) => {
                let a = read(a, spec)?;
                Some(values.iter().any(|v| **v == *a))
            }
            Native::InGroups(a) => {
                let a = read(a, spec)?;
                Some(spec.groups.iter().flatten().any(|g| *g == a))
            }
        }
    }
}

/// A string operand: a literal or a string field of the review.
fn text(e: &IdedExpr) -> Option<Text> {
    if let Some(s) = literal(e) {
        return Some(Text::Literal(s));
    }
    match selected(&e.expr)? {
        f @ (Field::User | Field::Uid | Field::Resource(_) | Field::NonResource(_)) => {
            Some(Text::Field(f))
        }
        _ => None,
    }
}

/// The string `t` reads from `spec` (`""` for an unset field, as the engine binds it); `None`
/// for a field of attributes the review lacks, which the engine reports as an error.
fn read<'a>(t: &'a Text, spec: &'a SubjectAccessReviewSpec) -> Option<&'a str> {
    let value = match t {
        Text::Literal(s) => return Some(s),
        Text::Field(Field::User) => &spec.user,
        Text::Field(Field::Uid) => &spec.uid,
        Text::Field(Field::Resource(i)) => {
            let ra = spec.resource_attributes.as_ref()?;
            match i {
                0 => &ra.namespace,
                1 => &ra.verb,
                2 => &ra.group,
                3 => &ra.version,
                4 => &ra.resource,
                5 => &ra.subresource,
                6 => &ra.name,
                _ => return None,
            }
        }
        Text::Field(Field::NonResource(i)) => {
            let n = spec.non_resource_attributes.as_ref()?;
            match i {
                0 => &n.verb,
                1 => &n.path,
                _ => return None,
            }
        }
        Text::Field(_) => return None,
    };
    Some(value.as_deref().unwrap_or_default())
}

#[cfg(test)]
mod tests;
