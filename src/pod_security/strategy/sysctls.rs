//! The sysctls strategy.
//!
//! A forbidden sysctl is refused first; a safe one is allowed; an unsafe one must be allowed
//! explicitly. A pattern is a name, or a prefix ending in `*`
//! (`pkg/securitycontextconstraints/sysctl/mustmatchpatterns.go`). The safe set is
//! Kubernetes', with the three sysctls OpenShift adds on kernels new enough for them (4.15 for
//! the last): warrant does not run on the node, so it assumes a kernel that has them.

use crate::pod_security::field::{FieldError, FieldPath};
use k8s_openapi::api::core::v1::Sysctl;

/// The sysctls that are safe in a pod's namespace.
pub const SAFE: &[&str] = &[
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range",
    "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
    "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
];

/// The sysctls strategy, ready to use.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sysctls {
    allowed_unsafe: Vec<String>,
    forbidden: Vec<String>,
}

fn matches(patterns: &[String], name: &str) -> bool {
    patterns.iter().any(|p| match p.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == p,
    })
}

impl Sysctls {
    /// The strategy of a constraint's allowed unsafe and forbidden sysctls.
    pub fn new(allowed_unsafe: &[String], forbidden: &[String]) -> Self {
        Self {
            allowed_unsafe: allowed_unsafe.to_vec(),
            forbidden: forbidden.to_vec(),
        }
    }

    /// Checks the pod's sysctls.
    pub fn validate(&self, sysctls: &[Sysctl], errors: &mut Vec<FieldError>) {
        let path = FieldPath::root("pod")
            .child("spec")
            .child("securityContext")
            .child("sysctls");
        for (i, sysctl) in sysctls.iter().enumerate() {
            let name = sysctl.name.as_str();
            if matches(&self.forbidden, name) {
                errors.push(FieldError::forbidden(
                    path.index(i),
                    format!("sysctl {name:?} is not allowed"),
                ));
            } else if SAFE.contains(&name) || matches(&self.allowed_unsafe, name) {
                continue;
            } else {
                errors.push(FieldError::forbidden(
                    path.index(i),
                    format!("unsafe sysctl {name:?} is not allowed"),
                ));
            }
        }
    }
}
