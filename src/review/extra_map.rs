//! The user's `extra` in linear time. serde fills a `BTreeMap` one insert at a time (a search
//! per key); here the entries are collected first and the map built in one pass, which is
//! linear when the keys arrive sorted, as Go's `encoding/json` writes every map (so every
//! kube-apiserver review). A repeated key keeps its last value, as Go's decoder does.

use serde::de::{Deserializer, MapAccess, Visitor};
use std::collections::BTreeMap;
use std::fmt;

/// The decoded `extra`: keys to values.
pub(crate) type Extra = BTreeMap<String, Vec<String>>;

struct ExtraVisitor;

impl<'de> Visitor<'de> for ExtraVisitor {
    type Value = Option<Extra>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map of string lists")
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        // The size hint comes from the input: trust it only as far as a small reservation.
        let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0).min(1024));
        while let Some(entry) = map.next_entry::<String, Vec<String>>()? {
            entries.push(entry);
        }
        // `from_iter` sorts stably (linear on sorted input), keeps the last of equal keys and
        // builds the tree bottom-up.
        Ok(Some(entries.into_iter().collect()))
    }
}

/// `deserialize_with` for an optional `extra`: `null` or absent is `None`.
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Extra>, D::Error> {
    d.deserialize_option(ExtraVisitor)
}

#[cfg(test)]
mod tests {
    use super::Extra;

    #[derive(serde::Deserialize)]
    struct Holder {
        #[serde(default, deserialize_with = "super::deserialize")]
        extra: Option<Extra>,
    }

    fn extra(json: &str) -> Result<Option<Extra>, String> {
        serde_json::from_str::<Holder>(json)
            .map(|h| h.extra)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn decodes_like_a_btree_map_with_go_duplicates() {
        let e = extra(r#"{"extra":{"b":["2"],"a":["1"],"b":["3"],"c":[]}}"#)
            .unwrap()
            .unwrap();
        let got: Vec<(&str, Vec<&str>)> = e
            .iter()
            .map(|(k, v)| (k.as_str(), v.iter().map(String::as_str).collect()))
            .collect();
        assert_eq!(got, [("a", vec!["1"]), ("b", vec!["3"]), ("c", vec![])]);
        assert_eq!(extra(r#"{"extra":null}"#), Ok(None));
        assert_eq!(extra("{}"), Ok(None));
        assert!(extra(r#"{"extra":["a"]}"#).is_err());
    }
}
