//! `warrant validate [--replay INPUT...] FILE...`: exit 0 when every file is valid; otherwise
//! each error as `FILE:LINE: path: message` and exit 1. With `--replay`, each valid file is also
//! judged against recorded traffic (as `warrant replay` with the recorded answers as baseline):
//! a flip that would deny a bootstrap identity fails validation, and so does any flip with
//! `--fail-on-flip`. An input that cannot be read is a usage error (exit 2).

use super::ExitStatus;
use crate::authorizer::Chain;
use crate::replay::{Bootstrap, Options, replay_blocking};
use std::path::PathBuf;

/// Arguments of `warrant validate`.
#[derive(Debug, clap::Args)]
pub struct ValidateArgs {
    /// Configuration files to check.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Replay recorded reviews (warrant or kube-apiserver audit logs, SubjectAccessReview
    /// files, repeatable) against each file; a lockout of a bootstrap identity fails it.
    #[arg(long, value_name = "INPUT")]
    pub replay: Vec<PathBuf>,
    /// With --replay: any flip fails the file.
    #[arg(long, requires = "replay")]
    pub(crate) fail_on_flip: bool,
    /// warrant's own service account (`namespace/name`, repeatable), a bootstrap identity.
    #[arg(
        long,
        value_name = "NAMESPACE/NAME",
        default_value = "warrant-system/warrant"
    )]
    pub(crate) warrant_service_account: Vec<String>,
}

/// Validates each file, printing every error.
pub fn run(args: ValidateArgs) -> ExitStatus {
    let mut status = ExitStatus::Success;
    for file in &args.files {
        match crate::config::load_file(file) {
            Ok(loaded) => {
                println!(
                    "{}: valid ({} authorizers)",
                    file.display(),
                    loaded.config.authorizers.len()
                );
                for w in &loaded.config.warnings {
                    println!("{w}");
                }
                if args.replay.is_empty() {
                    continue;
                }
                match replay(&args, file, &loaded.config) {
                    ExitStatus::Success => {}
                    ExitStatus::Usage => return ExitStatus::Usage,
                    other => status = other,
                }
            }
            Err(errors) => {
                for e in errors.iter() {
                    println!("{e}");
                }
                status = ExitStatus::Failure;
            }
        }
    }
    status
}

/// Replays `--replay` against one valid configuration and prints the report.
fn replay(
    args: &ValidateArgs,
    file: &std::path::Path,
    config: &crate::config::Config,
) -> ExitStatus {
    let chain = match Chain::build(config) {
        Ok(c) => c,
        Err(e) => {
            println!("{}: {e}", file.display());
            return ExitStatus::Failure;
        }
    };
    let options = Options {
        bootstrap: Bootstrap::new(&args.warrant_service_account),
        candidate_name: file.display().to_string(),
        ..Options::default()
    };
    let report = match replay_blocking(&args.replay, &chain, None, &options) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: --replay {e}");
            return ExitStatus::Usage;
        }
    };
    print!("{}", report.text());
    let t = &report.totals;
    if t.lockouts > 0 {
        println!(
            "{}: refused: {} flips would lock out a bootstrap identity",
            file.display(),
            t.lockouts
        );
        ExitStatus::Failure
    } else if args.fail_on_flip && t.flipped > 0 {
        println!(
            "{}: refused: {} reviews flip (--fail-on-flip)",
            file.display(),
            t.flipped
        );
        ExitStatus::Failure
    } else {
        ExitStatus::Success
    }
}
