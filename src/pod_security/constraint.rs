//! The `SecurityContextConstraints` object of `security.openshift.io/v1`, field for field.
//!
//! The shape, the JSON names and which fields may be `null` follow OpenShift's API types
//! (`github.com/openshift/api`, `security/v1/types.go`); the CRD warrant ships
//! (`deploy/crds/securitycontextconstraints.yaml`) describes the same fields. Strategy types stay
//! strings here, as on the wire: an unknown one is an error when a provider is made of the
//! constraint ([`super::provider`]), as in OpenShift.

use k8s_openapi::api::core::v1::SELinuxOptions;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Deserializer, Serialize};

/// The API group of the constraints.
pub const GROUP: &str = "security.openshift.io";
/// The API version of the constraints.
pub const VERSION: &str = "v1";
/// The resource name of the constraints (cluster-scoped).
pub const RESOURCE: &str = "securitycontextconstraints";
/// The kind of the constraints.
pub const KIND: &str = "SecurityContextConstraints";

/// Governs what a pod's security context may ask for, and fills in what it leaves unset.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SecurityContextConstraints {
    /// The object's metadata; only the name matters to admission.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Sort order: higher first; unset is 0.
    #[serde(default)]
    pub priority: Option<i32>,
    /// Whether a container may run privileged.
    #[serde(default, deserialize_with = "null_as_default")]
    pub allow_privileged_container: bool,
    /// Capabilities added to every container unless it drops them.
    #[serde(default)]
    pub default_add_capabilities: Option<Vec<String>>,
    /// Capabilities every container must drop.
    #[serde(default)]
    pub required_drop_capabilities: Option<Vec<String>>,
    /// Capabilities a container may add; `*` allows any.
    #[serde(default)]
    pub allowed_capabilities: Option<Vec<String>>,
    /// Whether `hostPath` volumes are allowed.
    #[serde(default, deserialize_with = "null_as_default")]
    pub allow_host_dir_volume_plugin: bool,
    /// The volume types allowed (`configMap`, `secret`, ...; `*` for all, `none` for none).
    #[serde(default)]
    pub volumes: Option<Vec<String>>,
    /// The Flexvolume drivers allowed; empty allows every driver.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_flex_volumes: Option<Vec<AllowedFlexVolume>>,
    /// Whether `hostNetwork` is allowed.
    #[serde(default, deserialize_with = "null_as_default")]
    pub allow_host_network: bool,
    /// Whether containers may use host ports.
    #[serde(default, deserialize_with = "null_as_default")]
    pub allow_host_ports: bool,
    /// Whether `hostPID` is allowed.
    #[serde(rename = "allowHostPID", default, deserialize_with = "null_as_default")]
    pub allow_host_pid: bool,
    /// Whether `hostIPC` is allowed.
    #[serde(rename = "allowHostIPC", default, deserialize_with = "null_as_default")]
    pub allow_host_ipc: bool,
    /// `AllowHostLevel` (default) or `RequirePodLevel` (the pod must set `hostUsers: false`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_namespace_level: Option<String>,
    /// The value of `allowPrivilegeEscalation` given to a container that leaves it unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_allow_privilege_escalation: Option<bool>,
    /// Whether a container may allow privilege escalation; unset means yes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_privilege_escalation: Option<bool>,
    /// The SELinux strategy.
    #[serde(default, deserialize_with = "null_as_default")]
    pub se_linux_context: SeLinuxContextStrategyOptions,
    /// The run-as-user strategy.
    #[serde(default, deserialize_with = "null_as_default")]
    pub run_as_user: RunAsUserStrategyOptions,
    /// The supplemental groups strategy.
    #[serde(default, deserialize_with = "null_as_default")]
    pub supplemental_groups: GroupStrategyOptions,
    /// The fsGroup strategy.
    #[serde(default, deserialize_with = "null_as_default")]
    pub fs_group: GroupStrategyOptions,
    /// Whether containers must run with a read-only root filesystem.
    #[serde(default, deserialize_with = "null_as_default")]
    pub read_only_root_filesystem: bool,
    /// The users who may use the constraint.
    #[serde(default)]
    pub users: Option<Vec<String>>,
    /// The groups that may use the constraint.
    #[serde(default)]
    pub groups: Option<Vec<String>>,
    /// The seccomp profiles allowed (`*` for any); the first other than `*` is the default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seccomp_profiles: Option<Vec<String>>,
    /// Unsafe sysctls allowed (a name, or a prefix ending in `*`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_unsafe_sysctls: Option<Vec<String>>,
    /// Sysctls forbidden (a name, or a prefix ending in `*`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forbidden_sysctls: Option<Vec<String>>,
}

impl SecurityContextConstraints {
    /// The constraint's name.
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }
}

/// One allowed Flexvolume driver.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllowedFlexVolume {
    /// The driver's name.
    #[serde(default)]
    pub driver: String,
}

/// The SELinux strategy: `MustRunAs` (with `seLinuxOptions`) or `RunAsAny`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SeLinuxContextStrategyOptions {
    /// The strategy's type.
    #[serde(rename = "type", default, skip_serializing_if = "String::is_empty")]
    pub type_: String,
    /// The options a `MustRunAs` strategy requires; an empty level takes the namespace's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub se_linux_options: Option<SELinuxOptions>,
}

/// The run-as-user strategy: `MustRunAs`, `MustRunAsRange`, `MustRunAsNonRoot` or `RunAsAny`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunAsUserStrategyOptions {
    /// The strategy's type.
    #[serde(rename = "type", default, skip_serializing_if = "String::is_empty")]
    pub type_: String,
    /// The uid of `MustRunAs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<i64>,
    /// The lowest uid of `MustRunAsRange`; unset with the maximum: the namespace's range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid_range_min: Option<i64>,
    /// The highest uid of `MustRunAsRange`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid_range_max: Option<i64>,
}

/// A group strategy (fsGroup, supplementalGroups): `MustRunAs` (with ranges) or `RunAsAny`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GroupStrategyOptions {
    /// The strategy's type.
    #[serde(rename = "type", default, skip_serializing_if = "String::is_empty")]
    pub type_: String,
    /// The ranges allowed; none under `MustRunAs`: the namespace's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranges: Option<Vec<IdRange>>,
}

/// An inclusive range of ids.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdRange {
    /// The first id.
    #[serde(default)]
    pub min: i64,
    /// The last id.
    #[serde(default)]
    pub max: i64,
}

/// Strategy type names, as OpenShift spells them.
pub mod strategy_type {
    /// Must run as the given value(s).
    pub const MUST_RUN_AS: &str = "MustRunAs";
    /// Must run as a uid in a range.
    pub const MUST_RUN_AS_RANGE: &str = "MustRunAsRange";
    /// Must not run as root.
    pub const MUST_RUN_AS_NON_ROOT: &str = "MustRunAsNonRoot";
    /// Anything goes.
    pub const RUN_AS_ANY: &str = "RunAsAny";
}

/// `userNamespaceLevel`'s value that requires `hostUsers: false`.
pub const REQUIRE_POD_LEVEL: &str = "RequirePodLevel";

/// Reads a JSON `null` as the type's default (OpenShift marks these fields `+nullable`).
fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}
