//! An [`AdmissionRequest`] as the validation ring judges it: a resource [`Review`] (the requester
//! and the target, as a SubjectAccessReview of the same request would carry them) and, for the
//! operations the ring judges (DELETE, UPDATE), the [`ObjectContext`].
//!
//! Name and namespace: a collection delete reaches admission once per object, with the
//! request's (empty) name (`k8s.io/apiserver/pkg/endpoints/handlers/delete.go` builds the
//! collection's attributes with no name, and `pkg/registry/rest/delete.go` reuses them for each
//! object; kube-apiserver v1.35.4 was seen to send no `name` for each object of
//! `DELETE /apis/apps/v1/namespaces/x/deployments`), so an empty `request.name` is taken from
//! the object itself; otherwise a per-object judgement would see no name and miss name-based
//! protection. A Namespace's `request.namespace` is its own name
//! (`pkg/endpoints/request/requestinfo.go` reads `/namespaces/{name}` as the namespace), and is
//! set to the name when empty (a collection delete of namespaces), so that the review reads as
//! the SubjectAccessReview of a single delete would.

use super::request::{AdmissionOperation, AdmissionRequest};
use crate::object::{ClusterView, ObjectContext, Operation, Subject};
use crate::review::{ApiVersion, Review};
use k8s_openapi::api::authorization::v1::{ResourceAttributes, SubjectAccessReviewSpec};
use std::sync::Arc;

/// An admission request split into what the chain judges and what the answer echoes.
#[derive(Debug, Clone)]
pub struct Mapped {
    /// `request.uid`, echoed by the response.
    pub uid: String,
    /// The operation.
    pub operation: AdmissionOperation,
    /// `request.dryRun`.
    pub dry_run: bool,
    /// The request as a resource review (verb `delete`, `update`, `create` or `connect`).
    pub review: Review,
    /// The object context for a DELETE or an UPDATE; `None` for the operations the validation
    /// ring does not judge (CREATE, CONNECT).
    pub context: Option<ObjectContext>,
}

/// Maps one request; `view` is the cluster the validation ring asks about dependents.
pub fn map(mut request: AdmissionRequest, view: Arc<dyn ClusterView>) -> Mapped {
    let attributes = attributes(&mut request);
    // The request is taken apart: the requester and the objects move, not copied.
    let AdmissionRequest {
        uid,
        operation,
        user_info,
        object,
        old_object,
        dry_run,
        ..
    } = request;
    let spec = SubjectAccessReviewSpec {
        user: user_info.username,
        groups: user_info.groups,
        uid: user_info.uid,
        extra: user_info.extra,
        ..Default::default()
    };
    let review = Review::resource(ApiVersion::V1, spec, attributes);
    let context = match operation {
        AdmissionOperation::Delete => Some(Operation::Delete),
        AdmissionOperation::Update => Some(Operation::Update),
        AdmissionOperation::Create | AdmissionOperation::Connect => None,
    }
    .map(|operation| ObjectContext {
        operation,
        // A DELETE carries the object in oldObject; its `object` (if any) is not the target.
        object: match operation {
            Operation::Delete => None,
            Operation::Update => object,
        },
        old_object,
        dry_run,
        view,
    });
    Mapped {
        uid,
        operation,
        dry_run,
        review,
        context,
    }
}

/// The resource attributes of a request, as a SubjectAccessReview of it would carry them (its
/// strings moved out of the request, which needs them no more).
fn attributes(request: &mut AdmissionRequest) -> ResourceAttributes {
    let subject = match request.operation {
        AdmissionOperation::Delete => request.old_object.as_ref(),
        _ => request.object.as_ref().or(request.old_object.as_ref()),
    };
    let name = match taken(&mut request.name) {
        Some(name) => name,
        None => subject.map(Subject::name).unwrap_or("").to_owned(),
    };
    let r = &mut request.resource;
    let namespace = match taken(&mut request.namespace) {
        Some(ns) => Some(ns),
        None if r.group.is_empty() && r.resource == "namespaces" => some(&name),
        None => subject.and_then(|s| some(s.namespace())),
    };
    ResourceAttributes {
        namespace,
        verb: Some(request.operation.verb().to_owned()),
        group: taken(&mut r.group),
        version: taken(&mut r.version),
        resource: taken(&mut r.resource),
        subresource: taken(&mut request.sub_resource),
        name: (!name.is_empty()).then_some(name),
        ..Default::default()
    }
}

/// A string field as a SubjectAccessReview from the API server carries it: absent when empty.
fn some(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_owned())
}

/// The field moved out, as [`some`] gives it.
fn taken(field: &mut String) -> Option<String> {
    (!field.is_empty()).then(|| std::mem::take(field))
}
