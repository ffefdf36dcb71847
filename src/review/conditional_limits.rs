//! The limits kube-apiserver puts on a ConditionsMap (`ConditionsAwareDecisionConditionsMap` in
//! `k8s.io/apiserver/pkg/authorization/authorizer/conditionsmap.go`, and the `+k8s:` markers of
//! `k8s.io/api/authorization/v1/types.go`, both v0.38.0-beta.0). A map that breaks one is failed
//! closed by the API server, so warrant refuses such conditions when the configuration is loaded.

use super::conditional::{Condition, ConditionsMap};
use thiserror::Error;

/// At most this many conditions in one map, all effects together.
pub(crate) const MAX_CONDITIONS_PER_MAP: usize = 128;
/// A condition's text is at most this many bytes.
pub(crate) const MAX_CONDITION_BYTES: usize = 10240;
/// A condition's description is at most this many bytes.
pub(crate) const MAX_DESCRIPTION_BYTES: usize = 1024;

/// Why a condition or map breaks a limit.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub(crate) enum LimitError {
    /// The id (or type) is not a domain-prefixed label key.
    #[error("{field} {value:?} is not a domain-prefixed label key ({why})")]
    NotPrefixedKey {
        /// `id` or `type`.
        field: &'static str,
        /// The value.
        value: String,
        /// What is wrong.
        why: &'static str,
    },
    /// The id's domain is reserved for Kubernetes.
    #[error("{field} {value:?} uses a domain reserved for Kubernetes (*.k8s.io, *.kubernetes.io)")]
    Reserved {
        /// `id` or `type`.
        field: &'static str,
        /// The value.
        value: String,
    },
    /// Two conditions of one map share an id.
    #[error("duplicate condition id {0:?}")]
    Duplicate(String),
    /// Too many conditions.
    #[error("{0} conditions; at most {MAX_CONDITIONS_PER_MAP} are allowed in one map")]
    TooMany(usize),
    /// A condition or description is too long.
    #[error("condition {id:?}: {what} is {len} bytes; at most {max} are allowed")]
    TooLong {
        /// The condition.
        id: String,
        /// `condition` or `description`.
        what: &'static str,
        /// Its length.
        len: usize,
        /// The limit.
        max: usize,
    },
}

/// Checks `key` as `IsDomainPrefixedKey` does (a DNS-1123 subdomain, `/`, a label-key name).
pub(crate) fn check_prefixed_key(field: &'static str, key: &str) -> Result<(), LimitError> {
    let bad = |why| LimitError::NotPrefixedKey {
        field,
        value: key.to_owned(),
        why,
    };
    let (prefix, name) = key.split_once('/').ok_or_else(|| bad("no domain prefix"))?;
    if prefix.is_empty() || prefix.len() > 253 {
        return Err(bad("the prefix must be 1 to 253 characters"));
    }
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && l.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    if !prefix.split('.').all(label_ok) {
        return Err(bad("the prefix must be a lowercase DNS subdomain"));
    }
    let name_char = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.');
    let ends_ok = name
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphanumeric())
        && name
            .bytes()
            .last()
            .is_some_and(|b| b.is_ascii_alphanumeric());
    if name.is_empty() || name.len() > 63 || !ends_ok || !name.bytes().all(name_char) {
        return Err(bad(
            "the name must be 1 to 63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric",
        ));
    }
    let reserved = |d: &str| prefix == d || prefix.ends_with(&format!(".{d}"));
    if reserved("k8s.io") || reserved("kubernetes.io") {
        return Err(LimitError::Reserved {
            field,
            value: key.to_owned(),
        });
    }
    Ok(())
}

/// Whether `name` is a DNS-1123 subdomain (`IsDNS1123Subdomain`): at most 253 characters of
/// dot-separated lowercase labels, each alphanumeric at both ends (the names of a union).
pub(crate) fn is_dns1123_subdomain(name: &str) -> bool {
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    !name.is_empty() && name.len() <= 253 && name.split('.').all(label_ok)
}

/// Checks one condition: its id and type, and the sizes of its text and description.
pub(crate) fn check_condition(c: &Condition) -> Result<(), LimitError> {
    check_prefixed_key("id", &c.id)?;
    if !c.condition_type.is_empty() {
        // The API server's own type (authorizer.kubernetes.io/cel) is the one reserved domain a
        // condition may name: it is the type the API server handles.
        if c.condition_type != super::CEL_CONDITION_TYPE {
            check_prefixed_key("type", &c.condition_type)?;
        }
    }
    let sizes = [
        ("condition", c.condition.len(), MAX_CONDITION_BYTES),
        ("description", c.description.len(), MAX_DESCRIPTION_BYTES),
    ];
    for (what, len, max) in sizes {
        if len > max {
            return Err(LimitError::TooLong {
                id: c.id.clone(),
                what,
                len,
                max,
            });
        }
    }
    Ok(())
}

/// Checks a whole map: each condition, unique ids, at most [`MAX_CONDITIONS_PER_MAP`].
pub(crate) fn check_map(m: &ConditionsMap) -> Result<(), LimitError> {
    if m.len() > MAX_CONDITIONS_PER_MAP {
        return Err(LimitError::TooMany(m.len()));
    }
    let mut seen = std::collections::HashSet::new();
    let all = m
        .deny_conditions
        .iter()
        .chain(&m.no_opinion_conditions)
        .chain(&m.allow_conditions);
    for c in all {
        check_condition(c)?;
        if !seen.insert(c.id.as_str()) {
            return Err(LimitError::Duplicate(c.id.clone()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cond(id: &str) -> Condition {
        Condition {
            id: id.into(),
            condition: "true".into(),
            ..Default::default()
        }
    }

    #[test]
    fn ids_are_domain_prefixed_label_keys() {
        assert!(check_prefixed_key("id", "warrant.dev/protected-critical").is_ok());
        assert!(check_prefixed_key("id", "a/B_c.d").is_ok());
        for bad in ["plain", "/x", "Warrant.dev/x", "a/-x", "a/x-", "a/", "-a/x"] {
            assert!(check_prefixed_key("id", bad).is_err(), "{bad}");
        }
        assert!(matches!(
            check_prefixed_key("id", "authorizer.kubernetes.io/x"),
            Err(LimitError::Reserved { .. })
        ));
        assert!(matches!(
            check_prefixed_key("id", "k8s.io/x"),
            Err(LimitError::Reserved { .. })
        ));
        let long = format!("a/{}", "x".repeat(64));
        assert!(check_prefixed_key("id", &long).is_err());
    }

    #[test]
    fn maps_are_bounded_and_unique() {
        let mut m = ConditionsMap {
            deny_conditions: vec![cond("w.dev/a")],
            allow_conditions: vec![cond("w.dev/a")],
            ..Default::default()
        };
        assert_eq!(check_map(&m), Err(LimitError::Duplicate("w.dev/a".into())));
        m.allow_conditions = (0..128).map(|i| cond(&format!("w.dev/c{i}"))).collect();
        assert_eq!(check_map(&m), Err(LimitError::TooMany(129)));
        m.allow_conditions.pop();
        assert_eq!(check_map(&m), Ok(()));
        let mut c = cond("w.dev/long");
        c.description = "d".repeat(1025);
        assert!(matches!(
            check_condition(&c),
            Err(LimitError::TooLong {
                what: "description",
                ..
            })
        ));
        c.description.clear();
        c.condition = "x".repeat(10241);
        assert!(matches!(
            check_condition(&c),
            Err(LimitError::TooLong {
                what: "condition",
                ..
            })
        ));
        c.condition = "true".into();
        c.condition_type = super::super::CEL_CONDITION_TYPE.into();
        assert_eq!(check_condition(&c), Ok(()));
    }
}
