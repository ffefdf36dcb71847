//! The request attributes as Go's encoder writes them: every string, list and selector field is
//! `omitempty` (`k8s.io/api/authorization/v1/types.go`: `ResourceAttributes`,
//! `NonResourceAttributes`, `FieldSelectorAttributes`, `LabelSelectorAttributes`; the
//! requirements' `values` in `k8s.io/apimachinery/pkg/apis/meta/v1/types.go`), in the struct's
//! field order. So `"namespace": ""` and no namespace encode alike, as they decode alike: the
//! downstream cache key is the same for both, as upstream's `json.Marshal` key is.

use k8s_openapi::api::authorization::v1::{
    FieldSelectorAttributes, LabelSelectorAttributes, NonResourceAttributes, ResourceAttributes,
};
use serde::Serialize;

fn empty_str(s: &Option<String>) -> bool {
    s.as_deref().is_none_or(str::is_empty)
}

fn empty_list<T>(v: &Option<Vec<T>>) -> bool {
    v.as_ref().is_none_or(Vec::is_empty)
}

/// `ResourceAttributes` with Go's omissions.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Resource<'a> {
    #[serde(skip_serializing_if = "empty_str")]
    namespace: &'a Option<String>,
    #[serde(skip_serializing_if = "empty_str")]
    verb: &'a Option<String>,
    #[serde(skip_serializing_if = "empty_str")]
    group: &'a Option<String>,
    #[serde(skip_serializing_if = "empty_str")]
    version: &'a Option<String>,
    #[serde(skip_serializing_if = "empty_str")]
    resource: &'a Option<String>,
    #[serde(skip_serializing_if = "empty_str")]
    subresource: &'a Option<String>,
    #[serde(skip_serializing_if = "empty_str")]
    name: &'a Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    field_selector: Option<Selector<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    label_selector: Option<Selector<'a>>,
}

/// `NonResourceAttributes` with Go's omissions.
#[derive(Serialize)]
pub(super) struct NonResource<'a> {
    #[serde(skip_serializing_if = "empty_str")]
    path: &'a Option<String>,
    #[serde(skip_serializing_if = "empty_str")]
    verb: &'a Option<String>,
}

/// A field or label selector (the two have the same shape on the wire).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Selector<'a> {
    #[serde(skip_serializing_if = "empty_str")]
    raw_selector: &'a Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    requirements: Vec<Requirement<'a>>,
}

/// One selector requirement: `key` and `operator` always, `values` when not empty.
#[derive(Serialize)]
struct Requirement<'a> {
    key: &'a str,
    operator: &'a str,
    #[serde(skip_serializing_if = "empty_list")]
    values: &'a Option<Vec<String>>,
}

/// `ra` as Go encodes it.
pub(super) fn resource(ra: &ResourceAttributes) -> Resource<'_> {
    Resource {
        namespace: &ra.namespace,
        verb: &ra.verb,
        group: &ra.group,
        version: &ra.version,
        resource: &ra.resource,
        subresource: &ra.subresource,
        name: &ra.name,
        field_selector: ra.field_selector.as_ref().map(field_selector),
        label_selector: ra.label_selector.as_ref().map(label_selector),
    }
}

/// `nra` as Go encodes it.
pub(super) fn non_resource(nra: &NonResourceAttributes) -> NonResource<'_> {
    NonResource {
        path: &nra.path,
        verb: &nra.verb,
    }
}

fn field_selector(s: &FieldSelectorAttributes) -> Selector<'_> {
    let requirements = s.requirements.iter().flatten();
    Selector {
        raw_selector: &s.raw_selector,
        requirements: requirements
            .map(|r| Requirement {
                key: &r.key,
                operator: &r.operator,
                values: &r.values,
            })
            .collect(),
    }
}

fn label_selector(s: &LabelSelectorAttributes) -> Selector<'_> {
    let requirements = s.requirements.iter().flatten();
    Selector {
        raw_selector: &s.raw_selector,
        requirements: requirements
            .map(|r| Requirement {
                key: &r.key,
                operator: &r.operator,
                values: &r.values,
            })
            .collect(),
    }
}
