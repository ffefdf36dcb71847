//! What the validation ring learns at admission beyond the review: the protection label on the
//! object and on its namespace (for a Namespace's deletion, also the highest one on the objects
//! it holds), the ticket annotated on the object, what depends on the object
//! (from the [`ClusterView`]), whether deleting it cascades, and, for an UPDATE, whether it
//! lowers or removes the protection label (tampering). Gathered once per admission request,
//! before the risk is scored; an unanswerable view is a [`GuardError`].

use super::error::GuardError;
use super::scope::Target;
use crate::config::model::guard::{GuardSpec, Level};
use crate::object::{
    ClusterView, Dependents, LabelValues, MAX_LABEL_VALUES, ObjectContext, ObjectRef, Operation,
    Subject,
};
use std::collections::BTreeMap;
use std::sync::Arc;

/// What the validation ring learned about one object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct ObjectFacts {
    /// The protection label's level on the object (for an UPDATE: on the stored object).
    pub(super) label: Option<LabelLevel>,
    /// The protection label's level on the object's namespace.
    pub(super) namespace_label: Option<LabelLevel>,
    /// For a Namespace's deletion: the highest protection label on the objects it holds.
    pub(super) held: Option<Held>,
    /// What depends on the object (shared with the risk's impact, which the report then
    /// takes: its name lists are not copied).
    pub(super) dependents: Arc<Dependents>,
    /// The ticket id annotated on the object.
    pub(super) annotated_ticket: Option<String>,
    /// Why deleting the object takes more with it, when `cascadeProtection` is on and it does.
    pub(super) cascade: Option<String>,
    /// For an UPDATE: the protection it lowers, when it does.
    pub(super) tampering: Option<Tampering>,
    /// For an UPDATE: it removes the buffer's finalizer (set by the pipeline, which reads the
    /// buffer settings).
    pub(super) finalizer_removed: bool,
    /// A dry run (spends no rate-limit token).
    pub(super) dry_run: bool,
    /// The stored object's uid (`""` when unknown).
    pub(super) uid: String,
    /// The stored object's labels, which a ticket's label selector is matched against (none:
    /// no stored object, or no labels).
    pub(super) labels: Option<Arc<BTreeMap<String, String>>>,
    /// What the live traffic source said of the target (set by the pipeline, which owns the
    /// source), when it covers the target's kind.
    pub(super) live_traffic: Option<super::traffic::Measured>,
}

/// No labels (what an object without any, or no object, has).
static NO_LABELS: BTreeMap<String, String> = BTreeMap::new();

impl ObjectFacts {
    /// The stored object's labels (empty when none).
    pub(super) fn labels(&self) -> &BTreeMap<String, String> {
        self.labels.as_deref().unwrap_or(&NO_LABELS)
    }
}

/// A protection label as read: its level and the value written (unknown values read as
/// `standard`, and the value is kept for the report).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct LabelLevel {
    /// The level it gives.
    pub(super) level: Level,
    /// The label value as written.
    pub(super) value: String,
}

/// The highest protection label among the objects a Namespace holds (its workloads, Services,
/// Ingresses, claims and running pods), which its deletion takes with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Held {
    /// The first object carrying the highest level, and how many objects carry that value.
    Labelled {
        /// The level and the value written.
        label: LabelLevel,
        /// `resource[.group]/name`.
        object: String,
        /// How many objects carry the same value.
        count: u32,
    },
    /// More distinct label values than the view lists: not all could be read, so the contents
    /// are judged at the highest level (never lower than what is there).
    TooMany,
}

impl Held {
    /// The level it gives.
    pub(super) fn level(&self) -> Level {
        match self {
            Held::Labelled { label, .. } => label.level,
            Held::TooMany => Level::Critical,
        }
    }

    /// Why, as a reason names it (`namespace holds deployments.apps/checkout labelled k=v`).
    pub(super) fn describe(&self, key: &str) -> String {
        match self {
            Held::Labelled {
                label,
                object,
                count,
            } => {
                let more = match count {
                    0 | 1 => String::new(),
                    n => format!(" and {} more", n - 1),
                };
                format!(
                    "namespace holds {object}{more} labelled {key}={}",
                    label.value
                )
            }
            Held::TooMany => format!(
                "namespace holds objects with more than {MAX_LABEL_VALUES} values of label {key} (not all read)"
            ),
        }
    }
}

/// The highest protection level among `found` (the first value giving it, in value order).
fn highest_held(found: LabelValues) -> Option<Held> {
    if found.truncated {
        return Some(Held::TooMany);
    }
    let mut best: Option<Held> = None;
    for v in found.values {
        let label = read_level(&v.value);
        if best.as_ref().is_none_or(|b| label.level > b.level()) {
            best = Some(Held::Labelled {
                label,
                object: v.object,
                count: v.count,
            });
        }
    }
    best
}

/// An UPDATE that lowers or removes the protection label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Tampering {
    /// The stored level.
    pub(super) from: Level,
    /// The level after the update (`None`: removed).
    pub(super) to: Option<Level>,
}

/// Gathers the facts of an admission request (the pipeline has decided it is the validation
/// ring's business).
pub(super) async fn gather(
    spec: &GuardSpec,
    ctx: &ObjectContext,
    target: &Target<'_>,
) -> Result<ObjectFacts, GuardError> {
    let key = spec.objects.protection_label.as_deref();
    let stored = ctx.old_object.as_ref();
    let tampering = match ctx.operation {
        Operation::Delete => None,
        Operation::Update => key.and_then(|k| lowered(k, stored, ctx.object.as_ref())),
    };
    let view = ctx.view.as_ref();
    view.ready().map_err(GuardError::Cluster)?;
    let label = key.and_then(|k| label_level(stored?, k));
    let namespace_label = match key {
        Some(k) if !target.is_namespace() && !target.namespace.is_empty() => view
            .namespace_label(target.namespace, k)
            .map_err(GuardError::Cluster)?
            .map(|v| read_level(&v)),
        _ => None,
    };
    let held = match key {
        Some(k) if target.is_namespace() && ctx.operation == Operation::Delete => view
            .labelled_inside(target.name, k)
            .map(highest_held)
            .map_err(GuardError::Cluster)?,
        _ => None,
    };
    let object_ref = ObjectRef {
        group: target.group,
        resource: target.resource,
        namespace: target.namespace,
        name: target.name,
    };
    let dependents = view
        .dependents(&object_ref, stored)
        .map_err(GuardError::Cluster)?;
    let annotated_ticket = spec
        .objects
        .ticket_annotation
        .as_deref()
        .and_then(|k| ctx.object.as_ref().or(stored)?.annotation(k))
        .filter(|v| !v.is_empty())
        .map(str::to_owned);
    let cascade = match (spec.objects.cascade, ctx.operation) {
        (true, Operation::Delete) => cascade(view, target, stored, &dependents).await?,
        _ => None,
    };
    Ok(ObjectFacts {
        label,
        namespace_label,
        held,
        dependents: Arc::new(dependents),
        annotated_ticket,
        cascade,
        tampering,
        finalizer_removed: false,
        dry_run: ctx.dry_run,
        uid: stored.map(|s| s.uid().to_owned()).unwrap_or_default(),
        labels: stored.and_then(Subject::shared_labels),
        live_traffic: None,
    })
}

/// Whether an UPDATE lowers or removes the protection label (what the validation ring judges of
/// an update; nothing else about it is its business).
pub(super) fn lowers_label(spec: &GuardSpec, ctx: &ObjectContext) -> bool {
    spec.objects
        .protection_label
        .as_deref()
        .and_then(|k| lowered(k, ctx.old_object.as_ref(), ctx.object.as_ref()))
        .is_some()
}

/// The protection an UPDATE lowers: the stored label's level when the new object carries a
/// lower one or none.
fn lowered(key: &str, stored: Option<&Subject>, new: Option<&Subject>) -> Option<Tampering> {
    let from = label_level(stored?, key)?.level;
    let to = new.and_then(|n| label_level(n, key)).map(|l| l.level);
    (to < Some(from)).then_some(Tampering { from, to })
}

fn label_level(object: &Subject, key: &str) -> Option<LabelLevel> {
    object.label(key).map(read_level)
}

/// A label value's level, by the one rule ([`Level::of_label`]).
pub(super) fn read_level(value: &str) -> LabelLevel {
    LabelLevel {
        level: Level::of_label(value),
        value: value.to_owned(),
    }
}

/// Why deleting the target cascades: a Namespace still holding running pods, a
/// CustomResourceDefinition whose objects still exist, a workload with replicas above zero.
async fn cascade(
    view: &dyn ClusterView,
    target: &Target<'_>,
    stored: Option<&Subject>,
    dependents: &Dependents,
) -> Result<Option<String>, GuardError> {
    if target.is_namespace() && dependents.running_pods > 0 {
        return Ok(Some(format!(
            "namespace {} still holds {} running pods",
            target.name, dependents.running_pods
        )));
    }
    let is_crd =
        target.group == "apiextensions.k8s.io" && target.resource == "customresourcedefinitions";
    if let (true, Some(crd)) = (is_crd, stored) {
        let remaining = view
            .remaining_objects(crd)
            .await
            .map_err(GuardError::Cluster)?;
        if remaining > 0 {
            return Ok(Some(format!(
                "custom resource definition {} still has objects",
                target.name
            )));
        }
    }
    if let Some(r) = stored.and_then(Subject::replicas) {
        return Ok(
            (r > 0).then(|| format!("{} {} still has {r} replicas", target.resource, target.name))
        );
    }
    // A workload without replicas (a DaemonSet, a Job) cascades onto the pods it runs.
    let workload = matches!(target.group, "apps" | "batch");
    Ok((workload && dependents.running_pods > 0).then(|| {
        format!(
            "{} {} still runs {} pods",
            target.resource, target.name, dependents.running_pods
        )
    }))
}
