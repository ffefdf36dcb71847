//! `warrant ticket request TARGET...`: creates a `DeletionTicket` naming the user (as the API
//! server authenticates them) and the objects (by name, or the kinds with `-l SELECTOR`: the
//! objects whose labels match), and prints its name.

use super::output::{self, Format};
use super::selector_flag;
use super::session::{Session, TicketError, decode, encode};
use crate::config::duration::GoDuration;
use crate::tickets::{self, DeletionTicket, TargetSelector, TicketSpec, TicketTarget};
use clap::Args;
use kube::api::PostParams;

/// `warrant ticket request`.
#[derive(Debug, Args)]
pub struct RequestArgs {
    /// Objects to delete, as `resource[.group]/name` (`statefulsets.apps/db`, `namespaces/shop`);
    /// with `--selector`, kinds as `resource[.group]`.
    #[arg(required = true, value_name = "RESOURCE/NAME")]
    pub targets: Vec<String>,
    /// Cover the objects of the targets' kinds whose labels match, in kubectl's spelling
    /// (`app=db,tier in (data,cache)`), instead of objects by name. Only the validation ring
    /// sees labels: a selector ticket covers deletions the authorization ring leaves to it.
    #[arg(short = 'l', long, value_name = "SELECTOR")]
    pub selector: Option<String>,
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
    let selector = match &args.selector {
        Some(text) => Some(selector_flag::parse(text).map_err(TicketError::Usage)?),
        None => None,
    };
    let targets = args
        .targets
        .iter()
        .map(|t| target(t, &namespace, selector.as_ref()))
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

/// `resource[.group]/name` in `namespace`, or with `selector`, `resource[.group]`.
fn target(
    text: &str,
    namespace: &str,
    selector: Option<&TargetSelector>,
) -> Result<TicketTarget, TicketError> {
    let usage = |want: &str| {
        TicketError::Usage(format!(
            "target {text:?}: want {want}, e.g. statefulsets.apps/db, or statefulsets.apps with --selector"
        ))
    };
    let (kind, name) = match (text.split_once('/'), selector) {
        (Some(_), Some(_)) => return Err(usage("resource[.group] with --selector")),
        (Some((kind, name)), None) => (kind, name),
        (None, Some(_)) => (text, ""),
        (None, None) => return Err(usage("resource[.group]/name")),
    };
    let (resource, group) = kind.split_once('.').unwrap_or((kind, ""));
    if resource.is_empty() || (selector.is_none() && name.is_empty()) || name.contains('/') {
        return Err(usage("resource[.group]/name"));
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
        selector: selector.cloned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_read_as_kubectl_spells_them() {
        let t = target("statefulsets.apps/db", "shop", None).unwrap();
        assert_eq!(
            (
                t.group.as_str(),
                t.resource.as_str(),
                t.namespace.as_str(),
                t.name.as_str()
            ),
            ("apps", "statefulsets", "shop", "db")
        );
        let t = target("configmaps/x", "shop", None).unwrap();
        assert_eq!((t.group.as_str(), t.resource.as_str()), ("", "configmaps"));
        let t = target("namespaces/shop", "default", None).unwrap();
        assert_eq!(t.namespace, "");
        for bad in ["db", "/db", "deployments.apps/", "a/b/c"] {
            assert!(
                matches!(target(bad, "x", None), Err(TicketError::Usage(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn with_a_selector_targets_are_kinds_and_carry_it() {
        let s = selector_flag::parse("app=db").unwrap();
        let t = target("statefulsets.apps", "shop", Some(&s)).unwrap();
        assert_eq!(
            (t.resource.as_str(), t.name.as_str(), t.selector.as_ref()),
            ("statefulsets", "", Some(&s))
        );
        assert!(matches!(
            target("statefulsets.apps/db", "shop", Some(&s)),
            Err(TicketError::Usage(_))
        ));
    }
}
