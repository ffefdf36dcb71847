//! [`AdmissionResponse`]: the answer to one admission request, and its bytes.
//!
//! kube-apiserver checks that `response.uid` echoes the request's and that the envelope is
//! `admission.k8s.io/v1` `AdmissionReview` (`VerifyAdmissionResponse` in
//! `k8s.io/apiserver/pkg/admission/plugin/webhook/request/admissionreview.go`), records each
//! audit annotation as `<webhook name>/<key>` only when that is a qualified name
//! (`checkKeyFormat` in `pkg/admission/attributes.go`), and turns each warning into a
//! `Warning` header, dropping one with control characters (`NewWarningHeader` in
//! `k8s.io/apimachinery/pkg/util/net/http.go`).

use super::decode::{API_VERSION, KIND};
use base64::Engine as _;
use base64::prelude::BASE64_STANDARD;
use serde::Serialize;
use std::collections::BTreeMap;

/// The answer to one admission request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AdmissionResponse {
    /// The request's `uid`.
    pub uid: String,
    /// Whether the request is admitted.
    pub allowed: bool,
    /// When refused: the message of the `Status` (code 403, reason `Forbidden`).
    pub(crate) denial: Option<String>,
    /// `auditAnnotations`, by key (without the webhook-name prefix the API server adds).
    pub(crate) audit_annotations: BTreeMap<String, String>,
    /// `warnings`, shown by kubectl and client-go.
    pub warnings: Vec<String>,
    /// A JSONPatch (RFC 6902) the API server applies to the object (mutating webhooks only),
    /// sent base64-encoded with `patchType: JSONPatch`.
    pub patch: Option<Vec<u8>>,
}

impl AdmissionResponse {
    /// Admits the request `uid`.
    pub fn allow(uid: impl Into<String>) -> Self {
        Self {
            uid: uid.into(),
            allowed: true,
            ..Self::default()
        }
    }

    /// Refuses the request `uid`, saying why.
    pub fn deny(uid: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            uid: uid.into(),
            allowed: false,
            denial: Some(message.into()),
            ..Self::default()
        }
    }

    /// Adds an audit annotation; `false` (and nothing added) when `key` is not a valid name
    /// part of a qualified name, which the API server would drop.
    pub fn annotate(&mut self, key: &str, value: impl Into<String>) -> bool {
        if !is_annotation_key(key) {
            return false;
        }
        self.audit_annotations.insert(key.to_owned(), value.into());
        true
    }

    /// Adds a warning, its control characters (newlines included) replaced by spaces, since the
    /// API server drops a warning that has any.
    pub fn warn(&mut self, text: &str) {
        let clean = text
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        self.warnings.push(clean);
    }

    /// The response as an `AdmissionReview` JSON body.
    pub fn encode(&self) -> Vec<u8> {
        let envelope = Envelope {
            api_version: API_VERSION,
            kind: KIND,
            response: Wire {
                uid: &self.uid,
                allowed: self.allowed,
                status: self.denial.as_deref().map(|message| Status {
                    status: "Failure",
                    message,
                    reason: "Forbidden",
                    code: 403,
                }),
                audit_annotations: &self.audit_annotations,
                warnings: &self.warnings,
                patch_type: self.patch.as_ref().map(|_| "JSONPatch"),
                patch: self.patch.as_ref().map(|p| BASE64_STANDARD.encode(p)),
            },
        };
        // Strings, bools and numbers into a Vec: serializing cannot fail.
        serde_json::to_vec(&envelope).unwrap_or_default()
    }
}

/// Whether `key` can be an audit annotation key once the API server prefixes it with
/// `<webhook name>/`: the name part of a qualified name, at most 63 characters of ASCII
/// letters, digits, `-`, `_` and `.`, starting and ending with a letter or digit
/// (`IsQualifiedName` in `k8s.io/apimachinery/pkg/util/validation/validation.go`).
pub fn is_annotation_key(key: &str) -> bool {
    let b = key.as_bytes();
    match (b.first(), b.last()) {
        (Some(first), Some(last)) => {
            b.len() <= 63
                && first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && b.iter()
                    .all(|c| c.is_ascii_alphanumeric() || b"-_.".contains(c))
        }
        _ => false,
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Envelope<'a> {
    api_version: &'static str,
    kind: &'static str,
    response: Wire<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Wire<'a> {
    uid: &'a str,
    allowed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<Status<'a>>,
    #[serde(skip_serializing_if = "no_annotations")]
    audit_annotations: &'a BTreeMap<String, String>,
    #[serde(skip_serializing_if = "no_warnings")]
    warnings: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    patch_type: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    patch: Option<String>,
}

fn no_annotations(m: &&BTreeMap<String, String>) -> bool {
    m.is_empty()
}

fn no_warnings(w: &&[String]) -> bool {
    w.is_empty()
}

/// `metav1.Status` of a refusal, as the API server reads `response.status`.
#[derive(Serialize)]
struct Status<'a> {
    status: &'static str,
    message: &'a str,
    reason: &'static str,
    code: u16,
}
