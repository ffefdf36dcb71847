//! The first two gates, which let a request through before rate limits, windows and tickets:
//! members of a break-glass group (`BREAK_GLASS`), and trusted principals up to their
//! `maxLevel` (`ALLOW`).

use super::assessment::GuardCode;
use super::case::Case;
use super::conclusion::Finding;
use super::scope::Target;
use crate::config::model::guard::{GuardSpec, Level};

/// `BREAK_GLASS` when the requester is in a break-glass group.
pub(super) fn break_glass(spec: &GuardSpec, case: &Case<'_>) -> Option<Finding> {
    case.target
        .groups
        .iter()
        .any(|g| spec.break_glass_groups.contains(g))
        .then(|| Finding::new(GuardCode::BreakGlass, "break-glass: the guard stands aside"))
}

/// `ALLOW` when a trusted entry names the requester and covers the target's protection level
/// (an unprotected target is covered by every entry).
pub(super) fn trusted(spec: &GuardSpec, case: &Case<'_>) -> Option<Finding> {
    let t = &case.target;
    spec.trusted
        .iter()
        .any(|trusted| {
            trusted.principals.contains(t.user, t.groups)
                && case.risk.protection.is_none_or(|l| l <= trusted.max_level)
        })
        .then(|| Finding::new(GuardCode::Allow, "trusted principal"))
}

/// Whether the requester is let through whatever the target: a break-glass group member, or a
/// principal trusted up to `critical`. The validation ring asks this before it reads the
/// cluster, so that neither depends on the cache.
pub(super) fn stands_aside_anyway(spec: &GuardSpec, t: &Target<'_>) -> bool {
    t.groups.iter().any(|g| spec.break_glass_groups.contains(g))
        || spec.trusted.iter().any(|trusted| {
            trusted.max_level == Level::Critical && trusted.principals.contains(t.user, t.groups)
        })
}
