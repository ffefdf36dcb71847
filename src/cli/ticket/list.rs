//! `warrant ticket list`: the tickets of a namespace (or all), as a table or a `List`.

use super::output::{self, Format};
use super::session::{Session, TicketError, decode};
use clap::Args;
use kube::api::ListParams;

/// `warrant ticket list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Every namespace.
    #[arg(short = 'A', long)]
    pub all_namespaces: bool,
}

/// Lists the tickets.
pub async fn run(
    session: &Session,
    args: &ListArgs,
    format: Format,
) -> Result<String, TicketError> {
    let namespace = (!args.all_namespaces).then_some(session.namespace.as_str());
    let list = session.api(namespace).list(&ListParams::default()).await?;
    let mut tickets = Vec::new();
    for item in &list.items {
        tickets.push(decode(item)?);
    }
    let now = chrono::Utc::now();
    output::many(&tickets, format, args.all_namespaces, now)
}
