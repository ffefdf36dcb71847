//! Bytes to [`AdmissionRequest`]: decode the review in one pass (or, when that fails, peek at
//! `apiVersion` and `kind` first, so the error names the envelope's fault before the
//! request's), then check that it carries what the validation ring needs.
//!
//! In the one pass, `object` and `oldObject` are read only as far as their heads
//! ([`FieldHead`]); the body is kept, and an object's text is found in it again only when
//! something asks for more than its head ([`object_text`], [`old_object_text`]).

use super::error::AdmissionError;
use super::request::{
    AdmissionOperation, AdmissionRequest, GroupVersionKind, GroupVersionResource,
};
use crate::object::{FieldHead, FindText, Subject};
use crate::review::{object_only, refuse_array};
use bytes::Bytes;
use k8s_openapi::api::authentication::v1::UserInfo;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use std::borrow::Cow;

/// The only `apiVersion` served (`admissionReviewVersions: [v1]` in the shipped configuration).
pub const API_VERSION: &str = "admission.k8s.io/v1";

/// The `kind` of the envelope, in both directions.
pub const KIND: &str = "AdmissionReview";

/// The whole review in one pass: what a well-formed body decodes as (the objects as `O`).
#[derive(Deserialize)]
#[serde(bound = "O: DeserializeOwned")]
struct Whole<'a, O> {
    #[serde(rename = "apiVersion", default, borrow)]
    api_version: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(default, deserialize_with = "object_only")]
    request: Option<WireRequest<O>>,
}

/// The envelope with `request` left as text: for a body [`Whole`] cannot read, so that its
/// error names the envelope's fault before the request's.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(rename = "apiVersion", default)]
    api_version: Option<String>,
    #[serde(default)]
    kind: Option<String>,
    #[serde(borrow, default)]
    request: Option<&'a RawValue>,
}

/// `request` as sent, its objects as `O` (their heads in the one pass, their text otherwise);
/// every field optional here, checked by [`checked`]. The fields nothing reads
/// (`requestKind`, `requestResource`, `requestSubResource`, `options`) are skipped unparsed,
/// as unknown fields are: decoding them was a twentieth of a decision.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", bound = "O: DeserializeOwned")]
struct WireRequest<O> {
    #[serde(default)]
    uid: Option<String>,
    #[serde(default, deserialize_with = "object_only")]
    kind: Option<GroupVersionKind>,
    #[serde(default, deserialize_with = "object_only")]
    resource: Option<GroupVersionResource>,
    #[serde(default)]
    sub_resource: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    namespace: Option<String>,
    #[serde(default)]
    operation: Option<String>,
    #[serde(default)]
    user_info: Option<UserInfo>,
    #[serde(default)]
    object: Option<O>,
    #[serde(default)]
    old_object: Option<O>,
    #[serde(default)]
    dry_run: Option<bool>,
}

/// Decodes one admission request from a JSON body (copied, to be kept: see
/// [`decode_shared`]).
pub fn decode(body: &[u8]) -> Result<AdmissionRequest, AdmissionError> {
    decode_shared(Bytes::copy_from_slice(body))
}

/// Decodes one admission request from a JSON body, which the request's objects keep (their
/// text is found in it when asked for).
pub fn decode_shared(body: Bytes) -> Result<AdmissionRequest, AdmissionError> {
    refuse_array(&body, "an AdmissionReview object").map_err(AdmissionError::NotJson)?;
    // UTF-8 checked once for the whole body, so that the parser reads each string without
    // checking it again; a body that is not UTF-8 takes the path below, whose error says where.
    // A body the one pass cannot read (a field named twice in an object, say) takes it too.
    if let Ok(text) = std::str::from_utf8(&body)
        && let Ok(whole) = serde_json::from_str::<Whole<'_, FieldHead>>(text)
    {
        envelope_checked(whole.api_version.as_deref(), whole.kind.as_deref())?;
        let wire = whole.request.ok_or(AdmissionError::MissingRequest)?;
        return checked(wire, |field, head| in_body(field, head, &body));
    }
    let envelope: Envelope<'_> = serde_json::from_slice(&body).map_err(AdmissionError::NotJson)?;
    envelope_checked(envelope.api_version.as_deref(), envelope.kind.as_deref())?;
    let raw = envelope.request.ok_or(AdmissionError::MissingRequest)?;
    refuse_array(raw.get().as_bytes(), "an AdmissionRequest object")
        .map_err(AdmissionError::InvalidRequest)?;
    let wire: WireRequest<Box<RawValue>> =
        serde_json::from_str(raw.get()).map_err(AdmissionError::InvalidRequest)?;
    checked(wire, from_text)
}

/// The envelope's `apiVersion` and `kind`.
fn envelope_checked(api_version: Option<&str>, kind: Option<&str>) -> Result<(), AdmissionError> {
    match api_version {
        None | Some("") => return Err(AdmissionError::MissingApiVersion),
        Some(API_VERSION) => {}
        Some(other) => return Err(AdmissionError::UnsupportedApiVersion(other.to_owned())),
    }
    match kind {
        Some(KIND) => Ok(()),
        other => Err(AdmissionError::WrongKind(other.unwrap_or("").to_owned())),
    }
}

/// The request, once it has everything warrant reads (`subject` makes `object` and
/// `oldObject` of what was read of them).
fn checked<O>(
    wire: WireRequest<O>,
    subject: impl Fn(Field, O) -> Result<Subject, AdmissionError>,
) -> Result<AdmissionRequest, AdmissionError> {
    let uid = wire
        .uid
        .filter(|u| !u.is_empty())
        .ok_or(AdmissionError::Missing("uid"))?;
    let operation = match wire.operation.as_deref() {
        None | Some("") => return Err(AdmissionError::Missing("operation")),
        Some(op) => AdmissionOperation::parse(op)
            .ok_or_else(|| AdmissionError::UnknownOperation(op.to_owned()))?,
    };
    let user_info = wire.user_info.ok_or(AdmissionError::Missing("userInfo"))?;
    let kind = wire.kind.ok_or(AdmissionError::Missing("kind"))?;
    let resource = wire.resource.ok_or(AdmissionError::Missing("resource"))?;
    if resource.resource.is_empty() {
        return Err(AdmissionError::Missing("resource.resource"));
    }
    let object = wire.object.map(|o| subject(Field::Object, o)).transpose()?;
    let old_object = wire
        .old_object
        .map(|o| subject(Field::OldObject, o))
        .transpose()?;
    let needs = |field, present: bool| {
        if present {
            Ok(())
        } else {
            Err(AdmissionError::MissingForOperation {
                field,
                operation: operation.as_str(),
            })
        }
    };
    match operation {
        AdmissionOperation::Delete => needs("oldObject", old_object.is_some())?,
        AdmissionOperation::Update => {
            needs("object", object.is_some())?;
            needs("oldObject", old_object.is_some())?;
        }
        AdmissionOperation::Create | AdmissionOperation::Connect => {}
    }
    Ok(AdmissionRequest {
        uid,
        kind,
        resource,
        sub_resource: wire.sub_resource.unwrap_or_default(),
        name: wire.name.unwrap_or_default(),
        namespace: wire.namespace.unwrap_or_default(),
        operation,
        user_info,
        object,
        old_object,
        dry_run: wire.dry_run.unwrap_or(false),
    })
}

/// Which of the request's objects.
#[derive(Debug, Clone, Copy)]
enum Field {
    Object,
    OldObject,
}

impl Field {
    fn name(self) -> &'static str {
        match self {
            Field::Object => "object",
            Field::OldObject => "oldObject",
        }
    }

    fn find(self) -> FindText {
        match self {
            Field::Object => object_text,
            Field::OldObject => old_object_text,
        }
    }
}

/// An object whose head the one pass read, kept with the body it is in; anything but a JSON
/// object is refused.
fn in_body(field: Field, head: FieldHead, body: &Bytes) -> Result<Subject, AdmissionError> {
    Subject::in_body(head, body.clone(), field.find()).map_err(|found| {
        AdmissionError::NotAnObject {
            field: field.name(),
            found,
        }
    })
}

/// An object given as its text; anything but a JSON object is refused.
fn from_text(field: Field, raw: Box<RawValue>) -> Result<Subject, AdmissionError> {
    let found = match raw.get().trim_start().as_bytes().first() {
        Some(b'{') => return Subject::from_text(raw).map_err(AdmissionError::InvalidRequest),
        Some(b'[') => "an array",
        Some(b'"') => "a string",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        _ => "a number",
    };
    Err(AdmissionError::NotAnObject {
        field: field.name(),
        found,
    })
}

/// The objects' text in a body the one pass read.
#[derive(Deserialize)]
struct Texts<'a> {
    #[serde(borrow, default)]
    request: Option<RequestTexts<'a>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RequestTexts<'a> {
    #[serde(borrow, default)]
    object: Option<&'a RawValue>,
    #[serde(borrow, default)]
    old_object: Option<&'a RawValue>,
}

/// The text of the request's `object` in `body`.
fn object_text(body: &[u8]) -> Option<Box<RawValue>> {
    let texts: Texts<'_> = serde_json::from_slice(body).ok()?;
    texts.request?.object.map(RawValue::to_owned)
}

/// The text of the request's `oldObject` in `body`.
fn old_object_text(body: &[u8]) -> Option<Box<RawValue>> {
    let texts: Texts<'_> = serde_json::from_slice(body).ok()?;
    texts.request?.old_object.map(RawValue::to_owned)
}
