//! `warrant holds` (also `kubectl warrant holds`): the deletions the buffer ring holds, read
//! with the user's kubeconfig from the objects themselves ([`crate::buffer::held`]), as a
//! table (`NAMESPACE`, `NAME`, `REQUESTED-BY`, `WAITING`, `LEFT`, `UNTIL`) or `-o json|yaml`.
//! Exit status: 0 (a kind that could not be read is a warning on stderr), 1 when no kind
//! could be read or the API server could not be reached, 2 for a usage error.

use super::ExitStatus;
use super::user_cluster::{Printed, UserCluster, buffer_settings, duration, table};
use crate::buffer::held::{self, Held};
use std::path::PathBuf;

/// `warrant holds`.
#[derive(Debug, clap::Args)]
pub struct HoldsArgs {
    /// The cluster and namespace.
    #[command(flatten)]
    pub cluster: UserCluster,
    /// Every namespace (and cluster-scoped kinds, such as Namespaces).
    #[arg(short = 'A', long)]
    pub all_namespaces: bool,
    /// The chain file whose guard's `buffer` block applies (finalizer, annotations, cool-down,
    /// kinds); default: the block's defaults.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The DeletionGuard entry to read (default: the first with a `buffer` block).
    #[arg(long, value_name = "NAME", requires = "config")]
    pub guard: Option<String>,
    /// Output: a table (default), `json` or `yaml`.
    #[arg(short = 'o', long, value_enum, default_value_t = Printed::Table)]
    pub output: Printed,
}

/// Lists the held deletions.
pub fn run(args: HoldsArgs) -> ExitStatus {
    let settings = match buffer_settings(args.config.as_deref(), args.guard.as_deref()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitStatus::Usage;
        }
    };
    let runtime = match super::check::offline_runtime() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitStatus::Failure;
        }
    };
    let found = runtime.block_on(async {
        let (client, namespace) = args.cluster.open().await.map_err(|e| e.to_string())?;
        let namespace = (!args.all_namespaces).then_some(namespace);
        Ok::<_, String>(
            held::list(&client, &settings, namespace.as_deref(), chrono::Utc::now()).await,
        )
    });
    let found = match found {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitStatus::Failure;
        }
    };
    for w in &found.warnings {
        eprintln!("warning: {w}");
    }
    if found.held.is_empty() && found.warnings.len() == settings.resources.len() {
        eprintln!("error: no kind of the buffer could be read");
        return ExitStatus::Failure;
    }
    match args.output.document(&found.held) {
        Some(Ok(text)) => print!("{text}"),
        Some(Err(e)) => {
            eprintln!("error: {e}");
            return ExitStatus::Failure;
        }
        None => print!("{}", rows(&found.held, args.all_namespaces)),
    }
    ExitStatus::Success
}

/// The table.
fn rows(held: &[Held], all_namespaces: bool) -> String {
    let mut head = vec!["NAME", "REQUESTED-BY", "WAITING", "LEFT", "UNTIL"];
    if all_namespaces {
        head.insert(0, "NAMESPACE");
    }
    let rows: Vec<Vec<String>> = held
        .iter()
        .map(|h| {
            let until = match h.waiting {
                "confirmation" => h.max_hold_ends.clone(),
                _ => h.cooldown_ends.clone(),
            };
            let mut row = vec![
                format!("{}/{}", h.resource, h.name),
                h.requested_by.clone().unwrap_or_else(|| "<unknown>".into()),
                match (h.waiting, h.require_confirmation, &h.confirmed_with) {
                    ("cooldown", true, None) => "cooldown,confirmation".to_owned(),
                    (w, _, _) => w.to_owned(),
                },
                duration(h.seconds_left),
                until,
            ];
            if all_namespaces {
                row.insert(0, h.namespace.clone());
            }
            row
        })
        .collect();
    table(&head, &rows)
}
