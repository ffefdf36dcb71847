//! The command line: one module per subcommand, each a function from its arguments to an
//! [`ExitStatus`]. `main.rs` only parses and dispatches to [`run`].

pub(crate) mod audit_sinks;
pub mod check;
pub mod check_conditions;
mod config_source;
pub mod confirm;
pub mod coverage;
pub(crate) mod duration_flag;
mod exit_status;
pub mod holds;
pub(crate) mod leader_elect;
pub(crate) mod object_input;
pub(crate) mod pod_security_ranges;
pub mod recommend;
pub mod replay;
pub mod serve;
pub mod test;
pub mod ticket;
pub mod user_cluster;
pub mod validate;
pub mod why;

pub use config_source::{ConfigSource, DEFAULT_CONFIG_PATH};
pub use exit_status::ExitStatus;

use clap::{Parser, Subcommand};

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
    /// Judge recorded traffic (warrant or kube-apiserver audit logs, SubjectAccessReview files)
    /// against a candidate configuration and report every flip.
    Replay(replay::ReplayArgs),
    /// Ask for, approve, reject and list DeletionTickets in the cluster of your kubeconfig
    /// (also `kubectl warrant ticket`).
    Ticket(ticket::TicketArgs),
    /// List the objects that look critical (their deletion's risk, or a production-like name)
    /// but that no rule or protection label of the guard protects, or protects below their
    /// risk; `-o yaml` prints the label patches that close the gaps.
    Coverage(coverage::CoverageArgs),
    /// List the deletions the buffer ring holds, with who asked and the time left (also
    /// `kubectl warrant holds`).
    Holds(holds::HoldsArgs),
    /// Confirm a held deletion with a ticket, as yourself (also `kubectl warrant confirm`).
    Confirm(confirm::ConfirmArgs),
    /// Explain why deleting an object is refused: its labels, tickets, each ring's answer and
    /// the risk report (also `kubectl warrant why`).
    Why(why::WhyArgs),
    /// Propose protection levels per namespace and per object from audit logs (what was
    /// deleted and restored, what many principals write, what is never deleted) and the
    /// cluster, with the evidence for each.
    Recommend(recommend::RecommendArgs),
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> ExitStatus {
    match cli.command {
        Command::Serve(args) => serve::run(args),
        Command::Check(args) => check::run(args),
        Command::Validate(args) => validate::run(args),
        Command::Test(args) => test::run(args),
        Command::Replay(args) => replay::run(args),
        Command::Ticket(args) => ticket::run(args),
        Command::Coverage(args) => coverage::run(args),
        Command::Holds(args) => holds::run(args),
        Command::Confirm(args) => confirm::run(args),
        Command::Why(args) => why::run(args),
        Command::Recommend(args) => recommend::run(args),
    }
}
