//! [`FieldHead`]: a field that should hold an object (an admission request's `object` or
//! `oldObject`), read in the pass over the document that holds it: the object's [`Head`], or
//! what JSON type the field held instead. Reading the head there, rather than copying the
//! object's text out and reading it again, goes over its bytes once.

use super::head::Head;
use serde::de::value::MapAccessDeserializer;
use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use std::fmt;

/// The head of the object a field holds, or the JSON type it holds instead (`"an array"`,
/// `"a string"`, `"a boolean"`, `"a number"`, `"null"`).
pub struct FieldHead(pub(super) Result<Box<Head>, &'static str>);

impl<'de> Deserialize<'de> for FieldHead {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(FieldHeadVisitor)
    }
}

struct FieldHeadVisitor;

impl<'de> Visitor<'de> for FieldHeadVisitor {
    type Value = FieldHead;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Kubernetes object")
    }
    fn visit_bool<E>(self, _: bool) -> Result<FieldHead, E> {
        Ok(FieldHead(Err("a boolean")))
    }
    fn visit_i64<E>(self, _: i64) -> Result<FieldHead, E> {
        Ok(FieldHead(Err("a number")))
    }
    fn visit_u64<E>(self, _: u64) -> Result<FieldHead, E> {
        Ok(FieldHead(Err("a number")))
    }
    fn visit_f64<E>(self, _: f64) -> Result<FieldHead, E> {
        Ok(FieldHead(Err("a number")))
    }
    fn visit_str<E>(self, _: &str) -> Result<FieldHead, E> {
        Ok(FieldHead(Err("a string")))
    }
    fn visit_unit<E>(self) -> Result<FieldHead, E> {
        Ok(FieldHead(Err("null")))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<FieldHead, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(FieldHead(Err("an array")))
    }
    /// Read as a `Lenient<FromObject<Head>>` reads an object's text on its own: the same
    /// reader, so the head is the same either way.
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<FieldHead, A::Error> {
        let head = Head::deserialize(MapAccessDeserializer::new(map))?;
        Ok(FieldHead(Ok(Box::new(head))))
    }
}
