//! Leader election on a `coordination.k8s.io/v1` Lease, with client-go's semantics
//! (`k8s.io/client-go/tools/leaderelection`): candidates take an absent or expired Lease, the
//! leader renews it every retry period and stops leading when it cannot renew within the renew
//! deadline, and gives it up on shutdown (client-go's `ReleaseOnCancel`).
//!
//! Leadership is published as a [`tokio::sync::watch::Receiver<bool>`] (true while this replica
//! leads); every replica serves `/authorize` and `/admit` whatever its leadership. The
//! modules: [`settings`] (durations, names, identity), [`record`] (the election record and its
//! Lease form), [`lock`] (reads and writes of the Lease, optimistic on `resourceVersion`),
//! [`elector`] (the acquire/renew/release loop) and [`metrics`].

pub(crate) mod elector;
pub mod lock;
pub mod metrics;
pub mod record;
pub mod settings;

pub(crate) use elector::{Elector, always_leading};
pub use lock::{LeaseLock, LockError};
pub use metrics::LeaderMetrics;
pub use record::ElectionRecord;
pub use settings::{ElectionSettings, SettingsError, identity};
