//! kube-apiserver audit logs: `audit.k8s.io/v1` `Event` JSON lines
//! (`k8s.io/apiserver/pkg/apis/audit/v1/types.go`), at level Metadata or above. Each event is
//! mapped back onto the SubjectAccessReview kube-apiserver's webhook authorizer sent for it:
//!
//! - the user is `impersonatedUser` when there is one (the audit filter records the
//!   authenticated user before the impersonation filter swaps it, and authorization sees the
//!   impersonated one), else `user`;
//! - `verb` is the request-info verb already (list, watch and deletecollection included); a
//!   resource request has an `objectRef` (`pkg/audit/request.go` fills it from the same request
//!   info) and a non-resource one has only its `requestURI` path;
//! - the create caveat: for a create the audit layer fills `objectRef.name` (and an empty
//!   namespace) from the created object after authorization, so name and namespace come from
//!   the URL path, as the authorizer saw them;
//! - a list, watch or deletecollection carries the `fieldSelector` and `labelSelector` of its
//!   query as requirements ([`super::selectors`]), unless its verb came from the path;
//! - only the `ResponseStarted` and `ResponseComplete` stages carry the authorization
//!   annotations; one event per `auditID` is replayed (a watch logs both stages);
//! - the answer then is the `authorization.k8s.io/decision` annotation (`allow` or `forbid`,
//!   `pkg/endpoints/filters/authorization.go`): the API server's whole chain, not warrant's.

use super::audit_event::{ObjectRef, UserInfo};
use super::read_error::ReadError;
use super::record::{Item, Origin, Recorded, Skip, Source};
use super::request_uri::{RequestUri, resource_path};
use super::selectors::{field_requirements, label_requirements};
use crate::decision::Decision;
use crate::review::{ApiVersion, Review};
use chrono::{DateTime, Utc};
use k8s_openapi::api::authorization::v1::{
    FieldSelectorAttributes, LabelSelectorAttributes, NonResourceAttributes, ResourceAttributes,
    SubjectAccessReviewSpec,
};
use serde::Deserialize;
use std::collections::HashSet;

/// The audit API version replay reads.
pub use super::audit_event::API_VERSION;

/// The part of an event a replay reads.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Event {
    #[serde(rename = "auditID")]
    audit_id: String,
    stage: String,
    #[serde(rename = "requestURI")]
    request_uri: String,
    verb: String,
    #[serde(default)]
    user: UserInfo,
    #[serde(default)]
    impersonated_user: Option<UserInfo>,
    #[serde(default)]
    object_ref: Option<ObjectRef>,
    #[serde(default)]
    request_received_timestamp: Option<String>,
    #[serde(default)]
    annotations: Annotations,
}

/// The annotations a replay reads.
#[derive(Debug, Default, Deserialize)]
struct Annotations {
    #[serde(default, rename = "authorization.k8s.io/decision")]
    decision: Option<String>,
}

/// Whether a JSON object looks like an audit event.
pub(crate) fn looks_like(v: &serde_json::Value) -> bool {
    v.get("kind").and_then(|k| k.as_str()) == Some("Event")
        && v.get("apiVersion").and_then(|k| k.as_str()) == Some(API_VERSION)
}

/// The auditIDs already replayed, across every input of one replay.
#[derive(Debug, Default)]
pub struct Seen(HashSet<String>);

/// One event.
pub fn read(bytes: &[u8], origin: Origin, seen: &mut Seen) -> Result<Item, ReadError> {
    let e: Event = serde_json::from_slice(bytes)?;
    if !matches!(e.stage.as_str(), "ResponseComplete" | "ResponseStarted") {
        return Ok(Item::Skipped(Skip::Stage));
    }
    if !seen.0.insert(e.audit_id.clone()) {
        return Ok(Item::Skipped(Skip::Duplicate));
    }
    let at = e
        .request_received_timestamp
        .as_deref()
        .map(|t| {
            DateTime::parse_from_rfc3339(t)
                .map(|t| t.with_timezone(&Utc))
                .map_err(|source| ReadError::Time {
                    field: "requestReceivedTimestamp",
                    value: t.to_owned(),
                    source,
                })
        })
        .transpose()?;
    let decision = match e.annotations.decision.as_deref() {
        Some("allow") => Some(Decision::Allow),
        Some("forbid") => Some(Decision::Deny),
        _ => None,
    };
    let review = Review::new(ApiVersion::V1, spec(e))?;
    Ok(Item::Review(Box::new(Recorded {
        review,
        at,
        decision,
        decided_by: None,
        source: Source::ApiServer,
        origin,
        redacted: Vec::new(),
    })))
}

fn some(s: Option<String>) -> Option<String> {
    s.filter(|s| !s.is_empty())
}

/// The SubjectAccessReview spec the webhook authorizer sent for the event.
fn spec(e: Event) -> SubjectAccessReviewSpec {
    let user = e.impersonated_user.unwrap_or(e.user);
    let uri = RequestUri::parse(&e.request_uri);
    let (resource_attributes, non_resource_attributes) = match e.object_ref {
        Some(o) => (Some(resource(o, e.verb, &uri)), None),
        None => (
            None,
            Some(NonResourceAttributes {
                path: Some(uri.path.clone()),
                verb: some(Some(e.verb)),
            }),
        ),
    };
    SubjectAccessReviewSpec {
        user: some(user.username),
        uid: some(user.uid),
        groups: user.groups.filter(|g| !g.is_empty()),
        extra: user.extra.filter(|x| !x.is_empty()),
        resource_attributes,
        non_resource_attributes,
    }
}

/// The resource attributes of an event with an `objectRef`.
fn resource(o: ObjectRef, verb: String, uri: &RequestUri<'_>) -> ResourceAttributes {
    let path = resource_path(&uri.path).unwrap_or_default();
    let (namespace, name) = if verb == "create" {
        (
            some(Some(path.namespace.to_owned())),
            some(Some(path.name.to_owned())),
        )
    } else {
        (some(o.namespace), some(o.name))
    };
    let selectors =
        matches!(verb.as_str(), "list" | "watch" | "deletecollection") && !path.verb_in_path;
    let (field_selector, label_selector) = if selectors {
        (
            uri.param("fieldSelector")
                .and_then(|s| field_requirements(&s))
                .map(|requirements| FieldSelectorAttributes {
                    raw_selector: None,
                    requirements: Some(requirements),
                }),
            uri.param("labelSelector")
                .and_then(|s| label_requirements(&s))
                .map(|requirements| LabelSelectorAttributes {
                    raw_selector: None,
                    requirements: Some(requirements),
                }),
        )
    } else {
        (None, None)
    };
    ResourceAttributes {
        namespace,
        verb: some(Some(verb)),
        group: some(o.api_group),
        version: some(o.api_version),
        resource: some(o.resource),
        subresource: some(o.subresource),
        name,
        field_selector,
        label_selector,
    }
}
