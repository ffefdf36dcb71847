//! What an expression provably requires of the review (the kind of review, a verb, resource, API
//! group or namespace among literal values, membership of a group): facts found in its top-level
//! conjunction (`a && b && ...`) such that, when one does not hold, the expression evaluates to `false`, with
//! no error and no step spent. A Policy indexes its rules by them, so that a review evaluates
//! only the rules that can match.
//!
//! A conjunct counts only when every conjunct evaluated before it (to its left) spends no step
//! of the budget: a conjunction with a `false` conjunct is `false` whatever the others give
//! (errors included, as in cel-go), except for an exhausted budget, which fails the whole
//! evaluation; a conjunct that cannot spend cannot exhaust it.

use super::tree::children;
use cel::common::ast::{Expr, IdedExpr, LiteralValue, operators};
use k8s_openapi::api::authorization::v1::SubjectAccessReviewSpec;

/// A field of `resourceAttributes` a rule may be indexed by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dimension {
    /// `request.resourceAttributes.verb`.
    Verb,
    /// `request.resourceAttributes.resource`.
    Resource,
    /// `request.resourceAttributes.group` (the API group).
    Group,
    /// `request.resourceAttributes.namespace`.
    Namespace,
}

impl Dimension {
    /// Every dimension, most selective first (the order an index prefers them in).
    pub const ALL: [Dimension; 4] = [
        Dimension::Resource,
        Dimension::Namespace,
        Dimension::Verb,
        Dimension::Group,
    ];

    fn of(field: &str) -> Option<Self> {
        match field {
            "verb" => Some(Dimension::Verb),
            "resource" => Some(Dimension::Resource),
            "group" => Some(Dimension::Group),
            "namespace" => Some(Dimension::Namespace),
            _ => None,
        }
    }

    /// The review's value of this field (`""` when unset, as CEL sees it); `None` for a
    /// non-resource review.
    pub fn value(self, spec: &SubjectAccessReviewSpec) -> Option<&str> {
        let ra = spec.resource_attributes.as_ref()?;
        let v = match self {
            Dimension::Verb => &ra.verb,
            Dimension::Resource => &ra.resource,
            Dimension::Group => &ra.group,
            Dimension::Namespace => &ra.namespace,
        };
        Some(v.as_deref().unwrap_or_default())
    }
}

/// One fact an expression requires: when it does not hold, the expression is `false`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Requirement {
    /// `has(request.resourceAttributes)`: a resource review.
    Resource,
    /// `has(request.nonResourceAttributes)`: a non-resource review.
    NonResource,
    /// `request.resourceAttributes.<field> == 'v'` or `... in ['v', ...]`: on a resource review,
    /// the field is one of the values (on a non-resource review the selection errors, so it
    /// requires nothing there).
    Field(Dimension, Box<[Box<str>]>),
    /// `request.nonResourceAttributes.verb == 'v'` or `in [...]`: on a non-resource review, the
    /// verb is one of the values.
    NonResourceVerb(Box<[Box<str>]>),
    /// `'g' in request.groups`: the user is in group `g` (on any review).
    InGroup(Box<str>),
}

impl Requirement {
    /// Whether the requirement holds for `spec`: when it does not, the expression is `false`.
    pub fn holds(&self, spec: &SubjectAccessReviewSpec) -> bool {
        match self {
            Requirement::Resource => spec.resource_attributes.is_some(),
            Requirement::NonResource => spec.non_resource_attributes.is_some(),
            Requirement::Field(d, values) => d.value(spec).is_none_or(|v| one_of(values, v)),
            Requirement::NonResourceVerb(values) => spec
                .non_resource_attributes
                .as_ref()
                .is_none_or(|n| one_of(values, n.verb.as_deref().unwrap_or_default())),
            Requirement::InGroup(g) => spec.groups.iter().flatten().any(|x| **x == **g),
        }
    }
}

fn one_of(values: &[Box<str>], v: &str) -> bool {
    values.iter().any(|x| &**x == v)
}

/// The requirements of a checked expression, in the order its conjuncts are evaluated.
pub fn requirements(e: &IdedExpr) -> Vec<Requirement> {
    let mut conjuncts = Vec::new();
    flatten_and(e, &mut conjuncts);
    let mut found = Vec::new();
    for c in conjuncts {
        if let Some(r) = requirement(c) {
            found.push(r);
        }
        // A conjunct that may spend steps ends the search: those after it count no more.
        if !spends_nothing(c) {
            break;
        }
    }
    found
}

/// The leaves of the `&&` tree at the top, left to right.
fn flatten_and<'a>(e: &'a IdedExpr, out: &mut Vec<&'a IdedExpr>) {
    match &e.expr {
        Expr::Call(c) if c.func_name == operators::LOGICAL_AND && c.args.len() == 2 => {
            flatten_and(&c.args[0], out);
            flatten_and(&c.args[1], out);
        }
        _ => out.push(e),
    }
}

/// `request.<attributes>.<field>`, as `(attributes, field)`.
fn attribute_field(e: &IdedExpr) -> Option<(&str, &str)> {
    let Expr::Select(s) = &e.expr else {
        return None;
    };
    let Expr::Select(parent) = &s.operand.expr else {
        return None;
    };
    match &parent.operand.expr {
        Expr::Ident(root) if root == "request" && !s.test && !parent.test => {
            Some((parent.field.as_str(), s.field.as_str()))
        }
        _ => None,
    }
}

/// A string literal's text.
pub(super) fn string_literal(e: &IdedExpr) -> Option<Box<str>> {
    match &e.expr {
        Expr::Literal(LiteralValue::String(s)) => Some(s.inner().into()),
        _ => None,
    }
}

/// The values `e` compares a field with: `== 'v'` (either side) or `in ['v', ...]`.
fn compared(e: &IdedExpr) -> Option<(&IdedExpr, Box<[Box<str>]>)> {
    let Expr::Call(c) = &e.expr else {
        return None;
    };
    let [a, b] = c.args.as_slice() else {
        return None;
    };
    match c.func_name.as_str() {
        operators::EQUALS => match (string_literal(a), string_literal(b)) {
            (None, Some(v)) => Some((a, Box::new([v]))),
            (Some(v), None) => Some((b, Box::new([v]))),
            _ => None,
        },
        operators::IN => {
            let Expr::List(list) = &b.expr else {
                return None;
            };
            if !list.optional_indices.is_empty() {
                return None;
            }
            let values: Option<Vec<_>> = list.elements.iter().map(string_literal).collect();
            Some((a, values?.into_boxed_slice()))
        }
        _ => None,
    }
}

fn requirement(e: &IdedExpr) -> Option<Requirement> {
    if let Expr::Select(s) = &e.expr
        && s.test
        && matches!(&s.operand.expr, Expr::Ident(root) if root == "request")
    {
        return match s.field.as_str() {
            "resourceAttributes" => Some(Requirement::Resource),
            "nonResourceAttributes" => Some(Requirement::NonResource),
            _ => None,
        };
    }
    if let Some(group) = in_groups(e) {
        return Some(Requirement::InGroup(group));
    }
    let (field, values) = compared(e)?;
    match attribute_field(field)? {
        ("resourceAttributes", f) => Some(Requirement::Field(Dimension::of(f)?, values)),
        ("nonResourceAttributes", "verb") => Some(Requirement::NonResourceVerb(values)),
        _ => None,
    }
}

/// `'g' in request.groups`, as `g`.
fn in_groups(e: &IdedExpr) -> Option<Box<str>> {
    let Expr::Call(c) = &e.expr else {
        return None;
    };
    let [g, groups] = c.args.as_slice() else {
        return None;
    };
    let Expr::Select(s) = &groups.expr else {
        return None;
    };
    let is_groups = c.func_name == operators::IN
        && !s.test
        && s.field == "groups"
        && matches!(&s.operand.expr, Expr::Ident(root) if root == "request");
    if is_groups { string_literal(g) } else { None }
}

/// Whether evaluating `e` can spend no step of the budget: it has no comprehension and calls
/// only operators and functions that never spend.
fn spends_nothing(e: &IdedExpr) -> bool {
    let here = match &e.expr {
        Expr::Comprehension(_) | Expr::Struct(_) | Expr::Unspecified => false,
        Expr::Call(c) => matches!(
            c.func_name.as_str(),
            operators::LOGICAL_AND
                | operators::LOGICAL_OR
                | operators::LOGICAL_NOT
                | operators::EQUALS
                | operators::NOT_EQUALS
                | operators::IN
                | operators::CONDITIONAL
                | operators::LESS
                | operators::LESS_EQUALS
                | operators::GREATER
                | operators::GREATER_EQUALS
                | operators::INDEX
                | "startsWith"
                | "endsWith"
                | "size"
        ),
        Expr::Select(_) | Expr::Ident(_) | Expr::Literal(_) | Expr::List(_) | Expr::Map(_) => true,
    };
    let mut below = true;
    children(e, &mut |c| below = below && spends_nothing(c));
    here && below
}
