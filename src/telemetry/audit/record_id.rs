//! A record's own `id`: a random UUID (version 4) per record written, so that a consumer of an
//! at-least-once sink can drop a record delivered twice. Two records never share one, unlike
//! their decision id.

use rand::Rng as _;

/// A fresh record id, hyphenated. The bytes come from the thread's ChaCha generator (seeded
/// from the operating system), not a `getrandom` system call per record, which was one per
/// review written.
pub fn new_record_id() -> String {
    let bytes: [u8; 16] = rand::thread_rng().r#gen();
    uuid::Builder::from_random_bytes(bytes)
        .into_uuid()
        .hyphenated()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::new_record_id;
    use std::collections::HashSet;

    #[test]
    fn record_ids_are_version_4_uuids_and_never_repeat() {
        let ids: HashSet<String> = (0..10_000).map(|_| new_record_id()).collect();
        assert_eq!(ids.len(), 10_000);
        for id in ids.iter().take(100) {
            let parsed = uuid::Uuid::parse_str(id).unwrap();
            assert_eq!(parsed.get_version_num(), 4, "{id}");
            assert_eq!(parsed.get_variant(), uuid::Variant::RFC4122, "{id}");
            assert_eq!(id.len(), 36);
        }
    }
}
