//! Whether a review is the guard's business: a destructive verb (`delete`, `deletecollection`,
//! and `update`/`patch` of the kinds in `updateResources`) on an object itself (a subresource is
//! not the object), outside the excluded namespaces, principals and groups. What such a request
//! targets is a [`Target`]; how much it matters is `risk`'s business.

use crate::config::model::guard::{DEFAULT_EXCLUDED_GROUPS, GuardSpec};
use crate::config::model::pattern;
use crate::object::Operation;
use crate::review::Review;

/// What a destructive request targets, and who asks.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// The verb (`delete`, `deletecollection`, `update` or `patch`).
    pub verb: &'a str,
    /// The namespace it touches: the object's, or a Namespace's own name (`""` when
    /// cluster-scoped).
    pub namespace: &'a str,
    /// API group.
    pub group: &'a str,
    /// Plural resource.
    pub resource: &'a str,
    /// Object name (`""` for a collection).
    pub name: &'a str,
    /// The requester.
    pub user: &'a str,
    /// The requester's groups.
    pub groups: &'a [String],
}

impl Target<'_> {
    /// Whether the target is a Namespace.
    pub fn is_namespace(&self) -> bool {
        is_namespace(self.group, self.resource)
    }
}

/// The target of a review the guard looks at; `None` when the review is none of its business.
pub(super) fn target<'a>(spec: &GuardSpec, review: &'a Review) -> Option<Target<'a>> {
    let ra = review.spec().resource_attributes.as_ref()?;
    let verb = ra.verb.as_deref().unwrap_or("");
    let group = ra.group.as_deref().unwrap_or("");
    let resource = ra.resource.as_deref().unwrap_or("");
    // A subresource (pods/eviction is handled by its own verb) is not the object itself.
    if !destructive(spec, verb, group, resource)
        || ra.subresource.as_deref().is_some_and(|s| !s.is_empty())
    {
        return None;
    }
    let target = described(review, verb);
    (!excluded(spec, &target)).then_some(target)
}

/// The target of an admission request the validation ring looks at: a DELETE of an object, or
/// an UPDATE of one (the ring then only looks for a lowered protection label), outside the
/// exclusions; `None` for a subresource or an excluded requester or namespace.
pub(super) fn admission_target<'a>(
    spec: &GuardSpec,
    review: &'a Review,
    operation: Operation,
) -> Option<Target<'a>> {
    let ra = review.spec().resource_attributes.as_ref()?;
    let verb = ra.verb.as_deref().unwrap_or("");
    let expected = match operation {
        Operation::Delete => "delete",
        Operation::Update => "update",
    };
    if verb != expected || ra.subresource.as_deref().is_some_and(|s| !s.is_empty()) {
        return None;
    }
    let target = described(review, verb);
    (!excluded(spec, &target)).then_some(target)
}

/// The target a review describes (its resource attributes are set).
fn described<'a>(review: &'a Review, verb: &'a str) -> Target<'a> {
    let ra = review.spec().resource_attributes.as_ref();
    let field =
        |f: fn(&k8s_openapi::api::authorization::v1::ResourceAttributes) -> &Option<String>| {
            ra.and_then(|r| f(r).as_deref()).unwrap_or("")
        };
    let group = field(|r| &r.group);
    let resource = field(|r| &r.resource);
    let name = field(|r| &r.name);
    Target {
        verb,
        namespace: if is_namespace(group, resource) {
            name
        } else {
            field(|r| &r.namespace)
        },
        group,
        resource,
        name,
        user: review.user(),
        groups: review.groups(),
    }
}

/// Whether the verb destroys or (for `updateResources`) rewrites the object.
fn destructive(spec: &GuardSpec, verb: &str, group: &str, resource: &str) -> bool {
    match verb {
        "delete" | "deletecollection" => true,
        "update" | "patch" => spec
            .update_resources
            .iter()
            .any(|k| k.covers(group, resource)),
        _ => false,
    }
}

/// Whether the namespace, the user or one of its groups is excluded (the control plane's always
/// are).
fn excluded(spec: &GuardSpec, t: &Target<'_>) -> bool {
    pattern::any(&spec.excluded_namespaces, t.namespace)
        || spec.excluded_principals.contains(t.user, t.groups)
        || t.groups
            .iter()
            .any(|g| DEFAULT_EXCLUDED_GROUPS.contains(&g.as_str()))
}

fn is_namespace(group: &str, resource: &str) -> bool {
    group.is_empty() && resource == "namespaces"
}
