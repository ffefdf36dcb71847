//! The validated settings of conditional authorization (KEP-5681): a Policy rule's compiled
//! `condition:` and an entry's `conditions:` block.

use crate::cel::Expression;
use crate::review::Condition;
use serde::Serialize;

/// The domain of the ids of the conditions warrant authors (`warrant.dev/<name>`).
pub(crate) const CONDITION_DOMAIN: &str = "warrant.dev";

/// What an authorizer answers a caller that cannot handle conditions (v1beta1, an API server
/// before 1.38 or without the `ConditionalAuthorization` gate, `handledDecisionTypes` without
/// `ConditionsMap` and `Union`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
pub enum WhenUnsupported {
    /// The fold the API types document: Deny when any Deny condition exists, else NoOpinion.
    #[default]
    Fold,
    /// NoOpinion: the object checks are left to warrant's validation ring (`/admit`), which
    /// must then be installed; the rest of the chain and RBAC decide the request.
    ValidationRing,
}

impl WhenUnsupported {
    /// Every value, in the order `Unsupported value` lists them.
    pub const ALL: [WhenUnsupported; 2] = [WhenUnsupported::Fold, WhenUnsupported::ValidationRing];

    /// The spelling in files.
    pub fn as_str(self) -> &'static str {
        match self {
            WhenUnsupported::Fold => "Fold",
            WhenUnsupported::ValidationRing => "ValidationRing",
        }
    }
}

/// An entry's `conditions:` block.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
pub struct ConditionsSettings {
    /// `whenUnsupported`.
    pub(crate) when_unsupported: WhenUnsupported,
}

/// A Policy rule's `condition:`: the compiled expression and the condition as it is sent.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleCondition {
    /// Compiled over the admission variables; what warrant evaluates when asked back.
    pub expression: Expression,
    /// The wire form: id `warrant.dev/<rule>`, the source, type `authorizer.kubernetes.io/cel`,
    /// the rule's attributed reason as description.
    pub wire: Condition,
}
