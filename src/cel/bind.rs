//! The review as CEL sees it: the v1 spec turned into a map with kube-apiserver's presence
//! rules (`convertObjectToUnstructured` in `k8s.io/apiserver/pkg/authorization/cel/compile.go`):
//! `user`, `uid`, `groups` and `extra` always present; `resourceAttributes` or
//! `nonResourceAttributes` only when set, with every scalar key inside present; a selector only
//! when the expressions use it and it has requirements or a raw selector (a raw selector
//! replaces the requirements, as upstream does).
//!
//! `extra` is left out when no expression can read it: a review may carry tens of thousands of
//! extra keys (about 70,000 fit the 1 MiB body limit), and building their map for every
//! authorizer cost more than the rest of the review (issue 15, finding 9).

use ::cel as engine;
use engine::common::types::{CelList, CelMap, CelMapKey, CelString};
use k8s_openapi::api::authorization::v1::{ResourceAttributes, SubjectAccessReviewSpec};
use std::collections::HashMap;

/// Which optional parts the bound value carries: the selectors, which upstream adds only when
/// an expression names them, and `extra`, which only changes the cost of a review.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RequestUse {
    /// Some expression selects `fieldSelector`.
    pub field: bool,
    /// Some expression selects `labelSelector`.
    pub label: bool,
    /// Some expression may read `request.extra`.
    pub extra: bool,
}

impl RequestUse {
    /// Either expression set's use.
    pub fn union(self, other: RequestUse) -> RequestUse {
        RequestUse {
            field: self.field || other.field,
            label: self.label || other.label,
            extra: self.extra || other.extra,
        }
    }
}

/// A value of the review, borrowing its strings.
pub type Val<'v> = Box<dyn engine::common::value::Val + 'v>;

fn key(s: &'static str) -> CelMapKey<'static> {
    CelMapKey::String(CelString::from(s))
}

fn string<'v>(s: &'v Option<String>) -> Val<'v> {
    Box::new(CelString::from(s.as_deref().unwrap_or_default()))
}

fn str_val(s: &str) -> Val<'_> {
    Box::new(CelString::from(s))
}

fn strings(items: &[String]) -> Val<'_> {
    Box::new(CelList::from(
        items.iter().map(|s| str_val(s)).collect::<Vec<_>>(),
    ))
}

fn map<'v>(entries: Vec<(&'static str, Val<'v>)>) -> Val<'v> {
    let map: HashMap<CelMapKey<'v>, Val<'v>> =
        entries.into_iter().map(|(k, v)| (key(k), v)).collect();
    Box::new(CelMap::from(map))
}

/// The `request` value for `spec`.
pub fn request(spec: &SubjectAccessReviewSpec, uses: RequestUse) -> Val<'_> {
    let mut entries = vec![
        ("user", string(&spec.user)),
        (
            "groups",
            strings(spec.groups.as_deref().unwrap_or_default()),
        ),
        ("uid", string(&spec.uid)),
    ];
    if uses.extra {
        let extra: HashMap<CelMapKey<'_>, Val<'_>> = spec
            .extra
            .iter()
            .flatten()
            .map(|(k, v)| (CelMapKey::String(CelString::from(k.as_str())), strings(v)))
            .collect();
        entries.push(("extra", Box::new(CelMap::from(extra)) as Val<'_>));
    }
    if let Some(ra) = &spec.resource_attributes {
        entries.push(("resourceAttributes", resource_attributes(ra, uses)));
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

fn resource_attributes(ra: &ResourceAttributes, uses: RequestUse) -> Val<'_> {
    let mut entries = vec![
        ("namespace", string(&ra.namespace)),
        ("verb", string(&ra.verb)),
        ("group", string(&ra.group)),
        ("version", string(&ra.version)),
        ("resource", string(&ra.resource)),
        ("subresource", string(&ra.subresource)),
        ("name", string(&ra.name)),
    ];
    // The two selector types have the same shape; each is bound only when used.
    let field = ra.field_selector.as_ref().filter(|_| uses.field).map(|s| {
        let reqs = s.requirements.iter().flatten();
        selector(
            s.raw_selector.as_deref(),
            reqs.map(|r| (&*r.key, &*r.operator, &r.values)),
        )
    });
    let label = ra.label_selector.as_ref().filter(|_| uses.label).map(|s| {
        let reqs = s.requirements.iter().flatten();
        selector(
            s.raw_selector.as_deref(),
            reqs.map(|r| (&*r.key, &*r.operator, &r.values)),
        )
    });
    for (name, value) in [("fieldSelector", field), ("labelSelector", label)] {
        if let Some(Some(v)) = value {
            entries.push((name, v));
        }
    }
    map(entries)
}

fn selector<'a>(
    raw: Option<&'a str>,
    requirements: impl Iterator<Item = (&'a str, &'a str, &'a Option<Vec<String>>)>,
) -> Option<Val<'a>> {
    if let Some(raw) = raw.filter(|r| !r.is_empty()) {
        return Some(map(vec![("rawSelector", str_val(raw))]));
    }
    let requirements: Vec<Val<'a>> = requirements
        .map(|(k, op, values)| {
            map(vec![
                ("key", str_val(k)),
                ("operator", str_val(op)),
                ("values", strings(values.as_deref().unwrap_or_default())),
            ])
        })
        .collect();
    if requirements.is_empty() {
        return None;
    }
    Some(map(vec![(
        "requirements",
        Box::new(CelList::from(requirements)) as Val<'a>,
    )]))
}
