//! Telemetry records and never decides: Prometheus [`metrics`], one [`audit`] record per review,
//! and the operational [`logging`] set-up.

pub mod audit;
pub(crate) mod logging;
pub mod metrics;
