//! The run-as-user strategies.
//!
//! `MustRunAs` gives and requires one uid; `MustRunAsRange` gives the range's first uid and
//! requires one inside it (the range is the namespace's when the constraint sets neither end);
//! `MustRunAsNonRoot` gives nothing and requires `runAsNonRoot` true or a non-zero uid;
//! `RunAsAny` gives and requires nothing (`pkg/securitycontextconstraints/user/mustrunas.go`,
//! `mustrunasrange.go`, `nonroot.go`, `runasany.go`).

use crate::pod_security::field::{BadValue, FieldError, FieldPath};

/// A run-as-user strategy, ready to use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunAsUser {
    /// Exactly this uid.
    MustRunAs(i64),
    /// A uid within `[min, max]`.
    MustRunAsRange {
        /// The first uid allowed (and the one given).
        min: i64,
        /// The last uid allowed.
        max: i64,
    },
    /// Any uid but root.
    MustRunAsNonRoot,
    /// Any uid.
    RunAsAny,
}

impl RunAsUser {
    /// The uid given to a container that sets none.
    pub fn generate(&self) -> Option<i64> {
        match self {
            Self::MustRunAs(uid) => Some(*uid),
            Self::MustRunAsRange { min, .. } => Some(*min),
            Self::MustRunAsNonRoot | Self::RunAsAny => None,
        }
    }

    /// Checks a container's effective `runAsNonRoot` and `runAsUser`.
    pub fn validate(
        &self,
        path: &FieldPath,
        run_as_non_root: Option<bool>,
        run_as_user: Option<i64>,
        errors: &mut Vec<FieldError>,
    ) {
        match self {
            Self::MustRunAs(uid) => match run_as_user {
                None => errors.push(FieldError::required(path.child("runAsUser"), "")),
                Some(user) if user != *uid => errors.push(FieldError::invalid(
                    path.child("runAsUser"),
                    BadValue::Int(user),
                    format!("must be: {uid}"),
                )),
                Some(_) => {}
            },
            Self::MustRunAsRange { min, max } => match run_as_user {
                None => errors.push(FieldError::required(path.child("runAsUser"), "")),
                Some(user) if user < *min || user > *max => errors.push(FieldError::invalid(
                    path.child("runAsUser"),
                    BadValue::Int(user),
                    format!("must be in the ranges: [{min}, {max}]"),
                )),
                Some(_) => {}
            },
            Self::MustRunAsNonRoot => match (run_as_non_root, run_as_user) {
                (None, None) => {
                    errors.push(FieldError::required(
                        path.child("runAsNonRoot"),
                        "must be true",
                    ));
                }
                (Some(false), _) => errors.push(FieldError::invalid(
                    path.child("runAsNonRoot"),
                    BadValue::Bool(false),
                    "must be true",
                )),
                (_, Some(0)) => errors.push(FieldError::invalid(
                    path.child("runAsUser"),
                    BadValue::Int(0),
                    "running with the root UID is forbidden",
                )),
                _ => {}
            },
            Self::RunAsAny => {}
        }
    }
}
