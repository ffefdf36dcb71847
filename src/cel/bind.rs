//! The review as CEL sees it: the v1 spec turned into a map with kube-apiserver's presence
//! rules (`convertObjectToUnstructured` in `k8s.io/apiserver/pkg/authorization/cel/compile.go`):
//! `user`, `uid`, `groups` and `extra` always present; `resourceAttributes` or
//! `nonResourceAttributes` only when set, with every scalar key inside present; a selector only
//! when the expressions use it and it has requirements or a raw selector (a raw selector
//! replaces the requirements, as upstream does).

use cel::Value;
use cel::objects::{Key, Map};
use k8s_openapi::api::authorization::v1::{ResourceAttributes, SubjectAccessReviewSpec};
use std::collections::HashMap;
use std::sync::Arc;

/// Which selectors the bound value carries; upstream adds them only when an expression names
/// them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SelectorUse {
    /// Some expression selects `fieldSelector`.
    pub field: bool,
    /// Some expression selects `labelSelector`.
    pub label: bool,
}

impl SelectorUse {
    /// Either expression set's use.
    pub fn union(self, other: SelectorUse) -> SelectorUse {
        SelectorUse {
            field: self.field || other.field,
            label: self.label || other.label,
        }
    }
}

fn key(s: &str) -> Key {
    Key::String(Arc::new(s.to_owned()))
}

fn string(s: &Option<String>) -> Value {
    Value::String(Arc::new(s.clone().unwrap_or_default()))
}

fn strings(items: &[String]) -> Value {
    Value::List(Arc::new(
        items
            .iter()
            .map(|s| Value::String(Arc::new(s.clone())))
            .collect(),
    ))
}

fn map(entries: Vec<(&str, Value)>) -> Value {
    let map: HashMap<Key, Value> = entries.into_iter().map(|(k, v)| (key(k), v)).collect();
    Value::Map(Map { map: Arc::new(map) })
}

/// The `request` value for `spec`.
pub fn request(spec: &SubjectAccessReviewSpec, selectors: SelectorUse) -> Value {
    let extra: HashMap<Key, Value> = spec
        .extra
        .iter()
        .flatten()
        .map(|(k, v)| (key(k), strings(v)))
        .collect();
    let mut entries = vec![
        ("user", string(&spec.user)),
        (
            "groups",
            strings(spec.groups.as_deref().unwrap_or_default()),
        ),
        ("uid", string(&spec.uid)),
        (
            "extra",
            Value::Map(Map {
                map: Arc::new(extra),
            }),
        ),
    ];
    if let Some(ra) = &spec.resource_attributes {
        entries.push(("resourceAttributes", resource_attributes(ra, selectors)));
    }
    if let Some(nra) = &spec.non_resource_attributes {
        entries.push((
            "nonResourceAttributes",
            map(vec![
                ("verb", string(&nra.verb)),
                ("path", string(&nra.path)),
            ]),
        ));
    }
    map(entries)
}

fn resource_attributes(ra: &ResourceAttributes, selectors: SelectorUse) -> Value {
    let mut entries = vec![
        ("namespace", string(&ra.namespace)),
        ("verb", string(&ra.verb)),
        ("group", string(&ra.group)),
        ("version", string(&ra.version)),
        ("resource", string(&ra.resource)),
        ("subresource", string(&ra.subresource)),
        ("name", string(&ra.name)),
    ];
    if selectors.field
        && let Some(fs) = &ra.field_selector
        && let Some(v) = selector(
            fs.raw_selector.as_deref(),
            fs.requirements.iter().flatten().map(|r| {
                (
                    r.key.as_str(),
                    r.operator.as_str(),
                    r.values.as_deref().unwrap_or_default(),
                )
            }),
        )
    {
        entries.push(("fieldSelector", v));
    }
    if selectors.label
        && let Some(ls) = &ra.label_selector
        && let Some(v) = selector(
            ls.raw_selector.as_deref(),
            ls.requirements.iter().flatten().map(|r| {
                (
                    r.key.as_str(),
                    r.operator.as_str(),
                    r.values.as_deref().unwrap_or_default(),
                )
            }),
        )
    {
        entries.push(("labelSelector", v));
    }
    map(entries)
}

fn selector<'a>(
    raw: Option<&str>,
    requirements: impl Iterator<Item = (&'a str, &'a str, &'a [String])>,
) -> Option<Value> {
    if let Some(raw) = raw.filter(|r| !r.is_empty()) {
        return Some(map(vec![(
            "rawSelector",
            Value::String(Arc::new(raw.to_owned())),
        )]));
    }
    let requirements: Vec<Value> = requirements
        .map(|(k, op, values)| {
            map(vec![
                ("key", Value::String(Arc::new(k.to_owned()))),
                ("operator", Value::String(Arc::new(op.to_owned()))),
                ("values", strings(values)),
            ])
        })
        .collect();
    if requirements.is_empty() {
        return None;
    }
    Some(map(vec![(
        "requirements",
        Value::List(Arc::new(requirements)),
    )]))
}
