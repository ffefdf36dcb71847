//! The command line: one module per subcommand, each a function from its arguments to an
//! [`ExitStatus`]. `main.rs` only parses and dispatches to [`run`].

pub mod check;
pub mod serve;
pub mod test;
pub mod validate;

use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};

/// How a subcommand ended; the process exit code is its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// Success (`check`: Allow; `validate`: every file valid).
    Success,
    /// `validate`: at least one file invalid; `serve`: could not start.
    Failure,
    /// Usage or configuration error.
    Usage,
    /// `check`: Deny.
    Denied,
    /// `check`: NoOpinion.
    NoOpinion,
}

impl ExitStatus {
    /// The process exit code.
    pub fn code(self) -> u8 {
        match self {
            ExitStatus::Success => 0,
            ExitStatus::Failure => 1,
            ExitStatus::Usage => 2,
            ExitStatus::Denied => 3,
            ExitStatus::NoOpinion => 4,
        }
    }
}

/// warrant: an external authorization webhook for Kubernetes.
#[derive(Debug, Parser)]
#[command(name = "warrant", version, about)]
pub struct Cli {
    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve SubjectAccessReviews over HTTPS.
    Serve(serve::ServeArgs),
    /// Evaluate one review against a configuration, offline (like `kubectl auth can-i`).
    Check(check::CheckArgs),
    /// Validate configuration files.
    Validate(validate::ValidateArgs),
    /// Run policy test suites (YAML cases with expected decisions) against their configurations.
    Test(test::TestArgs),
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> ExitStatus {
    match cli.command {
        Command::Serve(args) => serve::run(args),
        Command::Check(args) => check::run(args),
        Command::Validate(args) => validate::run(args),
        Command::Test(args) => test::run(args),
    }
}

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
    pub fn resolve(flag: Option<&Path>) -> Self {
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
