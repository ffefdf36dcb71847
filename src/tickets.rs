//! Deletion tickets as Kubernetes objects: the `DeletionTicket` custom resource
//! (`warrant.dev/v1alpha1`, [`resource`]), the rules its writes must follow ([`rules`]: who
//! requested it, that its spec never changes, that an approval is one entry added by the writer
//! in their own name, which phase may follow which), their codes ([`TicketCode`]), and the
//! judgement of one admission request on a ticket ([`judge`]), which asks the cluster whether
//! an approver may approve ([`crate::object::AccessReview`]: RBAC decides, never text in the
//! object).
//!
//! What a ticket authorizes (its targets, its approvals counted against the guard's
//! configuration) is the deletion guard's business; where tickets are read from (a watch of the
//! cluster) is `cluster`'s. Nothing here knows either.

pub mod code;
pub mod judge;
pub mod resource;
pub mod rules;
pub mod selector;

pub use code::{Refusal, TicketCode};
pub use judge::{Judgement, TicketJudge, is_ticket_request};
pub use resource::{
    API_VERSION, DeletionTicket, GROUP, KIND, PLURAL, Phase, Signoff, TicketSpec, TicketStatus,
    TicketTarget, UsedFor, VERSION, api_resource, status_of,
};
pub use rules::{Change, Ruling, Wildcards, Writer};
pub use selector::TargetSelector;

#[cfg(test)]
mod tests;
