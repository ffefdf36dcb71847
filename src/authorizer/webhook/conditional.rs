//! A downstream webhook that answers with conditions (KEP-5681), as kube-apiserver's webhook
//! authorizer treats one (`plugin/pkg/authorizer/webhook/webhook.go`, k8s.io/apiserver
//! v0.38.0-beta.0):
//!
//! - the review carries `authorizationOptions` only when warrant's own caller opted in, and
//!   only in v1 (the key of the downstream cache carries them too, see `Core::key`);
//! - an answer the caller did not ask for (`Authorize`): an explicit `denied` wins, else the
//!   conditional decision's failure decision with upstream's error text;
//! - an asked-for answer (`ConditionsAwareAuthorize`): `ValidateSubjectAccessReviewStatus`
//!   (type ConditionsMap or Union only; `allowed`, `denied`, `reason`, `evaluationError` zero),
//!   a broken one is the entry's failure policy; then read as `ToAuthorizerConditionsAwareDecision`
//!   reads it (`review::normalize`);
//! - the conditions are the downstream's to evaluate: `EvaluateConditions` sends them back in an
//!   `AuthorizationConditionsReview` with a fresh `admissionRequest.uid`, and fails closed
//!   (the sub-decision's failure decision) unless the answer echoes the uid and is an
//!   unconditional decision the sub-decision could reach.

use super::client::{ConditionsAnswer, DownstreamStatus};
use super::error::WebhookError;
use crate::decision::{Decision, Reason, Verdict};
use crate::review::{
    CONDITIONS_REVIEW_API_VERSION, CONDITIONS_REVIEW_KIND, ConditionsAwareDecision, DecisionType,
    normalize,
};
use bytes::Bytes;
use serde_json::Value;

/// Upstream's error for a conditional answer to a review that did not opt in.
pub(crate) const UNREQUESTED: &str =
    "webhook subject access review returned unrequested conditional decision";

/// The reason of a verdict that failed closed.
const FAILED_CLOSED: &str = "failed closed";

/// The verdict of a status that carries a conditional decision; `None` when it carries none,
/// or when `allowed` and `denied` are both set or (not asked) `denied` is: the unconditional
/// mapping then applies, as upstream checks those first. `asked`: the review sent downstream
/// opted in to conditions.
pub fn verdict(s: &DownstreamStatus, asked: bool) -> Option<Result<Verdict, WebhookError>> {
    let d = s.conditional_decision.as_deref()?;
    if s.allowed && s.denied {
        return None;
    }
    if !asked {
        if s.denied {
            return None;
        }
        let fold = match normalize(d.clone()).failure_type() {
            DecisionType::Deny => Decision::Deny,
            _ => Decision::NoOpinion,
        };
        let message = if s.reason.is_empty() {
            UNREQUESTED.to_owned()
        } else {
            format!("{} ({UNREQUESTED})", s.reason)
        };
        return Some(Ok(Verdict::new(fold, Reason::message(message))));
    }
    if let Err(e) = validate(s, d) {
        return Some(Err(e));
    }
    let d = normalize(d.clone());
    let (reason, error) = d.parts();
    let message = match (reason.is_empty(), error.is_empty()) {
        (_, true) => reason.to_owned(),
        (true, false) => error.to_owned(),
        (false, false) => format!("{reason} ({error})"),
    };
    let plain = |decision| {
        if message.is_empty() {
            Verdict::bare(decision)
        } else {
            Verdict::new(decision, Reason::message(message.clone()))
        }
    };
    Some(Ok(match d.decision_type {
        DecisionType::Allow => plain(Decision::Allow),
        DecisionType::Deny => plain(Decision::Deny),
        DecisionType::NoOpinion => plain(Decision::NoOpinion),
        DecisionType::ConditionsMap | DecisionType::Union => Verdict::conditional_decision(d, None),
    }))
}

/// `ValidateSubjectAccessReviewStatus` for an asked-for conditional decision.
fn validate(s: &DownstreamStatus, d: &ConditionsAwareDecision) -> Result<(), WebhookError> {
    let t = d.decision_type;
    let mut errors = Vec::new();
    if d.is_unconditional() {
        errors.push(format!(
            "status.conditionalDecision.type: Invalid value: {t:?}: cannot be one of [Allow, Deny, NoOpinion], these decisions must be expressed using status.allowed and status.denied"
        ));
    } else {
        let forbidden = [
            ("allowed", s.allowed, "false"),
            ("denied", s.denied, "false"),
            ("evaluationError", !s.evaluation_error.is_empty(), "empty"),
            ("reason", !s.reason.is_empty(), "empty"),
        ];
        for (field, set, want) in forbidden {
            if set {
                errors.push(format!(
                    "status.{field}: Forbidden: must be {want} when status.conditionalDecision.type={t:?}"
                ));
            }
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(WebhookError::Invalid(errors.join(", ")))
    }
}

/// A version 4 UUID from a fast (non-cryptographic) generator: the uid only correlates an
/// answer with its request.
fn fresh_uid() -> String {
    let n = (fastrand::u128(..) & !(0xf << 76) | (0x4 << 76)) & !(0x3 << 62) | (0x2 << 62);
    let h = format!("{n:032x}");
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// The `AuthorizationConditionsReview` asking the downstream to evaluate `decision` (the
/// sub-decision it authored) against `admission_request` (kube-apiserver's, given a fresh
/// uid), and that uid.
pub(crate) fn review_body(
    decision: &ConditionsAwareDecision,
    admission_request: &Value,
) -> (Bytes, String) {
    let uid = fresh_uid();
    let mut request = admission_request.clone();
    if let Some(o) = request.as_object_mut() {
        o.insert("uid".into(), Value::String(uid.clone()));
    }
    let body = serde_json::json!({
        "apiVersion": CONDITIONS_REVIEW_API_VERSION,
        "kind": CONDITIONS_REVIEW_KIND,
        "metadata": {},
        "request": {"decision": decision, "admissionRequest": request},
    });
    // A JSON value serializes without failure.
    (
        Bytes::from(serde_json::to_vec(&body).unwrap_or_default()),
        uid,
    )
}

/// The downstream's evaluation of `sub`, or `sub`'s failure decision when the call failed or
/// the answer is not one `sub` allows.
pub(crate) fn judge_answer(
    sub: &ConditionsAwareDecision,
    uid: &str,
    answer: Result<ConditionsAnswer, WebhookError>,
) -> ConditionsAwareDecision {
    let fail = |error: String| match sub.failure_type() {
        DecisionType::Deny => ConditionsAwareDecision::deny(FAILED_CLOSED, &error),
        _ => ConditionsAwareDecision::no_opinion(FAILED_CLOSED, &error),
    };
    let answer = match answer {
        Ok(a) => a,
        Err(e) => return fail(e.to_string()),
    };
    let t = answer.decision.decision_type;
    if !answer.decision.is_unconditional() {
        return fail(format!(
            "response.decision.type: Invalid value: {t:?}: currently must evaluate to an unconditional decision"
        ));
    }
    if answer.uid != uid {
        return fail(format!(
            "response.uid: Invalid value: {:?}: mismatch, expected {uid:?} that was given in request.admissionRequest.uid",
            answer.uid
        ));
    }
    if !sub.outcomes().has(t) {
        return fail(format!(
            "webhook authorizer tried to return {t:?} from EvaluateConditions, but the possible outcomes were {:?}",
            sub.outcomes()
        ));
    }
    answer.decision
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::{Condition, ConditionsMap};

    fn deny_map() -> ConditionsAwareDecision {
        ConditionsAwareDecision::conditions(ConditionsMap {
            deny_conditions: vec![Condition {
                id: "opa.dev/x".into(),
                condition: "x".into(),
                ..Default::default()
            }],
            ..Default::default()
        })
    }

    fn status(d: ConditionsAwareDecision) -> DownstreamStatus {
        DownstreamStatus {
            conditional_decision: Some(Box::new(d)),
            ..Default::default()
        }
    }

    #[test]
    fn asked_for_conditions_become_a_conditional_verdict() {
        let v = verdict(&status(deny_map()), true).unwrap().unwrap();
        assert_eq!(v.decision, Decision::Deny, "the fold");
        assert_eq!(v.conditions.as_deref(), Some(&deny_map()));
    }

    #[test]
    fn unasked_conditions_fail_closed_and_denied_wins() {
        let v = verdict(&status(deny_map()), false).unwrap().unwrap();
        assert_eq!(v.decision, Decision::Deny);
        assert!(v.conditions.is_none());
        assert!(v.reason.unwrap().message.contains(UNREQUESTED));
        let mut denied = status(deny_map());
        denied.denied = true;
        assert!(verdict(&denied, false).is_none());
    }

    #[test]
    fn invalid_conditional_answers_are_errors() {
        let mut s = status(deny_map());
        s.reason = "why".into();
        let e = verdict(&s, true).unwrap().unwrap_err();
        assert!(e.to_string().contains("status.reason: Forbidden"), "{e}");
        let e = verdict(&status(ConditionsAwareDecision::allow("", "")), true)
            .unwrap()
            .unwrap_err();
        assert!(e.to_string().contains("cannot be one of"), "{e}");
    }

    #[test]
    fn answers_must_echo_the_uid_and_be_possible() {
        let sub = deny_map();
        let ok = |d: ConditionsAwareDecision, uid: &str| {
            judge_answer(
                &sub,
                "u1",
                Ok(ConditionsAnswer {
                    uid: uid.into(),
                    decision: d,
                }),
            )
        };
        assert_eq!(
            ok(ConditionsAwareDecision::deny("no", ""), "u1").decision_type,
            DecisionType::Deny
        );
        let wrong_uid = ok(ConditionsAwareDecision::no_opinion("", ""), "u2");
        assert_eq!(wrong_uid.decision_type, DecisionType::Deny, "failed closed");
        assert!(wrong_uid.parts().1.contains("mismatch"));
        let impossible = ok(ConditionsAwareDecision::allow("", ""), "u1");
        assert_eq!(impossible.decision_type, DecisionType::Deny);
        assert!(impossible.parts().1.contains("possible outcomes"));
    }

    #[test]
    fn review_body_carries_a_fresh_v4_uid() {
        let (body, uid) = review_body(&deny_map(), &serde_json::json!({"uid": "old", "name": "x"}));
        let v: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v["request"]["admissionRequest"]["uid"], uid.as_str());
        assert_eq!(v["request"]["admissionRequest"]["name"], "x");
        assert_eq!(v["request"]["decision"]["type"], "ConditionsMap");
        assert_eq!(uid.len(), 36);
        assert_eq!(&uid[14..15], "4");
        assert_ne!(uid, review_body(&deny_map(), &Value::Null).1);
    }
}
