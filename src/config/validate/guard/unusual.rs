//! `unusualDeletions:`: Go durations with `window` from one second to `halfLife`, a `halfLife`
//! of at least a minute, a floor of at least one per hour (a burst is measured against it, so
//! zero would flag a principal's second deletion), a factor of at least 2, the action and the
//! scope by name, and kinds with a resource.

use super::super::{Checker, invalid, line};
use crate::config::duration::GoDuration;
use crate::config::error::ErrorKind;
use crate::config::model::guard::{Kind, RateLimitScope};
use crate::config::model::unusual::*;
use crate::config::schema::At;
use crate::config::schema::unusual::UnusualDeletionsFile;
use std::time::Duration;

/// The longest half-life: a baseline that forgets nothing in a quarter is no baseline.
const MAX_HALF_LIFE: Duration = Duration::from_secs(90 * 24 * 3600);
/// The largest factor, the prior and the floor: far beyond any real rate, far from overflow.
const MAX_RATE: u32 = 1_000_000;

/// Checks `unusualDeletions` at `p` (the guard's path); `None` when absent or wrong (errors
/// recorded).
pub(super) fn check(
    c: &mut Checker,
    p: &str,
    u: Option<&At<UnusualDeletionsFile>>,
) -> Option<UnusualDeletions> {
    let u = u?;
    let before = c.errors.len();
    let up = format!("{p}.unusualDeletions");
    let f = &u.value;
    let ul = line(u);
    let window = duration(c, &up, "window", f.window.as_ref(), DEFAULT_WINDOW);
    let half_life = duration(c, &up, "halfLife", f.half_life.as_ref(), DEFAULT_HALF_LIFE);
    if let (Some(w), Some(h)) = (window, half_life) {
        if w < Duration::from_secs(1) || w > h {
            let at = f.window.as_ref().map_or(ul, line);
            c.push(
                at,
                format!("{up}.window"),
                invalid(
                    &written(f.window.as_ref(), w),
                    "must be at least 1s and at most halfLife",
                ),
            );
        }
        if !(Duration::from_secs(60)..=MAX_HALF_LIFE).contains(&h) {
            let at = f.half_life.as_ref().map_or(ul, line);
            c.push(
                at,
                format!("{up}.halfLife"),
                invalid(
                    &written(f.half_life.as_ref(), h),
                    "must be between 1m and 2160h",
                ),
            );
        }
    }
    let prior_per_hour = f.prior_per_hour.unwrap_or(DEFAULT_PRIOR_PER_HOUR);
    let floor_per_hour = f.floor_per_hour.unwrap_or(DEFAULT_FLOOR_PER_HOUR);
    let factor = f.factor.as_ref().map_or(DEFAULT_FACTOR, |f| f.value);
    let factor_line = f.factor.as_ref().map_or(ul, line);
    for (field, v, min, at) in [
        ("priorPerHour", prior_per_hour, 0, ul),
        ("floorPerHour", floor_per_hour, 1, ul),
        ("factor", factor, 2, factor_line),
    ] {
        if !(min..=MAX_RATE).contains(&v) {
            c.push(
                at,
                format!("{up}.{field}"),
                invalid(
                    &v.to_string(),
                    format!("must be between {min} and {MAX_RATE}"),
                ),
            );
        }
    }
    let action = match &f.action {
        None => UnusualAction::default(),
        Some(a) => UnusualAction::parse(&a.value).unwrap_or_else(|| {
            c.push(
                line(a),
                format!("{up}.action"),
                ErrorKind::NotSupported {
                    value: a.value.clone(),
                    supported: UnusualAction::ALL.iter().map(|a| a.as_str()).collect(),
                    detail: None,
                },
            );
            UnusualAction::default()
        }),
    };
    let scope = match f.scope.as_ref().map(|s| (s.value.as_str(), line(s))) {
        None | Some(("Replica", _)) => RateLimitScope::Replica,
        Some(("Cluster", _)) => RateLimitScope::Cluster,
        Some((other, l)) => {
            c.push(
                l,
                format!("{up}.scope"),
                ErrorKind::NotSupported {
                    value: other.into(),
                    supported: vec!["Replica", "Cluster"],
                    detail: None,
                },
            );
            RateLimitScope::Replica
        }
    };
    let mut resources = Vec::new();
    for (i, k) in f.resources.iter().enumerate() {
        if k.value.resource.is_empty() {
            c.push(
                line(k),
                format!("{up}.resources[{i}].resource"),
                ErrorKind::Required(None),
            );
        }
        resources.push(Kind {
            group: k.value.group.clone(),
            resource: k.value.resource.clone(),
        });
    }
    (c.errors.len() == before).then_some(UnusualDeletions {
        resources,
        window: window?,
        half_life: half_life?,
        prior_per_hour,
        floor_per_hour,
        factor,
        action,
        scope,
    })
}

/// A positive Go duration at `field`, `default` when absent; `None` (error recorded) when wrong.
fn duration(
    c: &mut Checker,
    up: &str,
    field: &str,
    v: Option<&At<String>>,
    default: Duration,
) -> Option<Duration> {
    let Some(v) = v else {
        return Some(default);
    };
    let parsed = GoDuration::parse(&v.value)
        .map_err(|e| e.to_string())
        .and_then(|d| {
            d.is_positive()
                .then(|| d.to_std())
                .flatten()
                .ok_or_else(|| "must be positive".to_owned())
        });
    match parsed {
        Ok(d) => Some(d),
        Err(why) => {
            c.push(line(v), format!("{up}.{field}"), invalid(&v.value, why));
            None
        }
    }
}

/// The value as written, else the default it took.
fn written(v: Option<&At<String>>, d: Duration) -> String {
    v.map_or_else(|| format!("{d:?}"), |v| v.value.clone())
}
