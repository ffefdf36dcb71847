//! Why a deletion is refused (`warrant why`, `kubectl warrant why`): the object read from the
//! cluster with the person's own credentials, its labels, what depends on it (the cluster
//! cache the validation ring reads, listed once), the `DeletionTicket`s there are, and the
//! chain judging a DELETE of it by the person, as both rings would: the authorization ring
//! (names only, `Chain::authorize`) and the validation ring (the object and its dependents,
//! `Chain::admit`), with the risk report the guard computes. Nothing here scores on its own:
//! the answer and the report are the chain's, so they are what the rings answer for the same
//! configuration, cluster and tickets, now.

use crate::authorizer::deletion_guard::tickets::TicketFeed;
use crate::authorizer::{Answer, BuildContext, BuildError, Chain, Deadline, Input, StepOutcome};
use crate::cluster::target::{ObjectTarget, TargetError, resource_name};
use crate::cluster::{Cache, CacheOptions};
use crate::config::{AuthorizerSpec, Config};
use crate::decision::Decision;
use crate::object::{ClusterView, ObjectContext, Operation, Subject};
use crate::review::{ApiVersion, Review, ReviewError};
use crate::tickets::{self, DeletionTicket, status_of};
use chrono::{DateTime, SecondsFormat, Utc};
use k8s_openapi::api::authorization::v1::{ResourceAttributes, SubjectAccessReviewSpec};
use kube::api::{Api, DynamicObject, ListParams};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use thiserror::Error;

/// Why an explanation could not be made.
#[derive(Debug, Error)]
pub enum WhyError {
    /// The object named is not usable.
    #[error("{0}")]
    Target(#[from] TargetError),
    /// The object does not exist.
    #[error("{object} not found in namespace {namespace:?}")]
    NotFound {
        /// `resource/name`.
        object: String,
        /// Its namespace.
        namespace: String,
    },
    /// The API server refused or could not be reached.
    #[error("{}", crate::cluster::api_error::describe(.0))]
    Api(#[from] kube::Error),
    /// The cluster cache did not list within the time given.
    #[error(
        "the cluster was not listed within {timeout:?} (the validation ring's view needs list and watch everywhere of pods, ReplicaSets, Deployments, StatefulSets, DaemonSets, Jobs, CronJobs, Services, Ingresses, PersistentVolumeClaims and Namespaces): {why}"
    )]
    NotListed {
        /// The time given.
        timeout: Duration,
        /// What the cache says.
        why: String,
    },
    /// The chain could not be built.
    #[error("{0}")]
    Build(#[from] BuildError),
    /// The review could not be made.
    #[error("{0}")]
    Review(#[from] ReviewError),
}

/// What to explain.
#[derive(Debug, Clone)]
pub struct Question {
    /// The object.
    pub target: ObjectTarget,
    /// Its namespace (ignored for a cluster-scoped kind).
    pub namespace: String,
    /// Who deletes it.
    pub user: String,
    /// Their groups.
    pub groups: Vec<String>,
    /// A ticket presented (as every guard's user extra key), if any.
    pub ticket: Option<String>,
    /// How long the cluster cache may take to list.
    pub timeout: Duration,
}

/// One ring's answer to the DELETE.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RingAnswer {
    /// `refused`, or `admitted` (validation ring); `Deny`, `Allow` or `NoOpinion`
    /// (authorization ring: NoOpinion leaves the request to RBAC).
    pub decision: String,
    /// The reason, as the person would read it in the 403.
    pub reason: String,
    /// The deciding code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// The guard's assessment (risk level, score and reasons; at admission what the object
    /// takes down with it), as its audit record shows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub assessment: Option<Value>,
}

/// A ticket that names the object.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TicketLine {
    /// `<namespace>/<name>`.
    pub id: String,
    /// Its phase.
    pub phase: String,
    /// Who asked for it.
    pub requested_by: String,
    /// Who approved it.
    pub approvers: Vec<String>,
    /// When it expires (RFC 3339).
    pub expires_at: String,
    /// Whether it authorizes one deletion only.
    pub single_use: bool,
}

/// The explanation.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Explanation {
    /// `resource[.group]/name`.
    pub object: String,
    /// Its namespace (`""` when cluster-scoped).
    pub namespace: String,
    /// Who deletes it.
    pub user: String,
    /// Its labels.
    pub labels: BTreeMap<String, String>,
    /// Its finalizers.
    pub finalizers: Vec<String>,
    /// Whether it is being deleted already.
    pub terminating: bool,
    /// The authorization ring's answer (names only).
    pub authorization: RingAnswer,
    /// The validation ring's answer (the object and what depends on it).
    pub validation: RingAnswer,
    /// The tickets naming the object (of those the person may list).
    pub tickets: Vec<TicketLine>,
    /// Whether the tickets could be listed in every namespace (else only the object's).
    pub tickets_everywhere: bool,
}

impl Explanation {
    /// Whether the validation ring refuses the deletion.
    pub fn refused(&self) -> bool {
        self.validation.decision == "refused" || self.authorization.decision == "Deny"
    }
}

/// Reads the object, its dependents and the tickets through `client`, and asks `config`'s
/// chain about a DELETE of it by the person at `now`.
pub async fn explain(
    client: &kube::Client,
    config: &Config,
    q: &Question,
    now: DateTime<Utc>,
) -> Result<Explanation, WhyError> {
    let (resource, namespaced) = q.target.resolve(client).await?;
    let namespace = if namespaced {
        q.namespace.clone()
    } else {
        String::new()
    };
    let object = resource_name(&resource) + "/" + &q.target.name;
    let api: Api<DynamicObject> = if namespaced {
        Api::namespaced_with(client.clone(), &namespace, &resource)
    } else {
        Api::all_with(client.clone(), &resource)
    };
    let found = api
        .get_opt(&q.target.name)
        .await?
        .ok_or_else(|| WhyError::NotFound {
            object: object.clone(),
            namespace: namespace.clone(),
        })?;
    let (listed, everywhere) = list_tickets(client, &namespace).await?;
    let feed = Arc::new(TicketFeed::new());
    feed.publish(listed.iter());
    let build = BuildContext {
        ticket_feed: Some(feed),
        ..BuildContext::default()
    };
    let chain = Chain::build_in(config, &build)?;
    let cache = Arc::new(Cache::new(CacheOptions::default()));
    let _watches = crate::cluster::start(&cache, client.clone());
    let deadline = tokio::time::Instant::now() + q.timeout;
    while let Err(e) = cache.ready() {
        if tokio::time::Instant::now() >= deadline {
            return Err(WhyError::NotListed {
                timeout: q.timeout,
                why: e.to_string(),
            });
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let review = review(config, q, &resource.group, &resource.plural, &namespace)?;
    let json = serde_json::to_value(&found).unwrap_or_default();
    let context = ObjectContext {
        operation: Operation::Delete,
        object: None,
        old_object: Some(Subject::new(json)),
        dry_run: false,
        view: cache,
    };
    let budget = || Deadline::after(Duration::from_secs(30));
    let authorized = chain
        .authorize(&Input::new(review.clone(), now), budget())
        .await;
    let admitted = chain
        .admit(
            &Input::new(review, now).with_object(Arc::new(context)),
            budget(),
        )
        .await;
    let target = (
        resource.group.as_str(),
        resource.plural.as_str(),
        namespace.as_str(),
        q.target.name.as_str(),
    );
    let labels = found.metadata.labels.clone().unwrap_or_default();
    Ok(Explanation {
        object,
        namespace: namespace.clone(),
        user: q.user.clone(),
        tickets: listed
            .iter()
            .filter(|t| names(t, target, &labels))
            .map(ticket_line)
            .collect(),
        labels,
        finalizers: found.metadata.finalizers.clone().unwrap_or_default(),
        terminating: found.metadata.deletion_timestamp.is_some(),
        authorization: ring_answer(&authorized, false),
        validation: ring_answer(&admitted, true),
        tickets_everywhere: everywhere,
    })
}

/// The DELETE as the API server would ask about it: the person, their groups, the ticket as
/// every guard's user extra key.
fn review(
    config: &Config,
    q: &Question,
    group: &str,
    resource: &str,
    namespace: &str,
) -> Result<Review, ReviewError> {
    let extra = q.ticket.as_ref().map(|t| {
        config
            .authorizers
            .iter()
            .filter_map(|a| match &a.spec {
                AuthorizerSpec::DeletionGuard(g) => {
                    Some((g.tickets.extra_key.clone(), vec![t.clone()]))
                }
                _ => None,
            })
            .collect::<BTreeMap<_, _>>()
    });
    let spec = SubjectAccessReviewSpec {
        user: Some(q.user.clone()),
        groups: (!q.groups.is_empty()).then(|| q.groups.clone()),
        extra,
        resource_attributes: Some(ResourceAttributes {
            namespace: (!namespace.is_empty()).then(|| namespace.to_owned()),
            verb: Some("delete".into()),
            group: Some(group.to_owned()),
            resource: Some(resource.to_owned()),
            name: Some(q.target.name.clone()),
            ..Default::default()
        }),
        ..Default::default()
    };
    Review::new(ApiVersion::V1, spec)
}

/// The DeletionTickets the person may list: every namespace's, else (forbidden) those of
/// `namespace`; none when the API server does not serve them. Objects that are not tickets
/// this version can read are skipped, as the rings skip them.
async fn list_tickets(
    client: &kube::Client,
    namespace: &str,
) -> Result<(Vec<DeletionTicket>, bool), WhyError> {
    let resource = tickets::api_resource();
    let all: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
    let (list, everywhere) = match all.list(&ListParams::default()).await {
        Ok(l) => (l, true),
        Err(kube::Error::Api(s)) if s.code == 403 && !namespace.is_empty() => {
            let ns: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, &resource);
            (ns.list(&ListParams::default()).await?, false)
        }
        Err(kube::Error::Api(s)) if s.code == 404 => return Ok((Vec::new(), true)),
        Err(e) => return Err(e.into()),
    };
    let decoded = list
        .items
        .iter()
        .filter_map(|o| {
            serde_json::to_value(o)
                .and_then(serde_json::from_value::<DeletionTicket>)
                .ok()
        })
        .collect();
    Ok((decoded, everywhere))
}

/// Whether the ticket names `(group, resource, namespace, name)` among its targets, by name or
/// by a selector its `labels` match.
fn names(
    t: &DeletionTicket,
    (group, resource, namespace, name): (&str, &str, &str, &str),
    labels: &std::collections::BTreeMap<String, String>,
) -> bool {
    t.spec.targets.iter().any(|x| {
        x.group == group
            && x.resource == resource
            && x.namespace == namespace
            && match &x.selector {
                Some(s) => s.matches(|k| labels.get(k).map(String::as_str)),
                None => x.name == name,
            }
    })
}

fn ticket_line(t: &DeletionTicket) -> TicketLine {
    let status = status_of(t);
    let mut approvers: Vec<String> = Vec::new();
    for a in &status.approvals {
        if !approvers.contains(&a.user) {
            approvers.push(a.user.clone());
        }
    }
    TicketLine {
        id: format!(
            "{}/{}",
            t.metadata.namespace.as_deref().unwrap_or(""),
            t.metadata.name.as_deref().unwrap_or("")
        ),
        phase: status.phase().as_str().to_owned(),
        requested_by: t.spec.requested_by.clone(),
        approvers,
        expires_at: t.spec.expires_at.to_rfc3339_opts(SecondsFormat::Secs, true),
        single_use: t.spec.single_use,
    }
}

/// A ring's answer, with the first assessment a step of the trace carries.
fn ring_answer(answer: &Answer, admission: bool) -> RingAnswer {
    let decision = match (answer.decision, admission) {
        (Decision::Deny, true) => "refused",
        (_, true) => "admitted",
        (Decision::Allow, false) => "Allow",
        (Decision::Deny, false) => "Deny",
        (Decision::NoOpinion, false) => "NoOpinion",
    };
    let assessment = answer.trace.iter().find_map(|step| match &step.outcome {
        StepOutcome::Verdict(v) => v.detail.as_ref().map(|d| d.audit_value()),
        _ => None,
    });
    RingAnswer {
        decision: decision.to_owned(),
        reason: answer.reason.clone(),
        code: answer.code.as_ref().map(|c| c.as_str().to_owned()),
        assessment,
    }
}

#[cfg(test)]
mod tests {
    use super::{names, ticket_line};
    use crate::tickets::DeletionTicket;

    #[test]
    fn a_ticket_names_an_object_by_group_resource_namespace_and_name() {
        let t: DeletionTicket = serde_json::from_value(serde_json::json!({
            "apiVersion": "warrant.dev/v1alpha1", "kind": "DeletionTicket",
            "metadata": {"name": "retire", "namespace": "shop"},
            "spec": {"requestedBy": "alice", "expiresAt": "2026-12-05T09:00:00Z", "singleUse": true,
                     "targets": [{"group": "apps", "resource": "statefulsets", "namespace": "shop", "name": "orders-db"}]},
            "status": {"phase": "Approved", "approvals": [
                {"user": "bob", "time": "2026-12-04T10:00:00Z"},
                {"user": "bob", "time": "2026-12-04T10:01:00Z"},
                {"user": "carol", "time": "2026-12-04T10:02:00Z"}]},
        }))
        .unwrap();
        let none = Default::default();
        assert!(names(
            &t,
            ("apps", "statefulsets", "shop", "orders-db"),
            &none
        ));
        assert!(!names(
            &t,
            ("apps", "deployments", "shop", "orders-db"),
            &none
        ));
        assert!(!names(
            &t,
            ("apps", "statefulsets", "other", "orders-db"),
            &none
        ));
        let mut by_label = t.clone();
        by_label.spec.targets[0].name.clear();
        by_label.spec.targets[0].selector = Some(
            serde_json::from_value(serde_json::json!({"matchLabels": {"app": "orders"}})).unwrap(),
        );
        let orders = [("app".to_owned(), "orders".to_owned())].into();
        let at = ("apps", "statefulsets", "shop", "any-name");
        assert!(names(&by_label, at, &orders) && !names(&by_label, at, &none));
        let line = ticket_line(&t);
        assert_eq!(line.id, "shop/retire");
        assert_eq!(line.approvers, ["bob", "carol"]);
        assert_eq!((line.phase.as_str(), line.single_use), ("Approved", true));
    }
}
