//! The `SubjectAccessReview` wire format: decoding `authorization.k8s.io/v1` and `v1beta1`
//! reviews into one v1-shaped [`Review`], and encoding the answer in the version that was asked.
//!
//! v1 uses the k8s-openapi types; v1beta1 differs only in spelling the groups field `group`
//! (`k8s.io/api/authorization/v1beta1/types.go`), so it goes through a small shim. Decoding is
//! lenient about fields it does not know (as the API server's own decoder is), with one
//! exception: `groups` in a v1beta1 review or `group` in a v1 review is refused, because silently
//! dropping a user's groups could slip past a deny rule.
//!
//! Conditional authorization (KEP-5681, Kubernetes 1.38 alpha) adds `spec.authorizationOptions`,
//! `status.conditionalDecision` (`conditional`) and the `AuthorizationConditionsReview` through
//! which the API server asks for the conditions to be evaluated (`conditions_review`).
//!
//! Structured decision details (KEP-6001, not in any release yet) add
//! `status.authorizationDetails` (`authorization_details`), sent only when asked for.

mod authorization_details;
mod conditional;
mod conditional_limits;
mod conditional_normalize;
mod conditions_review;
mod decode;
mod decoded;
mod embedded_json;
mod error;
mod extra_map;
mod json_object;
mod json_text;
mod leading_kind;
mod omit_empty;
mod request;
mod response;
mod version;

pub use authorization_details::{
    AUTHORIZER_KEY, AuthorizationDetails, CODE_KEY, CONFIG_REVISION_KEY, DECISION_ID_KEY,
    DetailKey, MAX_AUTHORIZATION_DETAILS_BYTES, RULE_KEY, TRUNCATED_KEY, WARRANT_KEYS,
};
pub use conditional::{
    AuthorizationOptions, CEL_CONDITION_TYPE, CONDITIONAL_DECISION_TYPES, Condition,
    ConditionsAwareDecision, ConditionsMap, DecisionType, NamedDecision, Outcomes,
    UnconditionalDecision,
};
pub(crate) use conditional_limits::MAX_CONDITIONS_PER_MAP;
pub(crate) use conditional_limits::check_condition;
#[cfg(test)]
pub(crate) use conditional_limits::check_map;
pub use conditional_normalize::{fold_union, normalize};
pub(crate) use conditions_review::{
    CONDITIONS_REVIEW_API_VERSION, CONDITIONS_REVIEW_KIND, ConditionsReview, ConditionsReviewError,
    decode_conditions_review, encode_conditions_response, is_conditions_review,
};
pub use decode::{AuthorizeBody, decode, decode_authorize};
pub use decoded::{Attributes, Review};
pub use embedded_json::embedded_json;
pub use error::ReviewError;
pub(crate) use json_object::{object_only, refuse_array};
pub use json_text::{JsonText, json_string};
pub(crate) use leading_kind::declares_kind;
pub use request::{canonical_spec_json, encode_request};
pub use response::{encode_conditional_response, encode_response, encode_response_with_details};
pub use version::ApiVersion;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_conditional;
#[cfg(test)]
mod tests_details;
