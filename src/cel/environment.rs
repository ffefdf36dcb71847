//! The shared CEL environment, built once: the standard library, the strings extension and
//! warrant's libraries, with cel-go's rule for repeated map keys.

use super::library;
use ::cel as engine;
use std::sync::{Arc, LazyLock};

/// The shared environment: the standard library, the strings extension, optional syntax and
/// warrant's libraries.
pub(super) struct Environment {
    /// The engine's environment.
    pub(super) env: Arc<engine::Env>,
}

static ENVIRONMENT: LazyLock<Result<Environment, String>> = LazyLock::new(|| {
    let mut env = engine::Env::stdlib();
    env.add_extension(engine::extensions::strings)
        .map_err(|e| e.to_string())?;
    library::register(&mut env).map_err(|e| e.to_string())?;
    // cel-go (and so Kubernetes) keeps the last of repeated map-literal keys.
    env.set_error_on_duplicate_map_keys(false);
    Ok(Environment { env: Arc::new(env) })
});

/// The environment, or why it could not be built.
pub(super) fn shared() -> Result<&'static Environment, &'static str> {
    ENVIRONMENT.as_ref().map_err(String::as_str)
}
