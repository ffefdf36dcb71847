//! [`Resource`]: the kinds the cache holds, named as the API names them.

/// A kind the cache watches (or the file loader reads).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Resource {
    /// `pods` (running ones).
    Pods,
    /// `replicasets.apps` (metadata only: the owner chain, labels).
    ReplicaSets,
    /// `deployments.apps` (metadata only: labels).
    Deployments,
    /// `statefulsets.apps` (metadata only: labels).
    StatefulSets,
    /// `daemonsets.apps` (metadata only: labels).
    DaemonSets,
    /// `jobs.batch` (metadata only: labels).
    Jobs,
    /// `cronjobs.batch` (metadata only: labels).
    CronJobs,
    /// `services` (their labels and selector).
    Services,
    /// `ingresses.networking.k8s.io` (their labels and backend Services).
    Ingresses,
    /// `persistentvolumeclaims` (their labels, bound or not).
    PersistentVolumeClaims,
    /// `namespaces` (metadata only: labels).
    Namespaces,
}

/// The workload kinds, in the order the index keeps their stores.
pub(crate) const WORKLOADS: [Resource; 6] = [
    Resource::ReplicaSets,
    Resource::Deployments,
    Resource::StatefulSets,
    Resource::DaemonSets,
    Resource::Jobs,
    Resource::CronJobs,
];

impl Resource {
    /// Every kind, in a fixed order ([`Resource::slot`]).
    pub const ALL: [Resource; 11] = [
        Resource::Pods,
        Resource::ReplicaSets,
        Resource::Deployments,
        Resource::StatefulSets,
        Resource::DaemonSets,
        Resource::Jobs,
        Resource::CronJobs,
        Resource::Services,
        Resource::Ingresses,
        Resource::PersistentVolumeClaims,
        Resource::Namespaces,
    ];

    /// The plural resource name (the `resource` label of the cache metrics).
    pub fn plural(self) -> &'static str {
        match self {
            Resource::Pods => "pods",
            Resource::ReplicaSets => "replicasets",
            Resource::Deployments => "deployments",
            Resource::StatefulSets => "statefulsets",
            Resource::DaemonSets => "daemonsets",
            Resource::Jobs => "jobs",
            Resource::CronJobs => "cronjobs",
            Resource::Services => "services",
            Resource::Ingresses => "ingresses",
            Resource::PersistentVolumeClaims => "persistentvolumeclaims",
            Resource::Namespaces => "namespaces",
        }
    }

    /// The API group (`""` for core).
    pub fn group(self) -> &'static str {
        match self {
            Resource::Pods
            | Resource::Services
            | Resource::PersistentVolumeClaims
            | Resource::Namespaces => "",
            Resource::ReplicaSets
            | Resource::Deployments
            | Resource::StatefulSets
            | Resource::DaemonSets => "apps",
            Resource::Jobs | Resource::CronJobs => "batch",
            Resource::Ingresses => "networking.k8s.io",
        }
    }

    /// The kind of an object of this resource.
    pub fn kind(self) -> &'static str {
        match self {
            Resource::Pods => "Pod",
            Resource::ReplicaSets => "ReplicaSet",
            Resource::Deployments => "Deployment",
            Resource::StatefulSets => "StatefulSet",
            Resource::DaemonSets => "DaemonSet",
            Resource::Jobs => "Job",
            Resource::CronJobs => "CronJob",
            Resource::Services => "Service",
            Resource::Ingresses => "Ingress",
            Resource::PersistentVolumeClaims => "PersistentVolumeClaim",
            Resource::Namespaces => "Namespace",
        }
    }

    /// The resource a request's group and plural resource name, if the cache holds it.
    pub(crate) fn from_group_resource(group: &str, resource: &str) -> Option<Resource> {
        Resource::ALL
            .into_iter()
            .find(|r| r.group() == group && r.plural() == resource)
    }

    /// The resource of an object's group and kind, if the cache holds it.
    pub(crate) fn from_group_kind(group: &str, kind: &str) -> Option<Resource> {
        Resource::ALL
            .into_iter()
            .find(|r| r.group() == group && r.kind() == kind)
    }

    /// This kind's position in [`Resource::ALL`].
    pub fn slot(self) -> usize {
        self as usize
    }

    /// This kind's position in [`WORKLOADS`], for a workload kind.
    pub(crate) fn workload_slot(self) -> Option<usize> {
        WORKLOADS.iter().position(|w| *w == self)
    }
}

#[cfg(test)]
mod tests {
    use super::{Resource, WORKLOADS};

    #[test]
    fn slots_follow_all_and_names_round_trip() {
        for (i, r) in Resource::ALL.into_iter().enumerate() {
            assert_eq!(r.slot(), i);
            assert_eq!(
                Resource::from_group_resource(r.group(), r.plural()),
                Some(r)
            );
            assert_eq!(Resource::from_group_kind(r.group(), r.kind()), Some(r));
        }
        assert_eq!(Resource::from_group_resource("apps", "pods"), None);
        assert_eq!(Resource::Jobs.workload_slot(), Some(4));
        assert_eq!(Resource::Pods.workload_slot(), None);
        assert_eq!(WORKLOADS.len(), 6);
    }
}
