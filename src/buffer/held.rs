//! The held deletions as a person sees them (`warrant holds`, `kubectl warrant holds`): read
//! with the person's own credentials from what the buffer ring records on the objects
//! themselves (its finalizer, `deletionTimestamp`, the requester and confirmation annotations),
//! and what each waits for, by the same pure policy the controller runs
//! ([`super::decide::deleting`]). The risk is not re-computed: a held object is taken as
//! CRITICAL (an object below it is released at the controller's next look, and shows here as
//! `release` until then).

use super::context::{annotation, chrono_time};
use super::decide::{self, Deleting, Waiting};
use super::kinds;
use crate::cluster::target::resource_name;
use crate::config::model::buffer::BufferSettings;
use chrono::{DateTime, SecondsFormat, Utc};
use kube::api::{Api, DynamicObject, ListParams, ObjectMeta};
use kube::discovery::{ApiResource, Scope};
use serde::Serialize;

/// One held deletion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Held {
    /// `resource[.group]` (`statefulsets.apps`).
    pub resource: String,
    /// The namespace (`""` for a cluster-scoped object).
    pub namespace: String,
    /// The name.
    pub name: String,
    /// Who asked for the deletion (the requester annotation), when recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requested_by: Option<String>,
    /// When the deletion was asked for (`deletionTimestamp`), RFC 3339.
    pub deleted_at: String,
    /// What it waits for: `cooldown`, `confirmation`, or `release` (nothing: the controller
    /// removes the finalizer at its next look).
    pub waiting: &'static str,
    /// The earliest it goes (the cool-down's end), RFC 3339.
    pub cooldown_ends: String,
    /// The latest it goes (`maxHold`), RFC 3339.
    pub max_hold_ends: String,
    /// Seconds until the next step: the cool-down's end, or while it waits for a confirmation,
    /// `maxHold`'s; 0 when due.
    pub seconds_left: i64,
    /// Whether a confirmation is required.
    pub require_confirmation: bool,
    /// The confirmation annotation's value (a ticket id), when set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confirmed_with: Option<String>,
}

/// The held deletion an object's metadata shows under `settings` at `now`: `None` unless it
/// carries the finalizer and is Terminating.
pub fn held(
    meta: &ObjectMeta,
    resource: &str,
    settings: &BufferSettings,
    now: DateTime<Utc>,
) -> Option<Held> {
    let finalized = meta
        .finalizers
        .as_deref()
        .is_some_and(|f| f.contains(&settings.finalizer));
    let at = meta
        .deletion_timestamp
        .as_ref()
        .and_then(|t| chrono_time(&t.0))
        .filter(|_| finalized)?;
    let confirmed_with = annotation(meta, settings.confirmation_annotation()).map(str::to_owned);
    let cooldown_ends =
        decide::after(at, settings.cooldown).min(decide::after(at, settings.max_hold()));
    let max_hold_ends = decide::after(at, settings.max_hold());
    let (waiting, next) = match decide::deleting(at, confirmed_with.is_some(), None, now, settings)
    {
        Deleting::Hold {
            waiting: Waiting::Cooldown,
            next,
            ..
        } => ("cooldown", next),
        Deleting::Hold {
            waiting: Waiting::Confirmation,
            next,
            ..
        } => ("confirmation", next),
        Deleting::Release(_) => ("release", now),
    };
    Some(Held {
        resource: resource.to_owned(),
        namespace: meta.namespace.clone().unwrap_or_default(),
        name: meta.name.clone().unwrap_or_default(),
        requested_by: annotation(meta, settings.requester_annotation()).map(str::to_owned),
        deleted_at: rfc3339(at),
        waiting,
        cooldown_ends: rfc3339(cooldown_ends),
        max_hold_ends: rfc3339(max_hold_ends),
        seconds_left: (next - now).num_seconds().max(0),
        require_confirmation: settings.require_confirmation(),
        confirmed_with,
    })
}

fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// What [`list`] found: the held deletions, oldest first, and a warning for each kind that
/// could not be read (not served, or not listable with these credentials).
#[derive(Debug, Default)]
pub struct HeldList {
    /// The held deletions.
    pub held: Vec<Held>,
    /// One line per kind that could not be read.
    pub warnings: Vec<String>,
}

/// Lists the held deletions of the buffer's kinds in `namespace` (every namespace when
/// `None`; cluster-scoped kinds, such as Namespaces, only then).
pub async fn list(
    client: &kube::Client,
    settings: &BufferSettings,
    namespace: Option<&str>,
    now: DateTime<Utc>,
) -> HeldList {
    let mut out = HeldList::default();
    for kind in &settings.resources {
        let resource = match kinds::resolve(client, kind).await {
            Ok(r) => r,
            Err(e) => {
                out.warnings.push(e.to_string());
                continue;
            }
        };
        let namespaced = namespaced(client, &resource).await;
        let api: Api<DynamicObject> = match (namespace, namespaced) {
            (Some(ns), true) => Api::namespaced_with(client.clone(), ns, &resource),
            (Some(_), false) => continue,
            (None, _) => Api::all_with(client.clone(), &resource),
        };
        match api.list_metadata(&ListParams::default()).await {
            Ok(list) => {
                let name = resource_name(&resource);
                out.held.extend(
                    list.items
                        .iter()
                        .filter_map(|o| held(&o.metadata, &name, settings, now)),
                );
            }
            Err(e) => out.warnings.push(format!(
                "cannot list {}: {}",
                resource_name(&resource),
                crate::cluster::api_error::describe(&e)
            )),
        }
    }
    out.held.sort_by(|a, b| {
        (&a.deleted_at, &a.namespace, &a.name).cmp(&(&b.deleted_at, &b.namespace, &b.name))
    });
    out
}

/// Whether the resource is namespaced (by discovery; Namespaces and other cluster-scoped kinds
/// of the defaults are not).
async fn namespaced(client: &kube::Client, resource: &ApiResource) -> bool {
    match kube::discovery::group(client, &resource.group).await {
        Ok(g) => g
            .recommended_resources()
            .iter()
            .find(|(ar, _)| ar.plural == resource.plural)
            .is_none_or(|(_, caps)| caps.scope == Scope::Namespaced),
        Err(_) => resource.plural != "namespaces",
    }
}

#[cfg(test)]
mod tests {
    use super::held;
    use crate::config::model::buffer::BufferSettings;
    use chrono::{DateTime, Utc};
    use kube::api::ObjectMeta;
    use std::collections::BTreeMap;

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    fn meta(deleting: bool, annotations: &[(&str, &str)]) -> ObjectMeta {
        serde_json::from_value(serde_json::json!({
            "name": "orders-db", "namespace": "shop",
            "finalizers": ["warrant.dev/deletion-cooldown"],
            "deletionTimestamp": deleting.then_some("2026-12-04T10:00:00Z"),
            "annotations": annotations.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect::<BTreeMap<_, _>>(),
        }))
        .unwrap()
    }

    #[test]
    fn a_terminating_finalized_object_is_held_with_its_time_left() {
        let s = BufferSettings::default();
        let m = meta(true, &[("warrant.dev/deletion-requested-by", "alice")]);
        let h = held(&m, "statefulsets.apps", &s, at("2026-12-04T10:04:00Z")).unwrap();
        assert_eq!(h.waiting, "cooldown");
        assert_eq!(h.seconds_left, 360);
        assert_eq!(h.requested_by.as_deref(), Some("alice"));
        assert_eq!(h.cooldown_ends, "2026-12-04T10:10:00Z");
        assert_eq!(h.max_hold_ends, "2026-12-05T10:00:00Z");
        let h = held(&m, "statefulsets.apps", &s, at("2026-12-04T10:11:00Z")).unwrap();
        assert_eq!((h.waiting, h.seconds_left), ("release", 0));
    }

    #[test]
    fn with_confirmation_required_it_waits_for_one_until_max_hold() {
        let s = BufferSettings {
            require_confirmation: true,
            ..BufferSettings::default()
        };
        let m = meta(true, &[]);
        let h = held(&m, "statefulsets.apps", &s, at("2026-12-04T10:20:00Z")).unwrap();
        assert_eq!(h.waiting, "confirmation");
        assert_eq!(h.seconds_left, 24 * 3600 - 20 * 60);
        let m = meta(true, &[("warrant.dev/deletion-confirmed", "shop/ok")]);
        let h = held(&m, "statefulsets.apps", &s, at("2026-12-04T10:20:00Z")).unwrap();
        assert_eq!(
            (h.waiting, h.confirmed_with.as_deref()),
            ("release", Some("shop/ok"))
        );
    }

    #[test]
    fn the_defaults_are_an_empty_buffer_block() {
        let yaml = "apiVersion: warrant.dev/v1alpha1\nkind: AuthorizationConfiguration\nauthorizers:\n  - type: DeletionGuard\n    name: g\n    guard:\n      protectionLabel: example.com/protection\n      buffer: {}\n";
        let loaded = crate::config::parse("w.yaml", yaml.as_bytes()).unwrap();
        let (_, spec) = loaded.config.deletion_guards().next().unwrap();
        assert_eq!(spec.buffer.as_ref(), Some(&BufferSettings::default()));
    }

    #[test]
    fn a_live_or_unfinalized_object_is_not_held() {
        let s = BufferSettings::default();
        assert!(held(&meta(false, &[]), "x", &s, Utc::now()).is_none());
        let mut m = meta(true, &[]);
        m.finalizers = Some(vec!["other".into()]);
        assert!(held(&m, "x", &s, Utc::now()).is_none());
    }
}
