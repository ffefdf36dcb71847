//! The audit snapshot of a held object: what it was, enough to re-create it by hand. Its
//! `apiVersion`, `kind`, `metadata` without `managedFields` (the field owners, large and of no
//! use here) and `spec`; never `data`/`stringData`/`binaryData` (a Secret's or a ConfigMap's
//! contents) and never `status` (re-created by its controller).

use serde_json::{Map, Value};

/// The fields a snapshot keeps.
const KEPT: [&str; 4] = ["apiVersion", "kind", "metadata", "spec"];

/// The snapshot of `object` (a full object as the API server returned it).
pub fn snapshot(object: &Value) -> Value {
    let mut out = Map::new();
    for key in KEPT {
        if let Some(v) = object.get(key) {
            out.insert(key.to_owned(), v.clone());
        }
    }
    if let Some(Value::Object(meta)) = out.get_mut("metadata") {
        meta.remove("managedFields");
    }
    Value::Object(out)
}
