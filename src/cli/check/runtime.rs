//! The runtime the offline commands (`check`, `test`) evaluate on.

use super::error::RuntimeError;

/// The current-thread runtime offline commands evaluate on.
pub fn offline_runtime() -> Result<tokio::runtime::Runtime, RuntimeError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(RuntimeError)
}
