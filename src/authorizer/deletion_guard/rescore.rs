//! The guard's risk model for the buffer ring (`crate::buffer`): the protection level of an
//! object as the finalizer rule reads it, and the risk of its deletion re-computed from the
//! object and the cluster view, with the same `objects::gather` and `risk::assess` the
//! validation ring runs, so the cool-down controller never scores a deletion differently.

use super::assessment::RiskLevel;
use super::error::GuardError;
use super::objects;
use super::risk;
use super::scope::Target;
use crate::config::model::guard::{GuardSpec, Level};
use crate::object::{ClusterView, ObjectContext, Operation, Subject};
use chrono::{DateTime, Utc};
use std::sync::Arc;

/// The risk of deleting one object, as re-computed by the buffer ring.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DeletionRisk {
    /// The score.
    pub score: u32,
    /// Its level.
    pub level: RiskLevel,
    /// What made up the score, in order.
    pub reasons: Vec<String>,
    /// The protection the object has, its own or its namespace's, when it has any.
    pub protection: Option<Level>,
}

/// The object's own protection level: the protection label on it (for a Namespace, its own
/// label) or a `protectedResources` rule naming it, the higher of the two. The namespace's
/// protection is not the object's: it puts no finalizer on every object inside.
pub(crate) fn object_protection(
    spec: &GuardSpec,
    group: &str,
    resource: &str,
    object: &Subject,
) -> Option<Level> {
    let target = target(group, resource, object);
    let rule = risk::resource_level(spec, &target);
    let label = spec
        .objects
        .protection_label
        .as_deref()
        .and_then(|k| object.label(k))
        .map(|v| objects::read_level(v).level);
    rule.max(label)
}

/// The risk of deleting `object` (of `group`/`resource`) at `now`, scored as the validation ring
/// scores a DELETE of it: its protection, its namespace's, its dependents in `view`, business
/// hours.
pub(crate) async fn deletion_risk(
    spec: &GuardSpec,
    group: &str,
    resource: &str,
    object: &Subject,
    view: Arc<dyn ClusterView>,
    now: DateTime<Utc>,
) -> Result<DeletionRisk, GuardError> {
    let target = target(group, resource, object);
    let ctx = ObjectContext {
        operation: Operation::Delete,
        object: None,
        old_object: Some(object.clone()),
        dry_run: false,
        view,
    };
    let facts = objects::gather(spec, &ctx, &target).await?;
    let risk = risk::assess(spec, &target, now, Some(&facts));
    Ok(DeletionRisk {
        score: risk.score,
        level: risk.level,
        reasons: risk.reasons,
        protection: risk.protection,
    })
}

/// The level of `score` by the guard's thresholds.
pub(crate) fn grade(spec: &GuardSpec, score: u32) -> RiskLevel {
    risk::grade(score, spec.thresholds)
}

/// A DELETE of `object` by nobody in particular (the risk model does not read the user).
fn target<'a>(group: &'a str, resource: &'a str, object: &'a Subject) -> Target<'a> {
    let namespaced = !(group.is_empty() && resource == "namespaces");
    Target {
        verb: "delete",
        namespace: if namespaced {
            object.namespace()
        } else {
            object.name()
        },
        group,
        resource,
        name: object.name(),
        user: "",
        groups: &[],
    }
}
