//! `warrant replay --config CANDIDATE [--baseline CURRENT] INPUT...`: recorded reviews judged
//! again by a candidate configuration, compared with a baseline configuration or with the
//! answers the inputs record, every flip grouped by rule, user and resource, and any flip that
//! would deny a bootstrap identity flagged as a LOCKOUT. Exit status: 0 when the replay ran, 1
//! with `--fail-on-flip` when any review flipped, 2 on a usage, configuration or input error.

use super::ExitStatus;
use crate::authorizer::Chain;
use crate::replay::input::Reader;
use crate::replay::record::Item;
use crate::replay::{At, Bootstrap, Options, Report, replay_blocking};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Output format of `warrant replay`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Output {
    /// Totals, then each group of flips with its first examples.
    Text,
    /// The whole report as one JSON document.
    Json,
    /// No replay: each input review as the SubjectAccessReview it stands for, one JSON line
    /// each (what kube-apiserver sent warrant, for an audit event); needs no --config.
    Reviews,
}

/// Arguments of `warrant replay`.
#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// The candidate configuration (required but with `-o reviews`).
    #[arg(long, value_name = "CANDIDATE")]
    pub config: Option<PathBuf>,
    /// Compare with this configuration instead of the answers the inputs record.
    #[arg(long, value_name = "CURRENT")]
    pub baseline: Option<PathBuf>,
    /// warrant audit logs, kube-apiserver audit logs (audit.k8s.io/v1 events, JSON lines),
    /// SubjectAccessReview JSON files, directories of them, or `-` for standard input.
    #[arg(required = true, value_name = "INPUT")]
    pub(crate) inputs: Vec<PathBuf>,
    /// When time-aware rules judge a review: `recorded` (when it was judged), `now`, or an
    /// RFC 3339 time.
    #[arg(long, default_value = "recorded", value_name = "recorded|now|RFC3339")]
    pub at: String,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = Output::Text)]
    pub output: Output,
    /// Exit 1 when any review flips.
    #[arg(long)]
    pub(crate) fail_on_flip: bool,
    /// Examples shown per group of flips.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub examples: usize,
    /// warrant's own service account (`namespace/name`, repeatable): a bootstrap identity.
    #[arg(
        long,
        value_name = "NAMESPACE/NAME",
        default_value = "warrant-system/warrant"
    )]
    pub(crate) warrant_service_account: Vec<String>,
}

/// Loads and builds the chain of a configuration file, printing its errors.
pub(crate) fn chain_of(path: &Path) -> Result<Chain, ExitStatus> {
    let loaded = crate::config::load_file(path).map_err(|errors| {
        for e in errors.iter() {
            eprintln!("{e}");
        }
        ExitStatus::Usage
    })?;
    Chain::build(&loaded.config).map_err(|e| {
        eprintln!("error: {}: {e}", path.display());
        ExitStatus::Usage
    })
}

/// Replays and prints the report.
pub fn run(args: ReplayArgs) -> ExitStatus {
    let at = match At::parse(&args.at) {
        Ok(a) => a,
        Err(e) => {
            eprintln!(
                "error: --at {:?}: expected recorded, now or an RFC 3339 time: {e}",
                args.at
            );
            return ExitStatus::Usage;
        }
    };
    if args.output == Output::Reviews {
        return print_reviews(&args.inputs);
    }
    let Some(config) = &args.config else {
        eprintln!("error: --config CANDIDATE is required");
        return ExitStatus::Usage;
    };
    let candidate = match chain_of(config) {
        Ok(c) => c,
        Err(status) => return status,
    };
    let baseline = match args.baseline.as_deref().map(chain_of).transpose() {
        Ok(b) => b,
        Err(status) => return status,
    };
    let options = Options {
        at,
        examples: args.examples,
        bootstrap: Bootstrap::new(&args.warrant_service_account),
        candidate_name: config.display().to_string(),
        baseline_name: args
            .baseline
            .as_ref()
            .map(|b| b.display().to_string())
            .unwrap_or_default(),
        ..Options::default()
    };
    let report = match replay_blocking(&args.inputs, &candidate, baseline.as_ref(), &options) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitStatus::Usage;
        }
    };
    print!("{}", render(&report, args.output));
    if args.fail_on_flip && report.totals.flipped > 0 {
        ExitStatus::Failure
    } else {
        ExitStatus::Success
    }
}

/// Prints each input review as a SubjectAccessReview JSON line; malformed lines go to standard
/// error.
fn print_reviews(inputs: &[PathBuf]) -> ExitStatus {
    let mut reader = match Reader::new(inputs) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitStatus::Usage;
        }
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    while let Some(next) = reader.next_item() {
        match next {
            Err(e) => {
                eprintln!("error: {e}");
                return ExitStatus::Usage;
            }
            Ok(Err(e)) => eprintln!("{}: {}", e.origin, e.message),
            Ok(Ok(Item::Skipped(_))) => {}
            Ok(Ok(Item::Review(rec))) => {
                let line = serde_json::json!({
                    "apiVersion": "authorization.k8s.io/v1",
                    "kind": "SubjectAccessReview",
                    "spec": rec.review.spec(),
                });
                if writeln!(out, "{line}").is_err() {
                    return ExitStatus::Success;
                }
            }
        }
    }
    let _ = out.flush();
    ExitStatus::Success
}

/// The report in the chosen format.
pub fn render(report: &Report, output: Output) -> String {
    match output {
        Output::Text | Output::Reviews => report.text(),
        Output::Json => {
            let mut s = serde_json::to_string_pretty(report).unwrap_or_default();
            s.push('\n');
            s
        }
    }
}
