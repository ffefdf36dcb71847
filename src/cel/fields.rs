//! Direct field access: the selections of `request` that expressions make most
//! (`request.user`, `request.resourceAttributes.verb`, `has(request.resourceAttributes)`...) are
//! rewritten at load time into one identifier each, which the bound review answers from a field
//! of its own (`Binding`, module `bind`) instead of the engine joining the segments into a name
//! and looking each key up in a hashed map on every evaluation.
//!
//! The identifiers are spelled with dots and brackets, which no identifier an expression can
//! write contains, so they never meet a user's name. A selection under `resourceAttributes` of a
//! review that has none is not answered; the engine then reports the identifier undeclared, and
//! [`absent_key`] turns that back into the error the selection itself gives
//! (`no such key: resourceAttributes`), so the outcome of every expression is unchanged.

use super::tree::children_mut;
use cel::common::ast::{Expr, IdedExpr};

/// A field of the review an expression may read directly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// `request.user`.
    User,
    /// `request.uid`.
    Uid,
    /// `request.groups`.
    Groups,
    /// `request.extra`.
    Extra,
    /// `has(request.<field>)` for a field always present (`user`, `uid`, `groups`, `extra`).
    Present,
    /// `has(request.resourceAttributes)`.
    HasResource,
    /// `has(request.nonResourceAttributes)`.
    HasNonResource,
    /// `request.resourceAttributes.<field>`, by its index in [`RESOURCE_FIELDS`].
    Resource(usize),
    /// `request.nonResourceAttributes.<field>`, by its index in [`NON_RESOURCE_FIELDS`].
    NonResource(usize),
}

/// The scalar fields of `resourceAttributes`, all present whenever it is.
pub(crate) const RESOURCE_FIELDS: [&str; 7] = [
    "namespace",
    "verb",
    "group",
    "version",
    "resource",
    "subresource",
    "name",
];

/// The fields of `nonResourceAttributes`, both present whenever it is.
pub(crate) const NON_RESOURCE_FIELDS: [&str; 2] = ["verb", "path"];

/// The identifiers the rewrite writes, with the field each names.
const NAMES: [(&str, Field); 16] = [
    ("request.user", Field::User),
    ("request.uid", Field::Uid),
    ("request.groups", Field::Groups),
    ("request.extra", Field::Extra),
    ("has(request.*)", Field::Present),
    ("has(request.resourceAttributes)", Field::HasResource),
    ("has(request.nonResourceAttributes)", Field::HasNonResource),
    ("request.resourceAttributes.namespace", Field::Resource(0)),
    ("request.resourceAttributes.verb", Field::Resource(1)),
    ("request.resourceAttributes.group", Field::Resource(2)),
    ("request.resourceAttributes.version", Field::Resource(3)),
    ("request.resourceAttributes.resource", Field::Resource(4)),
    ("request.resourceAttributes.subresource", Field::Resource(5)),
    ("request.resourceAttributes.name", Field::Resource(6)),
    ("request.nonResourceAttributes.verb", Field::NonResource(0)),
    ("request.nonResourceAttributes.path", Field::NonResource(1)),
];

/// The field a rewritten identifier names.
pub(crate) fn field_named(name: &str) -> Option<Field> {
    // Every rewritten name starts with `request.` or `has(`: other names end the search at once.
    if !name.starts_with("request.") && !name.starts_with("has(") {
        return None;
    }
    NAMES.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
}

fn name_of(field: Field) -> &'static str {
    NAMES
        .iter()
        .find(|(_, f)| *f == field)
        .map_or("", |(n, _)| n)
}

/// The key whose absence left a rewritten identifier unanswered: `resourceAttributes` or
/// `nonResourceAttributes`; `None` for any other name.
pub(crate) fn absent_key(name: &str) -> Option<&'static str> {
    match field_named(name)? {
        Field::Resource(_) => Some("resourceAttributes"),
        Field::NonResource(_) => Some("nonResourceAttributes"),
        _ => None,
    }
}

/// The field a selection of `request` reads, if it is one answered directly.
pub(super) fn selected(e: &Expr) -> Option<Field> {
    let Expr::Select(s) = e else { return None };
    match &s.operand.expr {
        Expr::Ident(root) if root == "request" => match (s.field.as_str(), s.test) {
            ("user", false) => Some(Field::User),
            ("uid", false) => Some(Field::Uid),
            ("groups", false) => Some(Field::Groups),
            ("extra", false) => Some(Field::Extra),
            ("user" | "uid" | "groups" | "extra", true) => Some(Field::Present),
            ("resourceAttributes", true) => Some(Field::HasResource),
            ("nonResourceAttributes", true) => Some(Field::HasNonResource),
            _ => None,
        },
        Expr::Select(parent) if !parent.test && !s.test => {
            let Expr::Ident(root) = &parent.operand.expr else {
                return None;
            };
            if root != "request" {
                return None;
            }
            let position = |fields: &[&str]| fields.iter().position(|f| *f == s.field);
            match parent.field.as_str() {
                "resourceAttributes" => position(&RESOURCE_FIELDS).map(Field::Resource),
                "nonResourceAttributes" => position(&NON_RESOURCE_FIELDS).map(Field::NonResource),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Rewrites every selection of `request` answered directly into its identifier, except where a
/// comprehension's variable named `request` hides the review.
pub(crate) fn rewrite(e: &mut IdedExpr) {
    if let Some(field) = selected(&e.expr) {
        e.expr = Expr::Ident(name_of(field).to_owned());
        return;
    }
    match &mut e.expr {
        Expr::Comprehension(c) => {
            rewrite(&mut c.iter_range);
            rewrite(&mut c.accu_init);
            let hidden = [Some(&c.iter_var), c.iter_var2.as_ref(), Some(&c.accu_var)]
                .into_iter()
                .flatten()
                .any(|v| v == "request");
            if !hidden {
                rewrite(&mut c.loop_cond);
                rewrite(&mut c.loop_step);
                rewrite(&mut c.result);
            }
        }
        _ => children_mut(e, &mut rewrite),
    }
}
