//! The guard's label protection as conditions (KEP-5681): for a `delete` or `deletecollection`
//! the authorization ring would let through, a caller that handles conditions gets Deny
//! conditions on `oldObject.metadata.labels` instead (one per guarded level, built once by
//! [`crate::authorizer::conditional::guard_conditions`]). kube-apiserver evaluates them at
//! admission on the revision actually deleted, so a label added a moment before the delete
//! still counts. Break-glass and fully trusted requesters, and requests presenting a ticket,
//! get no conditions: the validation ring judges those with everything it knows.

use super::gates;
use super::scope::{self, Scope};
use super::state::GuardShared;
use crate::authorizer::Input;
use crate::decision::{Decision, Reason, Verdict};
use crate::names::Code;
use crate::review::ConditionsMap;

/// The verdict with the label conditions attached, when they apply to this review.
pub(super) fn attach(
    shared: &GuardShared,
    conditions: Option<&ConditionsMap>,
    input: &Input,
    verdict: Verdict,
) -> Verdict {
    let Some(map) = conditions else {
        return verdict;
    };
    if verdict.decision != Decision::NoOpinion {
        return verdict;
    }
    let spec = &shared.spec;
    let Scope::Judged(target) = scope::scope(spec, &input.review) else {
        return verdict;
    };
    let destructive = matches!(target.verb, "delete" | "deletecollection");
    let ticketed = input
        .review
        .spec()
        .extra
        .as_ref()
        .is_some_and(|e| e.contains_key(&spec.tickets.extra_key));
    if !destructive || ticketed || gates::stands_aside_anyway(spec, &target) {
        return verdict;
    }
    let reason = Reason {
        rule: None,
        message: "deletion is conditional on the object's protection label".into(),
        code: Code::new("LABEL_PROTECTED").ok(),
    };
    let mut conditional = Verdict::conditional(map.clone(), Some(reason));
    conditional.detail = verdict.detail;
    conditional.shadows = verdict.shadows;
    conditional
}
