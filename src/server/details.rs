//! The `status.authorizationDetails` of one answer (`warrant serve --authorization-details`):
//! which authorizer, code and rule decided, under which configuration revision, and the
//! `decisionId` of warrant's own audit records of the request, so that kube-apiserver's audit
//! event joins them. The map's shape and its 1 KiB bound are the review module's
//! ([`crate::review::AuthorizationDetails`]); this module only picks the values.

use crate::authorizer::{Answer, Input};
use crate::review::{
    AUTHORIZER_KEY, AuthorizationDetails, CODE_KEY, CONFIG_REVISION_KEY, DECISION_ID_KEY,
    DetailKey, RULE_KEY,
};
use crate::telemetry::audit::DecisionId;

/// The details of `answer` to `input`, served by the configuration `revision`. Entries are
/// offered in [`crate::review::WARRANT_KEYS`]'s order; a NoOpinion has no deciding authorizer.
pub(crate) fn of_answer(input: &Input, answer: &Answer, revision: &str) -> AuthorizationDetails {
    let mut details = AuthorizationDetails::new();
    if let Some(name) = &answer.decided_by {
        details.insert_one(&DetailKey::known(AUTHORIZER_KEY), name.as_str());
    }
    if let Some(code) = &answer.code {
        details.insert_one(&DetailKey::known(CODE_KEY), code.as_str());
    }
    if let Some(rule) = &answer.rule {
        details.insert_one(&DetailKey::known(RULE_KEY), rule.as_str());
    }
    if !revision.is_empty() {
        details.insert_one(&DetailKey::known(CONFIG_REVISION_KEY), revision);
    }
    let id = DecisionId::of_review(input.review.spec(), input.now);
    details.insert_one(&DetailKey::known(DECISION_ID_KEY), id.to_string());
    details
}
