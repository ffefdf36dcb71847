//! How much a request matters: the protection level of its target and a risk score with the
//! reasons that make it up, graded into a [`RiskLevel`] by the thresholds. The weights are the
//! guard's `riskWeights` (the defaults are the model our users wrote: critical +40, high +20,
//! Namespace deletion +30, deletecollection +20; at admission: running pods affected >= 20 +20,
//! else > 0 +10, an Ingress reaching the target +15, bound volumes affected +20, traffic of at
//! least `highTrafficAt` requests per second +`highTraffic` (0 unless configured); business
//! hours +10). The traffic is the live rate when `liveTraffic` answered, else the fixed
//! estimate (`traffic`).
//!
//! The protection has two sides that add up, as they always have in the authorization ring: the
//! namespace's (the protected namespace rules and, at admission, the protection label on the
//! namespace: the higher wins) and the object's (the protected resource rules and, at admission,
//! the protection label on the object, or for an UPDATE that lowers it the stored level: the
//! higher wins). A Namespace's own label is its namespace side; the objects it holds are its
//! object side: at admission, the highest protection label among them counts there, as its
//! deletion deletes them all. The target's protection level, which tickets and trusted principals are measured
//! against, is the higher of the two.

use super::assessment::RiskLevel;
use super::objects::ObjectFacts;
use super::scope::Target;
use super::traffic::{Traffic, TrafficSource};
use crate::config::model::guard::{GuardSpec, Level, RiskWeights, Thresholds};
use crate::config::model::pattern;
use crate::object::Dependents;
use chrono::{DateTime, Utc};
use std::sync::Arc;

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
    /// The target, `namespace/resource.group/name`.
    pub(super) target: String,
    /// The dependents found (the facts' own).
    pub(super) dependents: Arc<Dependents>,
    /// Estimated requests per second reaching the affected pods through an Ingress.
    pub(super) estimated_qps: u64,
    /// The rate the score used.
    pub(super) traffic: Traffic,
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
    let mut reasons = Vec::with_capacity(8);
    // Each reason written once, at its length: its parts, then ` +<points>`.
    let mut add = |points: u32, parts: &[&str]| {
        score = u32::saturating_add(score, points);
        let mut buffer = itoa::Buffer::new();
        let points = buffer.format(points);
        let len = parts.iter().map(|p| p.len()).sum::<usize>() + " +".len() + points.len();
        let mut reason = String::with_capacity(len);
        parts.iter().for_each(|p| reason.push_str(p));
        reason.push_str(" +");
        reason.push_str(points);
        reasons.push(reason);
    };
    let sides = [
        namespace_side(spec, target, facts),
        object_side(spec, target, facts),
    ];
    for (level, source) in sides.iter().flatten() {
        add(w.level(*level), &[level.as_str(), ": ", source]);
    }
    let protection = sides.iter().flatten().map(|(l, _)| *l).max();
    // A Namespace's deletion, not an update of it (an UPDATE lowering its label, or an
    // `updateResources` entry for namespaces).
    let deletion = matches!(target.verb, "delete" | "deletecollection");
    if deletion && target.is_namespace() && (facts.is_some() || protection.is_some()) {
        add(w.namespace_deletion, &["namespace deletion"]);
    }
    if target.verb == "deletecollection" {
        add(w.deletecollection, &["deletecollection"]);
    }
    let impact = facts.map(|f| impact(w, target, f, &mut add));
    if spec.business_hours.contains(now) {
        add(w.business_hours, &["business hours"]);
    }
    Risk {
        score,
        level: grade(score, spec.thresholds),
        protection,
        reasons,
        impact,
    }
}

/// The dependents' share of the score: running pods, Ingresses, bound volumes, traffic.
fn impact(
    w: &RiskWeights,
    target: &Target<'_>,
    facts: &ObjectFacts,
    add: &mut impl FnMut(u32, &[&str]),
) -> Impact {
    let d: &Dependents = &facts.dependents;
    let mut digits = itoa::Buffer::new();
    let pods = [digits.format(d.running_pods), " running pods affected"];
    if d.running_pods >= w.many_pods_at {
        add(w.many_pods, &pods);
    } else if d.running_pods > 0 {
        add(w.some_pods, &pods);
    }
    let estimated_qps = u64::from(d.ingress_pods) * u64::from(w.qps_per_pod);
    let traffic = Traffic::of(facts.live_traffic.as_ref(), estimated_qps);
    let rate = match traffic.source {
        TrafficSource::Prometheus => format!("{} req/s measured", traffic.requests_per_second),
        TrafficSource::Estimate => {
            ["~", itoa::Buffer::new().format(estimated_qps), " QPS"].concat()
        }
    };
    if let Some(first) = d.ingresses.first() {
        let more = match d.ingresses.len() {
            1 => String::new(),
            n => format!(" and {} more", n - 1),
        };
        add(
            w.ingress,
            &[
                "ingress ",
                first,
                &more,
                " reaches the target (",
                &rate,
                ")",
            ],
        );
    }
    if w.high_traffic > 0 && traffic.requests_per_second >= f64::from(w.high_traffic_at) {
        add(
            w.high_traffic,
            &[&format!("traffic {rate} >= {} req/s", w.high_traffic_at)],
        );
    }
    if !d.bound_volumes.is_empty() {
        let mut digits = itoa::Buffer::new();
        let volumes = digits.format(d.bound_volumes.len());
        add(w.bound_volumes, &[volumes, " bound volumes affected"]);
    }
    let namespace = match (target.namespace, target.is_namespace()) {
        ("", _) | (_, true) => "",
        (ns, false) => ns,
    };
    Impact {
        target: named(target, namespace, "/"),
        dependents: Arc::clone(&facts.dependents),
        estimated_qps,
        traffic,
    }
}

/// The namespace side of the protection: the higher of the protected namespace rules and (at
/// admission) the protection label on the namespace (for a Namespace target: its own label),
/// with the source giving it.
fn namespace_side(
    spec: &GuardSpec,
    target: &Target<'_>,
    facts: Option<&ObjectFacts>,
) -> Option<(Level, String)> {
    let mut side = Highest::default();
    side.offer(namespace_level(spec, target), || match target.namespace {
        "" => "protected namespaces".to_owned(),
        ns => format!("protected namespace {ns}"),
    });
    if let Some(l) = facts.and_then(|f| f.namespace_label.as_ref()) {
        side.offer(Some(l.level), || {
            format!(
                "label {}={} on namespace {}",
                label_key(spec),
                l.value,
                target.namespace
            )
        });
    }
    // A Namespace's own label is the label on the namespace: this side, not the object's, or
    // a rule naming the namespace and its label would count the same namespace twice.
    if target.is_namespace()
        && let Some(f) = facts
    {
        own_label(spec, f, &mut side, || {
            format!("namespace {}", target.namespace)
        });
    }
    side.0
}

/// The object side of the protection: the higher of the protected resource rules and (at
/// admission) the protection label on the object, or the stored level an UPDATE lowers; for a
/// Namespace's deletion, the highest protection label on the objects it holds.
fn object_side(
    spec: &GuardSpec,
    target: &Target<'_>,
    facts: Option<&ObjectFacts>,
) -> Option<(Level, String)> {
    let mut side = Highest::default();
    side.offer(resource_level(spec, target), || {
        format!("protected {}", kind(target))
    });
    if !target.is_namespace()
        && let Some(f) = facts
    {
        own_label(spec, f, &mut side, || kind(target));
    }
    if let Some(held) = facts.and_then(|f| f.held.as_ref()) {
        side.offer(Some(held.level()), || held.describe(label_key(spec)));
    }
    side.0
}

/// The target's own protection label (`on` names the target), or the stored level an UPDATE
/// lowers.
fn own_label(spec: &GuardSpec, f: &ObjectFacts, side: &mut Highest, on: impl Fn() -> String) {
    if let Some(t) = &f.tampering {
        side.offer(Some(t.from), || {
            format!("label {} lowered", label_key(spec))
        });
    }
    if let Some(l) = &f.label {
        side.offer(Some(l.level), || {
            ["label ", label_key(spec), "=", &l.value, " on ", &on()].concat()
        });
    }
}

/// The highest level offered, with the first source that gave it.
#[derive(Default)]
struct Highest(Option<(Level, String)>);

impl Highest {
    fn offer(&mut self, level: Option<Level>, source: impl FnOnce() -> String) {
        if let Some(l) = level
            && self.0.as_ref().is_none_or(|(best, _)| l > *best)
        {
            self.0 = Some((l, source()));
        }
    }
}

fn label_key(spec: &GuardSpec) -> &str {
    spec.objects.protection_label.as_deref().unwrap_or("")
}

/// The highest level of the protected namespace rules naming the target's namespace.
fn namespace_level(spec: &GuardSpec, target: &Target<'_>) -> Option<Level> {
    // A collection delete of Namespaces names none but may sweep every protected one, as a
    // collection delete of a kind is judged at the highest level of its rules.
    if target.is_namespace() && target.verb == "deletecollection" && target.namespace.is_empty() {
        return spec.namespaces.iter().map(|p| p.level).max();
    }
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
pub(super) fn resource_level(spec: &GuardSpec, target: &Target<'_>) -> Option<Level> {
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
    named(target, "", " ")
}

/// `[namespace/]resource[.group][<between>name]`. Reasons and the report are written on every
/// admission decision, so they are joined rather than formatted (`format!` cost several times
/// as much).
fn named(target: &Target<'_>, namespace: &str, between: &str) -> String {
    let (dot, group) = match target.group {
        "" => ("", ""),
        group => (".", group),
    };
    let slash = if namespace.is_empty() { "" } else { "/" };
    let between = if target.name.is_empty() { "" } else { between };
    [
        namespace,
        slash,
        target.resource,
        dot,
        group,
        between,
        target.name,
    ]
    .concat()
}

/// The level of a score.
pub(super) fn grade(score: u32, t: Thresholds) -> RiskLevel {
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
