//! `warrant ticket` (also `kubectl warrant ticket`, through the `kubectl-warrant` binary kubectl
//! finds on `PATH`): asks for, approves, rejects and lists `DeletionTicket`s with the user's own
//! kubeconfig, so that the API server authenticates every act and RBAC (with warrant's
//! validation ring) decides. Output follows kubectl's: `-o name|json|yaml` or a table; exit
//! status 0 on success, 1 when the API server refused or could not be reached, 2 for a usage
//! error.

mod decide;
mod list;
mod output;
mod request;
mod selector_flag;
mod session;

use super::ExitStatus;
use clap::{Args, Subcommand};
use std::path::PathBuf;

/// `warrant ticket`.
#[derive(Debug, Args)]
pub struct TicketArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: TicketAction,
    /// The kubeconfig (default: `KUBECONFIG`, then `~/.kube/config`).
    #[arg(long, global = true, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context (default: its current context).
    #[arg(long, global = true, value_name = "NAME")]
    pub context: Option<String>,
    /// The namespace of the tickets (default: the context's).
    #[arg(short = 'n', long, global = true, value_name = "NAMESPACE")]
    pub namespace: Option<String>,
    /// Output: a table (default), `name`, `json` or `yaml`.
    #[arg(short = 'o', long, global = true, value_enum, default_value_t = output::Format::Table)]
    pub output: output::Format,
}

/// A ticket action.
#[derive(Debug, Subcommand)]
pub enum TicketAction {
    /// Ask for the deletion of objects: creates a DeletionTicket naming you, prints its name.
    Request(request::RequestArgs),
    /// Approve a ticket (one approval in your name, written to its status).
    Approve(decide::DecideArgs),
    /// Reject a ticket (or withdraw your own).
    Reject(decide::DecideArgs),
    /// List tickets.
    List(list::ListArgs),
}

/// Runs `warrant ticket`.
pub fn run(args: TicketArgs) -> ExitStatus {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitStatus::Failure;
        }
    };
    let result = runtime.block_on(async {
        let session = session::Session::open(
            args.kubeconfig.as_deref(),
            args.context.as_deref(),
            args.namespace.as_deref(),
        )
        .await?;
        match &args.action {
            TicketAction::Request(r) => request::run(&session, r, args.output).await,
            TicketAction::Approve(d) => {
                decide::run(&session, d, decide::Verdict::Approve, args.output).await
            }
            TicketAction::Reject(d) => {
                decide::run(&session, d, decide::Verdict::Reject, args.output).await
            }
            TicketAction::List(l) => list::run(&session, l, args.output).await,
        }
    });
    match result {
        Ok(text) => {
            print!("{text}");
            ExitStatus::Success
        }
        Err(e) => {
            eprintln!("error: {e}");
            e.status()
        }
    }
}
