//! `warrant serve`'s namespace range allocator flags and its start: with pod security on
//! (`--pod-security` not `Off`), a cluster, and `--pod-security-allocate-ranges`, the
//! allocator of [`crate::namespace_ranges`] runs, acting while this replica leads.

use super::leader_elect::Leadership;
use crate::cluster;
use crate::namespace_ranges::{Allocator, RangeMetrics, RangeSettings, SettingsError};
use thiserror::Error;
use tokio::task::JoinHandle;

/// The allocator's flags.
#[derive(Debug, Clone, clap::Args)]
pub struct RangeArgs {
    /// With pod security on, give every namespace without `openshift.io/sa.scc.uid-range` a
    /// uid block (also its supplemental groups) and an MCS label no other namespace has, as
    /// OpenShift's namespace allocation does; the leader does it. `false` leaves the
    /// annotations to you.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1,
        require_equals = true, default_missing_value = "true", value_name = "BOOL")]
    pub(crate) pod_security_allocate_ranges: bool,
    /// The uid range namespaces get their blocks from: `<start>-<end>/<blockSize>`
    /// (OpenShift's default).
    #[arg(
        long,
        default_value = "1000000000-1999999999/10000",
        value_name = "RANGE"
    )]
    pub(crate) pod_security_uid_range: String,
    /// The MCS labels namespaces get: `<prefix>/<categoriesPerLabel>[,<maxCategory>]`
    /// (OpenShift's default).
    #[arg(long, default_value = "s0:/2", value_name = "RANGE")]
    pub(crate) pod_security_mcs_range: String,
    /// MCS labels skipped between two consecutive blocks' labels (OpenShift's default).
    #[arg(long, default_value_t = 5, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) pod_security_mcs_labels_per_namespace: u32,
}

/// Why the allocator could not start.
#[derive(Debug, Error)]
pub enum RangeStartError {
    /// A range flag is refused.
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// The cluster could not be reached.
    #[error(transparent)]
    Connect(#[from] cluster::ConnectError),
}

impl RangeArgs {
    /// Starts the allocator when pod security is on (`pod_security` is `Observe` or
    /// `Enforce`), there is a cluster and the allocator is not turned off. The range flags are
    /// checked whenever pod security is on, so a bad range stops the start-up. The taken
    /// blocks are kept in `namespace` (warrant's leader-election namespace).
    pub async fn start(
        &self,
        pod_security: &str,
        namespace: &str,
        source: Option<&cluster::Source>,
        metrics: RangeMetrics,
        leadership: &Leadership,
    ) -> Result<Option<JoinHandle<()>>, RangeStartError> {
        if crate::config::Mode::parse(pod_security).is_none() {
            return Ok(None);
        }
        let settings = RangeSettings::parse(
            &self.pod_security_uid_range,
            &self.pod_security_mcs_range,
            self.pod_security_mcs_labels_per_namespace,
            namespace,
        )?;
        let Some(source) = source.filter(|_| self.pod_security_allocate_ranges) else {
            return Ok(None);
        };
        let client = source.client().await?;
        tracing::info!(range = %settings.plan.uids, "namespace range allocator enabled");
        let allocator = Allocator::new(settings, client, metrics);
        Ok(Some(tokio::spawn(
            allocator.run(leadership.leading.clone()),
        )))
    }
}
