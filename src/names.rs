//! Identifiers checked on construction: an [`AuthorizerName`] is a DNS-1123 subdomain as upstream
//! requires, a [`RuleName`] names a rule inside an authorizer, a [`Code`] is a machine-readable
//! SCREAMING_SNAKE decision code. Holding one of these means it is valid.

use std::fmt;
use std::sync::Arc;
use thiserror::Error;

/// Why a name was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum NameError {
    /// The name is empty.
    #[error("must not be empty")]
    Empty,
    /// The name breaks its format; the message says which.
    #[error("{0}")]
    Format(&'static str),
}

/// Maximum length of a DNS-1123 subdomain (`k8s.io/apimachinery/pkg/util/validation`).
pub(crate) const DNS1123_SUBDOMAIN_MAX_LENGTH: usize = 253;

/// The message upstream gives for a name that is not a DNS-1123 subdomain.
pub(crate) const DNS1123_SUBDOMAIN_MESSAGE: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

/// Checks a DNS-1123 subdomain the way `IsDNS1123Subdomain` does: at most 253 characters, dot
/// separated labels of lower-case alphanumerics and '-', each starting and ending alphanumeric.
pub(crate) fn is_dns1123_subdomain(s: &str) -> Result<(), NameError> {
    if s.is_empty() {
        return Err(NameError::Empty);
    }
    if s.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        return Err(NameError::Format("must be no more than 253 characters"));
    }
    let label_ok = |l: &str| {
        let b = l.as_bytes();
        !b.is_empty()
            && b.iter()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
            && b[0] != b'-'
            && b[b.len() - 1] != b'-'
    };
    if s.split('.').all(label_ok) {
        Ok(())
    } else {
        Err(NameError::Format(DNS1123_SUBDOMAIN_MESSAGE))
    }
}

/// The configured name of one authorizer in the chain (DNS-1123 subdomain).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AuthorizerName(Arc<str>);

impl AuthorizerName {
    /// Checks and wraps a name.
    pub fn new(s: &str) -> Result<Self, NameError> {
        is_dns1123_subdomain(s)?;
        Ok(Self(s.into()))
    }
}

/// The name of a rule inside an authorizer: 1-63 characters of ASCII letters, digits, '-', '_'
/// or '.', starting with a letter or digit.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RuleName(Arc<str>);

impl RuleName {
    /// Checks and wraps a rule name.
    pub fn new(s: &str) -> Result<Self, NameError> {
        let b = s.as_bytes();
        if b.is_empty() {
            return Err(NameError::Empty);
        }
        if b.len() > 63 {
            return Err(NameError::Format("must be no more than 63 characters"));
        }
        let ok = b[0].is_ascii_alphanumeric()
            && b.iter()
                .all(|c| c.is_ascii_alphanumeric() || b"-_.".contains(c));
        if ok {
            Ok(Self(s.into()))
        } else {
            Err(NameError::Format(
                "must consist of letters, digits, '-', '_' or '.', and start with a letter or digit",
            ))
        }
    }
}

/// A machine-readable decision code in SCREAMING_SNAKE case (`PROTECTED_RESOURCE`), at most 63
/// characters. It appears in reasons, audit records and metrics.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Code(Arc<str>);

impl Code {
    /// Checks and wraps a code.
    pub fn new(s: &str) -> Result<Self, NameError> {
        let b = s.as_bytes();
        if b.is_empty() {
            return Err(NameError::Empty);
        }
        if b.len() > 63 {
            return Err(NameError::Format("must be no more than 63 characters"));
        }
        let ok = b[0].is_ascii_uppercase()
            && b.iter()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == b'_');
        if ok {
            Ok(Self(s.into()))
        } else {
            Err(NameError::Format(
                "must be SCREAMING_SNAKE_CASE: upper-case letters, digits and '_', starting with a letter",
            ))
        }
    }
}

/// The plumbing every checked name shares: `as_str` and `Display`.
macro_rules! name_plumbing {
    ($t:ident) => {
        impl $t {
            /// The name as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

name_plumbing!(AuthorizerName);
name_plumbing!(RuleName);
name_plumbing!(Code);

#[cfg(test)]
mod tests;
