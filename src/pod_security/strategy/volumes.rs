//! Volume types: which type a pod's volume is, and whether a constraint allows it.
//!
//! The names are the `FSType`s of OpenShift's API (`security/v1/types.go`); a volume's type is
//! the field of its source that is set (`pkg/securitycontextconstraints/util/util.go`,
//! `GetVolumeFSType`). A `projected` volume counts as allowed wherever `secret` is when it only
//! holds what a bound service account token volume holds: the token at `token` with no
//! audience, `kube-root-ca.crt`'s `ca.crt`, `openshift-service-ca.crt`'s `service-ca.crt` and
//! the namespace from the downward API (`IsOnlyServiceAccountTokenSources` there, and
//! `allowsVolumeType` in `sccmatching/provider.go`).

use k8s_openapi::api::core::v1::{ProjectedVolumeSource, Volume};

/// Every volume type.
pub const ALL: &str = "*";
/// No volume type.
pub const NONE: &str = "none";
/// Host directories.
pub const HOST_PATH: &str = "hostPath";
/// Secrets.
pub const SECRET: &str = "secret";
/// Projected volumes.
pub const PROJECTED: &str = "projected";
/// Flexvolumes.
pub const FLEX_VOLUME: &str = "flexVolume";

/// Every volume type `*` stands for (`GetAllFSTypesAsSet`).
pub const ALL_TYPES: &[&str] = &[
    "hostPath",
    "azureFile",
    "flocker",
    "flexVolume",
    "emptyDir",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "persistentVolumeClaim",
    "rbd",
    "cinder",
    "cephFS",
    "downwardAPI",
    "fc",
    "configMap",
    "vsphere",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "projected",
    "portworxVolume",
    "scaleIO",
    "storageOS",
    "csi",
    "ephemeral",
    "image",
];

/// The type of `volume`, `None` when no source this version knows is set.
pub fn fs_type(volume: &Volume) -> Option<&'static str> {
    let v = volume;
    let found = [
        (v.host_path.is_some(), "hostPath"),
        (v.empty_dir.is_some(), "emptyDir"),
        (v.gce_persistent_disk.is_some(), "gcePersistentDisk"),
        (v.aws_elastic_block_store.is_some(), "awsElasticBlockStore"),
        (v.git_repo.is_some(), "gitRepo"),
        (v.secret.is_some(), "secret"),
        (v.nfs.is_some(), "nfs"),
        (v.iscsi.is_some(), "iscsi"),
        (v.glusterfs.is_some(), "glusterfs"),
        (v.persistent_volume_claim.is_some(), "persistentVolumeClaim"),
        (v.rbd.is_some(), "rbd"),
        (v.flex_volume.is_some(), "flexVolume"),
        (v.cinder.is_some(), "cinder"),
        (v.cephfs.is_some(), "cephFS"),
        (v.flocker.is_some(), "flocker"),
        (v.downward_api.is_some(), "downwardAPI"),
        (v.fc.is_some(), "fc"),
        (v.azure_file.is_some(), "azureFile"),
        (v.config_map.is_some(), "configMap"),
        (v.vsphere_volume.is_some(), "vsphere"),
        (v.quobyte.is_some(), "quobyte"),
        (v.azure_disk.is_some(), "azureDisk"),
        (v.photon_persistent_disk.is_some(), "photonPersistentDisk"),
        (v.projected.is_some(), "projected"),
        (v.portworx_volume.is_some(), "portworxVolume"),
        (v.scale_io.is_some(), "scaleIO"),
        (v.storageos.is_some(), "storageOS"),
        (v.csi.is_some(), "csi"),
        (v.ephemeral.is_some(), "ephemeral"),
        (v.image.is_some(), "image"),
    ];
    found.iter().find(|(set, _)| *set).map(|(_, name)| *name)
}

/// Whether `allowed` (a defaulted constraint's volumes) allows `volume` of type `fs_type`.
pub fn allows(allowed: &[String], fs_type: &str, volume: &Volume) -> bool {
    if allowed.iter().any(|a| a == fs_type) {
        return true;
    }
    allowed.iter().any(|a| a == SECRET)
        && fs_type == PROJECTED
        && volume
            .projected
            .as_ref()
            .is_some_and(only_service_account_token_sources)
}

/// Whether `allowed` holds `*` or `fs_type`.
pub fn allows_type(allowed: &[String], fs_type: &str) -> bool {
    allowed.iter().any(|a| a == ALL || a == fs_type)
}

/// Whether a projected volume holds only what a bound service account token volume holds.
fn only_service_account_token_sources(projected: &ProjectedVolumeSource) -> bool {
    for source in projected.sources.iter().flatten() {
        if source.service_account_token.is_none()
            && source.config_map.is_none()
            && source.downward_api.is_none()
        {
            return false;
        }
        if let Some(token) = &source.service_account_token
            && (token.path != "token" || token.audience.as_deref().is_some_and(|a| !a.is_empty()))
        {
            return false;
        }
        if let Some(config_map) = &source.config_map {
            let expected = match config_map.name.as_str() {
                "kube-root-ca.crt" => "ca.crt",
                "openshift-service-ca.crt" => "service-ca.crt",
                _ => return false,
            };
            match config_map.items.as_deref() {
                Some([item]) if item.key == expected && item.path == expected => {}
                _ => return false,
            }
        }
        if let Some(downward) = &source.downward_api {
            for item in downward.items.iter().flatten() {
                let namespace_ref = item.field_ref.as_ref().is_some_and(|f| {
                    f.api_version.as_deref() == Some("v1") && f.field_path == "metadata.namespace"
                });
                if item.path != "namespace" || !namespace_ref {
                    return false;
                }
            }
        }
    }
    true
}
