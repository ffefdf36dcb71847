//! The change window gate: above LOW risk, a request inside a dated freeze, or outside every
//! configured weekly window, is `WINDOW_BLOCKED`. The windows themselves are
//! [`crate::config::model::window`].

use super::assessment::{GuardCode, RiskLevel};
use super::case::Case;
use super::conclusion::Finding;
use crate::config::model::guard::GuardSpec;

/// `WINDOW_BLOCKED` when a freeze or the windows stop the case.
pub(super) fn gate(spec: &GuardSpec, case: &Case<'_>) -> Option<Finding> {
    if case.risk.level == RiskLevel::Low {
        return None;
    }
    if let Some(f) = spec.freezes.iter().find(|f| f.contains(case.now)) {
        return Some(Finding::new(
            GuardCode::WindowBlocked,
            format!("change freeze until {}: {}", f.end.to_rfc3339(), f.reason),
        ));
    }
    let outside = !spec.windows.is_empty() && !spec.windows.iter().any(|w| w.contains(case.now));
    outside.then(|| {
        Finding::new(
            GuardCode::WindowBlocked,
            "outside every allowed change window",
        )
    })
}
