//! A constraint made ready for one namespace: it gives a pod the values it leaves unset, then
//! checks every field.
//!
//! Making a provider fills what the constraint leaves to the namespace (the uid range of a
//! `MustRunAsRange` with neither end set, the SELinux level of a `MustRunAs` without one, the
//! ranges of a group `MustRunAs` without any) and builds each strategy
//! (`sccmatching/matcher.go`, `CreateProviderFromConstraint`; `sccmatching/provider.go`,
//! `NewSimpleProvider`). Assigning follows `AssignSecurityContext`: the pod's context is
//! generated then checked (groups, seccomp, SELinux, host namespaces, user namespaces,
//! sysctls, volumes, Flexvolume drivers), then each container's (uid, SELinux, `runAsNonRoot`,
//! capabilities, read-only root filesystem, privilege escalation; then checked: uid, SELinux,
//! seccomp, privileged, capabilities, host namespaces, host ports, read-only root
//! filesystem, privilege escalation), each error under the path `provider NAME: `.

use super::constraint::{REQUIRE_POD_LEVEL, SecurityContextConstraints, strategy_type};
use super::containers::{self, ContainerMut};
use super::field::{BadValue, FieldError, FieldPath};
use super::namespace::{AllocationError, Namespace};
use super::strategy::capabilities::CapabilityRules;
use super::strategy::group::Groups;
use super::strategy::seccomp::{self, Seccomp};
use super::strategy::selinux::SeLinux;
use super::strategy::sysctls::Sysctls;
use super::strategy::user::RunAsUser;
use super::strategy::volumes;
use k8s_openapi::api::core::v1::{Pod, PodSecurityContext, SecurityContext};
use std::collections::BTreeMap;
use std::sync::Arc;
use thiserror::Error;

/// Why a provider cannot be made of a constraint for a namespace (OpenShift's texts).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ProviderError {
    /// A value the constraint leaves to the namespace is not there.
    #[error(
        "unable to find pre-allocated {what} annotation for namespace {namespace} while trying to configure SCC {constraint}: {source}"
    )]
    Allocation {
        /// `uid`, `mcs` or `group`.
        what: &'static str,
        /// The namespace.
        namespace: String,
        /// The constraint.
        constraint: String,
        /// What is wrong with the annotation.
        #[source]
        source: AllocationError,
    },
    /// The constraint itself is incomplete or names an unknown strategy.
    #[error("error creating provider for SCC {constraint} in namespace {namespace}: {detail}")]
    Strategy {
        /// The constraint.
        constraint: String,
        /// The namespace.
        namespace: String,
        /// What is wrong.
        detail: String,
    },
}

/// A constraint ready to judge pods of one namespace.
#[derive(Debug, Clone)]
pub struct Provider {
    constraint: Arc<SecurityContextConstraints>,
    run_as_user: RunAsUser,
    se_linux: SeLinux,
    fs_group: Groups,
    supplemental_groups: Groups,
    capabilities: CapabilityRules,
    seccomp: Seccomp,
    sysctls: Sysctls,
}

impl Provider {
    /// The provider of `constraint` (already defaulted) in `namespace`.
    pub fn new(
        constraint: &Arc<SecurityContextConstraints>,
        namespace: &Namespace,
    ) -> Result<Self, ProviderError> {
        let name = constraint.name();
        let allocation = |what: &'static str, source| ProviderError::Allocation {
            what,
            namespace: namespace.name.clone(),
            constraint: name.to_owned(),
            source,
        };
        let strategy = |detail: &str| ProviderError::Strategy {
            constraint: name.to_owned(),
            namespace: namespace.name.clone(),
            detail: detail.to_owned(),
        };
        let user = &constraint.run_as_user;
        let run_as_user = match user.type_.as_str() {
            strategy_type::MUST_RUN_AS => RunAsUser::MustRunAs(
                user.uid
                    .ok_or_else(|| strategy("MustRunAs requires a UID"))?,
            ),
            strategy_type::MUST_RUN_AS_RANGE => {
                let (min, max) = match (user.uid_range_min, user.uid_range_max) {
                    (None, None) => namespace.uid_range().map_err(|e| allocation("uid", e))?,
                    (Some(min), Some(max)) => (min, max),
                    (None, Some(_)) => {
                        return Err(strategy("MustRunAsRange requires a UIDRangeMin"));
                    }
                    (Some(_), None) => {
                        return Err(strategy("MustRunAsRange requires a UIDRangeMax"));
                    }
                };
                RunAsUser::MustRunAsRange { min, max }
            }
            strategy_type::MUST_RUN_AS_NON_ROOT => RunAsUser::MustRunAsNonRoot,
            strategy_type::RUN_AS_ANY => RunAsUser::RunAsAny,
            other => {
                return Err(strategy(&format!(
                    "Unrecognized RunAsUser strategy type {other}"
                )));
            }
        };
        let selinux = &constraint.se_linux_context;
        let se_linux = match selinux.type_.as_str() {
            strategy_type::MUST_RUN_AS => {
                let mut options = selinux.se_linux_options.clone().unwrap_or_default();
                if options.level.as_deref().unwrap_or_default().is_empty() {
                    let level = namespace.mcs_level().map_err(|e| allocation("mcs", e))?;
                    options.level = Some(level.to_owned());
                }
                SeLinux::MustRunAs(options)
            }
            strategy_type::RUN_AS_ANY => SeLinux::RunAsAny,
            other => {
                return Err(strategy(&format!(
                    "Unrecognized SELinuxContext strategy type {other}"
                )));
            }
        };
        let groups = |options: &super::constraint::GroupStrategyOptions,
                      field: &'static str,
                      label: &str,
                      from_namespace: &dyn Fn() -> Result<
            Vec<super::constraint::IdRange>,
            AllocationError,
        >|
         -> Result<Groups, ProviderError> {
            match options.type_.as_str() {
                strategy_type::RUN_AS_ANY => Ok(Groups::RunAsAny),
                strategy_type::MUST_RUN_AS => {
                    let ranges = match options.ranges.as_deref() {
                        Some(ranges) if !ranges.is_empty() => ranges.to_vec(),
                        _ => from_namespace().map_err(|e| allocation("group", e))?,
                    };
                    if ranges.is_empty() {
                        return Err(strategy("ranges must be supplied for MustRunAs"));
                    }
                    Ok(Groups::MustRunAs { ranges, field })
                }
                other => Err(strategy(&format!(
                    "Unrecognized {label} strategy type {other}"
                ))),
            }
        };
        let fs_group = groups(&constraint.fs_group, "fsGroup", "FSGroup", &|| {
            namespace.fs_group()
        })?;
        let supplemental_groups = groups(
            &constraint.supplemental_groups,
            "supplementalGroups",
            "SupplementalGroups",
            &|| namespace.supplemental_groups(),
        )?;
        let list = |l: &Option<Vec<String>>| l.as_deref().unwrap_or_default().to_vec();
        Ok(Self {
            capabilities: CapabilityRules::new(
                &list(&constraint.default_add_capabilities),
                &list(&constraint.required_drop_capabilities),
                &list(&constraint.allowed_capabilities),
            ),
            seccomp: Seccomp::new(&list(&constraint.seccomp_profiles)),
            sysctls: Sysctls::new(
                &list(&constraint.allowed_unsafe_sysctls),
                &list(&constraint.forbidden_sysctls),
            ),
            constraint: Arc::clone(constraint),
            run_as_user,
            se_linux,
            fs_group,
            supplemental_groups,
        })
    }

    /// The constraint's name.
    pub fn name(&self) -> &str {
        self.constraint.name()
    }

    /// The constraint.
    pub fn constraint(&self) -> &Arc<SecurityContextConstraints> {
        &self.constraint
    }

    /// Gives `pod` the values it leaves unset and checks every field; the errors, none when
    /// the pod is valid under this constraint.
    pub fn assign(&self, pod: &mut Pod) -> Vec<FieldError> {
        let root = FieldPath::root(format!("provider {}: ", self.name()));
        let mut errors = Vec::new();
        let had_annotations = pod.metadata.annotations.is_some();
        let annotations = pod.metadata.annotations.get_or_insert_with(BTreeMap::new);
        let spec = pod.spec.get_or_insert_with(Default::default);
        self.create_pod_context(annotations, &mut spec.security_context);
        if !had_annotations && annotations.is_empty() {
            pod.metadata.annotations = None;
        }
        let annotations = pod.metadata.annotations.clone().unwrap_or_default();
        let spec = pod.spec.get_or_insert_with(Default::default);
        self.validate_pod(
            &root.child("spec").child("securityContext"),
            &annotations,
            spec,
            &mut errors,
        );
        let pod_context = spec.security_context.clone();
        let ports = containers::ports(spec)
            .into_iter()
            .map(|(list, index, ports)| {
                (
                    list,
                    index,
                    ports.iter().map(|p| p.host_port).collect::<Vec<_>>(),
                )
            })
            .collect::<Vec<_>>();
        let host_network = spec.host_network.unwrap_or(false);
        let host_pid = spec.host_pid.unwrap_or(false);
        let host_ipc = spec.host_ipc.unwrap_or(false);
        containers::for_each_mut(spec, |container| {
            let path = root.child(container.list).index(container.index);
            let ContainerMut {
                name,
                security_context,
                ..
            } = container;
            let generated = self.generate_container(
                &annotations,
                pod_context.as_ref(),
                name,
                security_context.as_ref(),
            );
            *security_context = generated;
            let host = HostUse {
                network: host_network,
                pid: host_pid,
                ipc: host_ipc,
                ports: &ports,
            };
            self.validate_container(
                &path,
                &annotations,
                pod_context.as_ref(),
                name,
                security_context.as_ref(),
                &host,
                &mut errors,
            );
        });
        errors
    }

    /// The pod-level values: supplemental groups, fsGroup, SELinux options, seccomp profile.
    fn create_pod_context(
        &self,
        annotations: &mut BTreeMap<String, String>,
        context: &mut Option<PodSecurityContext>,
    ) {
        let current = context.as_ref();
        if current
            .and_then(|c| c.supplemental_groups.as_ref())
            .is_none()
            && let Some(group) = self.supplemental_groups.generate()
        {
            context
                .get_or_insert_with(Default::default)
                .supplemental_groups = Some(vec![group]);
        }
        if context.as_ref().and_then(|c| c.fs_group).is_none()
            && let Some(group) = self.fs_group.generate()
        {
            context.get_or_insert_with(Default::default).fs_group = Some(group);
        }
        if context
            .as_ref()
            .and_then(|c| c.se_linux_options.as_ref())
            .is_none()
            && let Some(options) = self.se_linux.generate()
        {
            context
                .get_or_insert_with(Default::default)
                .se_linux_options = Some(options);
        }
        let field = context.as_ref().and_then(|c| c.seccomp_profile.as_ref());
        let profile = self.seccomp.generate(annotations, field);
        if !profile.is_empty() {
            let converted = seccomp::field_for_annotation(&profile);
            annotations.insert(seccomp::POD_ANNOTATION.to_owned(), profile);
            if context.is_some() || converted.is_some() {
                context.get_or_insert_with(Default::default).seccomp_profile = converted;
            }
        }
    }

    /// Checks the pod-level fields; `path` is `spec.securityContext` under the provider.
    fn validate_pod(
        &self,
        path: &FieldPath,
        annotations: &BTreeMap<String, String>,
        spec: &k8s_openapi::api::core::v1::PodSpec,
        errors: &mut Vec<FieldError>,
    ) {
        let context = spec.security_context.as_ref();
        let fs_groups: Vec<i64> = context.and_then(|c| c.fs_group).into_iter().collect();
        self.fs_group.validate(path, Some(&fs_groups), errors);
        let supplemental = context.and_then(|c| c.supplemental_groups.as_deref());
        self.supplemental_groups
            .validate(path, supplemental, errors);
        let seccomp_field = context.and_then(|c| c.seccomp_profile.as_ref());
        self.seccomp
            .validate_pod(annotations, seccomp_field, errors);
        let se_linux = context.and_then(|c| c.se_linux_options.as_ref());
        self.se_linux
            .validate(&path.child("seLinuxOptions"), se_linux, errors);
        let c = &self.constraint;
        let host_checks = [
            (
                c.allow_host_network,
                spec.host_network,
                "hostNetwork",
                "Host network",
            ),
            (c.allow_host_pid, spec.host_pid, "hostPID", "Host PID"),
            (c.allow_host_ipc, spec.host_ipc, "hostIPC", "Host IPC"),
        ];
        for (allowed, used, field, what) in host_checks {
            if !allowed && used.unwrap_or(false) {
                errors.push(FieldError::invalid(
                    path.child(field),
                    BadValue::Bool(true),
                    format!("{what} is not allowed to be used"),
                ));
            }
        }
        if c.user_namespace_level.as_deref() == Some(REQUIRE_POD_LEVEL)
            && spec.host_users != Some(false)
        {
            let value = spec.host_users.map_or(BadValue::Null, BadValue::Bool);
            errors.push(FieldError::invalid(
                path.child("hostUsers"),
                value,
                "Host Users must be set to false",
            ));
        }
        let sysctls = context
            .and_then(|c| c.sysctls.as_deref())
            .unwrap_or_default();
        self.sysctls.validate(sysctls, errors);
        let pod_volumes = spec.volumes.as_deref().unwrap_or_default();
        let allowed = c.volumes.as_deref().unwrap_or_default();
        if !pod_volumes.is_empty() && !allowed.iter().any(|v| v == volumes::ALL) {
            let volumes_path = FieldPath::root("spec").child("volumes");
            for (i, volume) in pod_volumes.iter().enumerate() {
                match volumes::fs_type(volume) {
                    None => errors.push(FieldError::invalid(
                        volumes_path.index(i),
                        BadValue::Str(String::new()),
                        format!("unknown volume type for volume: {:?}", volume.name),
                    )),
                    Some(fs_type) if !volumes::allows(allowed, fs_type, volume) => {
                        errors.push(FieldError::invalid(
                            volumes_path.index(i),
                            BadValue::Str(fs_type.to_owned()),
                            format!("{fs_type} volumes are not allowed to be used"),
                        ));
                    }
                    Some(_) => {}
                }
            }
        }
        let drivers = c.allowed_flex_volumes.as_deref().unwrap_or_default();
        if !pod_volumes.is_empty()
            && !drivers.is_empty()
            && volumes::allows_type(allowed, volumes::FLEX_VOLUME)
        {
            for (i, volume) in pod_volumes.iter().enumerate() {
                let Some(flex) = &volume.flex_volume else {
                    continue;
                };
                if !drivers.iter().any(|d| d.driver == flex.driver) {
                    errors.push(FieldError::invalid(
                        path.child("volumes").index(i).child("driver"),
                        BadValue::Str(flex.driver.clone()),
                        "Flexvolume driver is not allowed to be used",
                    ));
                }
            }
        }
    }

    /// A container's context after the constraint's values: uid, SELinux, `runAsNonRoot`,
    /// capabilities, read-only root filesystem, seccomp from its annotation, privilege
    /// escalation. A value equal to the effective one (the pod's) is not written.
    fn generate_container(
        &self,
        annotations: &BTreeMap<String, String>,
        pod: Option<&PodSecurityContext>,
        name: &str,
        current: Option<&SecurityContext>,
    ) -> Option<SecurityContext> {
        let mut sc = current.cloned();
        let own = |sc: &Option<SecurityContext>| sc.clone().unwrap_or_default();
        let effective_user = |sc: &Option<SecurityContext>| {
            sc.as_ref()
                .and_then(|c| c.run_as_user)
                .or_else(|| pod.and_then(|p| p.run_as_user))
        };
        if effective_user(&sc).is_none()
            && let Some(uid) = self.run_as_user.generate()
        {
            sc.get_or_insert_with(Default::default).run_as_user = Some(uid);
        }
        let effective_se_linux = sc
            .as_ref()
            .and_then(|c| c.se_linux_options.clone())
            .or_else(|| pod.and_then(|p| p.se_linux_options.clone()));
        if effective_se_linux.is_none()
            && let Some(options) = self.se_linux.generate()
        {
            sc.get_or_insert_with(Default::default).se_linux_options = Some(options);
        }
        let effective_non_root = sc
            .as_ref()
            .and_then(|c| c.run_as_non_root)
            .or_else(|| pod.and_then(|p| p.run_as_non_root));
        if effective_non_root.is_none() {
            let non_root = match effective_user(&sc) {
                None => self.constraint.run_as_user.type_ == strategy_type::MUST_RUN_AS_NON_ROOT,
                Some(uid) => uid > 0,
            };
            if non_root {
                sc.get_or_insert_with(Default::default).run_as_non_root = Some(true);
            }
        }
        let asked = sc.as_ref().and_then(|c| c.capabilities.clone());
        let caps = self.capabilities.generate(asked.as_ref());
        if caps != asked {
            sc.get_or_insert_with(Default::default).capabilities = caps.clone();
        }
        if self.constraint.read_only_root_filesystem
            && sc
                .as_ref()
                .and_then(|c| c.read_only_root_filesystem)
                .is_none()
        {
            sc.get_or_insert_with(Default::default)
                .read_only_root_filesystem = Some(true);
        }
        let privileged = own(&sc).privileged.unwrap_or(false);
        let adds_sys_admin = caps
            .as_ref()
            .and_then(|c| c.add.as_ref())
            .is_some_and(|add| add.iter().any(|c| c == "CAP_SYS_ADMIN"));
        let key = format!("{}{name}", seccomp::CONTAINER_ANNOTATION_PREFIX);
        if let Some(profile) = annotations.get(&key) {
            let field = seccomp::field_for_annotation(profile);
            if sc.as_ref().and_then(|c| c.seccomp_profile.clone()) != field {
                sc.get_or_insert_with(Default::default).seccomp_profile = field;
            }
        }
        let escalation_unset = |sc: &Option<SecurityContext>| {
            sc.as_ref()
                .and_then(|c| c.allow_privilege_escalation)
                .is_none()
        };
        if let Some(default) = self.constraint.default_allow_privilege_escalation
            && escalation_unset(&sc)
            && !privileged
            && !adds_sys_admin
        {
            sc.get_or_insert_with(Default::default)
                .allow_privilege_escalation = Some(default);
        }
        if self.constraint.allow_privilege_escalation == Some(false) && escalation_unset(&sc) {
            sc.get_or_insert_with(Default::default)
                .allow_privilege_escalation = Some(false);
        }
        sc
    }

    /// Checks a container's effective context; `path` is the container under the provider.
    #[allow(
        clippy::too_many_arguments,
        reason = "the container's parts, borrowed apart"
    )]
    fn validate_container(
        &self,
        path: &FieldPath,
        annotations: &BTreeMap<String, String>,
        pod: Option<&PodSecurityContext>,
        name: &str,
        sc: Option<&SecurityContext>,
        host: &HostUse<'_>,
        errors: &mut Vec<FieldError>,
    ) {
        let run_as_non_root = sc
            .and_then(|c| c.run_as_non_root)
            .or_else(|| pod.and_then(|p| p.run_as_non_root));
        let run_as_user = sc
            .and_then(|c| c.run_as_user)
            .or_else(|| pod.and_then(|p| p.run_as_user));
        self.run_as_user
            .validate(path, run_as_non_root, run_as_user, errors);
        let se_linux = sc
            .and_then(|c| c.se_linux_options.as_ref())
            .or_else(|| pod.and_then(|p| p.se_linux_options.as_ref()));
        self.se_linux
            .validate(&path.child("seLinuxOptions"), se_linux, errors);
        self.seccomp.validate_container(
            annotations,
            pod.and_then(|p| p.seccomp_profile.as_ref()),
            name,
            sc.and_then(|c| c.seccomp_profile.as_ref()),
            errors,
        );
        let c = &self.constraint;
        if !c.allow_privileged_container && sc.and_then(|c| c.privileged) == Some(true) {
            errors.push(FieldError::invalid(
                path.child("privileged"),
                BadValue::Bool(true),
                "Privileged containers are not allowed",
            ));
        }
        self.capabilities
            .validate(path, sc.and_then(|c| c.capabilities.as_ref()), errors);
        if !c.allow_host_network && host.network {
            errors.push(FieldError::invalid(
                path.child("hostNetwork"),
                BadValue::Bool(true),
                "Host network is not allowed to be used",
            ));
        }
        if !c.allow_host_ports {
            // OpenShift checks the host ports of every container of the pod under each
            // container's path, so the paths read `.containers[0].containers[1].hostPort`.
            for (list, index, ports) in host.ports {
                for port in ports.iter().copied().flatten().filter(|p| *p > 0) {
                    errors.push(FieldError::invalid(
                        path.child(list).index(*index).child("hostPort"),
                        BadValue::Int(i64::from(port)),
                        "Host ports are not allowed to be used",
                    ));
                }
            }
        }
        if !c.allow_host_pid && host.pid {
            errors.push(FieldError::invalid(
                path.child("hostPID"),
                BadValue::Bool(true),
                "Host PID is not allowed to be used",
            ));
        }
        if !c.allow_host_ipc && host.ipc {
            errors.push(FieldError::invalid(
                path.child("hostIPC"),
                BadValue::Bool(true),
                "Host IPC is not allowed to be used",
            ));
        }
        if c.read_only_root_filesystem {
            match sc.and_then(|c| c.read_only_root_filesystem) {
                None => errors.push(FieldError::invalid(
                    path.child("readOnlyRootFilesystem"),
                    BadValue::Null,
                    "ReadOnlyRootFilesystem may not be nil and must be set to true",
                )),
                Some(false) => errors.push(FieldError::invalid(
                    path.child("readOnlyRootFilesystem"),
                    BadValue::Bool(false),
                    "ReadOnlyRootFilesystem must be set to true",
                )),
                Some(true) => {}
            }
        }
        if c.allow_privilege_escalation == Some(false) {
            match sc.and_then(|c| c.allow_privilege_escalation) {
                None => errors.push(FieldError::invalid(
                    path.child("allowPrivilegeEscalation"),
                    BadValue::Null,
                    "Allowing privilege escalation for containers is not allowed",
                )),
                Some(true) => errors.push(FieldError::invalid(
                    path.child("allowPrivilegeEscalation"),
                    BadValue::Bool(true),
                    "Allowing privilege escalation for containers is not allowed",
                )),
                Some(false) => {}
            }
        }
    }
}

/// What the pod takes from the host, read once for every container.
struct HostUse<'a> {
    network: bool,
    pid: bool,
    ipc: bool,
    ports: &'a [(&'static str, usize, Vec<Option<i32>>)],
}
