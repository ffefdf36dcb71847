//! `warrant serve`'s leader-election flags, spelled as kube-controller-manager's, and the start
//! of the election. Leadership only steers the controllers that must run once per cluster;
//! every replica serves `/authorize` and `/admit` whatever it is.

use super::duration_flag::{self, DurationFlagError};
use crate::cluster;
use crate::leader::{ElectionSettings, Elector, LeaderMetrics, LeaseLock, SettingsError};
use std::time::Duration;
use thiserror::Error;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// Why the election could not start.
#[derive(Debug, Error)]
pub enum LeaderElectError {
    /// A duration flag is not a positive duration.
    #[error(transparent)]
    Flag(#[from] DurationFlagError),
    /// The durations do not fit together (as client-go checks them).
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// The cluster could not be reached.
    #[error(transparent)]
    Connect(#[from] cluster::ConnectError),
}

/// The leader-election flags.
#[derive(Debug, Clone, clap::Args)]
pub struct LeaderElectArgs {
    /// Elect a leader on a coordination.k8s.io/v1 Lease before running the once-per-cluster
    /// controllers (as kube-controller-manager, on by default; it needs a cluster). With
    /// `--leader-elect=false`, or without a cluster, this replica always leads.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1,
        require_equals = true, default_missing_value = "true", value_name = "BOOL")]
    pub(crate) leader_elect: bool,
    /// How long the others wait after the Lease last changed before taking it over (Go
    /// duration).
    #[arg(long, default_value = "15s", value_name = "DURATION")]
    pub(crate) leader_elect_lease_duration: String,
    /// How long the leader tries to renew before it stops leading (Go duration).
    #[arg(long, default_value = "10s", value_name = "DURATION")]
    pub(crate) leader_elect_renew_deadline: String,
    /// The wait between attempts to acquire or renew (Go duration).
    #[arg(long, default_value = "2s", value_name = "DURATION")]
    pub(crate) leader_elect_retry_period: String,
    /// The Lease's name.
    #[arg(long, default_value = "warrant", value_name = "NAME")]
    pub(crate) leader_elect_resource_name: String,
    /// The Lease's namespace.
    #[arg(long, default_value = "warrant-system", value_name = "NAMESPACE")]
    pub(crate) leader_elect_resource_namespace: String,
}

/// This replica's leadership: the receiver the controllers read, the election's task (absent
/// without election) and, without election, the sender that keeps the receiver open.
#[derive(Debug)]
pub struct Leadership {
    /// True while this replica leads.
    pub(crate) leading: watch::Receiver<bool>,
    /// The election, which releases the Lease once the stop signal turns true.
    pub task: Option<JoinHandle<()>>,
    /// Keeps an always-true receiver open.
    _always: Option<watch::Sender<bool>>,
}

fn duration(flag: &'static str, value: &str) -> Result<Duration, DurationFlagError> {
    duration_flag::positive(flag, value, "15s")
}

impl LeaderElectArgs {
    /// The election's settings (checked as client-go checks them), with a fresh identity.
    pub fn settings(&self) -> Result<ElectionSettings, LeaderElectError> {
        let settings = ElectionSettings {
            lease_duration: duration(
                "leader-elect-lease-duration",
                &self.leader_elect_lease_duration,
            )?,
            renew_deadline: duration(
                "leader-elect-renew-deadline",
                &self.leader_elect_renew_deadline,
            )?,
            retry_period: duration("leader-elect-retry-period", &self.leader_elect_retry_period)?,
            name: self.leader_elect_resource_name.clone(),
            namespace: self.leader_elect_resource_namespace.clone(),
            identity: crate::leader::identity(),
        };
        settings.check()?;
        Ok(settings)
    }

    /// Starts the election on `source`'s cluster, or hands out an always-true receiver when
    /// the flag is off or there is no cluster. The election stops (releasing the Lease) when
    /// `stop` turns true.
    pub async fn start(
        &self,
        source: Option<&cluster::Source>,
        metrics: LeaderMetrics,
        stop: watch::Receiver<bool>,
    ) -> Result<Leadership, LeaderElectError> {
        let settings = self.settings()?;
        let source = match source {
            Some(source) if self.leader_elect => source,
            _ => {
                if self.leader_elect {
                    tracing::info!("no cluster to elect a leader in: this replica leads");
                }
                metrics.changed(true);
                let (tx, rx) = crate::leader::always_leading();
                return Ok(Leadership {
                    leading: rx,
                    task: None,
                    _always: Some(tx),
                });
            }
        };
        let client = source.client().await?;
        let lock = LeaseLock::new(client, &settings.namespace, &settings.name);
        let (elector, leading) = Elector::new(lock, settings, metrics);
        Ok(Leadership {
            leading,
            task: Some(tokio::spawn(elector.run(stop))),
            _always: None,
        })
    }
}
