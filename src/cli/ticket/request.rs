//! `warrant ticket request TARGET...`: creates a `DeletionTicket` naming the user (as the API
//! server authenticates them) and the objects, and prints its name.

use super::output::{self, Format};
use super::session::{Session, TicketError, decode, encode};
use crate::config::duration::GoDuration;
use crate::tickets::{self, DeletionTicket, TicketSpec, TicketTarget};
use clap::Args;
use kube::api::PostParams;

/// `warrant ticket request`.
#[derive(Debug, Args)]
pub struct RequestArgs {
    /// Objects to delete, as `resource[.group]/name` (`statefulsets.apps/db`, `namespaces/shop`).
    #[arg(required = true, value_name = "RESOURCE/NAME")]
    pub targets: Vec<String>,
    /// The targets' namespace (default: the ticket's; `""` for cluster-scoped objects).
    #[arg(long, value_name = "NAMESPACE")]
    pub target_namespace: Option<String>,
    /// Why, in words.
    #[arg(long, default_value = "")]
    pub reason: String,
    /// How long the ticket stays valid (a Go duration).
    #[arg(long, default_value = "24h", value_name = "DURATION")]
    pub expires_in: String,
    /// The ticket authorizes one deletion, then is Used.
    #[arg(long)]
    pub single_use: bool,
    /// The ticket's name (default: generated, `deletion-` and a suffix).
    #[arg(long)]
    pub name: Option<String>,
}

/// Creates the ticket; the printed name (or object).
pub async fn run(
    session: &Session,
    args: &RequestArgs,
    format: Format,
) -> Result<String, TicketError> {
    let expires_in = GoDuration::parse(&args.expires_in)
        .ok()
        .filter(|d| d.is_positive())
        .and_then(GoDuration::to_std)
        .ok_or_else(|| {
            TicketError::Usage(format!(
                "--expires-in {:?}: a positive Go duration (90m, 24h)",
                args.expires_in
            ))
        })?;
    let namespace = args
        .target_namespace
        .clone()
        .unwrap_or_else(|| session.namespace.clone());
    let targets = args
        .targets
        .iter()
        .map(|t| target(t, &namespace))
        .collect::<Result<Vec<_>, _>>()?;
    let expires_at = chrono::Utc::now()
        + chrono::Duration::from_std(expires_in)
            .map_err(|_| TicketError::Usage("--expires-in is too long".into()))?;
    let spec = TicketSpec {
        requested_by: session.whoami().await?,
        targets,
        reason: args.reason.clone(),
        expires_at,
        single_use: args.single_use,
    };
    let mut ticket = DeletionTicket::new(
        args.name.as_deref().unwrap_or(""),
        &tickets::api_resource(),
        spec,
    );
    if args.name.is_none() {
        ticket.metadata.name = None;
        ticket.metadata.generate_name = Some("deletion-".into());
    }
    let created = session
        .api(Some(&session.namespace))
        .create(&PostParams::default(), &encode(&ticket)?)
        .await?;
    let created = decode(&created)?;
    output::one(&created, format, "created")
}

/// `resource[.group]/name` in `namespace`.
fn target(text: &str, namespace: &str) -> Result<TicketTarget, TicketError> {
    let usage = || {
        TicketError::Usage(format!(
            "target {text:?}: want resource[.group]/name, e.g. statefulsets.apps/db"
        ))
    };
    let (kind, name) = text.split_once('/').ok_or_else(usage)?;
    let (resource, group) = kind.split_once('.').unwrap_or((kind, ""));
    if resource.is_empty() || name.is_empty() || name.contains('/') {
        return Err(usage());
    }
    let cluster_scoped = group.is_empty() && resource == "namespaces";
    Ok(TicketTarget {
        group: group.to_owned(),
        resource: resource.to_owned(),
        namespace: if cluster_scoped {
            String::new()
        } else {
            namespace.to_owned()
        },
        name: name.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_read_as_kubectl_spells_them() {
        let t = target("statefulsets.apps/db", "shop").unwrap();
        assert_eq!(
            (
                t.group.as_str(),
                t.resource.as_str(),
                t.namespace.as_str(),
                t.name.as_str()
            ),
            ("apps", "statefulsets", "shop", "db")
        );
        let t = target("configmaps/x", "shop").unwrap();
        assert_eq!((t.group.as_str(), t.resource.as_str()), ("", "configmaps"));
        let t = target("namespaces/shop", "default").unwrap();
        assert_eq!(t.namespace, "");
        for bad in ["db", "/db", "deployments.apps/", "a/b/c"] {
            assert!(
                matches!(target(bad, "x"), Err(TicketError::Usage(_))),
                "{bad}"
            );
        }
    }
}
