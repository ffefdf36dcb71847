//! `POST /admit`, how its answer is made: one `AdmissionReview` (v1) through the validation ring
//! of the live chain. The route (`routes.rs`) checks and reads the body as `/authorize`'s (within
//! its own size limit, since an UPDATE carries two objects), decodes it with
//! [`crate::admission::decode`] and maps it onto a review and an object context. A DELETE or an UPDATE goes to [`crate::authorizer::Chain::admit`]; a CREATE or a
//! CONNECT is admitted unjudged (the shipped webhook configuration sends neither). The answer:
//!
//! - refused (Deny) -> `allowed: false` with a `Status` of code 403, reason `Forbidden`, and the
//!   chain's reason as message (`<authorizer>: <message> [<CODE>]`);
//! - anything else -> `allowed: true`;
//! - `auditAnnotations`: the deciding step's detail when refused, every step's when admitted
//!   (kube-apiserver records each as `<webhook name>/<key>`);
//! - `warnings`: each denial a step observed without enforcing (Observe mode) and each step
//!   that failed and let the request through by `failurePolicy: NoOpinion`.
//!
//! The chain's time is `--review-timeout`, shortened to nine tenths of the `timeout` query
//! parameter kube-apiserver adds (the webhook's `timeoutSeconds`), see [`budget`].

use crate::admission::{AdmissionOperation, AdmissionResponse};
use crate::authorizer::{Answer, Step, StepOutcome};
use crate::config::FailurePolicy;
use crate::config::duration::GoDuration;
use crate::decision::{AttributedReason, Decision};
use std::borrow::Cow;
use std::time::Duration;

/// The time the chain has for one request: `--review-timeout`, or less when kube-apiserver says
/// it waits less. It sends the webhook's `timeoutSeconds` as the query parameter `timeout` (a Go
/// duration, `3s`: client-go's `Request.Timeout` in `k8s.io/client-go/rest/request.go`, set by
/// the validating dispatcher); the chain gets nine tenths of it, so that warrant answers (an
/// entry past the deadline gets its own failurePolicy, recorded) before the API server gives up
/// and applies the webhook's.
pub(super) fn budget(query: Option<&str>, review_timeout: Duration) -> Duration {
    let sent = query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .find_map(|pair| pair.strip_prefix("timeout="))
        .and_then(|v| GoDuration::parse(v).ok())
        .filter(|d| d.is_positive())
        .and_then(GoDuration::to_std);
    match sent {
        Some(t) => review_timeout.min(t - t / 10),
        None => review_timeout,
    }
}

/// The answer to an operation the validation ring does not judge: admitted, no step.
pub(super) fn unjudged(operation: AdmissionOperation) -> Answer {
    Answer {
        conditional: None,
        decision: Decision::NoOpinion,
        decided_by: None,
        rule: None,
        code: None,
        reason: format!(
            "operation {} is not judged by the validation ring",
            operation.as_str()
        ),
        errors: Vec::new(),
        trace: Vec::new(),
    }
}

/// The response for a chain answer (see the module documentation).
pub fn respond(uid: String, answer: &Answer) -> AdmissionResponse {
    let denied = answer.decision == Decision::Deny;
    let mut response = if denied {
        let message = match answer.reason.as_str() {
            "" => "refused by warrant's validation ring",
            reason => reason,
        };
        AdmissionResponse::deny(uid, message)
    } else {
        AdmissionResponse::allow(uid)
    };
    // A refusal's deciding step is the last of the trace.
    let annotated = if denied {
        answer.trace.last().map(std::slice::from_ref).unwrap_or(&[])
    } else {
        &answer.trace[..]
    };
    for step in annotated {
        annotate(&mut response, step);
    }
    for step in &answer.trace {
        if let Some(warning) = warning(step) {
            response.warn(&warning);
        }
    }
    response
}

/// Adds a step's audit annotations. The first step to use a key has it as is; a later one's
/// key is prefixed with its authorizer's name (`<name>.<key>`), and dropped (with a debug log:
/// the audit record keeps the whole detail) when that is no valid key.
fn annotate(response: &mut AdmissionResponse, step: &Step) {
    let StepOutcome::Verdict(verdict) = &step.outcome else {
        return;
    };
    let Some(detail) = &verdict.detail else {
        return;
    };
    for (key, value) in detail.admission_annotations() {
        let key: Cow<'static, str> = if response.audit_annotations.contains_key(key) {
            format!("{}.{key}", step.authorizer).into()
        } else {
            key.into()
        };
        if !response.annotate(key.clone(), value) {
            tracing::debug!(
                key = key.as_ref(),
                "audit annotation key is not a qualified name part; left out"
            );
        }
    }
}

/// The warning a step gives: an observed, not enforced denial, or a failure admitted by
/// `failurePolicy: NoOpinion`.
fn warning(step: &Step) -> Option<String> {
    match &step.outcome {
        StepOutcome::Verdict(v) => {
            let reason = v.reason.as_ref()?;
            v.detail.as_ref().filter(|d| d.observed_denial())?;
            let attributed = AttributedReason {
                authorizer: &step.authorizer,
                reason,
            };
            Some(format!("warrant: {attributed}"))
        }
        StepOutcome::Failed {
            error,
            policy: FailurePolicy::NoOpinion,
        } => Some(format!(
            "warrant: {}: {error} (failurePolicy NoOpinion: not judged)",
            step.authorizer
        )),
        StepOutcome::Failed { .. } | StepOutcome::Excluded => None,
    }
}

/// Logs each step that failed, whatever its failure policy made of it: a validation ring that
/// cannot judge (a cluster cache not ready, typically) is never quiet.
pub(super) fn log_failures(uid: &str, answer: &Answer) {
    for step in &answer.trace {
        if let StepOutcome::Failed { error, policy } = &step.outcome {
            tracing::warn!(
                uid,
                authorizer = %step.authorizer,
                failure_policy = policy.as_str(),
                error = %error,
                "admission request could not be judged; failure policy applied"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authorizer::AuthorizerError;
    use crate::config::AuthorizerType;
    use crate::decision::{Reason, Verdict, VerdictDetail};
    use crate::names::{AuthorizerName, Code};
    use std::sync::Arc;

    #[test]
    fn the_budget_follows_the_api_servers_timeout() {
        let ten = Duration::from_secs(10);
        let rows = [
            (None, ten),
            (Some("timeout=3s"), Duration::from_millis(2700)),
            (Some("a=b&timeout=1m&c=d"), ten),
            (Some("timeout=500ms"), Duration::from_millis(450)),
            (Some("timeout=banana"), ten),
            (Some("timeout=-3s"), ten),
            (Some("timeout=0s"), ten),
            (Some("timeouts=1s"), ten),
        ];
        for (query, want) in rows {
            assert_eq!(budget(query, ten), want, "{query:?}");
        }
    }

    #[derive(Debug)]
    struct Detail {
        code: &'static str,
        observed: bool,
    }

    impl VerdictDetail for Detail {
        fn audit_key(&self) -> &'static str {
            "guard"
        }
        fn audit_value(&self) -> serde_json::Value {
            serde_json::json!({"code": self.code})
        }
        fn admission_annotations(&self) -> Vec<(&'static str, crate::decision::AnnotationValue)> {
            vec![("code", self.code.into())]
        }
        fn observed_denial(&self) -> bool {
            self.observed
        }
    }

    fn step(name: &str, outcome: StepOutcome) -> Step {
        Step {
            authorizer: AuthorizerName::new(name).unwrap(),
            authorizer_type: AuthorizerType::DeletionGuard,
            outcome,
            elapsed: Duration::ZERO,
            conditions: None,
            mode: crate::config::Mode::Enforce,
        }
    }

    fn judged(name: &str, decision: Decision, code: &'static str, observed: bool) -> Step {
        let reason = Reason {
            rule: None,
            message: format!("{code} says\nso"),
            code: Code::new(code).ok(),
        };
        let verdict =
            Verdict::new(decision, reason).with_detail(Arc::new(Detail { code, observed }));
        step(name, StepOutcome::Verdict(verdict))
    }

    fn answer(decision: Decision, reason: &str, trace: Vec<Step>) -> Answer {
        Answer {
            conditional: None,
            decision,
            decided_by: None,
            rule: None,
            code: None,
            reason: reason.to_owned(),
            errors: Vec::new(),
            trace,
        }
    }

    /// Admitted: every guard's annotations, the later one's keys under its name; each observed
    /// denial and each NoOpinion failure is a warning, on one line.
    #[test]
    fn admitted_answers_collect_every_step() {
        let failed = step(
            "cache-guard",
            StepOutcome::Failed {
                error: AuthorizerError::DeadlinePassed,
                policy: FailurePolicy::NoOpinion,
            },
        );
        let trace = vec![
            judged("guard", Decision::NoOpinion, "ALLOW", false),
            judged(
                "second",
                Decision::NoOpinion,
                "OBSERVED_MISSING_TICKET",
                true,
            ),
            failed,
            judged(&"x".repeat(60), Decision::NoOpinion, "ALLOW", false),
        ];
        let r = respond("u".into(), &answer(Decision::NoOpinion, "", trace));
        assert!(r.allowed);
        assert_eq!(r.denial, None);
        assert_eq!(
            r.audit_annotations
                .into_iter()
                .map(|(k, v)| (k.into_owned(), v.text().into_owned()))
                .collect::<Vec<_>>(),
            [
                ("code".to_owned(), "ALLOW".to_owned()),
                (
                    "second.code".to_owned(),
                    "OBSERVED_MISSING_TICKET".to_owned()
                ),
            ]
        );
        assert_eq!(
            r.warnings,
            [
                "warrant: second: OBSERVED_MISSING_TICKET says so [OBSERVED_MISSING_TICKET]"
                    .to_owned(),
                format!(
                    "warrant: cache-guard: {} (failurePolicy NoOpinion: not judged)",
                    AuthorizerError::DeadlinePassed
                ),
            ]
        );
    }

    /// Refused: the deciding (last) step's annotations only; a refusal by failure policy has
    /// none, and an empty reason still says who refused.
    #[test]
    fn refusals_carry_the_deciding_step() {
        let trace = vec![
            judged("first", Decision::NoOpinion, "ALLOW", false),
            judged("guard", Decision::Deny, "MISSING_TICKET", false),
        ];
        let r = respond(
            "u".into(),
            &answer(Decision::Deny, "guard: no [MISSING_TICKET]", trace),
        );
        assert!(!r.allowed);
        assert_eq!(r.denial.as_deref(), Some("guard: no [MISSING_TICKET]"));
        assert_eq!(r.audit_annotation("code").unwrap(), "MISSING_TICKET");
        assert_eq!(r.audit_annotations.len(), 1);
        assert!(r.warnings.is_empty());

        let failed = step(
            "guard",
            StepOutcome::Failed {
                error: AuthorizerError::DeadlinePassed,
                policy: FailurePolicy::Deny,
            },
        );
        let r = respond("u".into(), &answer(Decision::Deny, "", vec![failed]));
        assert_eq!(
            r.denial.as_deref(),
            Some("refused by warrant's validation ring")
        );
        assert!(r.audit_annotations.is_empty() && r.warnings.is_empty());
    }
}
