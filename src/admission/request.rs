//! One decoded `AdmissionRequest`, with the fields warrant reads, spelled as
//! `k8s.io/api/admission/v1/types.go` spells them (not `requestKind`, `requestResource`,
//! `requestSubResource` or `options`, which no rule reads).

use crate::object::Subject;
use k8s_openapi::api::authentication::v1::UserInfo;
use serde::Deserialize;

/// The operation of an admission request (`request.operation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AdmissionOperation {
    /// `CREATE`.
    Create,
    /// `UPDATE` (an update, or a patch that updates).
    Update,
    /// `DELETE` (one object; a collection delete sends one request per object).
    Delete,
    /// `CONNECT` (exec, attach, port-forward, proxy).
    Connect,
}

impl AdmissionOperation {
    /// Parses the wire spelling.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "CREATE" => Some(Self::Create),
            "UPDATE" => Some(Self::Update),
            "DELETE" => Some(Self::Delete),
            "CONNECT" => Some(Self::Connect),
            _ => None,
        }
    }

    /// The wire spelling, also used in metric labels and audit records.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Create => "CREATE",
            Self::Update => "UPDATE",
            Self::Delete => "DELETE",
            Self::Connect => "CONNECT",
        }
    }

    /// The authorization verb the request is judged under (`delete`, `update`, `create`,
    /// `connect`).
    pub fn verb(self) -> &'static str {
        match self {
            Self::Create => "create",
            Self::Update => "update",
            Self::Delete => "delete",
            Self::Connect => "connect",
        }
    }
}

/// `metav1.GroupVersionKind`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct GroupVersionKind {
    /// API group (`""` for core).
    pub group: String,
    /// Version.
    pub version: String,
    /// Kind.
    pub kind: String,
}

/// `metav1.GroupVersionResource`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct GroupVersionResource {
    /// API group (`""` for core).
    pub group: String,
    /// Version.
    pub version: String,
    /// Plural resource.
    pub resource: String,
}

/// One admission request, checked by [`super::decode`]: it has a uid, a known operation, the
/// requester, the kind and resource, and the objects its operation carries.
#[derive(Debug, Clone, PartialEq)]
pub struct AdmissionRequest {
    /// Identifies this round trip; the response echoes it.
    pub uid: String,
    /// The kind of the objects sent (after an equivalent-version conversion).
    pub kind: GroupVersionKind,
    /// The resource as the webhook's rule matched it.
    pub resource: GroupVersionResource,
    /// The subresource (`""` for the object itself).
    pub(crate) sub_resource: String,
    /// The object's name (`""` on a CREATE with `generateName`).
    pub name: String,
    /// The namespace (for a Namespace, kube-apiserver sends its own name).
    pub namespace: String,
    /// The operation.
    pub operation: AdmissionOperation,
    /// The requester.
    pub(crate) user_info: UserInfo,
    /// The object of the request (absent for a DELETE).
    pub object: Option<Subject>,
    /// The stored object (DELETE and UPDATE).
    pub(crate) old_object: Option<Subject>,
    /// Whether nothing will be persisted.
    pub dry_run: bool,
}
