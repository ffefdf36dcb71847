//! A ticket target's label selector: Kubernetes' `metav1.LabelSelector` (`matchLabels`, and
//! `matchExpressions` with `In`, `NotIn`, `Exists`, `DoesNotExist`), matched the way
//! `LabelSelectorAsSelector` (k8s.io/apimachinery/pkg/apis/meta/v1/helpers.go) turns it into a
//! `labels.Selector` (pkg/labels/selector.go): every requirement holds; `NotIn` and
//! `DoesNotExist` hold for an object without the key; an empty selector matches every object.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The objects of a target's kind and namespace whose labels match.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetSelector {
    /// Labels the object carries with exactly these values.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub match_labels: BTreeMap<String, String>,
    /// Requirements on the object's labels.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub match_expressions: Vec<SelectorRequirement>,
}

/// One requirement: `key` `operator` `values`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SelectorRequirement {
    /// The label key.
    pub key: String,
    /// How the key's value relates to `values`.
    pub operator: Operator,
    /// The values (`In`, `NotIn`: at least one; `Exists`, `DoesNotExist`: none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
}

/// A requirement's operator, spelled as `metav1.LabelSelectorOperator`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Operator {
    /// The key is present with one of the values.
    In,
    /// The key is absent, or present with none of the values.
    NotIn,
    /// The key is present.
    Exists,
    /// The key is absent.
    DoesNotExist,
}

impl TargetSelector {
    /// Whether it has no requirement (and so matches every object).
    pub fn is_empty(&self) -> bool {
        self.match_labels.is_empty() && self.match_expressions.is_empty()
    }

    /// Whether an object whose label `key` reads `label(key)` matches.
    pub fn matches<'a>(&self, label: impl Fn(&str) -> Option<&'a str>) -> bool {
        self.match_labels
            .iter()
            .all(|(k, v)| label(k) == Some(v.as_str()))
            && self.match_expressions.iter().all(|r| {
                let value = label(&r.key);
                let listed = value.is_some_and(|v| r.values.iter().any(|x| x == v));
                match r.operator {
                    Operator::In => listed,
                    Operator::NotIn => !listed,
                    Operator::Exists => value.is_some(),
                    Operator::DoesNotExist => value.is_none(),
                }
            })
    }

    /// The first requirement Kubernetes would refuse (values with `In`/`NotIn` and none with
    /// `Exists`/`DoesNotExist`, as apimachinery's `ValidateLabelSelectorRequirement` says), with
    /// its index.
    pub fn invalid(&self) -> Option<(usize, &'static str)> {
        self.match_expressions
            .iter()
            .enumerate()
            .find_map(|(i, r)| match (r.operator, r.values.is_empty()) {
                (Operator::In | Operator::NotIn, true) => {
                    Some((i, "must have values with In and NotIn"))
                }
                (Operator::Exists | Operator::DoesNotExist, false) => {
                    Some((i, "may not have values with Exists and DoesNotExist"))
                }
                _ => None,
            })
    }
}

impl std::fmt::Display for TargetSelector {
    /// kubectl's spelling: `app=db,tier in (a,b),!legacy`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts: Vec<String> = self
            .match_labels
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        for r in &self.match_expressions {
            parts.push(match r.operator {
                Operator::In => format!("{} in ({})", r.key, r.values.join(",")),
                Operator::NotIn => format!("{} notin ({})", r.key, r.values.join(",")),
                Operator::Exists => r.key.clone(),
                Operator::DoesNotExist => format!("!{}", r.key),
            });
        }
        f.write_str(&parts.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn selector(v: serde_json::Value) -> TargetSelector {
        serde_json::from_value(v).unwrap()
    }

    fn on<'a>(labels: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<&'a str> {
        move |k| labels.iter().find(|(key, _)| *key == k).map(|(_, v)| *v)
    }

    #[test]
    fn every_requirement_must_hold_and_absent_keys_satisfy_notin_and_doesnotexist() {
        let s = selector(json!({"matchLabels": {"app": "db"}, "matchExpressions": [
            {"key": "tier", "operator": "In", "values": ["data", "cache"]},
            {"key": "env", "operator": "NotIn", "values": ["prod"]},
            {"key": "owner", "operator": "Exists"},
            {"key": "legacy", "operator": "DoesNotExist"}]}));
        assert!(s.matches(on(&[("app", "db"), ("tier", "data"), ("owner", "x")])));
        assert!(s.matches(on(&[
            ("app", "db"),
            ("tier", "cache"),
            ("owner", "x"),
            ("env", "dev")
        ])));
        for labels in [
            &[("app", "web"), ("tier", "data"), ("owner", "x")][..],
            &[("tier", "data"), ("owner", "x")],
            &[("app", "db"), ("tier", "web"), ("owner", "x")],
            &[("app", "db"), ("owner", "x")],
            &[
                ("app", "db"),
                ("tier", "data"),
                ("owner", "x"),
                ("env", "prod"),
            ],
            &[("app", "db"), ("tier", "data")],
            &[
                ("app", "db"),
                ("tier", "data"),
                ("owner", "x"),
                ("legacy", ""),
            ],
        ] {
            assert!(!s.matches(on(labels)), "{labels:?}");
        }
        assert_eq!(
            s.to_string(),
            "app=db,tier in (data,cache),env notin (prod),owner,!legacy"
        );
    }

    #[test]
    fn an_empty_selector_matches_everything_and_is_said_to_be_empty() {
        let s = TargetSelector::default();
        assert!(s.is_empty() && s.matches(on(&[])) && s.matches(on(&[("a", "b")])));
        assert!(!selector(json!({"matchLabels": {"a": "b"}})).is_empty());
    }

    #[test]
    fn requirements_without_the_values_their_operator_needs_are_invalid() {
        let s = selector(json!({"matchExpressions": [
            {"key": "a", "operator": "Exists"},
            {"key": "b", "operator": "In", "values": []}]}));
        assert_eq!(s.invalid(), Some((1, "must have values with In and NotIn")));
        let s = selector(
            json!({"matchExpressions": [{"key": "a", "operator": "DoesNotExist", "values": ["x"]}]}),
        );
        assert_eq!(
            s.invalid(),
            Some((0, "may not have values with Exists and DoesNotExist"))
        );
        assert!(
            serde_json::from_value::<TargetSelector>(
                json!({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]})
            )
            .is_err()
        );
    }
}
