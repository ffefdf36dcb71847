//! The guard's label protection as conditions (KEP-5681): for a `delete` or `deletecollection`
//! the authorization ring would let through, a caller that handles conditions gets Deny
//! conditions on `oldObject.metadata.labels` instead (one per guarded level, built once by
//! [`crate::authorizer::conditional::guard_conditions`]). kube-apiserver evaluates them at
//! admission on the revision actually deleted, so a label added a moment before the delete
//! still counts. Break-glass and fully trusted requesters get no conditions: the validation
//! ring judges those with everything it knows. A presented ticket lifts only the conditions of
//! the levels it passes the guard's checks for (found, approved, enough approvers for that
//! level, unexpired, in scope): an id that does not resolve lifts nothing, since on a cluster
//! relying on conditions no ring may be there to judge it.

use super::gates;
use super::scope::{self, Scope, Target};
use super::state::GuardShared;
use super::tickets;
use crate::authorizer::conditional::guarded_levels;
use crate::authorizer::{Deadline, Input};
use crate::config::model::conditions::CONDITION_DOMAIN;
use crate::config::model::guard::Level;
use crate::decision::{Decision, Reason, Verdict};
use crate::names::Code;
use crate::review::ConditionsMap;

/// The verdict with the label conditions attached, when they apply to this review.
pub(super) async fn attach(
    shared: &GuardShared,
    conditions: Option<&ConditionsMap>,
    input: &Input,
    verdict: Verdict,
    deadline: Deadline,
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
    if !destructive || gates::stands_aside_anyway(spec, &target) {
        return verdict;
    }
    let map = uncovered(shared, map, input, &target, deadline).await;
    if map.deny_conditions.is_empty() {
        return verdict;
    }
    let reason = Reason {
        rule: None,
        message: "deletion is conditional on the object's protection label".into(),
        code: Code::new("LABEL_PROTECTED").ok(),
    };
    let mut conditional = Verdict::conditional(map, Some(reason));
    conditional.detail = verdict.detail;
    conditional.shadows = verdict.shadows;
    conditional
}

/// The conditions a presented ticket does not lift: those of every level the ticket (the first
/// value of the `extra` key) fails the guard's checks for, all of them without a ticket.
async fn uncovered(
    shared: &GuardShared,
    map: &ConditionsMap,
    input: &Input,
    target: &Target<'_>,
    deadline: Deadline,
) -> ConditionsMap {
    let spec = &shared.spec;
    let presented = input
        .review
        .spec()
        .extra
        .as_ref()
        .and_then(|e| e.get(&spec.tickets.extra_key))
        .and_then(|v| v.first());
    let Some(id) = presented else {
        return map.clone();
    };
    let source = shared.tickets.as_deref();
    let snapshot = tickets::fetch(source, Some(id), target, deadline).await;
    let covers = |level: Level| {
        matches!(
            tickets::named(
                spec,
                snapshot.as_deref(),
                (level, input.now),
                target,
                None,
                id
            ),
            Ok(Ok(_))
        )
    };
    let lifted: Vec<String> = guarded_levels(spec)
        .into_iter()
        .filter(|l| covers(*l))
        .map(|l| format!("{CONDITION_DOMAIN}/protection-{}", l.as_str()))
        .collect();
    let mut kept = map.clone();
    kept.deny_conditions.retain(|c| !lifted.contains(&c.id));
    kept
}
