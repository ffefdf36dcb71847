//! `warrant check --conditions`: the review asks as a Kubernetes 1.38 API server with
//! conditional authorization asks (`authorizationOptions` with the five decision types), the
//! conditional answer is printed (each sub-decision, each condition's effect, id and
//! description), and with `--object` (`--old-object`) the enforcer's round trip is replayed:
//! an admission request is made from the review and the objects, and the conditions are
//! evaluated as warrant evaluates the API server's `AuthorizationConditionsReview` (warrant's
//! own CEL environment; a downstream Webhook's conditions are sent to that downstream).
//!
//! Differences from the API server, which the help and the README list: the admission request
//! is made from the flags (a fixed uid; `kind` from the object's `apiVersion` and `kind`; no
//! `requestKind`, `options` or `namespaceObject`); the object is used as written (the API
//! server converts it to the request's version and applies defaults first); nothing is cached
//! (the API server may reuse a conditional answer for the webhook's `authorizedTTL`, the
//! conditions themselves are evaluated on every write).

use crate::review::{Condition, ConditionsAwareDecision, DecisionType, Review};
use serde_json::{Value, json};

/// The uid of the admission request `warrant check` makes.
pub(crate) const CHECK_UID: &str = "warrant-check";

/// The admission operation of a verb, as the API server names it.
pub fn operation(verb: &str) -> &'static str {
    match verb {
        "delete" | "deletecollection" => "DELETE",
        "update" | "patch" => "UPDATE",
        "create" => "CREATE",
        _ => "CONNECT",
    }
}

/// The admission request the API server would send for `review` with `object` (for a delete,
/// the object deleted: the API server's `oldObject`) and `old_object` (an update's stored one).
pub(crate) fn admission_request(
    review: &Review,
    object: Option<&Value>,
    old_object: Option<&Value>,
    dry_run: bool,
) -> Value {
    let spec = review.spec();
    let attrs = spec.resource_attributes.clone().unwrap_or_default();
    let op = operation(review.verb());
    let (object, old_object) = match op {
        "DELETE" => (None, object.or(old_object)),
        _ => (object, old_object),
    };
    let typed = object.or(old_object);
    let (group, version) = typed
        .and_then(|o| o["apiVersion"].as_str())
        .map(|v| v.split_once('/').unwrap_or(("", v)))
        .unwrap_or(("", ""));
    let kind = typed.and_then(|o| o["kind"].as_str()).unwrap_or("");
    json!({
        "uid": CHECK_UID,
        "kind": {"group": group, "version": version, "kind": kind},
        "resource": {"group": attrs.group.unwrap_or_default(),
                     "version": attrs.version.unwrap_or_default(),
                     "resource": attrs.resource.unwrap_or_default()},
        "subResource": attrs.subresource.unwrap_or_default(),
        "name": attrs.name.unwrap_or_default(),
        "namespace": attrs.namespace.unwrap_or_default(),
        "operation": op,
        "userInfo": {"username": review.user(), "uid": spec.uid.clone().unwrap_or_default(),
                     "groups": review.groups(), "extra": spec.extra.clone().unwrap_or_default()},
        "object": object,
        "oldObject": old_object,
        "dryRun": dry_run,
    })
}

/// The conditional answer, one line per sub-decision and per condition.
pub(crate) fn render_decision(d: &ConditionsAwareDecision) -> String {
    let mut s = String::from("conditional: the API server evaluates these on the object\n");
    render_into(&mut s, "", d, 1);
    s
}

fn render_into(s: &mut String, name: &str, d: &ConditionsAwareDecision, depth: usize) {
    let pad = "  ".repeat(depth);
    let label = if name.is_empty() {
        format!("{:?}", d.decision_type)
    } else {
        format!("{name}: {:?}", d.decision_type)
    };
    match d.decision_type {
        DecisionType::Union => {
            s.push_str(&format!("{pad}{label}\n"));
            for m in &d.union {
                render_into(s, &m.authorizer_name, &m.decision, depth + 1);
            }
        }
        DecisionType::ConditionsMap => {
            s.push_str(&format!("{pad}{label}\n"));
            if let Some(map) = &d.conditions_map {
                let groups = [
                    ("Deny", &map.deny_conditions),
                    ("NoOpinion", &map.no_opinion_conditions),
                    ("Allow", &map.allow_conditions),
                ];
                for (effect, conditions) in groups {
                    for c in conditions {
                        s.push_str(&condition_line(&pad, effect, c));
                    }
                }
            }
        }
        _ => {
            let (reason, error) = d.parts();
            s.push_str(&format!("{pad}{label} \"{reason}\""));
            if !error.is_empty() {
                s.push_str(&format!(" error=\"{error}\""));
            }
            s.push('\n');
        }
    }
}

fn condition_line(pad: &str, effect: &str, c: &Condition) -> String {
    format!(
        "{pad}  {effect} id={} type={} \"{}\"\n{pad}    condition: {}\n",
        c.id, c.condition_type, c.description, c.condition
    )
}

/// The outcome of the round trip.
pub(crate) fn render_outcome(d: &ConditionsAwareDecision) -> String {
    let (reason, error) = d.parts();
    let verdict = match d.decision_type {
        DecisionType::Allow => "yes (Allow)",
        DecisionType::Deny => "no (Deny: the API server answers 403)",
        _ => "no opinion (NoOpinion: the request is refused unless a later authorizer allowed it)",
    };
    let mut s = format!("evaluated against the object: {verdict}\n");
    if !reason.is_empty() {
        for line in reason.lines() {
            s.push_str(&format!("reason: {line}\n"));
        }
    }
    if !error.is_empty() {
        s.push_str(&format!("evaluationError: {error}\n"));
    }
    s
}
