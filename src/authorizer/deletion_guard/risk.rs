//! How much a request matters: the protection level of its target and a risk score with the
//! reasons that make it up, graded into a [`RiskLevel`] by the thresholds. The weights are the
//! guard's `riskWeights` (the defaults are the model our users wrote: critical +40, high +20,
//! Namespace deletion +30, deletecollection +20; at admission: running pods affected >= 20 +20,
//! else > 0 +10, an Ingress reaching the target +15, bound volumes affected +20; business
//! hours +10).
//!
//! The protection level is the highest of every source naming the target: the protected
//! namespace and resource rules and, at admission, the protection label on the object and on
//! its namespace (for an UPDATE that lowers the label: the stored level). It counts once.

use super::assessment::RiskLevel;
use super::objects::ObjectFacts;
use super::scope::Target;
use crate::config::model::guard::{GuardSpec, Level, RiskWeights, Thresholds};
use crate::config::model::pattern;
use crate::object::Dependents;
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
    /// What made up the score, in order (`critical: namespace production +40`, ...).
    pub(super) reasons: Vec<String>,
    /// At admission: what depends on the target, and the traffic estimate.
    pub(super) impact: Option<Impact>,
}

/// What deleting the target takes down, as the report shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Impact {
    /// The dependents found.
    pub(super) dependents: Dependents,
    /// Estimated requests per second reaching the affected pods through an Ingress.
    pub(super) estimated_qps: u64,
}

/// Scores a request at `now`; `facts` are the admission facts, when the request is one.
pub(super) fn assess(
    spec: &GuardSpec,
    target: &Target<'_>,
    now: DateTime<Utc>,
    facts: Option<&ObjectFacts>,
) -> Risk {
    let w = &spec.weights;
    let mut score = 0;
    let mut reasons = Vec::new();
    let mut add = |points: u32, reason: String| {
        score += points;
        reasons.push(format!("{reason} +{points}"));
    };
    let protection = protection(spec, target, facts);
    if let Some((level, source)) = &protection {
        add(w.level(*level), format!("{}: {source}", level.as_str()));
    }
    // A Namespace's deletion, not an update of it (an UPDATE lowering its label, or an
    // `updateResources` entry for namespaces).
    let deletion = matches!(target.verb, "delete" | "deletecollection");
    if deletion && target.is_namespace() && (facts.is_some() || protection.is_some()) {
        add(w.namespace_deletion, "namespace deletion".into());
    }
    if target.verb == "deletecollection" {
        add(w.deletecollection, "deletecollection".into());
    }
    let impact = facts.map(|f| impact(w, &f.dependents, &mut add));
    if spec.business_hours.contains(now) {
        add(w.business_hours, "business hours".into());
    }
    Risk {
        score,
        level: grade(score, spec.thresholds),
        protection: protection.map(|(l, _)| l),
        reasons,
        impact,
    }
}

/// The dependents' share of the score: running pods, Ingresses, bound volumes.
fn impact(w: &RiskWeights, d: &Dependents, add: &mut impl FnMut(u32, String)) -> Impact {
    if d.running_pods >= w.many_pods_at {
        add(
            w.many_pods,
            format!("{} running pods affected", d.running_pods),
        );
    } else if d.running_pods > 0 {
        add(
            w.some_pods,
            format!("{} running pods affected", d.running_pods),
        );
    }
    let estimated_qps = u64::from(d.ingress_pods) * u64::from(w.qps_per_pod);
    if let Some(first) = d.ingresses.first() {
        let more = match d.ingresses.len() {
            1 => String::new(),
            n => format!(" and {} more", n - 1),
        };
        add(
            w.ingress,
            format!("ingress {first}{more} reaches the target (~{estimated_qps} QPS)"),
        );
    }
    if !d.bound_volumes.is_empty() {
        add(
            w.bound_volumes,
            format!("{} bound volumes affected", d.bound_volumes.len()),
        );
    }
    Impact {
        dependents: d.clone(),
        estimated_qps,
    }
}

/// The highest protection level of every source naming the target, with the first source
/// giving it.
fn protection(
    spec: &GuardSpec,
    target: &Target<'_>,
    facts: Option<&ObjectFacts>,
) -> Option<(Level, String)> {
    let mut best: Option<(Level, String)> = None;
    let mut offer = |level: Option<Level>, source: &dyn Fn() -> String| {
        if let Some(l) = level
            && best.as_ref().is_none_or(|(b, _)| l > *b)
        {
            best = Some((l, source()));
        }
    };
    offer(namespace_level(spec, target), &|| {
        format!("protected namespace {}", target.namespace)
    });
    offer(resource_level(spec, target), &|| {
        format!("protected {}", kind(target))
    });
    if let Some(f) = facts {
        let key = spec.objects.protection_label.as_deref().unwrap_or("");
        if let Some(t) = &f.tampering {
            offer(Some(t.from), &|| format!("label {key} lowered"));
        }
        if let Some(l) = &f.label {
            offer(Some(l.level), &|| {
                format!("label {key}={} on {}", l.value, kind(target))
            });
        }
        if let Some(l) = &f.namespace_label {
            offer(Some(l.level), &|| {
                format!("label {key}={} on namespace {}", l.value, target.namespace)
            });
        }
    }
    best
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

/// `resource[.group] [name]`, as reasons name a target.
fn kind(target: &Target<'_>) -> String {
    let kind = if target.group.is_empty() {
        target.resource.to_owned()
    } else {
        format!("{}.{}", target.resource, target.group)
    };
    if target.name.is_empty() {
        kind
    } else {
        format!("{kind} {}", target.name)
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
