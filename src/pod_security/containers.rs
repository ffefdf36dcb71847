//! The containers of a pod, visited in Kubernetes' order with their field paths.
//!
//! Init containers, then containers, then ephemeral containers, each under the field name of
//! its list (`k8s.io/kubernetes/pkg/apis/core/pods/helpers.go`, `VisitContainersWithPath`).

use k8s_openapi::api::core::v1::{ContainerPort, PodSpec, SecurityContext};

/// One container of a pod, with what the strategies read and write.
#[derive(Debug)]
pub struct ContainerMut<'a> {
    /// The field name of its list (`initContainers`, `containers`, `ephemeralContainers`).
    pub list: &'static str,
    /// Its index in the list.
    pub index: usize,
    /// Its name.
    pub name: &'a str,
    /// Its security context.
    pub security_context: &'a mut Option<SecurityContext>,
}

/// Visits every container of `spec`, in order.
pub fn for_each_mut(spec: &mut PodSpec, mut visit: impl FnMut(ContainerMut<'_>)) {
    for (index, c) in spec.init_containers.iter_mut().flatten().enumerate() {
        visit(ContainerMut {
            list: "initContainers",
            index,
            name: &c.name,
            security_context: &mut c.security_context,
        });
    }
    for (index, c) in spec.containers.iter_mut().enumerate() {
        visit(ContainerMut {
            list: "containers",
            index,
            name: &c.name,
            security_context: &mut c.security_context,
        });
    }
    for (index, c) in spec.ephemeral_containers.iter_mut().flatten().enumerate() {
        visit(ContainerMut {
            list: "ephemeralContainers",
            index,
            name: &c.name,
            security_context: &mut c.security_context,
        });
    }
}

/// The list name, index and ports of every container of `spec`, in order.
pub fn ports(spec: &PodSpec) -> Vec<(&'static str, usize, &[ContainerPort])> {
    let mut all = Vec::new();
    for (index, c) in spec.init_containers.iter().flatten().enumerate() {
        all.push((
            "initContainers",
            index,
            c.ports.as_deref().unwrap_or_default(),
        ));
    }
    for (index, c) in spec.containers.iter().enumerate() {
        all.push(("containers", index, c.ports.as_deref().unwrap_or_default()));
    }
    for (index, c) in spec.ephemeral_containers.iter().flatten().enumerate() {
        all.push((
            "ephemeralContainers",
            index,
            c.ports.as_deref().unwrap_or_default(),
        ));
    }
    all
}
