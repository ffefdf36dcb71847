//! The group strategies of fsGroup and supplementalGroups.
//!
//! `MustRunAs` gives the first id of its first range and requires every id to fall in one of
//! its ranges, an empty list being an error; `RunAsAny` gives and requires nothing, so an
//! omitted fsGroup is valid (`pkg/securitycontextconstraints/group/mustrunas.go`,
//! `runasany.go`). The namespace fills the ranges a constraint leaves empty: fsGroup gets the
//! single first id of the supplemental groups annotation, supplementalGroups every block of it
//! ([`crate::pod_security::namespace`]).

use crate::pod_security::constraint::IdRange;
use crate::pod_security::field::{BadValue, FieldError, FieldPath};

/// A group strategy, ready to use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Groups {
    /// Ids within these ranges (never empty), reported under `field`.
    MustRunAs {
        /// The ranges allowed.
        ranges: Vec<IdRange>,
        /// `fsGroup` or `supplementalGroups`.
        field: &'static str,
    },
    /// Any id.
    RunAsAny,
}

impl Groups {
    /// The first id allowed, given to a pod that sets none.
    pub fn generate(&self) -> Option<i64> {
        match self {
            Self::MustRunAs { ranges, .. } => ranges.first().map(|r| r.min),
            Self::RunAsAny => None,
        }
    }

    /// Checks a pod's ids; `path` is the pod's `securityContext`.
    pub fn validate(&self, path: &FieldPath, groups: Option<&[i64]>, errors: &mut Vec<FieldError>) {
        let Self::MustRunAs { ranges, field } = self else {
            return;
        };
        let value = || BadValue::Ids(groups.map(<[i64]>::to_vec));
        let ids = groups.unwrap_or_default();
        if ids.is_empty() {
            errors.push(FieldError::invalid(
                path.child(field),
                value(),
                "unable to validate empty groups against required ranges",
            ));
        }
        for id in ids {
            if !ranges.iter().any(|r| *id >= r.min && *id <= r.max) {
                errors.push(FieldError::invalid(
                    path.child(field),
                    value(),
                    format!("{id} is not an allowed group"),
                ));
            }
        }
    }
}
