//! [`Kind`]: a group/resource pair with `*` wildcards, as the guard's protections, rate limits
//! and the buffer's resources name what they cover.

/// A group/resource kind, `*` for any.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Kind {
    /// API group (`""` for core, `*` for any).
    pub group: String,
    /// Plural resource (`*` for any).
    pub resource: String,
}

impl Kind {
    /// Whether this kind covers `group`/`resource`.
    pub(crate) fn covers(&self, group: &str, resource: &str) -> bool {
        (self.group == "*" || self.group == group)
            && (self.resource == "*" || self.resource == resource)
    }
}
