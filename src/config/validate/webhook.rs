//! The `webhook:` block of a `Webhook` authorizer: `timeout`, the TTLs and their defaults,
//! `subjectAccessReviewVersion`, `matchConditionSubjectAccessReviewVersion`, `failurePolicy`,
//! `connectionInfo`, and warrant.dev's additions `singleFlight` and `staleIfError`. Mirrors
//! `ValidateWebhookConfiguration` in
//! `k8s.io/apiserver/pkg/apis/apiserver/validation/validation.go` (and its defaults in
//! `v1/defaults.go`). Whether the block may appear is decided in [`super::entry`]; its
//! `matchConditions` are compiled by [`super::match_conditions`].

use super::{Checker, Flavour, invalid, line, parse_failure_policy, warrant_only};
use crate::config::duration::GoDuration;
use crate::config::error::ErrorKind;
use crate::config::model::{FailurePolicy, WebhookConfig};
use crate::config::schema::{self, At};
use crate::review::ApiVersion;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The longest webhook timeout upstream accepts.
const MAX_WEBHOOK_TIMEOUT_SECS: u64 = 30;

/// Upstream's defaults for a TTL left out or set to 0 (`v1/defaults.go`).
const DEFAULT_AUTHORIZED_TTL: Duration = Duration::from_secs(300);
const DEFAULT_UNAUTHORIZED_TTL: Duration = Duration::from_secs(30);

/// Checks a `webhook:` block of the entry at `base`; on success returns its settings and
/// failure policy. Errors about a missing field are placed on the block's line.
pub(super) fn check(
    c: &mut Checker,
    flavour: Flavour,
    base: &str,
    w: &At<schema::Webhook>,
) -> Option<(WebhookConfig, FailurePolicy)> {
    let errors_before = c.errors.len();
    let wl = line(w);
    let w = &w.value;
    let timeout = check_timeout(c, base, wl, w.timeout.as_ref());
    let authorized_ttl = check_ttl(
        c,
        format!("{base}.authorizedTTL"),
        w.authorized_ttl.as_ref(),
        DEFAULT_AUTHORIZED_TTL,
    );
    let unauthorized_ttl = check_ttl(
        c,
        format!("{base}.unauthorizedTTL"),
        w.unauthorized_ttl.as_ref(),
        DEFAULT_UNAUTHORIZED_TTL,
    );
    let version = check_version(c, base, wl, w.subject_access_review_version.as_ref());
    check_match_condition_version(c, base, wl, w);
    let failure_policy = match &w.failure_policy {
        None => {
            let path = format!("{base}.failurePolicy");
            c.push(wl, path, ErrorKind::Required(None));
            None
        }
        Some(fp) => parse_failure_policy(c, line(fp), &format!("{base}.failurePolicy"), &fp.value),
    };
    let kubeconfig = check_connection_info(c, base, wl, w.connection_info.as_ref());
    let single_flight = check_single_flight(c, flavour, base, w.single_flight.as_ref());
    let stale_if_error = check_stale_if_error(c, flavour, base, w.stale_if_error.as_ref());
    if c.errors.len() != errors_before {
        return None;
    }
    let settings = WebhookConfig {
        timeout: timeout?,
        authorized_ttl,
        unauthorized_ttl,
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

/// `timeout`: required, a Go duration, 0 < t <= 30s (0 reads as missing, as upstream).
fn check_timeout(c: &mut Checker, base: &str, wl: u32, t: Option<&At<String>>) -> Option<Duration> {
    let path = format!("{base}.timeout");
    let Some(t) = t else {
        c.push(wl, path, ErrorKind::Required(None));
        return None;
    };
    match GoDuration::parse(&t.value) {
        Err(e) => c.push(line(t), path, invalid(&t.value, e)),
        Ok(d) if d.to_std() == Some(Duration::ZERO) => {
            c.push(line(t), path, ErrorKind::Required(None))
        }
        Ok(d) => {
            let ok = d.is_positive()
                && d.to_std()
                    .is_some_and(|s| s.as_secs_f64() <= MAX_WEBHOOK_TIMEOUT_SECS as f64);
            if ok {
                return d.to_std();
            }
            c.push(line(t), path, invalid(&t.value, "must be > 0s and <= 30s"));
        }
    }
    None
}

/// `authorizedTTL` or `unauthorizedTTL` at `path`. A TTL of 0 (or none) is defaulted before
/// validation, as upstream does.
fn check_ttl(
    c: &mut Checker,
    path: String,
    ttl: Option<&At<String>>,
    default: Duration,
) -> Duration {
    let Some(t) = ttl else {
        return default;
    };
    match GoDuration::parse(&t.value) {
        Err(e) => c.push(line(t), path, invalid(&t.value, e)),
        Ok(d) => match d.to_std() {
            None => c.push(line(t), path, invalid(&t.value, "must be > 0s")),
            Some(d) if d.is_zero() => {}
            Some(d) => return d,
        },
    }
    default
}

/// `subjectAccessReviewVersion`: required, `v1` or `v1beta1`.
fn check_version(
    c: &mut Checker,
    base: &str,
    wl: u32,
    v: Option<&At<String>>,
) -> Option<ApiVersion> {
    let path = format!("{base}.subjectAccessReviewVersion");
    match v {
        None => c.push(wl, path, ErrorKind::Required(None)),
        Some(v) => match v.value.as_str() {
            "" => c.push(line(v), path, ErrorKind::Required(None)),
            "v1" => return Some(ApiVersion::V1),
            "v1beta1" => return Some(ApiVersion::V1beta1),
            other => c.push(
                line(v),
                path,
                ErrorKind::NotSupported {
                    value: other.into(),
                    supported: vec!["v1", "v1beta1"],
                    detail: None,
                },
            ),
        },
    }
    None
}

/// `matchConditionSubjectAccessReviewVersion`: as upstream, checked whenever set and required
/// only with conditions.
fn check_match_condition_version(c: &mut Checker, base: &str, wl: u32, w: &schema::Webhook) {
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
}

/// `connectionInfo`: required, `KubeConfigFile` (checked by [`check_kube_config_file`]) or
/// `InClusterConfig` (refused, see [`refuse_in_cluster`]). Returns the kubeconfig's path.
fn check_connection_info(
    c: &mut Checker,
    base: &str,
    wl: u32,
    ci: Option<&At<schema::ConnectionInfo>>,
) -> Option<PathBuf> {
    let type_path = format!("{base}.connectionInfo.type");
    let Some(ci) = ci else {
        c.push(wl, type_path, ErrorKind::Required(None));
        return None;
    };
    let cl = line(ci);
    let ci = &ci.value;
    match ci.type_.as_ref().map(|t| (t.value.as_str(), line(t))) {
        None | Some(("", _)) => c.push(cl, type_path, ErrorKind::Required(None)),
        Some(("InClusterConfig", tl)) => {
            refuse_in_cluster(c, base, tl, ci.kube_config_file.as_ref())
        }
        Some(("KubeConfigFile", tl)) => {
            return check_kube_config_file(c, base, tl, ci.kube_config_file.as_ref());
        }
        Some((other, tl)) => c.push(
            tl,
            type_path,
            ErrorKind::NotSupported {
                value: other.into(),
                supported: vec!["InClusterConfig", "KubeConfigFile"],
                detail: None,
            },
        ),
    }
    None
}

/// `InClusterConfig`: with a `kubeConfigFile` it breaks upstream's rules; without one upstream
/// accepts it, but it means "ask the cluster's own SubjectAccessReview API", which would call
/// warrant again. `tl` is the line of `type`.
fn refuse_in_cluster(c: &mut Checker, base: &str, tl: u32, file: Option<&At<String>>) {
    if let Some(f) = file {
        c.push(
            line(f),
            format!("{base}.connectionInfo.kubeConfigFile"),
            invalid(&f.value, "can only be set when type=KubeConfigFile"),
        );
    } else {
        c.push(
            tl,
            format!("{base}.connectionInfo.type"),
            invalid(
                "InClusterConfig",
                "warrant cannot use InClusterConfig: the cluster's SubjectAccessReview API would call warrant again; use KubeConfigFile",
            ),
        );
    }
}

/// `kubeConfigFile` of a `KubeConfigFile` connection: required, an absolute path to a regular
/// file (read when the chain is built, not here). `tl` is the line of `type`.
fn check_kube_config_file(
    c: &mut Checker,
    base: &str,
    tl: u32,
    file: Option<&At<String>>,
) -> Option<PathBuf> {
    kube_config_file(c, format!("{base}.connectionInfo.kubeConfigFile"), tl, file)
}

/// A kubeconfig's path at field `path`: required (missing: an error on line `tl`), an
/// absolute path to a regular file. Shared with the ticket webhook's `kubeConfigFile`.
pub(super) fn kube_config_file(
    c: &mut Checker,
    path: String,
    tl: u32,
    file: Option<&At<String>>,
) -> Option<PathBuf> {
    let Some(f) = file else {
        c.push(tl, path, ErrorKind::Required(None));
        return None;
    };
    let fl = line(f);
    let p = Path::new(&f.value);
    if f.value.is_empty() {
        c.push(fl, path, ErrorKind::Required(None));
    } else if !p.is_absolute() {
        c.push(fl, path, invalid(&f.value, "must be an absolute path"));
    } else {
        match std::fs::metadata(p) {
            Err(e) => c.push(
                fl,
                path,
                invalid(&f.value, format!("error loading file: {e}")),
            ),
            Ok(m) if !m.is_file() => c.push(fl, path, invalid(&f.value, "must be a regular file")),
            Ok(_) => return Some(p.to_path_buf()),
        }
    }
    None
}

/// warrant.dev's `singleFlight` (default true): identical concurrent misses share one call.
/// Refused in an upstream file, which must stay upstream's schema.
fn check_single_flight(
    c: &mut Checker,
    flavour: Flavour,
    base: &str,
    sf: Option<&At<bool>>,
) -> bool {
    match sf {
        None => true,
        Some(sf) if flavour == Flavour::Upstream => {
            c.push(
                line(sf),
                format!("{base}.singleFlight"),
                warrant_only("singleFlight"),
            );
            true
        }
        Some(sf) => sf.value,
    }
}

/// warrant.dev's `staleIfError` (default off): a Go duration >= 0, 0 meaning off. Refused in
/// an upstream file.
fn check_stale_if_error(
    c: &mut Checker,
    flavour: Flavour,
    base: &str,
    s: Option<&At<String>>,
) -> Option<Duration> {
    let s = s?;
    let path = format!("{base}.staleIfError");
    if flavour == Flavour::Upstream {
        c.push(line(s), path, warrant_only("staleIfError"));
        return None;
    }
    match GoDuration::parse(&s.value) {
        Err(e) => c.push(line(s), path, invalid(&s.value, e)),
        Ok(d) => match d.to_std() {
            None => c.push(line(s), path, invalid(&s.value, "must be >= 0s")),
            Some(d) if d.is_zero() => {}
            Some(d) => return Some(d),
        },
    }
    None
}
