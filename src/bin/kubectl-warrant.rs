//! `kubectl-warrant`: warrant's command line under the name kubectl finds on `PATH`, so that
//! `kubectl warrant ticket approve NAME` runs `warrant ticket approve NAME`. Parse and dispatch.

use clap::{CommandFactory, FromArgMatches};
use std::process::ExitCode;

fn main() -> ExitCode {
    let matches = warrant::cli::Cli::command()
        .name("kubectl warrant")
        .bin_name("kubectl warrant")
        .get_matches();
    match warrant::cli::Cli::from_arg_matches(&matches) {
        Ok(cli) => ExitCode::from(warrant::cli::run(cli).code()),
        Err(e) => e.exit(),
    }
}
