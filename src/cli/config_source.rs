//! Which chain file a subcommand reads: `--config`, else the default file, else the embedded copy.

use std::path::{Path, PathBuf};

/// The configuration warrant uses when `--config` is not given: `authz-config/warrant.yaml` in
/// the working directory if it exists, otherwise the embedded copy.
pub const DEFAULT_CONFIG_PATH: &str = "authz-config/warrant.yaml";

/// Where the configuration comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigSource {
    /// A file, watched for changes.
    File(PathBuf),
    /// The embedded default (nothing to watch).
    Embedded,
}

impl ConfigSource {
    /// `--config` if given, else the default file if present, else the embedded default.
    pub(crate) fn resolve(flag: Option<&Path>) -> Self {
        match flag {
            Some(p) => ConfigSource::File(p.to_path_buf()),
            None if Path::new(DEFAULT_CONFIG_PATH).is_file() => {
                ConfigSource::File(PathBuf::from(DEFAULT_CONFIG_PATH))
            }
            None => ConfigSource::Embedded,
        }
    }

    /// Loads and validates the configuration once.
    pub fn load(&self) -> Result<crate::config::Loaded, crate::config::ConfigErrors> {
        match self {
            ConfigSource::File(p) => crate::config::load_file(p),
            ConfigSource::Embedded => crate::config::parse(
                crate::config::EMBEDDED_DEFAULT_NAME,
                crate::config::EMBEDDED_DEFAULT.as_bytes(),
            ),
        }
    }
}
