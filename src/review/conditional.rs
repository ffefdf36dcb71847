//! The conditional-authorization vocabulary of `authorization.k8s.io/v1` (KEP-5681, alpha in
//! Kubernetes 1.38): what a caller says it can handle (`spec.authorizationOptions`) and the
//! conditional answer (`status.conditionalDecision`), field for field as
//! `k8s.io/api/authorization/v1/types.go` (v0.38.0-beta.0) spells them. Go's `omitempty` on
//! every optional field is mirrored with `skip_serializing_if`; `type` and `id` are required and
//! always written.

use serde::{Deserialize, Serialize};

/// The decision type a caller must handle for warrant to answer with conditions; a caller needs
/// all of [`CONDITIONAL_DECISION_TYPES`] (`SupportsConditionalAuthorization` in the same
/// package's `util.go`: a superset of Allow, Deny, NoOpinion, ConditionsMap and Union).
pub const CONDITIONAL_DECISION_TYPES: [&str; 5] =
    ["Allow", "Deny", "NoOpinion", "ConditionsMap", "Union"];

/// `spec.authorizationOptions`: the decision types the caller can handle. Unknown types are kept
/// and ignored, as the type's doc asks ("the server does not reject unrecognized decision types").
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthorizationOptions {
    /// `handledDecisionTypes`, a set (order does not matter).
    #[serde(default)]
    pub(crate) handled_decision_types: Vec<String>,
}

impl AuthorizationOptions {
    /// Whether the caller handles conditional decisions (all five decision types).
    pub(crate) fn supports_conditions(&self) -> bool {
        CONDITIONAL_DECISION_TYPES
            .iter()
            .all(|t| self.handled_decision_types.iter().any(|h| h == t))
    }

    /// The options kube-apiserver's webhook client sends when it handles conditions: the five
    /// conditional decision types, sorted as Go's `sets.List` gives them
    /// (`ConditionalAuthorizationDecisionTypesList`, `k8s.io/api/authorization/v1/util.go`).
    pub fn conditional() -> Self {
        Self {
            handled_decision_types: ["Allow", "ConditionsMap", "Deny", "NoOpinion", "Union"]
                .map(str::to_owned)
                .to_vec(),
        }
    }

    /// The options with the handled types sorted and deduplicated: set semantics, so two
    /// spellings of one set key a cache alike.
    pub fn canonical(&self) -> Self {
        let mut types = self.handled_decision_types.clone();
        types.sort();
        types.dedup();
        Self {
            handled_decision_types: types,
        }
    }
}

/// The discriminator of a [`ConditionsAwareDecision`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DecisionType {
    /// An unconditional Deny.
    Deny,
    /// An unconditional Allow.
    Allow,
    /// An unconditional NoOpinion.
    NoOpinion,
    /// A map of conditions, evaluated later against the object.
    ConditionsMap,
    /// An ordered list of named sub-decisions, visited depth first.
    Union,
}

/// `UnconditionalDecision`: the reason and error of an Allow, Deny or NoOpinion.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UnconditionalDecision {
    /// Why.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// An error met on the way.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub evaluation_error: String,
}

/// `Condition`: one condition of a [`ConditionsMap`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Condition {
    /// A domain-prefixed label key, unique in its map.
    pub id: String,
    /// The condition's text (CEL for warrant's own).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub condition: String,
    /// The condition language, a domain-prefixed label key.
    #[serde(default, rename = "type", skip_serializing_if = "String::is_empty")]
    pub(crate) condition_type: String,
    /// A human description, shown in errors.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
}

/// `ConditionsMap`: conditions grouped by effect; Deny wins over NoOpinion over Allow.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConditionsMap {
    /// A true or erroring Deny condition denies.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) deny_conditions: Vec<Condition>,
    /// A true or erroring NoOpinion condition gives NoOpinion.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) no_opinion_conditions: Vec<Condition>,
    /// A true Allow condition allows (an erroring one is ignored).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) allow_conditions: Vec<Condition>,
}

impl ConditionsMap {
    /// How many conditions the map holds.
    pub fn len(&self) -> usize {
        self.deny_conditions.len() + self.no_opinion_conditions.len() + self.allow_conditions.len()
    }

    /// Whether the map holds no condition.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// `NamedConditionsAwareDecision`: one authorizer's decision inside a union.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NamedDecision {
    /// The authorizer's name, stable over time.
    pub(crate) authorizer_name: String,
    /// Its decision.
    pub decision: ConditionsAwareDecision,
}

/// `ConditionsAwareDecision`: a tagged union; exactly the member named by `type` is set.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConditionsAwareDecision {
    /// The discriminator.
    #[serde(rename = "type")]
    pub(crate) decision_type: DecisionType,
    /// Set when `type` is Deny.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deny: Option<UnconditionalDecision>,
    /// Set when `type` is NoOpinion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) no_opinion: Option<UnconditionalDecision>,
    /// Set when `type` is Allow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow: Option<UnconditionalDecision>,
    /// Set when `type` is ConditionsMap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) conditions_map: Option<ConditionsMap>,
    /// Set (non-empty) when `type` is Union.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub union: Vec<NamedDecision>,
}

impl ConditionsAwareDecision {
    fn unconditional(decision_type: DecisionType, reason: &str, error: &str) -> Self {
        let parts = Some(UnconditionalDecision {
            reason: reason.to_owned(),
            evaluation_error: error.to_owned(),
        });
        let mut d = Self {
            decision_type,
            deny: None,
            no_opinion: None,
            allow: None,
            conditions_map: None,
            union: Vec::new(),
        };
        match decision_type {
            DecisionType::Deny => d.deny = parts,
            DecisionType::Allow => d.allow = parts,
            _ => d.no_opinion = parts,
        }
        d
    }

    /// An unconditional Allow.
    pub fn allow(reason: &str, error: &str) -> Self {
        Self::unconditional(DecisionType::Allow, reason, error)
    }

    /// An unconditional Deny.
    pub fn deny(reason: &str, error: &str) -> Self {
        Self::unconditional(DecisionType::Deny, reason, error)
    }

    /// An unconditional NoOpinion.
    pub(crate) fn no_opinion(reason: &str, error: &str) -> Self {
        Self::unconditional(DecisionType::NoOpinion, reason, error)
    }

    /// A ConditionsMap decision.
    pub fn conditions(map: ConditionsMap) -> Self {
        Self {
            decision_type: DecisionType::ConditionsMap,
            deny: None,
            no_opinion: None,
            allow: None,
            conditions_map: Some(map),
            union: Vec::new(),
        }
    }

    /// A Union decision of `members`, in order.
    pub fn union(members: Vec<NamedDecision>) -> Self {
        Self {
            decision_type: DecisionType::Union,
            deny: None,
            no_opinion: None,
            allow: None,
            conditions_map: None,
            union: members,
        }
    }

    /// The reason and error of an unconditional decision; empty for a conditional one.
    pub fn parts(&self) -> (&str, &str) {
        let parts = self
            .deny
            .as_ref()
            .or(self.allow.as_ref())
            .or(self.no_opinion.as_ref());
        parts.map_or(("", ""), |p| (&p.reason, &p.evaluation_error))
    }
}

/// The outcomes a decision may still evaluate to (`PossibleDecisions` in
/// `k8s.io/apiserver/pkg/authorization/authorizer/conditions.go`, v0.38.0-beta.0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Outcomes {
    /// It may allow.
    pub allow: bool,
    /// It may deny.
    pub deny: bool,
    /// It may have no opinion.
    pub(crate) no_opinion: bool,
}

impl Outcomes {
    /// How many outcomes are possible (1 means the decision is certain).
    pub fn count(self) -> u8 {
        u8::from(self.allow) + u8::from(self.deny) + u8::from(self.no_opinion)
    }

    /// Whether `t` (Allow, Deny or NoOpinion) is possible; a conditional type never is.
    pub fn has(self, t: DecisionType) -> bool {
        match t {
            DecisionType::Allow => self.allow,
            DecisionType::Deny => self.deny,
            DecisionType::NoOpinion => self.no_opinion,
            DecisionType::ConditionsMap | DecisionType::Union => false,
        }
    }
}

impl ConditionsAwareDecision {
    /// The outcomes this decision may evaluate to: a map may always give NoOpinion, and Allow
    /// or Deny when it has conditions of that effect; a union those of its members, without
    /// NoOpinion once a member holds an unconditional Allow or Deny.
    pub fn outcomes(&self) -> Outcomes {
        match self.decision_type {
            DecisionType::Allow => Outcomes {
                allow: true,
                ..Outcomes::default()
            },
            DecisionType::Deny => Outcomes {
                deny: true,
                ..Outcomes::default()
            },
            DecisionType::NoOpinion => Outcomes {
                no_opinion: true,
                ..Outcomes::default()
            },
            DecisionType::ConditionsMap => {
                let m = self.conditions_map.as_ref();
                Outcomes {
                    allow: m.is_some_and(|m| !m.allow_conditions.is_empty()),
                    deny: m.is_some_and(|m| !m.deny_conditions.is_empty()),
                    no_opinion: true,
                }
            }
            DecisionType::Union => {
                let mut acc = Outcomes {
                    no_opinion: true,
                    ..Outcomes::default()
                };
                for m in &self.union {
                    let o = m.decision.outcomes();
                    acc.allow |= o.allow;
                    acc.deny |= o.deny;
                }
                acc.no_opinion = !self.contains_unconditional();
                acc
            }
        }
    }

    /// Whether the decision's tree holds an unconditional Allow or Deny leaf
    /// (`ContainsUnconditionalAllowOrDeny`): a chain stops at such a decision.
    pub(crate) fn contains_unconditional(&self) -> bool {
        match self.decision_type {
            DecisionType::Allow | DecisionType::Deny => true,
            DecisionType::Union => self
                .union
                .iter()
                .any(|m| m.decision.contains_unconditional()),
            DecisionType::NoOpinion | DecisionType::ConditionsMap => false,
        }
    }

    /// Whether this is an Allow, Deny or NoOpinion.
    pub(crate) fn is_unconditional(&self) -> bool {
        matches!(
            self.decision_type,
            DecisionType::Allow | DecisionType::Deny | DecisionType::NoOpinion
        )
    }

    /// The decision to fail closed to (`FailureDecision`): Deny when Deny is possible, else
    /// NoOpinion.
    pub(crate) fn failure_type(&self) -> DecisionType {
        if self.outcomes().deny {
            DecisionType::Deny
        } else {
            DecisionType::NoOpinion
        }
    }
}

/// The condition type of CEL conditions over the admission variables; the type documents it as
/// handled by kube-apiserver (v1.38.0-beta.0 still sends such conditions back to the webhook).
pub const CEL_CONDITION_TYPE: &str = "authorizer.kubernetes.io/cel";
