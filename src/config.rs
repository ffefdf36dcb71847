//! Configuration: from the bytes of an `AuthorizationConfiguration` file to a validated
//! [`Config`]. This module builds nothing; the chain is built from a `Config` in
//! [`crate::authorizer`].
//!
//! Layers, as in kube's config module: [`schema`] mirrors the file (strict: an unknown field is
//! an error), `validate` checks it with upstream's rules and messages and yields the model in
//! [`model`], and [`watch`] re-reads the file when it changes. Every error carries the file, the
//! YAML line and the field path: `authz-config/warrant.yaml:14: authorizers[1].name: ...`.

pub(crate) mod duration;
mod error;
mod load;
pub mod model;
pub mod schema;
mod validate;
pub mod watch;

pub use error::{ConfigError, ConfigErrors, ConfigWarning, ErrorKind};
pub use load::{Loaded, Source, content_hash, load_file, parse};
pub use model::{
    AuthorizerConfig, AuthorizerSpec, AuthorizerType, Config, FailurePolicy, Mode, WebhookConfig,
};

/// The embedded copy of `authz-config/warrant.yaml`, used when that file is absent.
pub(crate) const EMBEDDED_DEFAULT: &str = include_str!("../authz-config/warrant.yaml");

/// The name under which [`EMBEDDED_DEFAULT`] is reported in errors and logs.
pub(crate) const EMBEDDED_DEFAULT_NAME: &str = "<embedded authz-config/warrant.yaml>";

#[cfg(test)]
mod tests;
