//! Structs come from JSON objects only. Go's `encoding/json`, which kube-apiserver and every
//! webhook peer use, refuses a JSON array where a struct is expected; serde's derived structs
//! also accept the sequence form (`["authorization.k8s.io/v1","SubjectAccessReview",{...}]`
//! decodes field by field). Every derived struct warrant reads from the wire is checked with
//! [`refuse_array`] first. Types decoded by k8s-openapi need no check:
//! their visitors accept maps only.

use serde::de::{Error as _, Unexpected};

/// An error when `json` (leading whitespace allowed) is an array: `invalid type: sequence,
/// expected <expected>`, as serde words a type mismatch.
pub(crate) fn refuse_array(json: &[u8], expected: &'static str) -> Result<(), serde_json::Error> {
    match json.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'[') => Err(serde_json::Error::invalid_type(Unexpected::Seq, &expected)),
        _ => Ok(()),
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
}
