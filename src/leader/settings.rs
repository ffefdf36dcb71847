//! The election's settings, as kube-controller-manager's `--leader-elect-*` flags name them,
//! checked as client-go's `NewLeaderElector` checks them, and this replica's identity.

use std::time::Duration;
use thiserror::Error;

/// client-go's `JitterFactor`: each wait between attempts is the retry period stretched by up
/// to this factor, and the renew deadline must exceed the retry period times it.
pub(crate) const JITTER_FACTOR: f64 = 1.2;

/// The settings of one election.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElectionSettings {
    /// How long a Lease stays valid for the others after they last saw it change.
    pub(crate) lease_duration: Duration,
    /// How long the leader keeps trying to renew before it stops leading.
    pub(crate) renew_deadline: Duration,
    /// The wait between attempts.
    pub(crate) retry_period: Duration,
    /// The Lease's name.
    pub name: String,
    /// The Lease's namespace.
    pub namespace: String,
    /// This replica's identity, written as `holderIdentity`.
    pub identity: String,
}

/// Settings client-go would refuse.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SettingsError {
    /// The lease duration does not exceed the renew deadline.
    #[error(
        "--leader-elect-lease-duration ({lease:?}) must be greater than --leader-elect-renew-deadline ({renew:?})"
    )]
    LeaseNotAboveRenew {
        /// The lease duration.
        lease: Duration,
        /// The renew deadline.
        renew: Duration,
    },
    /// The renew deadline does not exceed the retry period times [`JITTER_FACTOR`].
    #[error(
        "--leader-elect-renew-deadline ({renew:?}) must be greater than --leader-elect-retry-period ({retry:?}) x {JITTER_FACTOR}"
    )]
    RenewNotAboveRetry {
        /// The renew deadline.
        renew: Duration,
        /// The retry period.
        retry: Duration,
    },
    /// The lease duration is under one second (`leaseDurationSeconds` is whole seconds).
    #[error("--leader-elect-lease-duration ({0:?}) must be at least 1s")]
    LeaseTooShort(Duration),
    /// The Lease's name or namespace is empty.
    #[error("--leader-elect-resource-name and --leader-elect-resource-namespace must not be empty")]
    EmptyName,
}

impl ElectionSettings {
    /// Checks the durations as client-go's `NewLeaderElector` does.
    pub fn check(&self) -> Result<(), SettingsError> {
        if self.lease_duration <= self.renew_deadline {
            return Err(SettingsError::LeaseNotAboveRenew {
                lease: self.lease_duration,
                renew: self.renew_deadline,
            });
        }
        if self.renew_deadline.as_secs_f64() <= JITTER_FACTOR * self.retry_period.as_secs_f64() {
            return Err(SettingsError::RenewNotAboveRetry {
                renew: self.renew_deadline,
                retry: self.retry_period,
            });
        }
        if self.lease_duration < Duration::from_secs(1) {
            return Err(SettingsError::LeaseTooShort(self.lease_duration));
        }
        if self.name.is_empty() || self.namespace.is_empty() {
            return Err(SettingsError::EmptyName);
        }
        Ok(())
    }

    /// `leaseDurationSeconds` as written to the Lease (whole seconds, as client-go truncates).
    pub(crate) fn lease_seconds(&self) -> i32 {
        i32::try_from(self.lease_duration.as_secs()).unwrap_or(i32::MAX)
    }
}

/// This replica's identity: the host name, `_`, and a random UUID, as kube-controller-manager
/// builds it (cmd/kube-controller-manager/app/controllermanager.go), so that two processes on
/// one host never share an identity.
pub fn identity() -> String {
    format!("{}_{}", hostname(), random_uuid())
}

/// The host name as Go's `os.Hostname` reads it on Linux, else `$HOSTNAME`, else `warrant`.
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok().filter(|s| !s.is_empty()))
        .unwrap_or_else(|| "warrant".to_owned())
}

/// A random (version 4) UUID in its usual text form.
fn random_uuid() -> String {
    let mut b: [u8; 16] = std::array::from_fn(|_| fastrand::u8(..));
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(lease: u64, renew: u64, retry: u64) -> ElectionSettings {
        ElectionSettings {
            lease_duration: Duration::from_secs(lease),
            renew_deadline: Duration::from_secs(renew),
            retry_period: Duration::from_secs(retry),
            name: "warrant".into(),
            namespace: "warrant-system".into(),
            identity: identity(),
        }
    }

    #[test]
    fn kube_controller_manager_defaults_pass() {
        assert_eq!(settings(15, 10, 2).check(), Ok(()));
        assert_eq!(settings(4, 3, 1).check(), Ok(()));
    }

    #[test]
    fn client_go_orderings_are_enforced() {
        assert!(matches!(
            settings(10, 10, 2).check(),
            Err(SettingsError::LeaseNotAboveRenew { .. })
        ));
        // 2.4s of jittered retry period do not fit in a 2s renew deadline.
        assert!(matches!(
            settings(15, 2, 2).check(),
            Err(SettingsError::RenewNotAboveRetry { .. })
        ));
    }

    #[test]
    fn identities_are_host_and_uuid_and_differ() {
        let (a, b) = (identity(), identity());
        assert_ne!(a, b);
        let (host, uuid) = a.rsplit_once('_').unwrap();
        assert!(!host.is_empty());
        assert_eq!(uuid.len(), 36);
        assert_eq!(uuid.as_bytes()[14], b'4');
    }
}
