//! The validation ring's guard settings: `protectionLabel` and `ticketAnnotation` (qualified
//! names, as `k8s.io/apimachinery/pkg/util/validation.IsQualifiedName` defines a label or
//! annotation key), `cascadeProtection`, `riskWeights` and `rateLimitStage`.

use super::super::{Checker, invalid, line};
use crate::config::error::ErrorKind;
use crate::config::model::guard::{ObjectProtection, RateLimitScope, RateLimitStage, RiskWeights};
use crate::config::schema::At;
use crate::config::schema::guard::{GuardFile, RateLimitFile, RiskWeightsFile};

/// `protectionLabel`, `ticketAnnotation`, `cascadeProtection`.
pub(super) fn protection(c: &mut Checker, p: &str, f: &GuardFile) -> ObjectProtection {
    let mut key = |field: &str, v: Option<&At<String>>| {
        let v = v?;
        match qualified_name(&v.value) {
            Ok(()) => Some(v.value.clone()),
            Err(why) => {
                c.push(line(v), format!("{p}.{field}"), invalid(&v.value, why));
                None
            }
        }
    };
    let protection_label = key("protectionLabel", f.protection_label.as_ref());
    let ticket_annotation = key("ticketAnnotation", f.ticket_annotation.as_ref());
    ObjectProtection {
        protection_label,
        ticket_annotation,
        cascade: f.cascade_protection.unwrap_or(false),
    }
}

/// `rateLimitStage`: `Authorization` (default) or `Admission`.
pub(super) fn rate_limit_stage(c: &mut Checker, p: &str, f: &GuardFile) -> RateLimitStage {
    match f
        .rate_limit_stage
        .as_ref()
        .map(|s| (s.value.as_str(), line(s)))
    {
        None | Some(("Authorization", _)) => RateLimitStage::Authorization,
        Some(("Admission", _)) => RateLimitStage::Admission,
        Some((other, l)) => {
            c.push(
                l,
                format!("{p}.rateLimitStage"),
                ErrorKind::NotSupported {
                    value: other.into(),
                    supported: vec!["Authorization", "Admission"],
                    detail: None,
                },
            );
            RateLimitStage::Authorization
        }
    }
}

/// `rateLimits[].scope`: `Replica` (default) or `Cluster`.
pub(super) fn rate_limit_scope(c: &mut Checker, rp: &str, r: &RateLimitFile) -> RateLimitScope {
    match r.scope.as_ref().map(|s| (s.value.as_str(), line(s))) {
        None | Some(("Replica", _)) => RateLimitScope::Replica,
        Some(("Cluster", _)) => RateLimitScope::Cluster,
        Some((other, l)) => {
            c.push(
                l,
                format!("{rp}.scope"),
                ErrorKind::NotSupported {
                    value: other.into(),
                    supported: vec!["Replica", "Cluster"],
                    detail: None,
                },
            );
            RateLimitScope::Replica
        }
    }
}

/// The largest weight: scores stay far from overflow, and no factor outweighs the thresholds'
/// range a thousandfold.
const MAX_WEIGHT: u32 = 1000;

/// `riskWeights`: every weight defaults to the model and is at most [`MAX_WEIGHT`];
/// `manyPodsAt` and `highTrafficAt` must be at least 1.
pub(super) fn weights(c: &mut Checker, p: &str, w: Option<&At<RiskWeightsFile>>) -> RiskWeights {
    let d = RiskWeights::default();
    let Some(w) = w else { return d };
    let v = &w.value;
    let out = RiskWeights {
        critical: v.critical.unwrap_or(d.critical),
        high: v.high.unwrap_or(d.high),
        namespace_deletion: v.namespace_deletion.unwrap_or(d.namespace_deletion),
        deletecollection: v.deletecollection.unwrap_or(d.deletecollection),
        many_pods: v.many_pods.unwrap_or(d.many_pods),
        many_pods_at: v.many_pods_at.unwrap_or(d.many_pods_at),
        some_pods: v.some_pods.unwrap_or(d.some_pods),
        ingress: v.ingress.unwrap_or(d.ingress),
        bound_volumes: v.bound_volumes.unwrap_or(d.bound_volumes),
        business_hours: v.business_hours.unwrap_or(d.business_hours),
        qps_per_pod: v.qps_per_pod.unwrap_or(d.qps_per_pod),
        high_traffic: v.high_traffic.unwrap_or(d.high_traffic),
        high_traffic_at: v.high_traffic_at.unwrap_or(d.high_traffic_at),
    };
    let weights = [
        ("critical", out.critical),
        ("high", out.high),
        ("namespaceDeletion", out.namespace_deletion),
        ("deletecollection", out.deletecollection),
        ("manyPods", out.many_pods),
        ("somePods", out.some_pods),
        ("ingress", out.ingress),
        ("boundVolumes", out.bound_volumes),
        ("businessHours", out.business_hours),
        ("highTraffic", out.high_traffic),
    ];
    for (field, v) in weights {
        if v > MAX_WEIGHT {
            c.push(
                line(w),
                format!("{p}.riskWeights.{field}"),
                invalid(&v.to_string(), format!("must be at most {MAX_WEIGHT}")),
            );
        }
    }
    for (field, at) in [
        ("manyPodsAt", out.many_pods_at),
        ("highTrafficAt", out.high_traffic_at),
    ] {
        if at == 0 {
            c.push(
                line(w),
                format!("{p}.riskWeights.{field}"),
                invalid("0", "must be at least 1"),
            );
        }
    }
    out
}

/// A label or annotation key: an optional DNS-1123 subdomain prefix (at most 253 characters)
/// and `/`, then a name of at most 63 characters of alphanumerics, `-`, `_` and `.`, beginning
/// and ending with an alphanumeric.
pub(super) fn qualified_name(key: &str) -> Result<(), &'static str> {
    let (prefix, name) = match key.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    if let Some(prefix) = prefix
        && (prefix.is_empty() || prefix.len() > 253 || !dns_subdomain(prefix))
    {
        return Err("the prefix must be a DNS-1123 subdomain (at most 253 characters)");
    }
    let alnum = |c: char| c.is_ascii_alphanumeric();
    let ok = !name.is_empty()
        && name.len() <= 63
        && name.starts_with(alnum)
        && name.ends_with(alnum)
        && name
            .chars()
            .all(|c| alnum(c) || c == '-' || c == '_' || c == '.');
    if ok {
        Ok(())
    } else {
        Err(
            "must be a qualified name: [prefix/]name, the name at most 63 alphanumerics, '-', '_' or '.', beginning and ending with an alphanumeric",
        )
    }
}

fn dns_subdomain(s: &str) -> bool {
    s.split('.').all(|label| {
        let lower = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
        !label.is_empty()
            && label.len() <= 63
            && label.starts_with(lower)
            && label.ends_with(lower)
            && label.chars().all(|c| lower(c) || c == '-')
    })
}

#[cfg(test)]
mod tests {
    use super::qualified_name;

    #[test]
    fn qualified_names_follow_apimachinery() {
        for ok in ["tier", "sre.example.com/protection-level", "a/b", "x_y.z-1"] {
            assert_eq!(qualified_name(ok), Ok(()), "{ok}");
        }
        for bad in [
            "",
            "/x",
            "Example.com/x",
            "example.com/",
            "-x",
            "x-",
            "a/b/c",
            &"n".repeat(64),
        ] {
            assert!(qualified_name(bad).is_err(), "{bad}");
        }
    }
}
