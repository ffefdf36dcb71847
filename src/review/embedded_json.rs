//! A JSON document written as the inside of a JSON string that holds it, in one pass: what an
//! audit annotation carrying a report needs (`auditAnnotations` is `map[string]string`, so the
//! report is JSON inside a JSON string). Writing the document and then escaping its text went
//! over every byte of it twice, and escaped a quote every few bytes the second time.
//!
//! The document's own structure (braces, brackets, commas, colons, numbers) needs no escaping
//! inside a string; only its quotes and its strings' escapes do, and serde_json writes those
//! through the [`Formatter`] alone, so a formatter that writes them escaped gives exactly the
//! escaped text of the compact document.

use serde::Serialize;
use serde_json::ser::{CharEscape, Formatter};
use std::io;

/// `value` as compact JSON, escaped as a JSON string's content (without the outer quotes):
/// equal to escaping `serde_json::to_string(value)`.
pub fn embedded_json<T: Serialize + ?Sized>(value: &T) -> Result<String, serde_json::Error> {
    let mut out = Vec::with_capacity(512);
    value.serialize(&mut serde_json::Serializer::with_formatter(
        &mut out, Escaped,
    ))?;
    // Everything written is either serde_json's own UTF-8 text or ASCII from [`Escaped`].
    String::from_utf8(out).map_err(|e| serde::ser::Error::custom(e.utf8_error()))
}

/// serde_json's compact formatter, with every quote and escape it writes escaped once more.
pub(super) struct Escaped;

impl Formatter for Escaped {
    fn begin_string<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        writer.write_all(br#"\""#)
    }

    fn end_string<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        writer.write_all(br#"\""#)
    }

    fn write_char_escape<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        char_escape: CharEscape,
    ) -> io::Result<()> {
        // The escape serde_json writes (`\"`, `\n`, `\u001f`), with its backslash (and a
        // quote or backslash after it) escaped.
        let twice: &[u8] = match char_escape {
            CharEscape::Quote => br#"\\\""#,
            CharEscape::ReverseSolidus => br"\\\\",
            CharEscape::Solidus => br"\\/",
            CharEscape::Backspace => br"\\b",
            CharEscape::FormFeed => br"\\f",
            CharEscape::LineFeed => br"\\n",
            CharEscape::CarriageReturn => br"\\r",
            CharEscape::Tab => br"\\t",
            CharEscape::AsciiControl(byte) => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                let hex = [HEX[usize::from(byte >> 4)], HEX[usize::from(byte & 0xf)]];
                writer.write_all(br"\\u00")?;
                return writer.write_all(&hex);
            }
        };
        writer.write_all(twice)
    }
}

#[cfg(test)]
mod tests {
    use super::embedded_json;
    use proptest::prelude::*;
    use serde_json::{Value, json};

    /// What escaping the compact text gives.
    fn escaped_twice(v: &Value) -> String {
        let quoted = serde_json::to_string(&serde_json::to_string(v).unwrap()).unwrap();
        quoted[1..quoted.len() - 1].to_owned()
    }

    #[test]
    fn a_report_is_the_escaped_text_of_its_json() {
        let report = json!({"code": "MISSING_TICKET", "riskScore": 105, "qps": 3000.0,
            "reasons": ["label a=\"b\" on x\\y +40", "tab\there", "bell\u{7}", "é ∑ 🙂"],
            "none": null, "yes": true});
        let embedded = embedded_json(&report).unwrap();
        assert_eq!(embedded, escaped_twice(&report));
        let back: String = serde_json::from_str(&format!("\"{embedded}\"")).unwrap();
        assert_eq!(serde_json::from_str::<Value>(&back).unwrap(), report);
    }

    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            any::<f64>().prop_map(|f| json!(f)),
            any::<String>().prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map(any::<String>(), inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn any_document_is_written_as_escaping_its_text_would(v in value()) {
            prop_assert_eq!(embedded_json(&v).unwrap(), escaped_twice(&v));
        }
    }
}
