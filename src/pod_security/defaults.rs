//! The defaults OpenShift gives a constraint when it is stored.
//!
//! OpenShift defaults every `SecurityContextConstraints` on write
//! (`github.com/openshift/apiserver-library-go`, `pkg/securitycontextconstraints/sccdefaults/
//! defaults.go`): both group strategies default to `RunAsAny`; unset volumes mean all of them,
//! an empty list means `hostPath` alone when `allowHostDirVolumePlugin` is set and `none`
//! otherwise; `allowHostDirVolumePlugin` adds `hostPath`, and without it `*` becomes the explicit
//! list of every type but `hostPath` (so a later volume type is not allowed by an old `*`);
//! `allowPrivilegeEscalation` defaults to true. A CRD cannot express that, so the engine applies
//! the same defaults to every constraint it loads.

use super::constraint::{SecurityContextConstraints, strategy_type};
use super::strategy::volumes::{ALL, ALL_TYPES, HOST_PATH, NONE};
use std::collections::BTreeSet;

/// `constraint` with OpenShift's defaults applied.
pub fn with_defaults(mut constraint: SecurityContextConstraints) -> SecurityContextConstraints {
    if constraint.fs_group.type_.is_empty() {
        constraint.fs_group.type_ = strategy_type::RUN_AS_ANY.to_owned();
    }
    if constraint.supplemental_groups.type_.is_empty() {
        constraint.supplemental_groups.type_ = strategy_type::RUN_AS_ANY.to_owned();
    }
    if constraint.users.is_none() {
        constraint.users = Some(Vec::new());
    }
    if constraint.groups.is_none() {
        constraint.groups = Some(Vec::new());
    }
    let mut volumes: BTreeSet<String> = match &constraint.volumes {
        None => BTreeSet::from([ALL.to_owned()]),
        Some(list) if list.is_empty() && constraint.allow_host_dir_volume_plugin => {
            BTreeSet::from([HOST_PATH.to_owned()])
        }
        Some(list) if list.is_empty() => BTreeSet::from([NONE.to_owned()]),
        Some(list) => list.iter().cloned().collect(),
    };
    if constraint.allow_host_dir_volume_plugin {
        if !volumes.contains(ALL) {
            volumes.insert(HOST_PATH.to_owned());
        }
    } else {
        let all = volumes.remove(ALL);
        volumes.remove(HOST_PATH);
        if all {
            volumes.extend(
                ALL_TYPES
                    .iter()
                    .filter(|t| **t != HOST_PATH)
                    .map(|t| (*t).to_owned()),
            );
        }
    }
    constraint.volumes = Some(volumes.into_iter().collect());
    if constraint.allow_privilege_escalation.is_none() {
        constraint.allow_privilege_escalation = Some(true);
    }
    constraint
}
