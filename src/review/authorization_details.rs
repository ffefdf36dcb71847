//! [`AuthorizationDetails`]: the machine-readable metadata an answer may carry in
//! `status.authorizationDetails`, so that kube-apiserver's own audit event says which
//! authorizer, rule, code and configuration revision decided, not only the free-text reason.
//!
//! The field comes from KEP-6001 "Structured authorization decision"
//! (`keps/sig-auth/6001-structured-authorization-decision/README.md` in kubernetes/enhancements,
//! pull request 6002, status `provisional`, alpha targeted at v1.37, feature gate
//! `StructuredAuthorizationDecision`): an optional `authorizationDetails` on
//! `SubjectAccessReviewStatus`, a `map[string]ExtraValue` (`ExtraValue` is `[]string`, the
//! convention of `SubjectAccessReviewSpec.Extra`), keys domain-prefixed so that webhooks do not
//! collide, at most 1 KB serialized, larger entries dropped by the API server, and copied into
//! the audit event's `authorizationDecision.webhook.details`. No release has it yet:
//! `k8s.io/api` v0.38.0-beta.0 (`authorization/v1/types.go`) has no such field and
//! kube-apiserver v1.38.0-beta.0 no such gate. An API server that does not know the field
//! drops it: the webhook authorizer decodes answers with client-go's `scheme.Codecs`, which is
//! not strict about unknown fields (`k8s.io/apiserver/plugin/pkg/authorizer/webhook/webhook.go`,
//! `k8s.io/apiserver/pkg/util/webhook/webhook.go`). So sending it is safe, but it is still off
//! unless `warrant serve --authorization-details` asks for it.
//!
//! Limits (docs/audit.md says the same): keys are a DNS-1123 subdomain, `/`, and a name of at
//! most 63 characters (the shape of an annotation key with its prefix, which the proposal's
//! examples follow); values are never cut. Entries are offered in priority order; one whose
//! addition would take the JSON of the map past [`MAX_AUTHORIZATION_DETAILS_BYTES`] is left out
//! whole, and the map then says so under [`TRUNCATED_KEY`], for which room is kept from the
//! start.

use crate::names::{NameError, is_dns1123_subdomain};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;

/// The most bytes the JSON of an `authorizationDetails` map may take (the proposal's 1 KB).
pub const MAX_AUTHORIZATION_DETAILS_BYTES: usize = 1024;

/// The key that says entries were left out for want of room; its value is `["true"]`.
pub const TRUNCATED_KEY: &str = "warrant.dev/truncated";

/// The authorizer of the chain that decided (its configured name).
pub const AUTHORIZER_KEY: &str = "warrant.dev/authorizer";
/// The rule inside that authorizer, when it has rules.
pub const RULE_KEY: &str = "warrant.dev/rule";
/// The decision's code (docs/denials.md).
pub const CODE_KEY: &str = "warrant.dev/code";
/// The configuration revision that answered (`sha256:` of the chain file, as `configHash` in
/// warrant's audit records).
pub const CONFIG_REVISION_KEY: &str = "warrant.dev/config-revision";
/// The `decisionId` of warrant's own audit records of the same request.
pub const DECISION_ID_KEY: &str = "warrant.dev/decision-id";

/// warrant's keys, in the order they are offered (the first ones survive a lack of room).
pub const WARRANT_KEYS: [&str; 5] = [
    AUTHORIZER_KEY,
    CODE_KEY,
    RULE_KEY,
    CONFIG_REVISION_KEY,
    DECISION_ID_KEY,
];

/// The most characters of the name after the domain prefix (as in an annotation key).
const MAX_KEY_NAME_LENGTH: usize = 63;

/// A key of the map: `<DNS-1123 subdomain>/<name>`, the name 1-63 characters of ASCII
/// letters, digits, `-`, `_` or `.`, starting and ending with a letter or digit.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct DetailKey(String);

impl DetailKey {
    /// Checks and wraps a key.
    pub fn new(key: &str) -> Result<Self, NameError> {
        let Some((prefix, name)) = key.split_once('/') else {
            return Err(NameError::Format(
                "must be domain-prefixed: <DNS-1123 subdomain>/<name>",
            ));
        };
        is_dns1123_subdomain(prefix)?;
        let b = name.as_bytes();
        if b.is_empty() {
            return Err(NameError::Empty);
        }
        if b.len() > MAX_KEY_NAME_LENGTH {
            return Err(NameError::Format(
                "the name after the prefix must be no more than 63 characters",
            ));
        }
        let edge = |c: u8| c.is_ascii_alphanumeric();
        let ok = edge(b[0])
            && edge(b[b.len() - 1])
            && b.iter()
                .all(|c| c.is_ascii_alphanumeric() || b"-_.".contains(c));
        if ok {
            Ok(Self(key.to_owned()))
        } else {
            Err(NameError::Format(
                "the name after the prefix must consist of letters, digits, '-', '_' or '.', and start and end with a letter or digit",
            ))
        }
    }

    /// A key known valid when written (warrant's own, [`WARRANT_KEYS`]; a unit test checks
    /// each with [`DetailKey::new`]).
    pub(crate) fn known(key: &'static str) -> Self {
        Self(key.to_owned())
    }

    /// The key as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for DetailKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// An `authorizationDetails` map whose JSON never exceeds [`MAX_AUTHORIZATION_DETAILS_BYTES`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthorizationDetails {
    entries: BTreeMap<String, Vec<String>>,
    /// The bytes of the JSON of `entries` (the `{}` included).
    encoded: usize,
    /// Whether an entry was left out.
    truncated: bool,
}

impl Default for AuthorizationDetails {
    fn default() -> Self {
        Self {
            entries: BTreeMap::new(),
            encoded: 2,
            truncated: false,
        }
    }
}

/// The bytes `"key":["v1","v2"]` takes in JSON (no separating comma).
fn entry_len(key: &str, values: &[String]) -> usize {
    let quoted = |s: &str| serde_json::to_string(s).map_or(usize::MAX / 4, |q| q.len());
    let list = 2 + values.iter().map(|v| quoted(v)).sum::<usize>() + values.len().saturating_sub(1);
    quoted(key) + 1 + list
}

impl AuthorizationDetails {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// The room the truncation marker needs: `,"warrant.dev/truncated":["true"]`.
    fn marker_len() -> usize {
        1 + entry_len(TRUNCATED_KEY, &["true".to_owned()])
    }

    /// Adds `key` with `values`, unless the key is there already, `values` is empty, or the
    /// entry does not fit: then it is left out whole and the map is marked truncated. Returns
    /// whether it was added.
    pub fn insert(&mut self, key: &DetailKey, values: Vec<String>) -> bool {
        if values.is_empty() || self.entries.contains_key(key.as_str()) {
            return false;
        }
        let comma = usize::from(!self.entries.is_empty());
        let grown = self.encoded + comma + entry_len(key.as_str(), &values);
        if grown + Self::marker_len() > MAX_AUTHORIZATION_DETAILS_BYTES {
            self.truncated = true;
            return false;
        }
        self.encoded = grown;
        self.entries.insert(key.0.clone(), values);
        true
    }

    /// Adds `key` with one value (see [`AuthorizationDetails::insert`]).
    pub fn insert_one(&mut self, key: &DetailKey, value: impl Into<String>) -> bool {
        self.insert(key, vec![value.into()])
    }

    /// Whether an entry was left out for want of room.
    pub fn is_truncated(&self) -> bool {
        self.truncated
    }

    /// Whether the map has no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty() && !self.truncated
    }

    /// The values under `key`.
    pub fn get(&self, key: &str) -> Option<&[String]> {
        self.entries.get(key).map(Vec::as_slice)
    }

    /// The bytes the map's JSON takes, the truncation marker included.
    pub fn encoded_len(&self) -> usize {
        match (self.truncated, self.entries.is_empty()) {
            (false, _) => self.encoded,
            (true, true) => self.encoded + Self::marker_len() - 1,
            (true, false) => self.encoded + Self::marker_len(),
        }
    }
}

impl Serialize for AuthorizationDetails {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let marker = self.truncated.then_some(["true"]);
        let mut map =
            serializer.serialize_map(Some(self.entries.len() + usize::from(marker.is_some())))?;
        for (k, v) in &self.entries {
            map.serialize_entry(k, v)?;
        }
        if let Some(m) = &marker {
            map.serialize_entry(TRUNCATED_KEY, m)?;
        }
        map.end()
    }
}
