//! [`Counters`]: what the watches and the connection count (registered by `metrics.rs`).

use super::resource::Resource;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;

/// The `resource` label of the cache's families.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ResourceLabels {
    resource: &'static str,
}

impl ResourceLabels {
    /// The label of `resource`.
    pub fn of(resource: Resource) -> Self {
        Self {
            resource: resource.plural(),
        }
    }
}

/// The counters the watches and the connection increment.
#[derive(Debug, Clone, Default)]
pub struct Counters {
    watch_errors: Family<ResourceLabels, Counter>,
    connect_errors: Counter,
}

impl Counters {
    /// Counts one watch error of `resource`.
    pub(crate) fn watch_error(&self, resource: Resource) {
        self.watch_errors
            .get_or_create(&ResourceLabels::of(resource))
            .inc();
    }

    /// Counts one failed attempt to build the client.
    pub(crate) fn connect_error(&self) {
        self.connect_errors.inc();
    }

    /// The watch-error family (shared handle), to register.
    pub(crate) fn watch_errors(&self) -> Family<ResourceLabels, Counter> {
        self.watch_errors.clone()
    }

    /// The connect-error counter (shared handle), to register.
    pub(crate) fn connect_errors(&self) -> Counter {
        self.connect_errors.clone()
    }
}
