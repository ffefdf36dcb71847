//! Warnings for configurations that are valid but whose protection has a gap their author
//! likely did not mean: a rule that names verb `delete` but not `deletecollection` (or the
//! other way round), which delete the same objects; and a guard that protects pods, whose
//! evictions (`create pods/eviction`, what `kubectl drain` does) delete a pod without being a
//! `delete` the guard judges.

use super::Checker;
use crate::config::model::guard::ProtectedResource;

/// The warning for a rule naming one of the two deleting verbs only.
pub const DELETE_VERBS_APART: &str = "this rule names verb 'delete' or 'deletecollection' but not both: they delete the same objects (one by name, the other by selector), so a rule meant for deletions should name both";

/// The warning for a guard that protects pods.
pub const EVICTIONS_UNGUARDED: &str = "deletes of pods are guarded, but an eviction (create pods/eviction, as kubectl drain does) deletes a pod without being a delete: the guard does not judge it; limit evictions with a PodDisruptionBudget or a Policy rule on subresource 'eviction'";

/// Warns at `path` (line `l`) when the rule's `expression` names one deleting verb as a string
/// literal and not the other.
pub(super) fn deleting_verbs(c: &mut Checker, l: u32, path: &str, expression: &str) {
    let named = |verb: &str| {
        expression.contains(&format!("'{verb}'")) || expression.contains(&format!("\"{verb}\""))
    };
    if named("delete") != named("deletecollection") {
        c.warn(l, path, DELETE_VERBS_APART);
    }
}

/// Warns at `path` (line `l`) when a `protectedResources` rule covers core pods.
pub(super) fn evictions(c: &mut Checker, l: u32, path: &str, resources: &[ProtectedResource]) {
    if resources.iter().any(|r| r.kind.covers("", "pods")) {
        c.warn(l, path, EVICTIONS_UNGUARDED);
    }
}
