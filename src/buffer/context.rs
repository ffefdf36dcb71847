//! [`Context`]: what one kind's controller needs (the guard's settings, the resolved kind, the
//! clients, the audit writer, the metrics, leadership), and the reads every step makes of an
//! object's metadata.

use super::decide::Observed;
use super::metrics::BufferMetrics;
use super::notify::Notifier;
use super::record::{BufferRecord, ObjectId, rfc3339};
use crate::authorizer::deletion_guard::rescore;
use crate::config::model::buffer::BufferSettings;
use crate::config::model::guard::GuardSpec;
use crate::object::{ClusterView, Subject};
use crate::reload::LiveChain;
use crate::telemetry::audit::{AuditSink, DecisionId, JoinKey, new_record_id};
use chrono::{DateTime, Utc};
use kube::api::{Api, DynamicObject, ObjectMeta};
use kube::discovery::ApiResource;
use kube::runtime::events::Recorder;
use std::sync::Arc;
use tokio::sync::watch;

/// One guard's buffer ring over one kind.
pub struct Context {
    /// The DeletionGuard entry's name.
    pub guard: String,
    /// Its settings (the risk model's input).
    pub spec: Arc<GuardSpec>,
    /// Its `buffer` block.
    pub settings: BufferSettings,
    /// The kind, as discovered.
    pub resource: ApiResource,
    /// The cluster client.
    pub client: kube::Client,
    /// Dependents of an object (the cluster cache).
    pub view: Arc<dyn ClusterView>,
    /// The audit writer.
    pub audit: Arc<AuditSink>,
    /// The served configuration (its revision goes on every record).
    pub live: Arc<LiveChain>,
    /// The metrics.
    pub metrics: BufferMetrics,
    /// Publishes Events.
    pub(crate) recorder: Arc<Recorder>,
    /// The notification receivers.
    pub(crate) notifier: Notifier,
    /// True while this replica leads.
    pub leader: watch::Receiver<bool>,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("guard", &self.guard)
            .field("resource", &self.resource)
            .finish_non_exhaustive()
    }
}

impl Context {
    /// The API of the object `meta` describes (namespaced when it has a namespace).
    pub fn api(&self, meta: &ObjectMeta) -> Api<DynamicObject> {
        api_for(&self.client, &self.resource, meta)
    }

    /// Whether this replica leads now.
    pub(crate) fn leading(&self) -> bool {
        *self.leader.borrow()
    }

    /// What the controller sees of an object.
    pub fn observe(&self, meta: &ObjectMeta) -> Observed {
        let s = &self.settings;
        let level = rescore::object_protection(
            &self.spec,
            &self.resource.group,
            &self.resource.plural,
            &metadata_subject(meta),
        );
        Observed {
            has_finalizer: meta
                .finalizers
                .as_deref()
                .is_some_and(|l| l.contains(&s.finalizer)),
            protected: super::decide::protects(level, s, self.spec.mode),
            deletion: meta
                .deletion_timestamp
                .as_ref()
                .and_then(|t| chrono_time(&t.0)),
            confirmed: annotation(meta, &s.confirmation_annotation).is_some(),
        }
    }

    /// The object an audit record is about.
    pub fn id<'a>(&'a self, meta: &'a ObjectMeta) -> ObjectId<'a> {
        ObjectId {
            api_version: &self.resource.api_version,
            kind: &self.resource.kind,
            namespace: meta.namespace.as_deref().unwrap_or(""),
            name: meta.name.as_deref().unwrap_or(""),
            uid: meta.uid.as_deref().unwrap_or(""),
        }
    }

    /// An audit record about the object, with no deletion details yet.
    pub fn record<'a>(
        &'a self,
        meta: &'a ObjectMeta,
        code: &'static str,
        message: String,
    ) -> BufferRecord<'a> {
        BufferRecord {
            id: new_record_id(),
            decision_id: None,
            time: rfc3339(chrono::Utc::now()),
            stage: "buffer",
            code,
            guard: &self.guard,
            object: self.id(meta),
            finalizer: &self.settings.finalizer,
            message,
            deletion_timestamp: None,
            cooldown_ends: None,
            max_hold_ends: None,
            require_confirmation: false,
            requested_by: None,
            confirmed_by_ticket: None,
            risk: None,
            snapshot: None,
            config_hash: self.live.load().map(|a| a.source.hash.clone()),
        }
    }

    /// The decision id of the deletion of the object `meta` describes ([`deletion_decision_id`]).
    pub(crate) fn decision_id(
        &self,
        meta: &ObjectMeta,
        at: DateTime<Utc>,
        requester: Option<&str>,
    ) -> Option<DecisionId> {
        deletion_decision_id(&self.resource, meta, at, requester)
    }

    /// `resource[.group] [namespace/]name`, as logs name an object.
    pub(crate) fn describe(&self, meta: &ObjectMeta) -> String {
        let kind = match self.resource.group.as_str() {
            "" => self.resource.plural.clone(),
            g => format!("{}.{g}", self.resource.plural),
        };
        match (
            meta.namespace.as_deref(),
            meta.name.as_deref().unwrap_or(""),
        ) {
            (Some(ns), name) if !ns.is_empty() => format!("{kind} {ns}/{name}"),
            (_, name) => format!("{kind} {name}"),
        }
    }
}

/// The decision id of the deletion of the object `meta` (of kind `resource`) describes,
/// marked at `at` (its `deletionTimestamp`) for `requester` (the requester annotation): the id
/// the authorization and validation rings derived for that DELETE. `None` without a requester.
pub(crate) fn deletion_decision_id(
    resource: &ApiResource,
    meta: &ObjectMeta,
    at: DateTime<Utc>,
    requester: Option<&str>,
) -> Option<DecisionId> {
    let user = requester?;
    let namespace = meta.namespace.as_deref().unwrap_or("");
    let name = meta.name.as_deref().unwrap_or("");
    // A Namespace's authorization and admission attributes name it as their namespace too
    // (kube-apiserver's request info does, and so does the admission mapping).
    let namespace = match (resource.group.as_str(), resource.plural.as_str()) {
        ("", "namespaces") if namespace.is_empty() => name,
        _ => namespace,
    };
    Some(DecisionId::derive(&JoinKey {
        operation: "DELETE",
        group: &resource.group,
        resource: &resource.plural,
        subresource: "",
        namespace,
        name,
        user,
        at,
    }))
}

/// The API of the object `meta` describes, of kind `resource` (namespaced when it has a
/// namespace).
pub(crate) fn api_for(
    client: &kube::Client,
    resource: &ApiResource,
    meta: &ObjectMeta,
) -> Api<DynamicObject> {
    match meta.namespace.as_deref() {
        Some(ns) if !ns.is_empty() => Api::namespaced_with(client.clone(), ns, resource),
        _ => Api::all_with(client.clone(), resource),
    }
}

/// The value of annotation `key`, when set and not empty.
pub fn annotation<'a>(meta: &'a ObjectMeta, key: &str) -> Option<&'a str> {
    meta.annotations
        .as_ref()?
        .get(key)
        .map(String::as_str)
        .filter(|v| !v.is_empty())
}

/// The object's metadata as a [`Subject`] (what the protection rule reads: name, namespace,
/// labels).
fn metadata_subject(meta: &ObjectMeta) -> Subject {
    Subject::new(serde_json::json!({ "metadata": {
        "name": meta.name, "namespace": meta.namespace, "labels": meta.labels,
    }}))
}

/// A Kubernetes time as chrono's.
pub(crate) fn chrono_time(t: &k8s_openapi::jiff::Timestamp) -> Option<DateTime<Utc>> {
    let nanos = u32::try_from(t.subsec_nanosecond()).ok()?;
    DateTime::from_timestamp(t.as_second(), nanos)
}
