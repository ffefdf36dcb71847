//! [`DecisionId`]: one id for the records every ring writes about the same request, derived
//! from what all three rings know without asking each other.
//!
//! The authorization ring sees a SubjectAccessReview: the user and the request's attributes,
//! no object and no request id (kube-apiserver sends none). The validation ring sees the
//! AdmissionReview of the same request: the same user and attributes, plus a `uid` that names
//! one webhook call, not the request (kube-apiserver makes a new one for every call,
//! `k8s.io/apiserver/pkg/admission/plugin/webhook/request/admissionreview.go`), so the
//! authorization ring can never know it. The buffer ring sees the stored object: its group,
//! resource, namespace and name, the requester annotation the validation ring wrote (the
//! user), and `metadata.deletionTimestamp`. What the three share is therefore
//! *operation, group, resource, subresource, namespace, name, user* and roughly *when*.
//!
//! The id is a name-based UUID (version 8, RFC 9562 section 5.8): the first 128 bits of the
//! SHA-256 of those fields and of the start of the [`WINDOW`] the instant falls in, with the
//! version and variant bits set. The verb of a review becomes the admission operation it
//! leads to (`delete` is `DELETE`, `update` and `patch` are `UPDATE`, `create` is `CREATE`),
//! so a SubjectAccessReview and the AdmissionReview of the same request agree.
//!
//! Its limits, by construction:
//! - two requests of the same user on the same object with the same operation in the same
//!   window share an id (a refused DELETE retried at once with a ticket, for instance): the
//!   records still differ by their own `id` and `time`;
//! - a request whose rings judge it on both sides of a window boundary (the rings run
//!   milliseconds apart, so about one request in a thousand with a 10 s window and a few
//!   milliseconds between the rings) gets two ids; the join by attributes and time documented
//!   in docs/audit.md finds those;
//! - the buffer ring has only the second of `deletionTimestamp` (set by kube-apiserver's
//!   clock, just before the validation ring's review of the write that commits the deletion)
//!   and the requester annotation: without that annotation it writes no id;
//! - a DELETE of a collection is authorized once (no name) and admitted once per object: the
//!   collection's authorization record joins none of them.

use chrono::{DateTime, Utc};
use k8s_openapi::api::authorization::v1::SubjectAccessReviewSpec;
use sha2::{Digest, Sha256};
use std::fmt;

/// The width of the time windows decision ids are derived in. Every replica and every ring
/// must use the same, so it is no setting.
pub const WINDOW_SECONDS: i64 = 10;

/// What a ring knows of a request, the input of a [`DecisionId`].
#[derive(Debug, Clone, Copy)]
pub struct JoinKey<'a> {
    /// The admission operation (`DELETE`, `UPDATE`, `CREATE`), or the review's verb when it
    /// leads to none.
    pub operation: &'a str,
    /// The API group (empty for the core group).
    pub group: &'a str,
    /// The resource (plural).
    pub resource: &'a str,
    /// The subresource, if any (empty otherwise).
    pub subresource: &'a str,
    /// The namespace (empty when cluster-scoped).
    pub namespace: &'a str,
    /// The object's name (for a non-resource request, its path).
    pub name: &'a str,
    /// The requesting user.
    pub user: &'a str,
    /// When the ring saw the request.
    pub at: DateTime<Utc>,
}

/// A decision id: the same for the records of every ring about one request (within the limits
/// the module documents).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DecisionId([u8; 16]);

impl DecisionId {
    /// The id of `key`.
    pub fn derive(key: &JoinKey<'_>) -> Self {
        let window = key.at.timestamp().div_euclid(WINDOW_SECONDS) * WINDOW_SECONDS;
        let mut hash = Sha256::new();
        hash.update(b"warrant.dev/decision-id/v1");
        for field in [
            key.operation,
            key.group,
            key.resource,
            key.subresource,
            key.namespace,
            key.name,
            key.user,
        ] {
            // Length-prefixed, so that no two different field lists hash the same bytes.
            hash.update((field.len() as u64).to_be_bytes());
            hash.update(field.as_bytes());
        }
        hash.update(window.to_be_bytes());
        let digest = hash.finalize();
        let mut bytes = [0u8; 16];
        bytes.copy_from_slice(&digest[..16]);
        Self(*uuid::Builder::from_custom_bytes(bytes).as_uuid().as_bytes())
    }

    /// The id of a review (the authorization ring's SubjectAccessReview, or the validation
    /// ring's admission request mapped onto one) seen at `at`.
    pub fn of_review(spec: &SubjectAccessReviewSpec, at: DateTime<Utc>) -> Self {
        let user = spec.user.as_deref().unwrap_or("");
        fn s(v: &Option<String>) -> &str {
            v.as_deref().unwrap_or("")
        }
        match (&spec.resource_attributes, &spec.non_resource_attributes) {
            (Some(ra), _) => Self::derive(&JoinKey {
                operation: operation(s(&ra.verb)),
                group: s(&ra.group),
                resource: s(&ra.resource),
                subresource: s(&ra.subresource),
                namespace: s(&ra.namespace),
                name: s(&ra.name),
                user,
                at,
            }),
            (None, Some(nra)) => Self::derive(&JoinKey {
                operation: s(&nra.verb),
                group: "",
                resource: "",
                subresource: "",
                namespace: "",
                name: s(&nra.path),
                user,
                at,
            }),
            (None, None) => Self::derive(&JoinKey {
                operation: "",
                group: "",
                resource: "",
                subresource: "",
                namespace: "",
                name: "",
                user,
                at,
            }),
        }
    }
}

/// The admission operation a review's verb leads to, or the verb itself.
pub fn operation(verb: &str) -> &str {
    match verb {
        "delete" => "DELETE",
        "update" | "patch" => "UPDATE",
        "create" => "CREATE",
        "connect" => "CONNECT",
        other => other,
    }
}

impl fmt::Display for DecisionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        uuid::Uuid::from_bytes(self.0).hyphenated().fmt(f)
    }
}

impl serde::Serialize for DecisionId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(test)]
mod tests;
