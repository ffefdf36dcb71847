//! [`Subject`]: one Kubernetes object, with the few reads the guard makes of it.
//!
//! An object that arrives as JSON text (an admission request's `object` or `oldObject`) is read
//! once into its [`Head`] (type, metadata, `spec.replicas`), and parsed into a
//! `serde_json::Value` only if something asks for the whole of it: the validation ring's
//! decision reads nothing else, and building the tree was a third of its time. Read in the
//! request's own pass ([`FieldHead`]), not even its text is copied out: the request's body is
//! kept, and the object's text found in it again on first use.

mod field;
mod head;
mod lenient;

pub use field::FieldHead;

use bytes::Bytes;
use head::{Head, Meta};
use lenient::{FromObject, Lenient};
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

/// One Kubernetes object as it arrived (an admission request's `object` or `oldObject`, or a
/// saved file), read through accessors that never fail: a missing or mistyped field reads as
/// absent.
#[derive(Clone)]
pub struct Subject {
    /// Boxed: the head is a few hundred bytes and subjects move through enums and options.
    head: Box<Head>,
    source: Source,
}

#[derive(Clone)]
enum Source {
    /// Given as a tree.
    Json(Value),
    /// Given as text; the tree is built on first use.
    Text { raw: Text, json: OnceLock<Value> },
}

/// Finds an object's text in the body of the document it came in (`None`: not there).
pub type FindText = fn(&[u8]) -> Option<Box<RawValue>>;

/// An object's text: its own copy, or found on first use in the body it came in.
#[derive(Clone)]
enum Text {
    Own(Box<RawValue>),
    InBody {
        body: Bytes,
        find: FindText,
        found: OnceLock<Option<Box<RawValue>>>,
    },
}

impl Text {
    fn get(&self) -> Option<&str> {
        match self {
            Text::Own(raw) => Some(raw.get()),
            Text::InBody { body, find, found } => found
                .get_or_init(|| find(body))
                .as_deref()
                .map(RawValue::get),
        }
    }
}

impl Subject {
    /// Wraps an object.
    pub fn new(object: Value) -> Self {
        let head = Lenient::<FromObject<Head>>::deserialize(&object)
            .ok()
            .and_then(|h| h.0)
            .map(|h| h.0)
            .unwrap_or_default();
        Self {
            head: Box::new(head),
            source: Source::Json(object),
        }
    }

    /// Reads an object from its JSON text, which must parse.
    pub fn from_text(raw: Box<RawValue>) -> Result<Self, serde_json::Error> {
        match serde_json::from_str::<Lenient<FromObject<Head>>>(raw.get()) {
            Ok(head) => Ok(Self {
                head: Box::new(head.0.map(|h| h.0).unwrap_or_default()),
                source: Source::Text {
                    raw: Text::Own(raw),
                    json: OnceLock::new(),
                },
            }),
            // A field named twice in one object (the derived reader refuses it; Go's decoder
            // and `Value` keep the last): read the tree, as before.
            Err(_) => serde_json::from_str(raw.get()).map(Self::new),
        }
    }

    /// The object whose head was read in the pass over `body`; `find` finds its text in
    /// `body` when something asks for more than the head. A field that held no object is
    /// the JSON type it held (`"an array"`, `"a string"`, ...).
    pub fn in_body(head: FieldHead, body: Bytes, find: FindText) -> Result<Self, &'static str> {
        Ok(Self {
            head: head.0?,
            source: Source::Text {
                raw: Text::InBody {
                    body,
                    find,
                    found: OnceLock::new(),
                },
                json: OnceLock::new(),
            },
        })
    }

    /// The object as JSON (for an object given as text, parsed on first use; text that no
    /// longer parses as a tree, such as a number past `f64`'s range, reads as `null`).
    pub fn json(&self) -> &Value {
        match &self.source {
            Source::Json(v) => v,
            Source::Text { raw, json } => json.get_or_init(|| {
                let text = raw.get();
                text.and_then(|t| serde_json::from_str(t).ok())
                    .unwrap_or(Value::Null)
            }),
        }
    }

    /// The object decoded as `W` (from its text when it came as text, without building the
    /// tree).
    pub fn decode<'a, W: Deserialize<'a>>(&'a self) -> Result<W, serde_json::Error> {
        match &self.source {
            Source::Json(v) => W::deserialize(v),
            Source::Text { raw, .. } => match raw.get() {
                Some(text) => serde_json::from_str(text),
                None => Err(serde::de::Error::custom(
                    "the object's text is no longer in its request body",
                )),
            },
        }
    }

    /// `apiVersion`.
    pub fn api_version(&self) -> &str {
        self.head.api_version.0.as_deref().unwrap_or("")
    }

    /// `kind`.
    pub fn kind(&self) -> &str {
        self.head.kind.0.as_deref().unwrap_or("")
    }

    /// `metadata.name`.
    pub fn name(&self) -> &str {
        self.meta_str(|m| &m.name)
    }

    /// `metadata.namespace` (`""` for a cluster-scoped object).
    pub fn namespace(&self) -> &str {
        self.meta_str(|m| &m.namespace)
    }

    /// `metadata.uid`.
    pub fn uid(&self) -> &str {
        self.meta_str(|m| &m.uid)
    }

    /// The value of label `key`.
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels()?.get(key).map(String::as_str)
    }

    /// The labels whose values are strings.
    pub fn labels(&self) -> Option<&BTreeMap<String, String>> {
        self.head.meta()?.labels.0.as_deref()
    }

    /// The labels whose values are strings, shared (a copy costs a count, not the map).
    pub fn shared_labels(&self) -> Option<Arc<BTreeMap<String, String>>> {
        self.head.meta()?.labels.0.clone()
    }

    /// The value of annotation `key`.
    pub fn annotation(&self, key: &str) -> Option<&str> {
        let annotations = self.head.meta()?.annotations.0.as_ref()?;
        annotations.get(key).map(String::as_str)
    }

    /// `spec.replicas` of a workload, when the object has one.
    pub fn replicas(&self) -> Option<i64> {
        self.head.spec()?.replicas.0
    }

    /// `metadata.deletionTimestamp`: set once a deletion has begun and finalizers hold the
    /// object (it is Terminating).
    pub(crate) fn deletion_timestamp(&self) -> Option<&str> {
        Some(self.meta_str(|m| &m.deletion_timestamp)).filter(|t| !t.is_empty())
    }

    /// Whether `metadata.finalizers` lists `name`.
    pub(crate) fn has_finalizer(&self, name: &str) -> bool {
        let finalizers = self.head.meta().and_then(|m| m.finalizers.0.as_ref());
        finalizers.is_some_and(|f| f.iter().any(|v| v == name))
    }

    fn meta_str(&self, field: impl Fn(&Meta) -> &Lenient<String>) -> &str {
        let value = self.head.meta().and_then(|m| field(m).0.as_deref());
        value.unwrap_or("")
    }
}

/// Two subjects are equal when their objects are.
impl PartialEq for Subject {
    fn eq(&self, other: &Self) -> bool {
        self.json() == other.json()
    }
}

impl fmt::Debug for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Subject").field(self.json()).finish()
    }
}

#[cfg(test)]
mod tests;
