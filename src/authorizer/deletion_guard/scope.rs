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
    pub(crate) fn is_namespace(&self) -> bool {
        is_namespace(self.group, self.resource)
    }
}

/// What the guard makes of a review.
#[derive(Debug)]
pub(super) enum Scope<'a> {
    /// None of its business (not destructive, a subresource): no reason, no trace.
    Outside,
    /// Destructive, but an exclusion covers it: NoOpinion with an `EXCLUDED` reason saying which.
    Excluded(String),
    /// The guard judges it.
    Judged(Target<'a>),
}

impl<'a> Scope<'a> {
    fn of(spec: &GuardSpec, target: Option<Target<'a>>) -> Self {
        match target {
            None => Scope::Outside,
            Some(t) => match excluded(spec, &t) {
                Some(why) => Scope::Excluded(why),
                None => Scope::Judged(t),
            },
        }
    }
}

/// What the guard makes of a SubjectAccessReview.
pub(super) fn scope<'a>(spec: &GuardSpec, review: &'a Review) -> Scope<'a> {
    Scope::of(spec, destructive_target(spec, review))
}

/// What the guard makes of an admission request.
pub(super) fn admission_scope<'a>(
    spec: &GuardSpec,
    review: &'a Review,
    operation: Operation,
) -> Scope<'a> {
    Scope::of(spec, admission_request_target(review, operation))
}

/// The target of an admission request before exclusions (the buffer's requester and
/// confirmation rules hold for everyone); `None` when the ring does not look at it.
pub(super) fn admission_target(review: &Review, operation: Operation) -> Option<Target<'_>> {
    admission_request_target(review, operation)
}

/// The target of a destructive review, before exclusions.
fn destructive_target<'a>(spec: &GuardSpec, review: &'a Review) -> Option<Target<'a>> {
    let ra = review.spec().resource_attributes.as_ref()?;
    let verb = ra.verb.as_deref().unwrap_or("");
    let group = ra.group.as_deref().unwrap_or("");
    let resource = ra.resource.as_deref().unwrap_or("");
    // A subresource is not the object itself, with one exception: `scale` rewrites the
    // replicas of a kind whose updates are guarded, as a patch of the object would.
    let subresource = ra.subresource.as_deref().unwrap_or("");
    let rewrites = subresource == SCALE && matches!(verb, "update" | "patch");
    if !destructive(spec, verb, group, resource) || !(subresource.is_empty() || rewrites) {
        return None;
    }
    Some(described(review, verb))
}

/// The target of an admission request the validation ring looks at, before exclusions: a
/// DELETE of an object, or an UPDATE of one or of its subresource (the ring then only looks for
/// a lowered protection label); `None` for a DELETE of a subresource.
fn admission_request_target(review: &Review, operation: Operation) -> Option<Target<'_>> {
    let ra = review.spec().resource_attributes.as_ref()?;
    let verb = ra.verb.as_deref().unwrap_or("");
    let expected = match operation {
        Operation::Delete => "delete",
        Operation::Update => "update",
    };
    // An UPDATE through a subresource (`/status`, `namespaces/finalize`) can change the labels
    // too: it is judged like one of the object. A DELETE of a subresource is not the object.
    let subresource = ra.subresource.as_deref().is_some_and(|s| !s.is_empty());
    if verb != expected || (subresource && operation == Operation::Delete) {
        return None;
    }
    Some(described(review, verb))
}

/// The subresource through which a workload's replicas are changed.
const SCALE: &str = "scale";

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

/// Which exclusion covers the target, if one does: its namespace, its user or one of its groups
/// (the control plane's always are).
fn excluded(spec: &GuardSpec, t: &Target<'_>) -> Option<String> {
    if pattern::any(&spec.excluded_namespaces, t.namespace) {
        return Some(format!("namespace {} is excluded", t.namespace));
    }
    if spec.excluded_principals.contains(t.user, t.groups) {
        return Some(format!("requester {} is excluded", t.user));
    }
    t.groups
        .iter()
        .find(|g| DEFAULT_EXCLUDED_GROUPS.contains(&g.as_str()))
        .map(|g| format!("group {g} is excluded"))
}

fn is_namespace(group: &str, resource: &str) -> bool {
    group.is_empty() && resource == "namespaces"
}
