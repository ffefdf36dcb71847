//! [`FollowUp`]: what the deletion defense owes after the validation ring has decided and before
//! the answer goes out, as data. [`super::admission`] says which are owed; [`super::FollowUps`]
//! performs them.

use crate::authorizer::deletion_guard::GuardCode;
use crate::cluster::ObjectAddress;
use crate::decision::Reason;
use crate::names::{AuthorizerName, Code};

/// What a failed follow-up does to the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnFailure {
    /// The request is refused: the defense cannot stand behind it without the follow-up.
    Refuse,
    /// The failure is logged and counted; the answer stands.
    Admit,
}

/// One follow-up of an admission decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FollowUp<'a> {
    /// Record who asked for the deletion of an object a buffer holds.
    RecordRequester(RecordRequester<'a>),
    /// Mark the single-use ticket the deletion was admitted on Used.
    MarkTicketUsed(MarkTicketUsed<'a>),
}

impl FollowUp<'_> {
    /// The guard that owes it (and refuses the request when it fails and must not).
    pub fn guard(&self) -> &AuthorizerName {
        match self {
            FollowUp::RecordRequester(r) => r.guard,
            FollowUp::MarkTicketUsed(m) => m.guard,
        }
    }

    /// What its failure does to the answer.
    pub(crate) fn on_failure(&self) -> OnFailure {
        match self {
            FollowUp::RecordRequester(r) => r.on_failure,
            FollowUp::MarkTicketUsed(_) => OnFailure::Refuse,
        }
    }

    /// The reason of the refusal when it failed with `error` and must not.
    pub fn refusal(&self, error: &str) -> Reason {
        match self {
            FollowUp::RecordRequester(r) => r.refusal(error),
            FollowUp::MarkTicketUsed(m) => m.refusal(error),
        }
    }
}

/// Mark a single-use `DeletionTicket` Used for the deletion it authorized, as warrant's own
/// identity. Always [`OnFailure::Refuse`]: a ticket that cannot be marked could authorize a
/// second deletion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarkTicketUsed<'a> {
    /// The guard that admitted the deletion on the ticket.
    pub guard: &'a AuthorizerName,
    /// The ticket, `<namespace>/<name>`.
    pub ticket: String,
    /// The object deleted.
    pub object: ObjectAddress<'a>,
    /// When the deletion was admitted (`status.usedAt`).
    pub at: chrono::DateTime<chrono::Utc>,
}

impl MarkTicketUsed<'_> {
    /// `TICKET_USED`, saying which ticket and why.
    fn refusal(&self, error: &str) -> Reason {
        Reason {
            rule: None,
            message: format!(
                "ticket {} is single-use and could not be marked Used ({error}); retry the deletion",
                self.ticket
            ),
            code: Code::new(GuardCode::TicketUsed.as_str()).ok(),
        }
    }
}

/// Write `<annotation>: <user>` on the object a buffer holds, as warrant's own identity: the
/// buffer's controller reads it to refuse a confirmation by the deleter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordRequester<'a> {
    /// The guard whose buffer holds the object.
    pub guard: &'a AuthorizerName,
    /// The requester annotation's key.
    pub annotation: &'a str,
    /// The object, as the request names it, with the stored object's uid.
    pub object: ObjectAddress<'a>,
    /// Who asked for the deletion.
    pub user: &'a str,
    /// The annotation's value on the stored object, if any (no write when it already names
    /// `user`).
    pub recorded: Option<&'a str>,
    /// [`OnFailure::Refuse`] when the guard enforces and `requireConfirmation` is set (nobody
    /// could confirm a deletion of unknown origin).
    pub(crate) on_failure: OnFailure,
}

impl RecordRequester<'_> {
    /// `REQUESTER_NOT_RECORDED`, saying which annotation and why.
    fn refusal(&self, error: &str) -> Reason {
        Reason {
            rule: None,
            message: format!(
                "this deletion must be confirmed by a second person, and who asked for it could not be recorded (annotation {}: {error}); retry the deletion",
                self.annotation
            ),
            code: Code::new(GuardCode::RequesterNotRecorded.as_str()).ok(),
        }
    }
}
