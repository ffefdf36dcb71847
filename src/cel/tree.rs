//! Walking the parsed tree: the children of a node, shared and mutable.

use cel::common::ast::{EntryExpr, Expr, IdedExpr};

/// Calls `f` on each child of `e`, in order.
pub(crate) fn children<'a>(e: &'a IdedExpr, f: &mut dyn FnMut(&'a IdedExpr)) {
    match &e.expr {
        Expr::Call(c) => {
            if let Some(t) = &c.target {
                f(t);
            }
            c.args.iter().for_each(f);
        }
        Expr::Select(s) => f(&s.operand),
        Expr::List(l) => l.elements.iter().for_each(f),
        Expr::Map(m) => {
            for entry in &m.entries {
                if let EntryExpr::MapEntry(me) = &entry.expr {
                    f(&me.key);
                    f(&me.value);
                }
            }
        }
        Expr::Struct(s) => {
            for entry in &s.entries {
                if let EntryExpr::StructField(sf) = &entry.expr {
                    f(&sf.value);
                }
            }
        }
        Expr::Comprehension(c) => {
            f(&c.iter_range);
            f(&c.accu_init);
            f(&c.loop_cond);
            f(&c.loop_step);
            f(&c.result);
        }
        Expr::Unspecified | Expr::Ident(_) | Expr::Literal(_) => {}
    }
}

/// Calls `f` on each child of `e`, in order, mutably.
pub(crate) fn children_mut(e: &mut IdedExpr, f: &mut dyn FnMut(&mut IdedExpr)) {
    match &mut e.expr {
        Expr::Call(c) => {
            if let Some(t) = &mut c.target {
                f(t);
            }
            c.args.iter_mut().for_each(f);
        }
        Expr::Select(s) => f(&mut s.operand),
        Expr::List(l) => l.elements.iter_mut().for_each(f),
        Expr::Map(m) => {
            for entry in &mut m.entries {
                if let EntryExpr::MapEntry(me) = &mut entry.expr {
                    f(&mut me.key);
                    f(&mut me.value);
                }
            }
        }
        Expr::Struct(s) => {
            for entry in &mut s.entries {
                if let EntryExpr::StructField(sf) = &mut entry.expr {
                    f(&mut sf.value);
                }
            }
        }
        Expr::Comprehension(c) => {
            f(&mut c.iter_range);
            f(&mut c.accu_init);
            f(&mut c.loop_cond);
            f(&mut c.loop_step);
            f(&mut c.result);
        }
        Expr::Unspecified | Expr::Ident(_) | Expr::Literal(_) => {}
    }
}
