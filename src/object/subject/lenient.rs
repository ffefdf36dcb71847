//! [`Lenient`]: a field that keeps a JSON value only when it has the expected type, and reads
//! anything else as absent (as `Value::get(..).and_then(Value::as_str)` would), without building
//! a `serde_json::Value` for it.

use serde::de::value::MapAccessDeserializer;
use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

/// A field of type `T` when the JSON has that type, else `None`.
#[derive(Debug, Clone, PartialEq)]
pub struct Lenient<T>(pub Option<T>);

impl<T> Default for Lenient<T> {
    fn default() -> Self {
        Self(None)
    }
}

/// What a [`Lenient`] field keeps of each kind of JSON value; every kind it does not take is
/// read (drained, for maps and arrays) and dropped.
pub trait Keep: Sized {
    /// A string.
    fn from_str(_: &str) -> Option<Self> {
        None
    }
    /// A non-negative integer.
    fn from_u64(_: u64) -> Option<Self> {
        None
    }
    /// A negative integer.
    fn from_i64(_: i64) -> Option<Self> {
        None
    }
    /// An object.
    fn from_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<Option<Self>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    /// An array.
    fn from_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<Option<Self>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
}

impl Keep for String {
    fn from_str(s: &str) -> Option<Self> {
        Some(s.to_owned())
    }
}

/// An integer, as `Value::as_i64` reads one (a float or an integer past `i64::MAX` is absent).
impl Keep for i64 {
    fn from_u64(v: u64) -> Option<Self> {
        i64::try_from(v).ok()
    }
    fn from_i64(v: i64) -> Option<Self> {
        Some(v)
    }
}

/// The string values of an object; a key whose (last) value is not a string is absent.
impl Keep for BTreeMap<String, String> {
    fn from_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<Option<Self>, A::Error> {
        let mut out = BTreeMap::new();
        while let Some(key) = map.next_key::<String>()? {
            match map.next_value::<Lenient<String>>()?.0 {
                Some(value) => out.insert(key, value),
                None => out.remove(&key),
            };
        }
        Ok(Some(out))
    }
}

/// A kept value, shared.
impl<T: Keep> Keep for std::sync::Arc<T> {
    fn from_str(s: &str) -> Option<Self> {
        T::from_str(s).map(Self::new)
    }
    fn from_u64(v: u64) -> Option<Self> {
        T::from_u64(v).map(Self::new)
    }
    fn from_i64(v: i64) -> Option<Self> {
        T::from_i64(v).map(Self::new)
    }
    fn from_map<'de, A: MapAccess<'de>>(map: A) -> Result<Option<Self>, A::Error> {
        T::from_map(map).map(|t| t.map(Self::new))
    }
    fn from_seq<'de, A: SeqAccess<'de>>(seq: A) -> Result<Option<Self>, A::Error> {
        T::from_seq(seq).map(|t| t.map(Self::new))
    }
}

/// The string elements of an array, in order; other elements are skipped.
impl Keep for Vec<String> {
    fn from_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<Option<Self>, A::Error> {
        let mut out = Vec::new();
        while let Some(element) = seq.next_element::<Lenient<String>>()? {
            out.extend(element.0);
        }
        Ok(Some(out))
    }
}

/// A struct that only a JSON object can give (serde's derived structs would also take an array,
/// by position).
#[derive(Debug, Clone, PartialEq)]
pub struct FromObject<T>(pub T);

impl<T: for<'de> Deserialize<'de>> Keep for FromObject<T> {
    fn from_map<'de, A: MapAccess<'de>>(map: A) -> Result<Option<Self>, A::Error> {
        T::deserialize(MapAccessDeserializer::new(map)).map(|t| Some(FromObject(t)))
    }
}

impl<'de, T: Keep> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LenientVisitor(PhantomData))
    }
}

struct LenientVisitor<T>(PhantomData<T>);

impl<'de, T: Keep> Visitor<'de> for LenientVisitor<T> {
    type Value = Lenient<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Lenient(None))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Lenient(T::from_i64(v)))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Lenient(T::from_u64(v)))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Lenient(None))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Lenient(T::from_str(v)))
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Lenient(None))
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(Lenient(None))
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        Lenient::deserialize(d)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        T::from_map(map).map(Lenient)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        T::from_seq(seq).map(Lenient)
    }
}
