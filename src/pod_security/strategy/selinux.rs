//! The SELinux strategies.
//!
//! `MustRunAs` gives its options (the level from the namespace when the constraint leaves it
//! empty) and requires a context equal to them, field by field; two levels are equal when they
//! are the same text or have the same sensitivity and the same categories in any order
//! (`pkg/securitycontextconstraints/selinux/mustrunas.go`). `RunAsAny` gives and requires
//! nothing (`runasany.go`).

use crate::pod_security::field::{BadValue, FieldError, FieldPath};
use k8s_openapi::api::core::v1::SELinuxOptions;

/// An SELinux strategy, ready to use.
#[derive(Debug, Clone, PartialEq)]
pub enum SeLinux {
    /// Exactly these options.
    MustRunAs(SELinuxOptions),
    /// Any context.
    RunAsAny,
}

fn text(value: Option<&String>) -> &str {
    value.map_or("", String::as_str)
}

impl SeLinux {
    /// The options given to a pod or container that sets none.
    pub fn generate(&self) -> Option<SELinuxOptions> {
        match self {
            Self::MustRunAs(options) => Some(options.clone()),
            Self::RunAsAny => None,
        }
    }

    /// Checks effective SELinux options; `path` is the `seLinuxOptions` field.
    pub fn validate(
        &self,
        path: &FieldPath,
        options: Option<&SELinuxOptions>,
        errors: &mut Vec<FieldError>,
    ) {
        let Self::MustRunAs(required) = self else {
            return;
        };
        let Some(actual) = options else {
            errors.push(FieldError::required(path.clone(), ""));
            return;
        };
        let pairs = [
            (
                "level",
                text(required.level.as_ref()),
                text(actual.level.as_ref()),
            ),
            (
                "role",
                text(required.role.as_ref()),
                text(actual.role.as_ref()),
            ),
            (
                "type",
                text(required.type_.as_ref()),
                text(actual.type_.as_ref()),
            ),
            (
                "user",
                text(required.user.as_ref()),
                text(actual.user.as_ref()),
            ),
        ];
        for (name, want, have) in pairs {
            let equal = if name == "level" {
                equal_levels(want, have)
            } else {
                want == have
            };
            if !equal {
                errors.push(FieldError::invalid(
                    path.child(name),
                    BadValue::Str(have.to_owned()),
                    format!("must be {want}"),
                ));
            }
        }
    }
}

/// Whether two MCS levels are the same: equal text, or the same sensitivity and categories.
fn equal_levels(expected: &str, actual: &str) -> bool {
    if expected == actual {
        return true;
    }
    let (Some((es, ec)), Some((as_, ac))) = (expected.split_once(':'), actual.split_once(':'))
    else {
        return false;
    };
    if es != as_ {
        return false;
    }
    let mut expected: Vec<&str> = ec.split(',').collect();
    let mut actual: Vec<&str> = ac.split(',').collect();
    expected.sort_unstable();
    actual.sort_unstable();
    expected == actual
}
