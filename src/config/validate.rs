//! Schema to model, with upstream's rules (`k8s.io/apiserver/pkg/apis/apiserver/validation/
//! validation.go`, `ValidateAuthorizationConfiguration` and `ValidateWebhookConfiguration`) and
//! kube-apiserver's own checks (`pkg/kubeapiserver/options/authorization.go`). Like upstream it
//! never stops at the first problem: it returns every error, each tied to its field path.
//! Upstream roots webhook fields at `authorizers[i]` without a `webhook` segment; so do we.

use super::duration::GoDuration;
use super::error::{ConfigError, ErrorKind};
use super::model::{AuthorizerConfig, AuthorizerSpec, Config, FailurePolicy, WebhookConfig};
use super::schema::{self, At};
use crate::cel::{Expression, Variables};
use crate::names::{AuthorizerName, NameError};
use crate::review::ApiVersion;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

mod guard;
mod policy;

/// The most match conditions one authorizer may carry (upstream `maxMatchConditions`).
pub const MAX_MATCH_CONDITIONS: usize = 64;

/// The longest webhook timeout upstream accepts.
const MAX_WEBHOOK_TIMEOUT_SECS: u64 = 30;

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

/// The types kube-apiserver knows but warrant cannot run, and why.
const CLUSTER_STATE_TYPES: [&str; 3] = ["RBAC", "Node", "ABAC"];

struct Checker {
    file: Arc<str>,
    errors: Vec<ConfigError>,
}

impl Checker {
    fn push(&mut self, line: u32, path: impl Into<String>, kind: ErrorKind) {
        self.errors.push(ConfigError {
            file: self.file.clone(),
            line,
            path: path.into(),
            kind,
        });
    }
}

fn line<T>(v: &At<T>) -> u32 {
    u32::try_from(v.referenced.line()).unwrap_or(u32::MAX)
}

/// Validates a decoded file. `file` names it in errors.
pub fn validate(file: &Arc<str>, f: schema::File) -> Result<Config, Vec<ConfigError>> {
    let mut c = Checker {
        file: file.clone(),
        errors: Vec::new(),
    };
    let flavour = check_type_meta(&mut c, &f);
    let mut authorizers = Vec::new();
    match f.authorizers {
        Some(list) if !list.value.is_empty() => {
            let mut names = HashSet::new();
            let mut types = HashSet::new();
            for (i, entry) in list.value.into_iter().enumerate() {
                let entry_line = line(&entry);
                if let Some(a) = check_authorizer(
                    &mut c,
                    flavour,
                    i,
                    entry_line,
                    entry.value,
                    &mut names,
                    &mut types,
                ) {
                    authorizers.push(a);
                }
            }
        }
        other => {
            let l = other.as_ref().map(line).unwrap_or(1);
            c.push(
                l,
                "authorizers",
                ErrorKind::Required(Some(
                    "at least one authorization mode must be defined".into(),
                )),
            );
        }
    }
    if c.errors.is_empty() {
        Ok(Config { authorizers })
    } else {
        Err(c.errors)
    }
}

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
        Some(k) if k.value == "AuthorizationConfiguration" => {}
        Some(k) => c.push(
            line(k),
            "kind",
            ErrorKind::NotSupported {
                value: k.value.clone(),
                supported: vec!["AuthorizationConfiguration"],
                detail: None,
            },
        ),
    }
    flavour
}

#[allow(clippy::too_many_arguments)]
fn check_authorizer(
    c: &mut Checker,
    flavour: Flavour,
    i: usize,
    entry_line: u32,
    a: schema::Authorizer,
    names: &mut HashSet<String>,
    types: &mut HashSet<String>,
) -> Option<AuthorizerConfig> {
    let base = format!("authorizers[{i}]");
    let errors_before = c.errors.len();

    // type
    let type_ = match &a.type_ {
        None => {
            c.push(
                entry_line,
                format!("{base}.type"),
                ErrorKind::Required(None),
            );
            None
        }
        Some(t) if t.value.is_empty() => {
            c.push(line(t), format!("{base}.type"), ErrorKind::Required(None));
            None
        }
        Some(t) => Some((t.value.clone(), line(t))),
    };
    let supported: Vec<&'static str> = match flavour {
        Flavour::Upstream => vec!["AlwaysAllow", "AlwaysDeny", "Webhook"],
        Flavour::Warrant => vec![
            "AlwaysAllow",
            "AlwaysDeny",
            "Webhook",
            "Policy",
            "DeletionGuard",
        ],
    };
    let mut spec = None;
    if let Some((t, tl)) = &type_ {
        if CLUSTER_STATE_TYPES.contains(&t.as_str()) {
            c.push(
                *tl,
                format!("{base}.type"),
                ErrorKind::NotSupported {
                    value: t.clone(),
                    supported: supported.clone(),
                    detail: Some(format!(
                        "{t} needs cluster state that warrant does not hold; keep it in kube-apiserver's own --authorization-config"
                    )),
                },
            );
        } else if !supported.contains(&t.as_str()) {
            c.push(
                *tl,
                format!("{base}.type"),
                ErrorKind::NotSupported {
                    value: t.clone(),
                    supported: supported.clone(),
                    detail: None,
                },
            );
        } else {
            // Only Webhook may repeat in kube-apiserver; warrant's own flavour allows any type
            // to repeat, because its types are configured per entry.
            if flavour == Flavour::Upstream && t != "Webhook" && !types.insert(t.clone()) {
                c.push(*tl, format!("{base}.type"), ErrorKind::Duplicate(t.clone()));
            }
            spec = match t.as_str() {
                "AlwaysAllow" => Some(AuthorizerSpec::AlwaysAllow),
                "AlwaysDeny" => Some(AuthorizerSpec::AlwaysDeny),
                "Policy" => policy::check(c, &base, entry_line, a.policy.as_ref())
                    .map(AuthorizerSpec::Policy),
                "DeletionGuard" => guard::check(c, &base, entry_line, a.guard.as_ref())
                    .map(|g| AuthorizerSpec::DeletionGuard(Box::new(g))),
                _ => None,
            };
        }
    }
    let is_webhook = type_.as_ref().is_some_and(|(t, _)| t == "Webhook");
    let is_policy = type_.as_ref().is_some_and(|(t, _)| t == "Policy");
    let is_guard = type_.as_ref().is_some_and(|(t, _)| t == "DeletionGuard");
    if let Some(g) = &a.guard
        && !is_guard
        && type_.is_some()
    {
        c.push(
            line(g),
            format!("{base}.guard"),
            ErrorKind::Invalid {
                value: "non-null".into(),
                detail: "may only be specified when type=DeletionGuard".into(),
            },
        );
    }
    if let Some(p) = &a.policy
        && !is_policy
        && type_.is_some()
    {
        c.push(
            line(p),
            format!("{base}.policy"),
            ErrorKind::Invalid {
                value: "non-null".into(),
                detail: "may only be specified when type=Policy".into(),
            },
        );
    }

    // name
    let mut name = None;
    match &a.name {
        None => c.push(
            entry_line,
            format!("{base}.name"),
            ErrorKind::Required(None),
        ),
        Some(n) => match AuthorizerName::new(&n.value) {
            Err(NameError::Empty) => {
                c.push(line(n), format!("{base}.name"), ErrorKind::Required(None))
            }
            // Upstream checks a repeated name before its format.
            Err(NameError::Format(_)) if names.contains(&n.value) => c.push(
                line(n),
                format!("{base}.name"),
                ErrorKind::Duplicate(n.value.clone()),
            ),
            Err(NameError::Format(msg)) => {
                names.insert(n.value.clone());
                c.push(
                    line(n),
                    format!("{base}.name"),
                    ErrorKind::Invalid {
                        value: n.value.clone(),
                        detail: format!("authorizer name is invalid: {msg}"),
                    },
                )
            }
            Ok(valid) => {
                if !names.insert(n.value.clone()) {
                    c.push(
                        line(n),
                        format!("{base}.name"),
                        ErrorKind::Duplicate(n.value.clone()),
                    );
                } else if flavour == Flavour::Upstream
                    && let Some((t, _)) = &type_
                    && t != "Webhook"
                    && n.value != t.to_lowercase()
                {
                    c.push(
                        line(n),
                        format!("{base}.name"),
                        ErrorKind::Invalid {
                            value: n.value.clone(),
                            detail: format!(
                                "kube-apiserver requires the name of a {t} authorizer to be {:?}",
                                t.to_lowercase()
                            ),
                        },
                    );
                }
                name = Some(valid);
            }
        },
    }

    // webhook block
    let mut webhook_settings = None;
    match (&a.webhook, is_webhook) {
        (None, true) => c.push(
            entry_line,
            format!("{base}.webhook"),
            ErrorKind::Required(Some("required when type=Webhook".into())),
        ),
        (Some(w), false) if type_.is_some() => c.push(
            line(w),
            format!("{base}.webhook"),
            ErrorKind::Invalid {
                value: "non-null".into(),
                detail: "may only be specified when type=Webhook".into(),
            },
        ),
        (Some(w), true) => {
            webhook_settings = check_webhook(c, flavour, &base, w);
        }
        _ => {}
    }

    // warrant's own fields
    let mut failure_policy = FailurePolicy::Deny;
    if let Some(fp) = &a.failure_policy {
        if flavour == Flavour::Upstream {
            c.push(
                line(fp),
                format!("{base}.failurePolicy"),
                warrant_only("failurePolicy"),
            );
        } else if is_webhook {
            c.push(
                line(fp),
                format!("{base}.failurePolicy"),
                ErrorKind::Forbidden(
                    "a Webhook authorizer takes its failurePolicy from its webhook block".into(),
                ),
            );
        } else {
            if let Some(p) =
                parse_failure_policy(c, line(fp), &format!("{base}.failurePolicy"), &fp.value)
            {
                failure_policy = p;
            }
        }
    }
    if let Some(mc) = &a.match_conditions {
        if flavour == Flavour::Upstream {
            c.push(
                line(mc),
                format!("{base}.matchConditions"),
                warrant_only("matchConditions"),
            );
        } else if is_webhook {
            c.push(
                line(mc),
                format!("{base}.matchConditions"),
                ErrorKind::Forbidden(
                    "a Webhook authorizer takes its matchConditions from its webhook block".into(),
                ),
            );
        }
    }
    // matchConditions: the webhook block's for a Webhook (upstream), the entry's otherwise.
    let conditions = match (&a.webhook, is_webhook) {
        (Some(w), true) => w.value.match_conditions.as_ref(),
        _ if flavour == Flavour::Warrant && !is_webhook => a.match_conditions.as_ref(),
        _ => None,
    };
    let match_conditions = conditions
        .map(|mc| check_match_conditions(c, &format!("{base}.matchConditions"), mc))
        .unwrap_or_default();

    if let Some((settings, policy)) = webhook_settings {
        spec = Some(AuthorizerSpec::Webhook(settings));
        failure_policy = policy;
    }

    if c.errors.len() != errors_before {
        return None;
    }
    Some(AuthorizerConfig {
        name: name?,
        failure_policy,
        spec: spec?,
        match_conditions,
    })
}

fn warrant_only(field: &str) -> ErrorKind {
    ErrorKind::Forbidden(format!(
        "{field} is a warrant.dev/v1alpha1 field; it is not part of apiserver.config.k8s.io (use apiVersion: {WARRANT_VERSION})"
    ))
}

fn parse_failure_policy(c: &mut Checker, l: u32, path: &str, v: &str) -> Option<FailurePolicy> {
    match v {
        "Deny" => Some(FailurePolicy::Deny),
        "NoOpinion" => Some(FailurePolicy::NoOpinion),
        "" => {
            c.push(l, path, ErrorKind::Required(None));
            None
        }
        other => {
            c.push(
                l,
                path,
                ErrorKind::NotSupported {
                    value: other.into(),
                    supported: vec!["NoOpinion", "Deny"],
                    detail: None,
                },
            );
            None
        }
    }
}

/// Upstream's defaults for a TTL left out or set to 0 (`v1/defaults.go`).
const DEFAULT_AUTHORIZED_TTL: Duration = Duration::from_secs(300);
const DEFAULT_UNAUTHORIZED_TTL: Duration = Duration::from_secs(30);

/// Checks a `webhook:` block; on success returns its settings and failure policy.
fn check_webhook(
    c: &mut Checker,
    flavour: Flavour,
    base: &str,
    w: &At<schema::Webhook>,
) -> Option<(WebhookConfig, FailurePolicy)> {
    let errors_before = c.errors.len();
    let wl = line(w);
    let w = &w.value;
    let mut timeout = None;
    let mut ttls = [DEFAULT_AUTHORIZED_TTL, DEFAULT_UNAUTHORIZED_TTL];
    match &w.timeout {
        None => c.push(wl, format!("{base}.timeout"), ErrorKind::Required(None)),
        Some(t) => match GoDuration::parse(&t.value) {
            Err(e) => c.push(line(t), format!("{base}.timeout"), invalid(&t.value, e)),
            Ok(d) if d.to_std() == Some(std::time::Duration::ZERO) => c.push(
                line(t),
                format!("{base}.timeout"),
                ErrorKind::Required(None),
            ),
            Ok(d) => {
                let ok = d.is_positive()
                    && d.to_std()
                        .is_some_and(|s| s.as_secs_f64() <= MAX_WEBHOOK_TIMEOUT_SECS as f64);
                if !ok {
                    c.push(
                        line(t),
                        format!("{base}.timeout"),
                        invalid(&t.value, "must be > 0s and <= 30s"),
                    );
                } else {
                    timeout = d.to_std();
                }
            }
        },
    }
    for (slot, (field, ttl)) in [
        ("authorizedTTL", &w.authorized_ttl),
        ("unauthorizedTTL", &w.unauthorized_ttl),
    ]
    .into_iter()
    .enumerate()
    {
        // A TTL of 0 (or none) is defaulted to 5m / 30s before validation, as upstream does.
        if let Some(t) = ttl {
            match GoDuration::parse(&t.value) {
                Err(e) => c.push(line(t), format!("{base}.{field}"), invalid(&t.value, e)),
                Ok(d) if d.to_std().is_none() => c.push(
                    line(t),
                    format!("{base}.{field}"),
                    invalid(&t.value, "must be > 0s"),
                ),
                Ok(d) => {
                    if let Some(std) = d.to_std().filter(|s| !s.is_zero()) {
                        ttls[slot] = std;
                    }
                }
            }
        }
    }
    let mut version = None;
    match &w.subject_access_review_version {
        None => c.push(
            wl,
            format!("{base}.subjectAccessReviewVersion"),
            ErrorKind::Required(None),
        ),
        Some(v) if v.value.is_empty() => c.push(
            line(v),
            format!("{base}.subjectAccessReviewVersion"),
            ErrorKind::Required(None),
        ),
        Some(v) if v.value == "v1" => version = Some(ApiVersion::V1),
        Some(v) if v.value == "v1beta1" => version = Some(ApiVersion::V1beta1),
        Some(v) => c.push(
            line(v),
            format!("{base}.subjectAccessReviewVersion"),
            ErrorKind::NotSupported {
                value: v.value.clone(),
                supported: vec!["v1", "v1beta1"],
                detail: None,
            },
        ),
    }
    // As upstream: the value is checked whenever set; it is required only with conditions.
    let has_conditions = w
        .match_conditions
        .as_ref()
        .is_some_and(|m| !m.value.is_empty());
    let path = format!("{base}.matchConditionSubjectAccessReviewVersion");
    let required =
        || ErrorKind::Required(Some("required if match conditions are specified".into()));
    match &w.match_condition_subject_access_review_version {
        None if has_conditions => c.push(wl, path, required()),
        Some(v) if v.value.is_empty() && has_conditions => c.push(line(v), path, required()),
        None => {}
        Some(v) if v.value.is_empty() || v.value == "v1" => {}
        Some(v) => c.push(
            line(v),
            path,
            ErrorKind::NotSupported {
                value: v.value.clone(),
                supported: vec!["v1"],
                detail: None,
            },
        ),
    }
    let mut failure_policy = None;
    match &w.failure_policy {
        None => c.push(
            wl,
            format!("{base}.failurePolicy"),
            ErrorKind::Required(None),
        ),
        Some(fp) => {
            failure_policy =
                parse_failure_policy(c, line(fp), &format!("{base}.failurePolicy"), &fp.value);
        }
    }
    let kubeconfig = check_connection_info(c, base, wl, w.connection_info.as_ref());
    let (single_flight, stale_if_error) = check_webhook_additions(c, flavour, base, w);
    if c.errors.len() != errors_before {
        return None;
    }
    let settings = WebhookConfig {
        timeout: timeout?,
        authorized_ttl: ttls[0],
        unauthorized_ttl: ttls[1],
        cache_authorized: w.cache_authorized_requests.as_ref().is_none_or(|b| b.value),
        cache_unauthorized: w
            .cache_unauthorized_requests
            .as_ref()
            .is_none_or(|b| b.value),
        version: version?,
        kubeconfig: kubeconfig?,
        single_flight,
        stale_if_error,
    };
    Some((settings, failure_policy?))
}

/// warrant.dev's additions to the webhook block: `singleFlight` (default true) and
/// `staleIfError` (default off). Refused in an upstream file, which must stay upstream's schema.
fn check_webhook_additions(
    c: &mut Checker,
    flavour: Flavour,
    base: &str,
    w: &schema::Webhook,
) -> (bool, Option<Duration>) {
    let mut single_flight = true;
    let mut stale = None;
    if let Some(sf) = &w.single_flight {
        if flavour == Flavour::Upstream {
            c.push(
                line(sf),
                format!("{base}.singleFlight"),
                warrant_only("singleFlight"),
            );
        } else {
            single_flight = sf.value;
        }
    }
    if let Some(s) = &w.stale_if_error {
        let path = format!("{base}.staleIfError");
        if flavour == Flavour::Upstream {
            c.push(line(s), path, warrant_only("staleIfError"));
        } else {
            match GoDuration::parse(&s.value) {
                Err(e) => c.push(line(s), path, invalid(&s.value, e)),
                Ok(d) => match d.to_std() {
                    None => c.push(line(s), path, invalid(&s.value, "must be >= 0s")),
                    Some(d) if d.is_zero() => {}
                    Some(d) => stale = Some(d),
                },
            }
        }
    }
    (single_flight, stale)
}

fn check_connection_info(
    c: &mut Checker,
    base: &str,
    wl: u32,
    ci: Option<&At<schema::ConnectionInfo>>,
) -> Option<PathBuf> {
    let type_path = format!("{base}.connectionInfo.type");
    let file_path = format!("{base}.connectionInfo.kubeConfigFile");
    let Some(ci) = ci else {
        c.push(wl, type_path, ErrorKind::Required(None));
        return None;
    };
    let cl = line(ci);
    let ci = &ci.value;
    match ci.type_.as_ref().map(|t| (t.value.as_str(), line(t))) {
        None | Some(("", _)) => {
            c.push(cl, type_path, ErrorKind::Required(None));
            None
        }
        Some(("InClusterConfig", tl)) => {
            if let Some(f) = &ci.kube_config_file {
                c.push(
                    line(f),
                    file_path,
                    invalid(&f.value, "can only be set when type=KubeConfigFile"),
                );
            } else {
                // Upstream's generic validation accepts it, but it means "ask the cluster's own
                // SubjectAccessReview API", which would call warrant again.
                c.push(
                    tl,
                    type_path,
                    invalid(
                        "InClusterConfig",
                        "warrant cannot use InClusterConfig: the cluster's SubjectAccessReview API would call warrant again; use KubeConfigFile",
                    ),
                );
            }
            None
        }
        Some(("KubeConfigFile", tl)) => match &ci.kube_config_file {
            None => {
                c.push(tl, file_path, ErrorKind::Required(None));
                None
            }
            Some(f) if f.value.is_empty() => {
                c.push(line(f), file_path, ErrorKind::Required(None));
                None
            }
            Some(f) => {
                let p = Path::new(&f.value);
                if !p.is_absolute() {
                    c.push(
                        line(f),
                        file_path,
                        invalid(&f.value, "must be an absolute path"),
                    );
                } else {
                    match std::fs::metadata(p) {
                        Err(e) => c.push(
                            line(f),
                            file_path,
                            invalid(&f.value, format!("error loading file: {e}")),
                        ),
                        Ok(m) if !m.is_file() => c.push(
                            line(f),
                            file_path,
                            invalid(&f.value, "must be a regular file"),
                        ),
                        Ok(_) => return Some(p.to_path_buf()),
                    }
                }
                None
            }
        },
        Some((other, tl)) => {
            c.push(
                tl,
                type_path,
                ErrorKind::NotSupported {
                    value: other.into(),
                    supported: vec!["InClusterConfig", "KubeConfigFile"],
                    detail: None,
                },
            );
            None
        }
    }
}

/// Upstream's matchCondition rules (count first, then per entry: Required, Duplicate, then
/// compile), returning the compiled conditions.
fn check_match_conditions(
    c: &mut Checker,
    path: &str,
    mc: &At<Vec<At<schema::MatchCondition>>>,
) -> Vec<Expression> {
    if mc.value.len() > MAX_MATCH_CONDITIONS {
        c.push(
            line(mc),
            path,
            ErrorKind::TooMany {
                actual: mc.value.len(),
                max: MAX_MATCH_CONDITIONS,
            },
        );
        return Vec::new();
    }
    let mut seen = HashSet::new();
    let mut compiled = Vec::new();
    for (i, cond) in mc.value.iter().enumerate() {
        let p = format!("{path}[{i}].expression");
        match &cond.value.expression {
            None => c.push(line(cond), p, ErrorKind::Required(None)),
            Some(e) if e.value.trim().is_empty() => c.push(line(e), p, ErrorKind::Required(None)),
            Some(e) if !seen.insert(e.value.clone()) => {
                c.push(line(e), p, ErrorKind::Duplicate(e.value.clone()))
            }
            Some(e) => match Expression::compile(&e.value, Variables::Request) {
                Ok(x) => compiled.push(x),
                Err(err) => c.push(line(e), p, invalid(&e.value, err)),
            },
        }
    }
    compiled
}

fn invalid(value: &str, detail: impl ToString) -> ErrorKind {
    ErrorKind::Invalid {
        value: value.into(),
        detail: detail.to_string(),
    }
}
