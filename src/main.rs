//! The `warrant` binary: parse the arguments and dispatch to the library.

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = warrant::cli::Cli::parse();
    ExitCode::from(warrant::cli::run(cli).code())
}
