//! The review as CEL sees it: the v1 spec turned into a map with kube-apiserver's presence
//! rules (`convertObjectToUnstructured` in `k8s.io/apiserver/pkg/authorization/cel/compile.go`):
//! `user`, `uid`, `groups` and `extra` always present; `resourceAttributes` or
//! `nonResourceAttributes` only when set, with every scalar key inside present; a selector only
//! when the expressions use it and it has requirements or a raw selector (a raw selector
//! replaces the requirements, as upstream does).
//!
//! A [`Binding`] holds one review for every expression judged on it: the fields read directly
//! (module `fields`) are borrowed strings held inline, built without allocating; the lists, the
//! `extra` map and the whole `request` map (one per [`RequestUse`]) are built the first time an
//! expression needs them, and then shared.
//!
//! `extra` is built only when an expression may read it, and the whole `request` map carries it
//! only for expressions that may: a review may carry tens of thousands of extra keys (about
//! 70,000 fit the 1 MiB body limit), and building their map for every authorizer cost more than
//! the rest of the review.

use super::fields::{Field, field_named};
use ::cel as engine;
use chrono::{DateTime, Utc};
use engine::common::types::{CelBool, CelList, CelMap, CelMapKey, CelString, CelTimestamp};
use engine::common::value::CowVal;
use engine::context::VariableResolver;
use k8s_openapi::api::authorization::v1::{ResourceAttributes, SubjectAccessReviewSpec};
use std::collections::HashMap;
use std::sync::OnceLock;

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
    /// The use as an index of the eight combinations.
    fn index(self) -> usize {
        usize::from(self.extra) * 4 + usize::from(self.field) * 2 + usize::from(self.label)
    }

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
pub(crate) type Val<'v> = Box<dyn engine::common::value::Val + 'v>;

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
        entries.push(("extra", extra(spec)));
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

/// One review bound for every expression judged on it. Built without allocating; what the
/// expressions need beyond the directly read fields is built on first use and shared.
pub struct Binding<'v> {
    spec: &'v SubjectAccessReviewSpec,
    user: CelString<'v>,
    uid: CelString<'v>,
    resource: Option<[CelString<'v>; 7]>,
    non_resource: Option<[CelString<'v>; 2]>,
    now: CelTimestamp,
    groups: OnceLock<CelList<'v>>,
    extra: OnceLock<Val<'v>>,
    request: [OnceLock<Val<'v>>; 8],
}

const TRUE: CelBool = CelBool::TRUE;
const FALSE: CelBool = CelBool::FALSE;

fn text(s: &Option<String>) -> CelString<'_> {
    CelString::from(s.as_deref().unwrap_or_default())
}

impl<'v> Binding<'v> {
    /// Binds `spec` as `request` and `now` once per review, for every expression of every
    /// authorizer judged on it; the binding borrows the review's strings.
    pub fn new(spec: &'v SubjectAccessReviewSpec, now: DateTime<Utc>) -> Self {
        Self {
            spec,
            user: text(&spec.user),
            uid: text(&spec.uid),
            resource: spec.resource_attributes.as_ref().map(|ra| {
                [
                    text(&ra.namespace),
                    text(&ra.verb),
                    text(&ra.group),
                    text(&ra.version),
                    text(&ra.resource),
                    text(&ra.subresource),
                    text(&ra.name),
                ]
            }),
            non_resource: spec
                .non_resource_attributes
                .as_ref()
                .map(|n| [text(&n.verb), text(&n.path)]),
            now: CelTimestamp::from(now.fixed_offset()),
            groups: OnceLock::new(),
            extra: OnceLock::new(),
            request: Default::default(),
        }
    }

    /// The review bound.
    pub fn spec(&self) -> &'v SubjectAccessReviewSpec {
        self.spec
    }

    /// The value of a top-level variable or a rewritten field, as expressions with `uses`
    /// see it; `None` for any other name, and for a field of attributes the review lacks.
    pub(crate) fn resolve(
        &self,
        name: &str,
        uses: RequestUse,
    ) -> Option<&(dyn engine::common::value::Val + 'v)> {
        match name {
            "request" => Some(
                self.request[uses.index()]
                    .get_or_init(|| request(self.spec, uses))
                    .as_ref(),
            ),
            "now" => Some(&self.now),
            _ => self.field(field_named(name)?),
        }
    }

    /// Whether `extra` was built, directly or inside a whole `request` map.
    #[cfg(test)]
    pub(super) fn built_extra(&self) -> bool {
        let whole = self
            .request
            .iter()
            .enumerate()
            .any(|(i, r)| i >= 4 && r.get().is_some());
        self.extra.get().is_some() || whole
    }

    fn field(&self, field: Field) -> Option<&(dyn engine::common::value::Val + 'v)> {
        Some(match field {
            Field::User => &self.user,
            Field::Uid => &self.uid,
            Field::Groups => self
                .groups
                .get_or_init(|| list(self.spec.groups.as_deref().unwrap_or_default())),
            Field::Extra => self.extra.get_or_init(|| extra(self.spec)).as_ref(),
            Field::Present => &TRUE,
            Field::HasResource => bool_ref(self.resource.is_some()),
            Field::HasNonResource => bool_ref(self.non_resource.is_some()),
            Field::Resource(i) => self.resource.as_ref()?.get(i)?,
            Field::NonResource(i) => self.non_resource.as_ref()?.get(i)?,
        })
    }
}

fn bool_ref(b: bool) -> &'static CelBool {
    if b { &TRUE } else { &FALSE }
}

impl<'v> Binding<'v> {
    /// The binding as the expressions of one authorizer see it: with the optional parts they use.
    pub fn with(&self, uses: RequestUse) -> Bound<'_, 'v> {
        Bound {
            binding: self,
            uses,
        }
    }
}

/// A review bound for the expressions of one authorizer (a [`Binding`] with the optional parts
/// they use), shared by them.
#[derive(Clone, Copy)]
pub struct Bound<'a, 'v> {
    binding: &'a Binding<'v>,
    uses: RequestUse,
}

impl<'v> Bound<'_, 'v> {
    /// The review bound.
    pub fn spec(&self) -> &'v SubjectAccessReviewSpec {
        self.binding.spec
    }
}

impl std::fmt::Debug for Bound<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Bound")
    }
}

impl VariableResolver for Bound<'_, '_> {
    fn resolve<'b>(&'b self, variable: &str) -> Option<CowVal<'b, 'b>> {
        self.binding
            .resolve(variable, self.uses)
            .map(CowVal::Borrowed)
    }
}

fn list<'v>(items: &'v [String]) -> CelList<'v> {
    CelList::from(items.iter().map(|s| str_val(s)).collect::<Vec<_>>())
}

fn extra(spec: &SubjectAccessReviewSpec) -> Val<'_> {
    let extra: HashMap<CelMapKey<'_>, Val<'_>> = spec
        .extra
        .iter()
        .flatten()
        .map(|(k, v)| (CelMapKey::String(CelString::from(k.as_str())), strings(v)))
        .collect();
    Box::new(CelMap::from(extra))
}
