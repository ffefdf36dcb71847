//! `warrant validate FILE...`: exit 0 when every file is valid; otherwise each error as
//! `FILE:LINE: path: message` and exit 1.

use super::ExitStatus;
use std::path::PathBuf;

/// Arguments of `warrant validate`.
#[derive(Debug, clap::Args)]
pub struct ValidateArgs {
    /// Configuration files to check.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

/// Validates each file, printing every error.
pub fn run(args: ValidateArgs) -> ExitStatus {
    let mut status = ExitStatus::Success;
    for file in &args.files {
        match crate::config::load_file(file) {
            Ok(loaded) => println!(
                "{}: valid ({} authorizers)",
                file.display(),
                loaded.config.authorizers.len()
            ),
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
