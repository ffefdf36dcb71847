//! The order constraints are tried in: priority, then most restrictive, then name.
//!
//! A higher `priority` (unset is 0) comes first; between equal priorities, the constraint with
//! fewer restriction points (the more restrictive) comes first; then the name decides
//! (`util/sort/bypriority.go`). The points weigh what a constraint allows, from privileged
//! containers down to capabilities (`util/sort/byrestrictions.go`, `pointValue`): the SELinux
//! strategy is scored from the run-as-user table by its type's name, as there (so SELinux
//! `MustRunAs` counts as a fixed user, `RunAsAny` as any user).

use super::constraint::{SecurityContextConstraints, strategy_type};
use super::strategy::volumes::{ALL, HOST_PATH};
use std::cmp::Ordering;

const PRIVILEGED: i64 = 1_600_000;
const HOST_PORTS: i64 = 800_000;
const HOST_NETWORK: i64 = 400_000;
const HOST_VOLUME: i64 = 200_000;
const NON_TRIVIAL_VOLUME: i64 = 100_000;
const RUN_AS_ANY: i64 = 40_000;
const RUN_AS_NON_ROOT: i64 = 30_000;
const RUN_AS_RANGE: i64 = 20_000;
const RUN_AS_USER: i64 = 10_000;
const CAP_DEFAULT: i64 = 5000;
const CAP_ADD_ONE: i64 = 300;
const CAP_ALLOW_ALL: i64 = 4000;
const CAP_ALLOW_ONE: i64 = 10;
const CAP_DROP_ALL: i64 = -3000;
const CAP_DROP_ONE: i64 = -50;
const CAP_MAX: i64 = 9999;
const CAP_MIN: i64 = 0;

/// Volume types that do not count as non-trivial.
const TRIVIAL_VOLUMES: &[&str] = &[
    "secret",
    "configMap",
    "emptyDir",
    "downwardAPI",
    "projected",
    "none",
];

/// The restriction points of a constraint: the lower, the more restrictive.
pub fn points(constraint: &SecurityContextConstraints) -> i64 {
    let mut total = 0;
    if constraint.allow_privileged_container {
        total += PRIVILEGED;
    }
    total += volume_points(constraint);
    if constraint.allow_host_network {
        total += HOST_NETWORK;
    }
    if constraint.allow_host_ports {
        total += HOST_PORTS;
    }
    total += capability_points(constraint);
    total += strategy_points(&constraint.se_linux_context.type_);
    total += strategy_points(&constraint.run_as_user.type_);
    total
}

fn strategy_points(type_: &str) -> i64 {
    match type_ {
        strategy_type::RUN_AS_ANY => RUN_AS_ANY,
        strategy_type::MUST_RUN_AS_NON_ROOT => RUN_AS_NON_ROOT,
        strategy_type::MUST_RUN_AS_RANGE => RUN_AS_RANGE,
        strategy_type::MUST_RUN_AS => RUN_AS_USER,
        _ => 0,
    }
}

fn volume_points(constraint: &SecurityContextConstraints) -> i64 {
    let mut host = false;
    let mut non_trivial = false;
    for volume in constraint.volumes.iter().flatten() {
        if volume == HOST_PATH || volume == ALL {
            host = true;
        } else if !TRIVIAL_VOLUMES.contains(&volume.as_str()) {
            non_trivial = true;
        }
    }
    if host {
        HOST_VOLUME
    } else if non_trivial {
        NON_TRIVIAL_VOLUME
    } else {
        0
    }
}

fn has_cap(needle: &str, haystack: Option<&Vec<String>>) -> bool {
    haystack
        .into_iter()
        .flatten()
        .any(|c| c.to_uppercase() == needle)
}

fn count(list: Option<&Vec<String>>) -> i64 {
    list.map_or(0, |l| i64::try_from(l.len()).unwrap_or(i64::MAX / 1024))
}

fn capability_points(constraint: &SecurityContextConstraints) -> i64 {
    let mut caps = CAP_DEFAULT;
    caps += CAP_ADD_ONE * count(constraint.default_add_capabilities.as_ref());
    let allowed = constraint.allowed_capabilities.as_ref();
    if has_cap("*", allowed) || has_cap("ALL", allowed) {
        caps += CAP_ALLOW_ALL;
    } else {
        caps += CAP_ALLOW_ONE * count(allowed);
    }
    let drops = constraint.required_drop_capabilities.as_ref();
    if has_cap("ALL", drops) {
        caps += CAP_DROP_ALL;
    } else {
        caps += CAP_DROP_ONE * count(drops);
    }
    caps.clamp(CAP_MIN, CAP_MAX)
}

/// The order of two constraints: `Less` when `a` is tried before `b`.
pub fn compare(a: &SecurityContextConstraints, b: &SecurityContextConstraints) -> Ordering {
    let priority = |c: &SecurityContextConstraints| c.priority.unwrap_or(0);
    priority(b)
        .cmp(&priority(a))
        .then_with(|| points(a).cmp(&points(b)))
        .then_with(|| a.name().cmp(b.name()))
}

/// Why `a` comes before `b`, in OpenShift's words (for the audit annotation of the choice).
pub fn reason(a: &SecurityContextConstraints, b: &SecurityContextConstraints) -> String {
    let (pa, pb) = (a.priority.unwrap_or(0), b.priority.unwrap_or(0));
    if pa > pb {
        return "has higher priority".to_owned();
    }
    if pa < pb {
        return "has lower priority".to_owned();
    }
    let (p, q) = (points(a), points(b));
    if p < q {
        return more_restrictive_reason(p, q);
    }
    if p > q {
        return more_restrictive_reason(q, p);
    }
    "ordered by name".to_owned()
}

fn more_restrictive_reason(mut p: i64, mut q: i64) -> String {
    if p >= q {
        return String::new();
    }
    for (weight, what) in [
        (PRIVILEGED, "privileged"),
        (HOST_PORTS, "host ports"),
        (HOST_NETWORK, "host networking"),
        (HOST_VOLUME, "host volume mounts"),
        (NON_TRIVIAL_VOLUME, "non-trivial volume mounts"),
    ] {
        if p >= weight && q >= weight {
            p -= weight;
            q -= weight;
        } else if p < weight && q >= weight {
            return format!("forbids {what}");
        }
    }
    if p / 10_000 < q / 10_000 {
        return "permits less runAs strategies".to_owned();
    }
    if p % 10_000 < q % 10_000 {
        return "permits less capabilities".to_owned();
    }
    "is equally restrictive".to_owned()
}
