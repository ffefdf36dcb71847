//! Schema to model, with upstream's rules (`k8s.io/apiserver/pkg/apis/apiserver/validation/
//! validation.go`, `ValidateAuthorizationConfiguration` and `ValidateWebhookConfiguration`) and
//! kube-apiserver's own checks (`pkg/kubeapiserver/options/authorization.go`). Like upstream it
//! never stops at the first problem: it returns every error, each tied to its field path.
//! Upstream roots webhook fields at `authorizers[i]` without a `webhook` segment; so do we.
//!
//! This file owns the entry point, the [`Checker`] that collects errors, and the type meta
//! (`apiVersion`, `kind`, hence the [`Flavour`]). One function per block, in its own file:
//! [`entry`] one `authorizers[]` entry and its cross-field rules, [`webhook`] the `webhook:`
//! block, [`match_conditions`] the CEL pre-filters, [`policy`] and [`guard`] warrant's blocks.

use super::error::{ConfigError, ConfigWarning, ErrorKind};
use super::model::{AuthorizerConfig, Config, FailurePolicy, Mode};
use super::schema::{self, At};
use std::sync::Arc;

mod conditions;
mod entry;
mod guard;
mod match_conditions;
mod policy;
mod shapes;
mod webhook;

/// Which flavour of the file this is, from `apiVersion`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flavour {
    /// `apiserver.config.k8s.io/*`: upstream's schema exactly, kube-apiserver's rules.
    Upstream,
    /// `warrant.dev/v1alpha1`: the same plus warrant's fields and types.
    Warrant,
}

const UPSTREAM_VERSIONS: [&str; 3] = [
    "apiserver.config.k8s.io/v1",
    "apiserver.config.k8s.io/v1beta1",
    "apiserver.config.k8s.io/v1alpha1",
];
const WARRANT_VERSION: &str = "warrant.dev/v1alpha1";
const KIND: &str = "AuthorizationConfiguration";

/// Collects the errors of one file, in the order they are found.
struct Checker {
    file: Arc<str>,
    errors: Vec<ConfigError>,
    warnings: Vec<ConfigWarning>,
}

impl Checker {
    fn warn(&mut self, line: u32, path: impl Into<String>, message: impl Into<String>) {
        self.warnings.push(ConfigWarning {
            file: self.file.clone(),
            line,
            path: path.into(),
            message: message.into(),
        });
    }

    fn push(&mut self, line: u32, path: impl Into<String>, kind: ErrorKind) {
        self.errors.push(ConfigError {
            file: self.file.clone(),
            line,
            path: path.into(),
            kind,
        });
    }
}

/// The 1-based YAML line of a value.
fn line<T>(v: &At<T>) -> u32 {
    u32::try_from(v.referenced.line()).unwrap_or(u32::MAX)
}

/// Validates a decoded file. `file` names it in errors.
pub fn validate(file: &Arc<str>, f: schema::File) -> Result<Config, Vec<ConfigError>> {
    let mut c = Checker {
        file: file.clone(),
        errors: Vec::new(),
        warnings: Vec::new(),
    };
    let flavour = check_type_meta(&mut c, &f);
    let authorizers = check_authorizers(&mut c, flavour, f.authorizers);
    if c.errors.is_empty() {
        Ok(Config {
            authorizers,
            warnings: c.warnings,
        })
    } else {
        Err(c.errors)
    }
}

/// `apiVersion` and `kind`. An unknown `apiVersion` is checked as warrant's flavour.
fn check_type_meta(c: &mut Checker, f: &schema::File) -> Flavour {
    let mut flavour = Flavour::Warrant;
    match &f.api_version {
        None => c.push(1, "apiVersion", ErrorKind::Required(None)),
        Some(v) if UPSTREAM_VERSIONS.contains(&v.value.as_str()) => flavour = Flavour::Upstream,
        Some(v) if v.value == WARRANT_VERSION => {}
        Some(v) => c.push(
            line(v),
            "apiVersion",
            ErrorKind::NotSupported {
                value: v.value.clone(),
                supported: vec![
                    WARRANT_VERSION,
                    UPSTREAM_VERSIONS[0],
                    UPSTREAM_VERSIONS[1],
                    UPSTREAM_VERSIONS[2],
                ],
                detail: None,
            },
        ),
    }
    match &f.kind {
        None => c.push(1, "kind", ErrorKind::Required(None)),
        Some(k) if k.value == KIND => {}
        Some(k) => c.push(
            line(k),
            "kind",
            ErrorKind::NotSupported {
                value: k.value.clone(),
                supported: vec![KIND],
                detail: None,
            },
        ),
    }
    flavour
}

/// The `authorizers` list: at least one entry, each checked by [`entry::check`].
fn check_authorizers(
    c: &mut Checker,
    flavour: Flavour,
    list: Option<At<Vec<At<schema::Authorizer>>>>,
) -> Vec<AuthorizerConfig> {
    let list = match list {
        Some(list) if !list.value.is_empty() => list,
        other => {
            let l = other.as_ref().map(line).unwrap_or(1);
            c.push(
                l,
                "authorizers",
                ErrorKind::Required(Some(
                    "at least one authorization mode must be defined".into(),
                )),
            );
            return Vec::new();
        }
    };
    let mut claims = entry::Claims::default();
    let mut authorizers = Vec::new();
    for (i, a) in list.value.into_iter().enumerate() {
        authorizers.extend(entry::check(c, flavour, i, a, &mut claims));
    }
    authorizers
}

/// A field of `warrant.dev/v1alpha1` found in an upstream file.
fn warrant_only(field: &str) -> ErrorKind {
    ErrorKind::Forbidden(format!(
        "{field} is a warrant.dev/v1alpha1 field; it is not part of apiserver.config.k8s.io (use apiVersion: {WARRANT_VERSION})"
    ))
}

/// The failure policies, in the order `Unsupported value` lists them (upstream's order).
const FAILURE_POLICIES: [FailurePolicy; 2] = [FailurePolicy::NoOpinion, FailurePolicy::Deny];

/// A `failurePolicy` value, of an entry or of a webhook block.
fn parse_failure_policy(c: &mut Checker, l: u32, path: &str, v: &str) -> Option<FailurePolicy> {
    if v.is_empty() {
        c.push(l, path, ErrorKind::Required(None));
        return None;
    }
    let parsed = FAILURE_POLICIES.into_iter().find(|p| p.as_str() == v);
    if parsed.is_none() {
        c.push(
            l,
            path,
            ErrorKind::NotSupported {
                value: v.into(),
                supported: FAILURE_POLICIES.map(FailurePolicy::as_str).to_vec(),
                detail: None,
            },
        );
    }
    parsed
}

/// A `mode` value (of an entry, a policy rule or a guard block): `Enforce` or `Observe`.
fn parse_mode(c: &mut Checker, l: u32, path: &str, v: &str) -> Option<Mode> {
    let parsed = Mode::parse(v);
    if parsed.is_none() {
        c.push(
            l,
            path,
            ErrorKind::NotSupported {
                value: v.into(),
                supported: Mode::ALL.map(Mode::as_str).to_vec(),
                detail: None,
            },
        );
    }
    parsed
}

/// `Invalid value: "<value>": <detail>`.
fn invalid(value: &str, detail: impl ToString) -> ErrorKind {
    ErrorKind::Invalid {
        value: value.into(),
        detail: detail.to_string(),
    }
}
