//! A record's own `id`: a random UUID (version 4) per record written, so that a consumer of an
//! at-least-once sink can drop a record delivered twice. Two records never share one, unlike
//! their decision id.

/// A fresh record id, hyphenated.
pub fn new_record_id() -> String {
    uuid::Uuid::new_v4().hyphenated().to_string()
}
