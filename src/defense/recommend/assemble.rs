//! The recommendations of one history against one cluster: every object the history wrote or
//! the inventory holds, found in the cluster (the inventory, else [`Objects`]), scored by the
//! guard's risk model where it exists, judged by the [`rules`](super::rules), and kept when it
//! exists and is protected below the level proposed (its own label, its namespace's, or a
//! `protectedNamespaces`/`protectedResources` rule, as the guard reads them). Namespaces are
//! judged after their objects.

use super::history::{History, ObjectKey, Op};
use super::rules::{self, Activity, Proposal, Restore, Risk, Settings};
use crate::authorizer::BoxFuture;
use crate::authorizer::deletion_guard::rescore;
use crate::authorizer::deletion_guard::{GuardError, Level};
use crate::cluster::inventory::Inventoried;
use crate::config::model::guard::GuardSpec;
use crate::config::model::pattern;
use crate::defense::coverage::content_risk;
use crate::defense::label_patch::{self, PatchTarget};
use crate::object::{ClusterView, Subject, ViewError};
use chrono::{DateTime, Utc};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// What the cluster says of one object outside the inventory.
#[derive(Debug, Clone, PartialEq)]
pub enum Presence {
    /// It exists, as read.
    Found(Subject),
    /// It does not exist.
    Absent,
    /// The cluster cannot say (saved state of other kinds, no version in the history).
    Unknown,
}

/// Objects outside the inventory, read from the cluster.
pub trait Objects: Send + Sync {
    /// The object `key`, at API `version` (`""` when the history does not say).
    fn get<'a>(
        &'a self,
        key: &'a ObjectKey,
        version: &'a str,
    ) -> BoxFuture<'a, Result<Presence, ViewError>>;
}

/// No cluster beyond the inventory: every other object is [`Presence::Unknown`].
#[derive(Debug, Clone, Copy, Default)]
pub struct InventoryOnly;

impl Objects for InventoryOnly {
    fn get<'a>(
        &'a self,
        _: &'a ObjectKey,
        _: &'a str,
    ) -> BoxFuture<'a, Result<Presence, ViewError>> {
        Box::pin(async { Ok(Presence::Unknown) })
    }
}

/// What a recommendation is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Scope {
    /// A Namespace, labelled for everything inside.
    Namespace,
    /// One object.
    Object,
}

/// The facts behind a recommendation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Evidence {
    /// Its deletions undone by a creation within the window.
    pub restores: Vec<Restore>,
    /// Its deletions by principals the guard looks at.
    pub deletions: u32,
    /// Those not restored.
    pub routine_deletions: u32,
    /// The distinct principals that wrote it.
    pub writers: Vec<String>,
    /// The guard's risk model on its deletion, when it exists in the cluster.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub risk: Option<Risk>,
    /// For a namespace: the objects inside with a proposed level (`resource[.group]/name`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub objects: Vec<String>,
    /// Whether the cluster was read (`false`: it exists by the history alone).
    pub seen_in_cluster: bool,
}

/// One proposed protection level.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Recommendation {
    /// A namespace or one object.
    pub scope: Scope,
    /// API group (`""` core).
    pub group: String,
    /// API version (`""` when unknown).
    pub version: String,
    /// Plural resource.
    pub resource: String,
    /// Kind, when the cluster says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Namespace (`""` for a Namespace or a cluster-scoped object).
    pub namespace: String,
    /// Name.
    pub name: String,
    /// The level proposed.
    pub level: Level,
    /// The protection it has now, when it has any (its own or its namespace's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current: Option<Level>,
    /// Why, one line per rule.
    pub reasons: Vec<String>,
    /// The facts.
    pub evidence: Evidence,
}

/// The recommendations and what they were drawn from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// The earliest record read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<DateTime<Utc>>,
    /// The latest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<DateTime<Utc>>,
    /// Records read.
    pub records: u64,
    /// Writes found in them (each act once).
    pub writes: usize,
    /// Namespaces first, then objects; highest level first, then by place.
    pub recommendations: Vec<Recommendation>,
}

/// Where the cluster is read.
pub struct Cluster<'a> {
    /// The objects whose deletion can hurt, as `warrant coverage` reads them.
    pub inventory: Vec<Inventoried>,
    /// The view the risk model asks.
    pub view: Arc<dyn ClusterView>,
    /// Every other object.
    pub objects: &'a dyn Objects,
}

/// What a namespace holds: its own Namespace's key, the levels proposed for objects inside
/// (by `resource[.group]/name`), and the deletions inside that were not restored.
type Inside<'a> = (Option<&'a ObjectKey>, Vec<(String, Level)>, u32);

/// One object's place in the cluster, once read.
struct Known {
    subject: Option<Subject>,
    risk: Option<Risk>,
    current: Option<Level>,
}

/// Recommends protection levels from `history` against `cluster` at `now`.
pub async fn recommend(
    spec: &GuardSpec,
    history: &History,
    mut cluster: Cluster<'_>,
    now: DateTime<Utc>,
    settings: &Settings,
) -> Result<Report, GuardError> {
    let ignored = |user: &str, groups: &[String]| spec.excluded_principals.contains(user, groups);
    let activity = rules::activity(history, settings, ignored);
    let mut inventory: BTreeMap<ObjectKey, Subject> = BTreeMap::new();
    for item in std::mem::take(&mut cluster.inventory) {
        let key = ObjectKey {
            group: item.resource.group().to_owned(),
            resource: item.resource.plural().to_owned(),
            namespace: item.object.namespace().to_owned(),
            name: item.object.name().to_owned(),
        };
        inventory.insert(key, item.object);
    }
    let keys: BTreeSet<&ObjectKey> = activity.keys().chain(inventory.keys()).collect();
    let mut objects = Vec::new();
    let mut namespaces: BTreeMap<String, Inside<'_>> = BTreeMap::new();
    for key in keys {
        if pattern::any(&spec.excluded_namespaces, key.home()) {
            continue;
        }
        let a = activity.get(key);
        if let Some(a) = a
            && !key.home().is_empty()
        {
            let entry = namespaces.entry(key.home().to_owned()).or_default();
            if !key.is_namespace() {
                entry.2 += a.routine_deletions;
            }
        }
        if key.is_namespace() {
            namespaces.entry(key.name.clone()).or_default().0 = Some(key);
            continue;
        }
        let Some((known, proposal)) =
            judge(spec, key, a, &inventory, &cluster, now, settings).await?
        else {
            continue;
        };
        if !key.namespace.is_empty() {
            let name = match key.group.as_str() {
                "" => format!("{}/{}", key.resource, key.name),
                g => format!("{}.{g}/{}", key.resource, key.name),
            };
            namespaces
                .entry(key.namespace.clone())
                .or_default()
                .1
                .push((name, proposal.level));
        }
        if known.current >= Some(proposal.level) {
            continue;
        }
        objects.push(recommendation(
            Scope::Object,
            key,
            a,
            known,
            proposal,
            Vec::new(),
        ));
    }
    let mut out = Vec::new();
    for (name, (own, inside, routine)) in namespaces {
        let key = own.cloned().unwrap_or_else(|| ObjectKey {
            group: String::new(),
            resource: "namespaces".into(),
            namespace: String::new(),
            name,
        });
        let a = activity.get(&key);
        let judged = judge(spec, &key, a, &inventory, &cluster, now, settings).await?;
        let (known, own) = match judged {
            Some((known, p)) => (Some(known), Some(p)),
            None => (None, None),
        };
        let Some(proposal) = rules::namespace(own, &inside, routine, settings) else {
            continue;
        };
        let known = match known {
            Some(k) => k,
            None => match find(spec, &key, a, &inventory, &cluster, now).await? {
                Some(k) => k,
                None => continue,
            },
        };
        if known.current >= Some(proposal.level) {
            continue;
        }
        let listed = if inside.len() >= settings.namespace_min_objects {
            inside.into_iter().map(|(n, _)| n).collect()
        } else {
            Vec::new()
        };
        out.push(recommendation(
            Scope::Namespace,
            &key,
            a,
            known,
            proposal,
            listed,
        ));
    }
    out.extend(objects);
    out.sort_by(|a, b| {
        (
            a.scope,
            std::cmp::Reverse(a.level),
            &a.namespace,
            &a.name,
            &a.resource,
        )
            .cmp(&(
                b.scope,
                std::cmp::Reverse(b.level),
                &b.namespace,
                &b.name,
                &b.resource,
            ))
    });
    Ok(Report {
        from: history.from,
        to: history.to,
        records: history.records,
        writes: history.writes.len(),
        recommendations: out,
    })
}

/// The object found and its proposal, when it exists and the rules give it a level.
async fn judge(
    spec: &GuardSpec,
    key: &ObjectKey,
    a: Option<&Activity>,
    inventory: &BTreeMap<ObjectKey, Subject>,
    cluster: &Cluster<'_>,
    now: DateTime<Utc>,
    settings: &Settings,
) -> Result<Option<(Known, Proposal)>, GuardError> {
    // Without a risk the history alone must propose something, or the object is not read.
    if !inventory.contains_key(key) && rules::object(a, None, settings).is_none() {
        return Ok(None);
    }
    let Some(known) = find(spec, key, a, inventory, cluster, now).await? else {
        return Ok(None);
    };
    let proposal = rules::object(a, known.risk.as_ref(), settings);
    Ok(proposal.map(|p| (known, p)))
}

/// The object as the cluster (or, when it cannot say, the history) has it; `None` when it is
/// gone.
async fn find(
    spec: &GuardSpec,
    key: &ObjectKey,
    a: Option<&Activity>,
    inventory: &BTreeMap<ObjectKey, Subject>,
    cluster: &Cluster<'_>,
    now: DateTime<Utc>,
) -> Result<Option<Known>, GuardError> {
    let presence = match inventory.get(key) {
        Some(s) => Presence::Found(s.clone()),
        None => {
            let version = a.map(|a| a.version.as_str()).unwrap_or("");
            cluster
                .objects
                .get(key, version)
                .await
                .map_err(GuardError::Cluster)?
        }
    };
    let subject = match presence {
        Presence::Found(s) => s,
        Presence::Absent => return Ok(None),
        Presence::Unknown => {
            let gone = a.is_none_or(|a| a.last == Some(Op::Delete));
            return Ok((!gone).then_some(Known {
                subject: None,
                risk: None,
                current: None,
            }));
        }
    };
    let risk = content_risk(
        spec,
        &key.group,
        &key.resource,
        &subject,
        cluster.view.clone(),
        now,
    )
    .await?;
    let current = if key.is_namespace() {
        rescore::object_protection(spec, &key.group, &key.resource, &subject)
    } else {
        risk.protection
    };
    Ok(Some(Known {
        subject: Some(subject),
        risk: Some(Risk {
            score: risk.score,
            level: risk.level,
            reasons: risk.reasons,
        }),
        current,
    }))
}

fn recommendation(
    scope: Scope,
    key: &ObjectKey,
    a: Option<&Activity>,
    known: Known,
    proposal: Proposal,
    objects: Vec<String>,
) -> Recommendation {
    let empty = Activity::default();
    let a = a.unwrap_or(&empty);
    let kind = known
        .subject
        .as_ref()
        .map(|s| s.kind().to_owned())
        .filter(|k| !k.is_empty());
    let version = known
        .subject
        .as_ref()
        .and_then(|s| s.json().get("apiVersion")?.as_str())
        .map(|v| v.rsplit('/').next().unwrap_or(v).to_owned())
        .unwrap_or_else(|| a.version.clone());
    Recommendation {
        scope,
        group: key.group.clone(),
        version,
        resource: key.resource.clone(),
        kind,
        namespace: key.namespace.clone(),
        name: key.name.clone(),
        level: proposal.level,
        current: known.current,
        reasons: proposal.reasons,
        evidence: Evidence {
            restores: a.restores.clone(),
            deletions: a.deletions,
            routine_deletions: a.routine_deletions,
            writers: a.writers.iter().cloned().collect(),
            seen_in_cluster: known.subject.is_some(),
            risk: known.risk,
            objects,
        },
    }
}

impl Recommendation {
    /// The object carrying `label_key` at the proposed level, as a partial object to apply
    /// server-side; `None` when the kind is unknown.
    pub fn patch(&self, label_key: &str) -> Option<serde_json::Value> {
        let kind = self.kind.as_deref()?;
        let api_version = label_patch::api_version(&self.group, &self.version);
        let target = PatchTarget {
            api_version: &api_version,
            kind,
            namespace: &self.namespace,
            name: &self.name,
        };
        Some(label_patch::document(target, label_key, self.level))
    }
}
