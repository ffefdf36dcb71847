//! The codes of the ticket writes warrant refuses, and a refusal: a code and the message the
//! writer reads (docs/denials.md lists every code with what to do).

use crate::names::Code;

/// Why a write to a `DeletionTicket` is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TicketCode {
    /// The object is not a ticket warrant can read.
    TicketMalformed,
    /// A ticket created with `spec.requestedBy` other than its creator.
    TicketRequesterMismatch,
    /// A ticket created already past its `expiresAt`.
    TicketExpiresInPast,
    /// An update that changes `spec`.
    TicketSpecImmutable,
    /// A status write on a Rejected, Expired or Used ticket.
    TicketClosed,
    /// Earlier approvals changed or removed, or more than one added at once.
    TicketApprovalsRewritten,
    /// An approval or rejection in someone else's name.
    TicketApproverForged,
    /// The requester approving their own ticket.
    TicketSelfApproval,
    /// A second approval by the same user.
    TicketAlreadyApproved,
    /// An approval of a ticket past its `expiresAt`.
    TicketExpired,
    /// The writer is not allowed the verb `approve` on `deletiontickets`.
    TicketApproverNotAuthorized,
    /// The cluster could not say whether the writer may approve; refused, never guessed.
    TicketApproverUnverified,
    /// A phase change that no rule allows.
    TicketPhaseTransition,
    /// A ticket created without targets, or naming targets with wildcards where the guards'
    /// profile forbids them.
    TicketWildcardTarget,
}

impl TicketCode {
    /// The code as written in reasons, audit records and metric labels.
    pub fn as_str(self) -> &'static str {
        match self {
            TicketCode::TicketMalformed => "TICKET_MALFORMED",
            TicketCode::TicketRequesterMismatch => "TICKET_REQUESTER_MISMATCH",
            TicketCode::TicketExpiresInPast => "TICKET_EXPIRES_IN_PAST",
            TicketCode::TicketSpecImmutable => "TICKET_SPEC_IMMUTABLE",
            TicketCode::TicketClosed => "TICKET_CLOSED",
            TicketCode::TicketApprovalsRewritten => "TICKET_APPROVALS_REWRITTEN",
            TicketCode::TicketApproverForged => "TICKET_APPROVER_FORGED",
            TicketCode::TicketSelfApproval => "TICKET_SELF_APPROVAL",
            TicketCode::TicketAlreadyApproved => "TICKET_ALREADY_APPROVED",
            TicketCode::TicketExpired => "TICKET_EXPIRED",
            TicketCode::TicketApproverNotAuthorized => "TICKET_APPROVER_NOT_AUTHORIZED",
            TicketCode::TicketApproverUnverified => "TICKET_APPROVER_UNVERIFIED",
            TicketCode::TicketPhaseTransition => "TICKET_PHASE_TRANSITION",
            TicketCode::TicketWildcardTarget => "TICKET_WILDCARD_TARGET",
        }
    }

    /// The code as the decision vocabulary's [`Code`].
    pub fn code(self) -> Option<Code> {
        Code::new(self.as_str()).ok()
    }
}

/// A refused write: its code and what the writer is told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The code.
    pub code: TicketCode,
    /// The message (lower case, no trailing period).
    pub message: String,
}

impl Refusal {
    /// A refusal with `code` saying `message`.
    pub fn new(code: TicketCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} [{}]", self.message, self.code.as_str())
    }
}
