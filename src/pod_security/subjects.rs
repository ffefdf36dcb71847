//! Who a pod is judged for, and whether a constraint names them.
//!
//! OpenShift tries, for each constraint, the pod's service account first and then the
//! requesting user: a subject may use a constraint that lists its name in `users` or one of
//! its groups in `groups`, or that it may `use` (verb `use` on `securitycontextconstraints` of
//! `security.openshift.io`, the constraint's name, in the pod's namespace), as the authorizer
//! answers (`sccadmission/scc_authz_check.go`, `allowedForType`; `sccmatching/matcher.go`,
//! `ConstraintAppliesTo`). A service account is `system:serviceaccount:NS:NAME` with the groups
//! `system:serviceaccounts` and `system:serviceaccounts:NS`
//! (`k8s.io/apiserver/pkg/authentication/serviceaccount/util.go`, `UserInfo`).
//!
//! A pod created by a workload controller is judged on its service account alone: the
//! controller's own identity may use far more than the pod's author may. The controllers are
//! kube-controller-manager (`system:kube-controller-manager`) and the per-controller service
//! accounts it uses with `--use-service-account-credentials`
//! (`system:serviceaccount:kube-system:<name>-controller`).

use super::constraint::SecurityContextConstraints;
use std::collections::BTreeMap;

/// Which subject a constraint was available to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubjectType {
    /// The pod's service account.
    ServiceAccount,
    /// The requesting user.
    User,
}

impl SubjectType {
    /// The value of `security.openshift.io/validated-scc-subject-type`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ServiceAccount => "serviceaccount",
            Self::User => "user",
        }
    }
}

/// A user as the authorizer sees it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Identity {
    /// The user name.
    pub name: String,
    /// The user's uid, when known.
    pub uid: Option<String>,
    /// The user's groups.
    pub groups: Vec<String>,
    /// The user's extra attributes.
    pub extra: BTreeMap<String, Vec<String>>,
}

impl Identity {
    /// The identity of the service account `name` of `namespace`.
    pub fn service_account(namespace: &str, name: &str) -> Self {
        Self {
            name: format!("system:serviceaccount:{namespace}:{name}"),
            uid: None,
            groups: vec![
                "system:serviceaccounts".to_owned(),
                format!("system:serviceaccounts:{namespace}"),
            ],
            extra: BTreeMap::new(),
        }
    }

    /// Whether `constraint` names this identity in `users` or one of its groups in `groups`.
    pub fn listed_in(&self, constraint: &SecurityContextConstraints) -> bool {
        constraint.users.iter().flatten().any(|u| *u == self.name)
            || self
                .groups
                .iter()
                .any(|g| constraint.groups.iter().flatten().any(|c| c == g))
    }

    /// Whether this is a workload controller's identity.
    pub fn is_controller(&self) -> bool {
        self.name == "system:kube-controller-manager"
            || self
                .name
                .strip_prefix("system:serviceaccount:kube-system:")
                .is_some_and(|sa| sa.ends_with("-controller"))
    }
}

/// The subjects a pod is judged for: its service account (when it names one) and the
/// requesting user (unless a controller).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subjects {
    /// The pod's service account.
    pub service_account: Option<Identity>,
    /// The requesting user.
    pub requester: Option<Identity>,
}

impl Subjects {
    /// The subjects of a pod of `namespace` naming `service_account` (empty for none),
    /// created by `requester`.
    pub fn of_pod(requester: Identity, namespace: &str, service_account: &str) -> Self {
        let service_account = (!service_account.is_empty())
            .then(|| Identity::service_account(namespace, service_account));
        let requester = (!requester.is_controller()).then_some(requester);
        Self {
            service_account,
            requester,
        }
    }

    /// Which subject may use `constraint`: the service account first, then the requester;
    /// `may_use` answers the `use` question for a subject the constraint does not list.
    pub fn available(
        &self,
        constraint: &SecurityContextConstraints,
        mut may_use: impl FnMut(&Identity, &SecurityContextConstraints) -> bool,
    ) -> Option<SubjectType> {
        let mut check =
            |identity: &Identity| identity.listed_in(constraint) || may_use(identity, constraint);
        if self.service_account.as_ref().is_some_and(&mut check) {
            return Some(SubjectType::ServiceAccount);
        }
        if self.requester.as_ref().is_some_and(&mut check) {
            return Some(SubjectType::User);
        }
        None
    }
}
