//! Bytes to [`AdmissionRequest`]: peek at `apiVersion` and `kind`, then decode `request` and
//! check that it carries what the validation ring needs.

use super::error::AdmissionError;
use super::request::{
    AdmissionOperation, AdmissionRequest, GroupVersionKind, GroupVersionResource,
};
use crate::object::Subject;
use crate::review::refuse_array;
use k8s_openapi::api::authentication::v1::UserInfo;
use serde::de::value::MapAccessDeserializer;
use serde::de::{DeserializeOwned, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use serde_json::value::RawValue;
use std::fmt;
use std::marker::PhantomData;

/// The only `apiVersion` served (`admissionReviewVersions: [v1]` in the shipped configuration).
pub const API_VERSION: &str = "admission.k8s.io/v1";

/// The `kind` of the envelope, in both directions.
pub const KIND: &str = "AdmissionReview";

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(rename = "apiVersion", default)]
    api_version: Option<String>,
    #[serde(default)]
    kind: Option<String>,
    #[serde(borrow, default)]
    request: Option<&'a RawValue>,
}

/// `request` as sent; every field optional here, checked by [`checked`].
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireRequest {
    #[serde(default)]
    uid: Option<String>,
    #[serde(default, deserialize_with = "map_only")]
    kind: Option<GroupVersionKind>,
    #[serde(default, deserialize_with = "map_only")]
    resource: Option<GroupVersionResource>,
    #[serde(default)]
    sub_resource: Option<String>,
    #[serde(default, deserialize_with = "map_only")]
    request_kind: Option<GroupVersionKind>,
    #[serde(default, deserialize_with = "map_only")]
    request_resource: Option<GroupVersionResource>,
    #[serde(default)]
    request_sub_resource: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    namespace: Option<String>,
    #[serde(default)]
    operation: Option<String>,
    #[serde(default)]
    user_info: Option<UserInfo>,
    #[serde(default)]
    object: Option<Box<RawValue>>,
    #[serde(default)]
    old_object: Option<Box<RawValue>>,
    #[serde(default)]
    dry_run: Option<bool>,
    #[serde(default)]
    options: Option<Value>,
}

/// A nested struct from a JSON object only (or `null`): serde's derived structs would also take
/// the sequence form, which Go's decoder refuses.
fn map_only<'de, D: Deserializer<'de>, T: DeserializeOwned>(d: D) -> Result<Option<T>, D::Error> {
    d.deserialize_option(MapOnly(PhantomData))
}

struct MapOnly<T>(PhantomData<T>);

impl<'de, T: DeserializeOwned> Visitor<'de> for MapOnly<T> {
    type Value = Option<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        T::deserialize(MapAccessDeserializer::new(map)).map(Some)
    }
}

/// Decodes one admission request from a JSON body.
pub fn decode(body: &[u8]) -> Result<AdmissionRequest, AdmissionError> {
    refuse_array(body, "an AdmissionReview object").map_err(AdmissionError::NotJson)?;
    let envelope: Envelope<'_> = serde_json::from_slice(body).map_err(AdmissionError::NotJson)?;
    match envelope.api_version.as_deref() {
        None | Some("") => return Err(AdmissionError::MissingApiVersion),
        Some(API_VERSION) => {}
        Some(other) => return Err(AdmissionError::UnsupportedApiVersion(other.to_owned())),
    }
    match envelope.kind.as_deref() {
        Some(KIND) => {}
        other => return Err(AdmissionError::WrongKind(other.unwrap_or("").to_owned())),
    }
    let raw = envelope.request.ok_or(AdmissionError::MissingRequest)?;
    refuse_array(raw.get().as_bytes(), "an AdmissionRequest object")
        .map_err(AdmissionError::InvalidRequest)?;
    let wire: WireRequest =
        serde_json::from_str(raw.get()).map_err(AdmissionError::InvalidRequest)?;
    checked(wire)
}

/// The request, once it has everything warrant reads.
fn checked(wire: WireRequest) -> Result<AdmissionRequest, AdmissionError> {
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
    let object = subject("object", wire.object)?;
    let old_object = subject("oldObject", wire.old_object)?;
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
        request_kind: wire.request_kind,
        request_resource: wire.request_resource,
        request_sub_resource: wire.request_sub_resource.unwrap_or_default(),
        name: wire.name.unwrap_or_default(),
        namespace: wire.namespace.unwrap_or_default(),
        operation,
        user_info,
        object,
        old_object,
        dry_run: wire.dry_run.unwrap_or(false),
        options: wire.options,
    })
}

/// `object` or `oldObject`: absent or `null` is none; anything but a JSON object is refused.
fn subject(
    field: &'static str,
    raw: Option<Box<RawValue>>,
) -> Result<Option<Subject>, AdmissionError> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    let found = match raw.get().trim_start().as_bytes().first() {
        Some(b'{') => {
            return Subject::from_text(raw)
                .map(Some)
                .map_err(AdmissionError::InvalidRequest);
        }
        Some(b'[') => "an array",
        Some(b'"') => "a string",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        _ => "a number",
    };
    Err(AdmissionError::NotAnObject { field, found })
}
