//! `warrant confirm RESOURCE/NAME --ticket ID` (also `kubectl warrant confirm`): the buffer
//! ring's confirmation of a held deletion ([`crate::buffer::confirm`]), written as the user
//! with their kubeconfig; warrant's validation ring judges it (a second person, a valid ticket
//! for the object's level). Prints `<resource>/<name> confirmed` (or `unchanged`), or with
//! `-o json|yaml` what was written. Exit status: 0 written or unchanged, 1 refused (by RBAC or
//! warrant, the reason on stderr), not held, or unreachable, 2 for a usage error.

use super::ExitStatus;
use super::user_cluster::{Printed, UserCluster, buffer_settings};
use crate::buffer::confirm::{Confirmed, confirm};
use crate::cluster::target::{ObjectTarget, resource_name};
use kube::api::{Api, DynamicObject};
use serde::Serialize;
use std::path::PathBuf;

/// `warrant confirm`.
#[derive(Debug, clap::Args)]
pub struct ConfirmArgs {
    /// The held object, as `resource[.group]/name` (`statefulsets.apps/orders-db`).
    #[arg(value_name = "RESOURCE/NAME")]
    pub target: String,
    /// The ticket that approves the deletion (`<namespace>/<name>` of a DeletionTicket, or its
    /// name in the object's namespace; a tickets file's id).
    #[arg(long, value_name = "ID")]
    pub ticket: String,
    /// The cluster and namespace.
    #[command(flatten)]
    pub cluster: UserCluster,
    /// The chain file whose guard's `buffer` block applies (finalizer, confirmation
    /// annotation); default: the block's defaults.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The DeletionGuard entry to read (default: the first with a `buffer` block).
    #[arg(long, value_name = "NAME", requires = "config")]
    pub guard: Option<String>,
    /// Output: a line (default), `json` or `yaml`.
    #[arg(short = 'o', long, value_enum, default_value_t = Printed::Table)]
    pub output: Printed,
}

/// What `-o json|yaml` prints.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Done<'a> {
    object: &'a str,
    namespace: &'a str,
    annotation: &'a str,
    ticket: &'a str,
    written: bool,
}

/// Writes the confirmation.
pub fn run(args: ConfirmArgs) -> ExitStatus {
    let settings = match buffer_settings(args.config.as_deref(), args.guard.as_deref()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitStatus::Usage;
        }
    };
    let target = match ObjectTarget::parse(&args.target) {
        Ok(t) => t,
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
    let done = runtime.block_on(async {
        let (client, namespace) = args.cluster.open().await.map_err(|e| e.to_string())?;
        let (resource, namespaced) = target.resolve(&client).await.map_err(|e| e.to_string())?;
        let object = format!("{}/{}", resource_name(&resource), target.name);
        let (api, namespace): (Api<DynamicObject>, _) = if namespaced {
            (
                Api::namespaced_with(client, &namespace, &resource),
                namespace,
            )
        } else {
            (Api::all_with(client, &resource), String::new())
        };
        let done = confirm(&api, &object, &target.name, &args.ticket, &settings)
            .await
            .map_err(|e| e.to_string())?;
        Ok::<_, String>((object, namespace, done))
    });
    let (object, namespace, done) = match done {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitStatus::Failure;
        }
    };
    let written = done == Confirmed::Written;
    let record = Done {
        object: &object,
        namespace: &namespace,
        annotation: settings.confirmation_annotation(),
        ticket: &args.ticket,
        written,
    };
    match args.output.document(&record) {
        Some(Ok(text)) => print!("{text}"),
        Some(Err(e)) => {
            eprintln!("error: {e}");
            return ExitStatus::Failure;
        }
        None if written => println!("{object} confirmed"),
        None => println!("{object} unchanged"),
    }
    ExitStatus::Success
}
