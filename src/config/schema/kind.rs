//! [`KindFile`]: a group/resource as written, shared by the guard's and the buffer's blocks.

use serde::Deserialize;

/// A group/resource.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct KindFile {
    /// API group (default core `""`; `*` any).
    #[serde(default)]
    pub group: String,
    /// Plural resource (`*` any).
    pub resource: String,
}
