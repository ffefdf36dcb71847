//! How much a request matters: the protection level of its target (the highest protected
//! namespace or resource rule that names it) and a risk score with the reasons that make it up
//! (critical +40, high +20, deleting a protected Namespace +30, deletecollection +20, business
//! hours +10), graded into a [`RiskLevel`] by the thresholds. Which gates apply at which level is
//! the pipeline's business.

use super::assessment::RiskLevel;
use super::scope::Target;
use crate::config::model::guard::{GuardSpec, Level, Thresholds};
use crate::config::model::pattern;
use chrono::{DateTime, Utc};

/// The risk of one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Risk {
    /// The score.
    pub(super) score: u32,
    /// Its level.
    pub(super) level: RiskLevel,
    /// The target's protection level, if protected.
    pub(super) protection: Option<Level>,
    /// What made up the score, in order (`critical namespace production +40`, ...).
    pub(super) reasons: Vec<String>,
}

/// Scores a request at `now`.
pub(super) fn assess(spec: &GuardSpec, target: &Target<'_>, now: DateTime<Utc>) -> Risk {
    let mut score = 0;
    let mut reasons = Vec::new();
    let mut add = |points: u32, reason: String| {
        score += points;
        reasons.push(reason);
    };
    let namespace = namespace_level(spec, target);
    if let Some(l) = namespace {
        let ns = target.namespace;
        add(
            points(l),
            format!("{} namespace {ns} +{}", l.as_str(), points(l)),
        );
    }
    let resource = resource_level(spec, target);
    if let Some(l) = resource {
        add(
            points(l),
            format!("{} {} +{}", l.as_str(), kind(target), points(l)),
        );
    }
    let protection = namespace.max(resource);
    if target.is_namespace() && protection.is_some() {
        add(30, "namespace deletion +30".into());
    }
    if target.verb == "deletecollection" {
        add(20, "deletecollection +20".into());
    }
    if spec.business_hours.contains(now) {
        add(10, "business hours +10".into());
    }
    Risk {
        score,
        level: grade(score, spec.thresholds),
        protection,
        reasons,
    }
}

/// The highest level of the protected namespace rules naming the target's namespace.
fn namespace_level(spec: &GuardSpec, target: &Target<'_>) -> Option<Level> {
    if target.namespace.is_empty() {
        return None;
    }
    spec.namespaces
        .iter()
        .filter(|p| pattern::any(&p.names, target.namespace))
        .map(|p| p.level)
        .max()
}

/// The highest level of the protected resource rules naming the target. A collection delete
/// names no object but may sweep the named ones, so it is judged at the highest level of every
/// rule for its kind, named objects included.
fn resource_level(spec: &GuardSpec, target: &Target<'_>) -> Option<Level> {
    let collection = target.verb == "deletecollection";
    spec.resources
        .iter()
        .filter(|p| {
            p.kind.covers(target.group, target.resource)
                && (p.names.is_empty() || collection || pattern::any(&p.names, target.name))
        })
        .map(|p| p.level)
        .max()
}

/// What a protection level adds to the score.
fn points(level: Level) -> u32 {
    match level {
        Level::Critical => 40,
        Level::High => 20,
        Level::Standard => 0,
    }
}

/// `resource` or `resource.group`, as reasons name a kind.
fn kind(target: &Target<'_>) -> String {
    if target.group.is_empty() {
        target.resource.to_owned()
    } else {
        format!("{}.{}", target.resource, target.group)
    }
}

/// The level of a score.
fn grade(score: u32, t: Thresholds) -> RiskLevel {
    if score >= t.critical {
        RiskLevel::Critical
    } else if score >= t.high {
        RiskLevel::High
    } else if score >= t.medium {
        RiskLevel::Medium
    } else {
        RiskLevel::Low
    }
}
