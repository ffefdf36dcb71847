//! Protection coverage: the objects whose deletion would hurt (by the guard's own risk model:
//! running pods, Ingresses reaching them, bound volumes, a Namespace's contents) or that are
//! named like production, but that no `protectedNamespaces`/`protectedResources` rule and no
//! protection label (on the object or its namespace) protects, or protects below the level its
//! risk calls for. `warrant coverage` prints them, and the label patches that close them.
//!
//! Criticality is what the object carries, not its kind: the risk model's weight for deleting
//! a Namespace (`namespaceDeletion`, which every Namespace would get) is left out, and the
//! namespaces the guard never looks at (the control plane's, `excludedNamespaces`) are not
//! listed, since no protection could apply there.

use crate::authorizer::deletion_guard::rescore;
use crate::authorizer::deletion_guard::{GuardError, RiskLevel};
use crate::cluster::inventory::Inventoried;
use crate::config::model::guard::{GuardSpec, Level};
use crate::config::model::pattern::{self, Pattern};
use crate::defense::label_patch::{self, PatchTarget};
use crate::object::ClusterView;
use chrono::{DateTime, Utc};
use serde::Serialize;
use std::sync::Arc;

/// The name patterns that mark an object as production's unless `--critical-names` says
/// otherwise.
pub const DEFAULT_CRITICAL_NAMES: [&str; 2] = ["*prod*", "*production*"];

/// What makes an unprotected object a gap.
#[derive(Debug, Clone)]
pub struct Criteria {
    /// The lowest deletion risk level that needs protection.
    pub min_level: RiskLevel,
    /// Names (or, for a namespaced object, namespaces) that need protection whatever the risk.
    pub critical_names: Vec<Pattern>,
}

/// An object that looks critical and has no protection, or less than its risk calls for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Gap {
    /// `Namespace`, `StatefulSet`, or a custom resource's kind.
    pub kind: String,
    /// `v1`, `apps/v1`, the custom resource's served version.
    pub api_version: String,
    /// API group (`""` core).
    pub group: String,
    /// Plural resource.
    pub resource: String,
    /// Namespace (`""` for a Namespace).
    pub namespace: String,
    /// Name.
    pub name: String,
    /// The deletion's risk score from what the object carries (its protection's own weight
    /// left out), as the validation ring would score it now.
    pub score: u32,
    /// Its level.
    pub level: RiskLevel,
    /// The protection it has (its own or its namespace's), lower than `wanted`; `None` when it
    /// has none.
    pub current: Option<Level>,
    /// The protection level its risk calls for ([`protection_for`]; `standard` for an object
    /// listed by its name alone): the label value that closes the gap.
    pub wanted: Level,
    /// Why it looks critical: the risk model's reasons, and a name pattern matched.
    pub reasons: Vec<String>,
}

impl Gap {
    /// The partial object that sets `label_key` to [`Gap::wanted`] on this object.
    pub fn patch(&self, label_key: &str) -> serde_json::Value {
        let target = PatchTarget {
            api_version: &self.api_version,
            kind: &self.kind,
            namespace: &self.namespace,
            name: &self.name,
        };
        label_patch::document(target, label_key, self.wanted)
    }
}

/// The protection level a deletion risk calls for: MEDIUM `standard`, HIGH `high`, CRITICAL
/// `critical`; LOW none.
pub(crate) fn protection_for(level: RiskLevel) -> Option<Level> {
    match level {
        RiskLevel::Low => None,
        RiskLevel::Medium => Some(Level::Standard),
        RiskLevel::High => Some(Level::High),
        RiskLevel::Critical => Some(Level::Critical),
    }
}

/// `spec` with the protection levels weighing nothing, so that a score says what the object
/// carries and not what it is already labelled.
fn content_only(spec: &GuardSpec) -> GuardSpec {
    let mut spec = spec.clone();
    spec.weights.high = 0;
    spec.weights.critical = 0;
    spec
}

/// The risk of deleting `object` by what it carries: the guard's score of a DELETE, without
/// the weight every Namespace's deletion gets and without the reasons of factors weighted 0.
pub(crate) async fn content_risk(
    spec: &GuardSpec,
    group: &str,
    resource: &str,
    object: &crate::object::Subject,
    view: Arc<dyn ClusterView>,
    now: DateTime<Utc>,
) -> Result<rescore::DeletionRisk, GuardError> {
    let mut risk = rescore::deletion_risk(spec, group, resource, object, view, now).await?;
    if let Some(at) = risk
        .reasons
        .iter()
        .position(|r| r.starts_with("namespace deletion"))
    {
        risk.reasons.remove(at);
        risk.score = risk.score.saturating_sub(spec.weights.namespace_deletion);
        risk.level = rescore::grade(spec, risk.score);
    }
    // A factor weighted 0 (`riskWeights`) is no reason.
    risk.reasons.retain(|r| !r.ends_with(" +0"));
    Ok(risk)
}

/// The gaps among `inventory`, scored at `now` against `view`, riskiest first: the objects
/// without protection that `criteria` calls critical, and those whose protection is lower
/// than their risk calls for. An object the view cannot score is an error (a partial list
/// would read as coverage).
pub async fn gaps(
    spec: &GuardSpec,
    inventory: Vec<Inventoried>,
    view: Arc<dyn ClusterView>,
    now: DateTime<Utc>,
    criteria: &Criteria,
) -> Result<Vec<Gap>, GuardError> {
    let scoring = content_only(spec);
    let mut out = Vec::new();
    for item in inventory {
        let (group, resource) = (item.resource.group(), item.resource.plural());
        let o = &item.object;
        let home = if group.is_empty() && resource == "namespaces" {
            o.name()
        } else {
            o.namespace()
        };
        if pattern::any(&spec.excluded_namespaces, home) {
            continue;
        }
        let risk = content_risk(&scoring, group, resource, o, view.clone(), now).await?;
        let mut reasons = risk.reasons;
        let named = criteria.critical_names.iter().find(|p| {
            p.matches(o.name()) || (!o.namespace().is_empty() && p.matches(o.namespace()))
        });
        let wanted = match (risk.protection, protection_for(risk.level)) {
            // Protected as its risk calls for, or above.
            (Some(has), wanted) if wanted <= Some(has) => continue,
            (Some(_), _) if risk.level < criteria.min_level => continue,
            (None, _) if risk.level < criteria.min_level && named.is_none() => continue,
            (_, wanted) => wanted.unwrap_or(Level::Standard),
        };
        if let (None, Some(p)) = (risk.protection, named) {
            reasons.push(format!("name matches {}", p.as_str()));
        }
        out.push(Gap {
            kind: item.resource.kind().to_owned(),
            api_version: o.api_version().to_owned(),
            group: group.to_owned(),
            resource: resource.to_owned(),
            namespace: o.namespace().to_owned(),
            name: o.name().to_owned(),
            score: risk.score,
            level: risk.level,
            current: risk.protection,
            wanted,
            reasons,
        });
    }
    out.sort_by(|a, b| {
        b.score
            .cmp(&a.score)
            .then_with(|| (&a.namespace, &a.name, &a.kind).cmp(&(&b.namespace, &b.name, &b.kind)))
    });
    Ok(out)
}

#[cfg(test)]
mod tests;
