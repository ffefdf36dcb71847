//! [`JsonText`]: compact JSON written by hand, field by field, already escaped as the inside of
//! a JSON string (a report carried in an audit annotation, as [`super::embedded_json`] writes
//! one); [`json_string`]: one string written as it is (a response envelope's).
//!
//! serde_json escapes a string one byte at a time through a table, and escapes every field name
//! the same way; most of what warrant writes (names, codes, reasons) needs no escaping at all.
//! Here a string is checked eight bytes at a time and copied whole when it is clean; one that
//! is not goes through serde_json, so the text is byte for byte what serde_json writes.

use super::embedded_json::Escaped;
use serde::Serialize;

/// A compact JSON text being written escaped as the inside of a JSON string (without the outer
/// quotes). Only structure, numbers and escaped strings can be written, so no byte can end the
/// string that holds the text.
#[derive(Debug)]
pub struct JsonText {
    out: Vec<u8>,
    /// No member or element has been written yet in the innermost open object or array.
    first: bool,
}

impl JsonText {
    /// An empty text with room for `capacity` bytes.
    pub fn embedded(capacity: usize) -> Self {
        Self {
            out: Vec::with_capacity(capacity),
            first: true,
        }
    }

    /// Opens an object.
    pub fn begin_object(&mut self) {
        self.out.push(b'{');
        self.first = true;
    }

    /// Closes the innermost object.
    pub fn end_object(&mut self) {
        self.out.push(b'}');
        self.first = false;
    }

    /// Opens an array.
    pub fn begin_array(&mut self) {
        self.out.push(b'[');
        self.first = true;
    }

    /// Closes the innermost array.
    pub fn end_array(&mut self) {
        self.out.push(b']');
        self.first = false;
    }

    /// Starts member `name` of the innermost object; its value is written next. `name` is a
    /// field name of warrant's own, which needs no escaping (ASCII letters and digits).
    pub fn field(&mut self, name: &'static str) {
        debug_assert!(is_clean(name.as_bytes()), "{name}");
        self.separate();
        self.quoted(name.as_bytes());
        self.out.push(b':');
    }

    /// Starts the next element of the innermost array; its value is written next.
    pub fn element(&mut self) {
        self.separate();
    }

    fn separate(&mut self) {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
    }

    /// `bytes`, which need no escaping, between escaped quotes.
    fn quoted(&mut self, bytes: &[u8]) {
        self.out.reserve(bytes.len() + 4);
        self.out.extend_from_slice(br#"\""#);
        self.out.extend_from_slice(bytes);
        self.out.extend_from_slice(br#"\""#);
    }

    /// A string value, quoted and escaped.
    pub fn string(&mut self, s: &str) {
        if is_clean(s.as_bytes()) {
            self.quoted(s.as_bytes());
        } else {
            self.value(s);
        }
    }

    /// An array of strings.
    pub fn strings<S: AsRef<str>>(&mut self, items: &[S]) {
        self.begin_array();
        for item in items {
            self.element();
            self.string(item.as_ref());
        }
        self.end_array();
    }

    /// An unsigned integer.
    pub fn unsigned(&mut self, n: u64) {
        self.out
            .extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
    }

    /// A boolean.
    pub fn boolean(&mut self, b: bool) {
        self.out
            .extend_from_slice(if b { b"true" } else { b"false" });
    }

    /// Any value, as serde_json writes it, escaped once more.
    pub fn value<T: Serialize + ?Sized>(&mut self, value: &T) {
        // Into a Vec, writing fails only for a value whose own `Serialize` fails (a map with
        // keys that are not strings): none of warrant's types.
        let _ = value.serialize(&mut serde_json::Serializer::with_formatter(
            &mut self.out,
            Escaped,
        ));
    }

    /// The text written, as a string.
    pub fn into_string(self) -> String {
        // Every byte written is ASCII or a copy of a `str` (whole, or as serde_json escaped it).
        String::from_utf8(self.out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into())
    }
}

/// Appends `s` to `out` as a JSON string, quoted and escaped as serde_json writes it (copied
/// whole when it needs no escaping).
pub fn json_string(out: &mut Vec<u8>, s: &str) {
    if is_clean(s.as_bytes()) {
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    } else {
        // Into a Vec, writing a string cannot fail.
        let _ = serde_json::to_writer(out, s);
    }
}

/// Whether `bytes` need no escaping in a JSON string: no quote, backslash or control
/// character (what serde_json escapes). Eight bytes at a time: a byte below 0x20, or equal to
/// `"` or `\\`, sets its high bit in `flagged` (the zero-byte test on `b`, `b ^ '"'` and
/// `b ^ '\\'`, and on `b - 0x20` for the controls).
fn is_clean(bytes: &[u8]) -> bool {
    const ONES: u64 = u64::MAX / 255;
    const HIGH: u64 = ONES << 7;
    let flagged = |w: u64| {
        let below_space = w.wrapping_sub(ONES * 0x20) & !w;
        let q = w ^ (ONES * u64::from(b'"'));
        let quote = q.wrapping_sub(ONES) & !q;
        let s = w ^ (ONES * u64::from(b'\\'));
        let slash = s.wrapping_sub(ONES) & !s;
        (below_space | quote | slash) & HIGH
    };
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        if flagged(u64::from_le_bytes(w)) != 0 {
            return false;
        }
    }
    !words
        .remainder()
        .iter()
        .any(|&b| b < 0x20 || b == b'"' || b == b'\\')
}

#[cfg(test)]
mod tests {
    use super::{JsonText, is_clean, json_string};
    use crate::review::embedded_json;
    use proptest::prelude::*;

    #[test]
    fn clean_strings_are_those_serde_json_leaves_alone() {
        for s in ["", "plain", "a/b.c-d_e é", &"x".repeat(40)] {
            assert!(is_clean(s.as_bytes()), "{s:?}");
        }
        for s in ["q\"", "b\\", "nl\n", &format!("{}\u{1f}", "x".repeat(33))] {
            assert!(!is_clean(s.as_bytes()), "{s:?}");
        }
    }

    #[test]
    fn structure_is_written_compact_with_separators() {
        let mut t = JsonText::embedded(0);
        t.begin_object();
        t.field("a");
        t.strings(&["x", "y\"z"]);
        t.field("o");
        t.begin_object();
        t.field("n");
        t.unsigned(7);
        t.end_object();
        t.field("b");
        t.boolean(false);
        t.field("v");
        t.value(&serde_json::json!([1.5, null]));
        t.end_object();
        let got = t.into_string();
        // The text is the compact document escaped: it reads back as it.
        let read = serde_json::from_str::<String>(&format!("\"{got}\"")).unwrap();
        assert_eq!(
            read,
            r#"{"a":["x","y\"z"],"o":{"n":7},"b":false,"v":[1.5,null]}"#
        );
    }

    /// `s` written plain and embedded, each equal to what serde_json writes.
    fn written_as_serde_json_writes(s: &str) -> Result<(), TestCaseError> {
        let mut plain = Vec::new();
        json_string(&mut plain, s);
        prop_assert_eq!(
            String::from_utf8(plain).unwrap(),
            serde_json::to_string(s).unwrap()
        );
        let mut embedded = JsonText::embedded(0);
        embedded.string(s);
        prop_assert_eq!(embedded.into_string(), embedded_json(s).unwrap());
        Ok(())
    }

    proptest! {
        #[test]
        fn strings_are_written_as_serde_json_writes_them(s in any::<String>()) {
            written_as_serde_json_writes(&s)?;
        }

        #[test]
        fn control_characters_quotes_and_backslashes_anywhere_are_escaped(
            prefix in "[a-z]{0,40}", bad in prop::sample::select(vec!['"', '\\', '\n', '\u{0}', '\u{1f}']), suffix in "[a-z]{0,40}"
        ) {
            let s = format!("{prefix}{bad}{suffix}");
            prop_assert!(!is_clean(s.as_bytes()));
            written_as_serde_json_writes(&s)?;
        }
    }
}
