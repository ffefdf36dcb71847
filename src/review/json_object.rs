//! Structs come from JSON objects only. Go's `encoding/json`, which kube-apiserver and every
//! webhook peer use, refuses a JSON array where a struct is expected; serde's derived structs
//! also accept the sequence form (`["authorization.k8s.io/v1","SubjectAccessReview",{...}]`
//! decodes field by field). Every derived struct warrant reads from the wire is checked with
//! [`refuse_array`] first. Types decoded by k8s-openapi need no check:
//! their visitors accept maps only.

use serde::Deserializer;
use serde::de::value::MapAccessDeserializer;
use serde::de::{DeserializeOwned, Error as _, MapAccess, Unexpected, Visitor};
use std::fmt;
use std::marker::PhantomData;

/// An error when `json` (leading whitespace allowed) is an array: `invalid type: sequence,
/// expected <expected>`, as serde words a type mismatch.
pub(crate) fn refuse_array(json: &[u8], expected: &'static str) -> Result<(), serde_json::Error> {
    match json.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'[') => Err(serde_json::Error::invalid_type(Unexpected::Seq, &expected)),
        _ => Ok(()),
    }
}

/// A nested struct from a JSON object only (or `null`), for a field of a derived struct:
/// `#[serde(default, deserialize_with = "object_only")]`. Read in the one pass (the object's
/// entries go straight to `T`).
pub fn object_only<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    d.deserialize_option(ObjectOnly(PhantomData))
}

struct ObjectOnly<T>(PhantomData<T>);

impl<'de, T: DeserializeOwned> Visitor<'de> for ObjectOnly<T> {
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

#[cfg(test)]
mod tests {
    use super::refuse_array;

    #[test]
    fn arrays_are_refused_objects_and_other_values_pass() {
        let e = refuse_array(b" \n[1, 2]", "a SubjectAccessReview").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid type: sequence, expected a SubjectAccessReview"
        );
        assert!(refuse_array(b"{\"a\": [1]}", "x").is_ok());
        // Other mismatches are left to the decoder, which refuses them itself.
        assert!(refuse_array(b"\"text\"", "x").is_ok());
        assert!(refuse_array(b"", "x").is_ok());
    }

    #[derive(Debug, serde::Deserialize)]
    struct Outer {
        #[serde(default, deserialize_with = "super::object_only")]
        inner: Option<Inner>,
    }

    #[derive(Debug, serde::Deserialize)]
    struct Inner {
        a: u32,
    }

    #[test]
    fn a_nested_struct_is_read_from_an_object_or_null_and_nothing_else() {
        let read = |s: &str| serde_json::from_str::<Outer>(s).map(|o| o.inner.map(|i| i.a));
        assert_eq!(read(r#"{"inner": {"a": 7}}"#).unwrap(), Some(7));
        assert_eq!(read(r#"{"inner": null}"#).unwrap(), None);
        assert_eq!(read(r#"{}"#).unwrap(), None);
        let e = read(r#"{"inner": [7]}"#).unwrap_err().to_string();
        assert!(
            e.starts_with("invalid type: sequence, expected a JSON object"),
            "{e}"
        );
        let e = read(r#"{"inner": "a"}"#).unwrap_err().to_string();
        assert!(
            e.starts_with(r#"invalid type: string "a", expected a JSON object"#),
            "{e}"
        );
        let e = read(r#"{"inner": {"a": "x"}}"#).unwrap_err().to_string();
        assert!(e.starts_with("invalid type: string"), "{e}");
    }
}
