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
use crate::decision::AnnotationValue;
use base64::Engine as _;
use base64::prelude::BASE64_STANDARD;
use std::borrow::Cow;
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
    pub(crate) audit_annotations: BTreeMap<Cow<'static, str>, AnnotationValue>,
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
    pub fn annotate(
        &mut self,
        key: impl Into<Cow<'static, str>>,
        value: impl Into<AnnotationValue>,
    ) -> bool {
        let key = key.into();
        if !is_annotation_key(&key) {
            return false;
        }
        self.audit_annotations.insert(key, value.into());
        true
    }

    /// The text of the audit annotation `key`, if any.
    pub fn audit_annotation(&self, key: &str) -> Option<String> {
        self.audit_annotations
            .get(key)
            .map(|v| v.text().into_owned())
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

    /// The response as an `AdmissionReview` JSON body: written field by field, the fields serde
    /// would write in its order (`tests_encode` compares the bytes with serde's), so that an
    /// annotation holding a document goes out as it was escaped (`AnnotationValue::EscapedJson`).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Json(Vec::with_capacity(self.encoded_len_estimate()));
        out.raw(br#"{"apiVersion":"#);
        out.string(API_VERSION);
        out.raw(br#","kind":"#);
        out.string(KIND);
        out.raw(br#","response":{"uid":"#);
        out.string(&self.uid);
        out.raw(if self.allowed {
            br#","allowed":true"#
        } else {
            br#","allowed":false"#
        });
        if let Some(message) = &self.denial {
            // `metav1.Status` of a refusal, as the API server reads `response.status`.
            out.raw(br#","status":{"status":"Failure","message":"#);
            out.string(message);
            out.raw(br#","reason":"Forbidden","code":403}"#);
        }
        if !self.audit_annotations.is_empty() {
            out.raw(br#","auditAnnotations":{"#);
            for (i, (key, value)) in self.audit_annotations.iter().enumerate() {
                out.raw(if i == 0 { b"" } else { b"," });
                out.string(key);
                out.raw(b":");
                match value {
                    AnnotationValue::Text(text) => out.string(text),
                    AnnotationValue::EscapedJson(escaped) => {
                        out.raw(b"\"");
                        out.raw(escaped.as_str().as_bytes());
                        out.raw(b"\"");
                    }
                }
            }
            out.raw(b"}");
        }
        if !self.warnings.is_empty() {
            out.raw(br#","warnings":["#);
            for (i, warning) in self.warnings.iter().enumerate() {
                out.raw(if i == 0 { b"" } else { b"," });
                out.string(warning);
            }
            out.raw(b"]");
        }
        if let Some(patch) = &self.patch {
            out.raw(br#","patchType":"JSONPatch","patch":"#);
            out.string(&BASE64_STANDARD.encode(patch));
        }
        out.raw(b"}}");
        out.0
    }
}

impl AdmissionResponse {
    /// The encoded length when nothing needs escaping (quotes and separators included): the
    /// body is written into one allocation of about its size, not grown on the way (a refusal's
    /// message and the annotations' text are most of it).
    fn encoded_len_estimate(&self) -> usize {
        let annotations: usize = self
            .audit_annotations
            .iter()
            .map(|(key, value)| key.len() + value_len(value) + 6)
            .sum();
        let denial = self.denial.as_ref().map_or(0, |m| m.len() + 64);
        let warnings: usize = self.warnings.iter().map(|w| w.len() + 3).sum();
        let patch = self
            .patch
            .as_ref()
            .map_or(0, |p| p.len().div_ceil(3) * 4 + 48);
        192 + self.uid.len() + denial + annotations + warnings + patch
    }
}

/// The bytes an annotation's value takes when written as it is (text needing no escaping).
fn value_len(value: &AnnotationValue) -> usize {
    match value {
        AnnotationValue::EscapedJson(escaped) => escaped.as_str().len(),
        AnnotationValue::Text(text) => text.len(),
    }
}

/// A JSON body being written.
struct Json(Vec<u8>);

impl Json {
    fn raw(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }

    /// A string, quoted and escaped as serde_json does.
    fn string(&mut self, s: &str) {
        crate::review::json_string(&mut self.0, s);
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
