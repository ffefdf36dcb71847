//! The identities a cluster cannot run without: a flip that would deny one of them is flagged
//! as a lockout. They are the ones kube-apiserver's own defaults single out: the
//! `system:masters` group (always allowed by the API server's privileged-group authorizer),
//! the control plane's users (`system:kube-controller-manager`, `system:kube-scheduler`,
//! `system:apiserver`), the nodes (`system:node:<name>` in `system:nodes`), and warrant's own
//! service account.

/// Who counts as a bootstrap identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bootstrap {
    /// warrant's own service accounts, as user names
    /// (`system:serviceaccount:<namespace>:<name>`).
    warrant: Vec<String>,
}

impl Default for Bootstrap {
    /// warrant's service account at its default, `warrant-system/warrant`.
    fn default() -> Self {
        Self::new(&["warrant-system/warrant".to_owned()])
    }
}

impl Bootstrap {
    /// The defaults, with warrant running as each `namespace/name` service account.
    pub fn new(warrant_service_accounts: &[String]) -> Self {
        let warrant = warrant_service_accounts
            .iter()
            .map(|sa| match sa.split_once('/') {
                Some((ns, name)) => format!("system:serviceaccount:{ns}:{name}"),
                None => sa.clone(),
            })
            .collect();
        Self { warrant }
    }

    /// Which bootstrap identity `user` in `groups` is, if any.
    pub fn identity(&self, user: &str, groups: &[String]) -> Option<&'static str> {
        let in_group = |g: &str| groups.iter().any(|x| x == g);
        if in_group("system:masters") {
            Some("system:masters")
        } else if user == "system:kube-controller-manager" {
            Some("controller-manager")
        } else if user == "system:kube-scheduler" {
            Some("scheduler")
        } else if user == "system:apiserver" {
            Some("apiserver")
        } else if user.starts_with("system:node:") || in_group("system:nodes") {
            Some("node")
        } else if self.warrant.iter().any(|w| w == user) {
            Some("warrant")
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bootstrap_identities() {
        let b = Bootstrap::new(&["ops/warrant".into()]);
        let g = |gs: &[&str]| gs.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            b.identity("admin", &g(&["system:masters"])),
            Some("system:masters")
        );
        assert_eq!(b.identity("system:kube-scheduler", &[]), Some("scheduler"));
        assert_eq!(
            b.identity("system:kube-controller-manager", &[]),
            Some("controller-manager")
        );
        assert_eq!(
            b.identity("system:node:n1", &g(&["system:nodes"])),
            Some("node")
        );
        assert_eq!(b.identity("x", &g(&["system:nodes"])), Some("node"));
        assert_eq!(
            b.identity("system:serviceaccount:ops:warrant", &[]),
            Some("warrant")
        );
        assert_eq!(
            b.identity("system:serviceaccount:warrant-system:warrant", &[]),
            None
        );
        assert_eq!(b.identity("jane", &g(&["dev"])), None);
    }
}
