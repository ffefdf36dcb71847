//! Structs come from JSON objects only. Go's `encoding/json`, which kube-apiserver and every
//! webhook peer use, refuses a JSON array where a struct is expected; serde's derived structs
//! also accept the sequence form (`["authorization.k8s.io/v1","SubjectAccessReview",{...}]`
//! decodes field by field). Every derived struct warrant reads from the wire is checked with
//! [`refuse_array`] first. Types decoded by k8s-openapi need no check:
//! their visitors accept maps only.

use serde::de::{DeserializeOwned, Error as _, Unexpected};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

/// An error when `json` (leading whitespace allowed) is an array: `invalid type: sequence,
/// expected <expected>`, as serde words a type mismatch.
pub(crate) fn refuse_array(json: &[u8], expected: &'static str) -> Result<(), serde_json::Error> {
    match json.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'[') => Err(serde_json::Error::invalid_type(Unexpected::Seq, &expected)),
        _ => Ok(()),
    }
}

/// A nested struct from a JSON object only (or `null`), for a field of a derived struct:
/// `#[serde(default, deserialize_with = "object_only")]`.
pub fn object_only<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    let Some(raw) = Option::<Box<RawValue>>::deserialize(d)? else {
        return Ok(None);
    };
    refuse_array(raw.get().as_bytes(), "a JSON object").map_err(D::Error::custom)?;
    serde_json::from_str::<Option<T>>(raw.get()).map_err(D::Error::custom)
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
}
