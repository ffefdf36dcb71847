//! The vocabulary of authorization: a [`Decision`], the [`Reason`] an authorizer gives for it,
//! and the [`Verdict`] that carries both out of an authorizer.
//!
//! The user-facing reason text `"<authorizer>/<rule>: <message> [<code>]"` is built in exactly
//! one place, [`AttributedReason`]'s `Display`.
//!
//! This module depends on nothing above it: what a particular authorizer type adds to a verdict
//! (the deletion guard's risk assessment, for one) travels as an opaque [`VerdictDetail`] that
//! the type owns, so a new type never edits the vocabulary.

use crate::names::{AuthorizerName, Code, RuleName};
use crate::review::{ConditionsAwareDecision, ConditionsMap, DecisionType, JsonText};
use serde::Serialize;
use std::fmt;
use std::sync::Arc;

/// What an authorizer decided. There is deliberately no `Default`: nothing decides by accident.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Decision {
    /// The request is allowed; the chain stops.
    Allow,
    /// The request is denied; the chain stops.
    Deny,
    /// No opinion; the next authorizer is asked.
    NoOpinion,
}

impl Decision {
    /// The name used in metrics labels and audit records.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "Allow",
            Decision::Deny => "Deny",
            Decision::NoOpinion => "NoOpinion",
        }
    }

    /// Whether this decision ends the chain.
    pub(crate) fn is_final(self) -> bool {
        !matches!(self, Decision::NoOpinion)
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why an authorizer decided: an optional rule, a human message and an optional machine code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reason {
    /// The rule inside the authorizer that decided, if the authorizer has rules.
    pub rule: Option<RuleName>,
    /// What a `kubectl` user reads.
    pub message: String,
    /// A machine-readable code, if the rule carries one.
    pub code: Option<Code>,
}

impl Reason {
    /// A reason with only a message.
    pub fn message(message: impl Into<String>) -> Self {
        Self {
            rule: None,
            message: message.into(),
            code: None,
        }
    }
}

/// The value of one admission audit annotation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnnotationValue {
    /// Text, escaped when the response is written.
    Text(String),
    /// A JSON document already escaped as the inside of a JSON string, written as it is: a
    /// report is escaped once.
    EscapedJson(EscapedJson),
}

/// A JSON document escaped as the inside of a JSON string ([`crate::review::embedded_json`]);
/// made only by [`AnnotationValue::json`] and [`AnnotationValue::written`], so it is always
/// valid between two quotes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EscapedJson(String);

impl EscapedJson {
    /// The escaped text, without the quotes around it.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl AnnotationValue {
    /// A document as an annotation (its JSON text, escaped once, in one pass).
    pub fn json<T: Serialize + ?Sized>(value: &T) -> Result<Self, serde_json::Error> {
        crate::review::embedded_json(value).map(|e| Self::EscapedJson(EscapedJson(e)))
    }

    /// A document written by `write` as an annotation (escaped as it is written: a
    /// [`JsonText`] writes nothing that could end the string holding it).
    pub fn written(write: impl FnOnce(&mut JsonText)) -> Self {
        // A report runs to some 700 bytes; 1 KiB is still a small allocation for the allocator.
        let mut text = JsonText::embedded(1024);
        write(&mut text);
        Self::EscapedJson(EscapedJson(text.into_string()))
    }

    /// The text the API server records (a document's JSON text, unescaped).
    pub fn text(&self) -> std::borrow::Cow<'_, str> {
        match self {
            Self::Text(text) => text.as_str().into(),
            // The escaped text came from serde_json's own string escapes: it reads back.
            Self::EscapedJson(escaped) => {
                serde_json::from_str::<String>(&["\"", escaped.as_str(), "\""].concat())
                    .unwrap_or_default()
                    .into()
            }
        }
    }
}

impl From<String> for AnnotationValue {
    fn from(text: String) -> Self {
        Self::Text(text)
    }
}

impl From<&str> for AnnotationValue {
    fn from(text: &str) -> Self {
        Self::Text(text.to_owned())
    }
}

/// What an authorizer type adds to its verdict beyond decision and reason, owned by that type:
/// the audit record shows it under [`VerdictDetail::audit_key`]. Rendering happens only when a
/// record is written, so a review that is not audited pays nothing for it.
pub trait VerdictDetail: fmt::Debug + Send + Sync {
    /// The key of the step's audit record that holds the detail (`"guard"`).
    fn audit_key(&self) -> &'static str;
    /// The detail as the audit record and `warrant check -o json` show it.
    fn audit_value(&self) -> serde_json::Value;
    /// At admission: the `auditAnnotations` of the response (kube-apiserver's audit log
    /// records them as `<webhook name>/<key>`), key and value. None by default.
    fn admission_annotations(&self) -> Vec<(&'static str, AnnotationValue)> {
        Vec::new()
    }
    /// Whether the verdict records a denial the authorizer would have made but did not enforce
    /// (the guard's Observe mode); at admission it becomes a warning. False by default.
    fn observed_denial(&self) -> bool {
        false
    }
    /// At admission: the single-use ticket (`<namespace>/<name>` of a `DeletionTicket`) an
    /// enforced, admitting verdict relied on, which must be marked Used once the deletion is
    /// admitted. None by default.
    fn single_use_ticket(&self) -> Option<&str> {
        None
    }
}

/// Two details are equal when they render the same record under the same key: the vocabulary
/// cannot see the concrete types, and the record is what anyone observes of a detail.
impl PartialEq for dyn VerdictDetail {
    fn eq(&self, other: &Self) -> bool {
        self.audit_key() == other.audit_key() && self.audit_value() == other.audit_value()
    }
}

impl Eq for dyn VerdictDetail {}

/// What a rule in shadow mode (`mode: Observe`) would have answered had it been enforced: it
/// matched (or failed), was recorded, and was then skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shadow {
    /// What it would have answered: its effect when it matched; NoOpinion when it failed.
    pub would: Decision,
    /// Its rule, message and code.
    pub reason: Reason,
    /// Its evaluation error, when it failed instead of matching.
    pub error: Option<String>,
}

impl Shadow {
    /// The `would` label of metrics and audit records: the decision, or `Error`.
    pub(crate) fn would_label(&self) -> &'static str {
        if self.error.is_some() {
            "Error"
        } else {
            self.would.as_str()
        }
    }
}

/// What one authorizer returns for one review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// The decision.
    pub decision: Decision,
    /// Why, if the authorizer says.
    pub reason: Option<Reason>,
    /// What the authorizer's type adds for the audit record (the deletion guard's assessment).
    pub detail: Option<Arc<dyn VerdictDetail>>,
    /// The rules in shadow mode that matched (or failed) on the way, in evaluation order.
    pub shadows: Vec<Shadow>,
    /// The conditional decision (KEP-5681) the answer depends on, evaluated later against the
    /// object: a ConditionsMap (warrant's own), or a map or union a downstream webhook gave.
    /// `decision` is then its failure decision, the fold a caller that cannot handle conditions
    /// gets: Deny when Deny is possible, else NoOpinion.
    pub conditions: Option<Arc<ConditionsAwareDecision>>,
}

impl Verdict {
    /// A verdict with a reason.
    pub fn new(decision: Decision, reason: Reason) -> Self {
        Self {
            decision,
            reason: Some(reason),
            detail: None,
            shadows: Vec::new(),
            conditions: None,
        }
    }

    /// A conditional verdict: the decision is the fold of `conditions` (Deny when any Deny
    /// condition exists, else NoOpinion), the reason that of the first condition.
    pub fn conditional(conditions: ConditionsMap, reason: Option<Reason>) -> Self {
        Self::conditional_decision(ConditionsAwareDecision::conditions(conditions), reason)
    }

    /// A verdict on a conditional `decision` (a map or a union): the decision is its failure
    /// decision (Deny when Deny is possible, else NoOpinion).
    pub fn conditional_decision(decision: ConditionsAwareDecision, reason: Option<Reason>) -> Self {
        let fold = match decision.failure_type() {
            DecisionType::Deny => Decision::Deny,
            _ => Decision::NoOpinion,
        };
        Self {
            decision: fold,
            reason,
            detail: None,
            shadows: Vec::new(),
            conditions: Some(Arc::new(decision)),
        }
    }

    /// The same verdict carrying a type-owned detail.
    pub(crate) fn with_detail(mut self, detail: Arc<dyn VerdictDetail>) -> Self {
        self.detail = Some(detail);
        self
    }

    /// A verdict without any reason (a silent NoOpinion, typically).
    pub(crate) fn bare(decision: Decision) -> Self {
        Self {
            decision,
            reason: None,
            detail: None,
            shadows: Vec::new(),
            conditions: None,
        }
    }

    /// The same verdict recording the shadow rules that matched on the way.
    pub(crate) fn with_shadows(mut self, shadows: Vec<Shadow>) -> Self {
        self.shadows = shadows;
        self
    }
}

/// A reason together with the authorizer that gave it. Its `Display` is the one place that
/// renders `"<authorizer>/<rule>: <message> [<code>]"`; without a rule it is
/// `"<authorizer>: <message> [<code>]"`, and without a code the bracket is left out.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AttributedReason<'a> {
    /// The authorizer that gave the reason.
    pub authorizer: &'a AuthorizerName,
    /// The reason itself.
    pub reason: &'a Reason,
}

impl fmt::Display for AttributedReason<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.authorizer.as_str())?;
        if let Some(rule) = &self.reason.rule {
            write!(f, "/{rule}")?;
        }
        write!(f, ": {}", self.reason.message)?;
        if let Some(code) = &self.reason.code {
            write!(f, " [{code}]")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributed_reason_shapes() {
        let name = AuthorizerName::new("tenants").unwrap();
        let full = Reason {
            rule: Some(RuleName::new("no-secrets").unwrap()),
            message: "contractors may not read secrets".into(),
            code: Some(Code::new("CONTRACTOR_SECRETS").unwrap()),
        };
        let r = AttributedReason {
            authorizer: &name,
            reason: &full,
        };
        assert_eq!(
            r.to_string(),
            "tenants/no-secrets: contractors may not read secrets [CONTRACTOR_SECRETS]"
        );
        let plain = Reason::message("Everything is forbidden.");
        let r = AttributedReason {
            authorizer: &name,
            reason: &plain,
        };
        assert_eq!(r.to_string(), "tenants: Everything is forbidden.");
    }
}
