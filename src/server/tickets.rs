//! How `/admit` answers a `DeletionTicket` write (the webhook `deletion-tickets.warrant.dev`):
//! judged by [`crate::tickets::TicketJudge`] rather than by the chain, answered with the same
//! shape as any admission request, and recorded as a chain answer (the route writes the metric
//! and the audit record: the record's `code` is the ticket code of a refusal, its reason names
//! the change admitted).

use crate::admission::AdmissionResponse;
use crate::authorizer::Answer;
use crate::decision::Decision;
use crate::tickets::{Judgement, Refusal};

/// The judgement as a chain answer, for the audit record and the refusal's message: `warrant:
/// deletion ticket <namespace>/<name>: <message> [<CODE>]`.
pub(super) fn answer(judgement: &Judgement, place: &str) -> Answer {
    let (decision, code, reason) = match judgement {
        Ok(change) => (
            Decision::NoOpinion,
            None,
            format!("deletion ticket {place}: {} (admitted)", change.as_str()),
        ),
        Err(Refusal { code, message }) => (
            Decision::Deny,
            code.code(),
            format!(
                "warrant: deletion ticket {place}: {message} [{}]",
                code.as_str()
            ),
        ),
    };
    Answer {
        conditional: None,
        decision,
        decided_by: None,
        rule: None,
        code,
        reason,
        errors: Vec::new(),
        trace: Vec::new(),
    }
}

/// The response: admitted, or refused (403) with the answer's reason.
pub(super) fn respond(uid: String, judgement: &Judgement, answer: &Answer) -> AdmissionResponse {
    match judgement {
        Ok(_) => AdmissionResponse::allow(uid),
        Err(refusal) => {
            tracing::info!(
                code = refusal.code.as_str(),
                reason = %answer.reason,
                "deletion ticket write refused"
            );
            AdmissionResponse::deny(uid, &answer.reason)
        }
    }
}
