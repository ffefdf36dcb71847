//! warrant's own audit log (`warrant serve --audit-log`): one JSON record per review, holding
//! the whole review spec, the time it was judged at and warrant's answer
//! ([`crate::telemetry::audit::AuditRecord`]). Records of the validation ring
//! (`"stage": "admission"`) are skipped: replay judges SubjectAccessReviews.

use super::read_error::ReadError;
use super::record::{Item, Origin, Recorded, Skip, Source};
use crate::decision::Decision;
use crate::review::{ApiVersion, Review};
use chrono::{DateTime, Utc};
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, ResourceAttributes, SubjectAccessReviewSpec,
};
use serde::Deserialize;
use std::collections::BTreeMap;

/// The part of an audit record a replay reads.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Line {
    #[serde(default)]
    time: Option<String>,
    #[serde(default)]
    stage: Option<String>,
    #[serde(default)]
    user: Option<String>,
    #[serde(default)]
    uid: Option<String>,
    #[serde(default)]
    groups: Option<Vec<String>>,
    #[serde(default)]
    extra: Option<BTreeMap<String, Vec<String>>>,
    #[serde(default)]
    extra_redacted: Vec<String>,
    #[serde(default)]
    resource_attributes: Option<ResourceAttributes>,
    #[serde(default)]
    non_resource_attributes: Option<NonResourceAttributes>,
    decision: String,
    #[serde(default)]
    decided_by: Option<String>,
    #[serde(default)]
    authorizers: Vec<Step>,
}

/// The part of a step a replay reads: which rule decided inside the deciding authorizer.
#[derive(Debug, Deserialize)]
struct Step {
    #[serde(default)]
    authorizer: String,
    #[serde(default)]
    rule: Option<String>,
}

/// Whether a JSON object looks like one of warrant's audit records.
pub(crate) fn looks_like(v: &serde_json::Value) -> bool {
    v.get("authorizers").is_some() && v.get("decision").is_some()
}

/// One line of warrant's audit log.
pub fn read(bytes: &[u8], origin: Origin) -> Result<Item, ReadError> {
    let line: Line = serde_json::from_slice(bytes)?;
    if line.stage.as_deref().is_some_and(|s| s != "authorization") {
        return Ok(Item::Skipped(Skip::Admission));
    }
    let decision = match line.decision.as_str() {
        "Allow" => Decision::Allow,
        "Deny" => Decision::Deny,
        "NoOpinion" => Decision::NoOpinion,
        other => return Err(ReadError::UnknownDecision(other.to_owned())),
    };
    let at = line
        .time
        .as_deref()
        .map(|t| {
            DateTime::parse_from_rfc3339(t)
                .map(|t| t.with_timezone(&Utc))
                .map_err(|source| ReadError::Time {
                    field: "time",
                    value: t.to_owned(),
                    source,
                })
        })
        .transpose()?;
    let spec = SubjectAccessReviewSpec {
        user: line.user.filter(|u| !u.is_empty()),
        uid: line.uid,
        groups: line.groups.filter(|g| !g.is_empty()),
        extra: line.extra.filter(|e| !e.is_empty()),
        resource_attributes: line.resource_attributes,
        non_resource_attributes: line.non_resource_attributes,
    };
    let review = Review::new(ApiVersion::V1, spec)?;
    // `authorizer/rule`, as a replay names the decider.
    let decided_by = line.decided_by.map(|by| {
        let rule = line
            .authorizers
            .iter()
            .rev()
            .find(|s| s.authorizer == by)
            .and_then(|s| s.rule.as_deref());
        match rule {
            Some(rule) => format!("{by}/{rule}"),
            None => by,
        }
    });
    Ok(Item::Review(Box::new(Recorded {
        review,
        at,
        decision: Some(decision),
        decided_by,
        source: Source::Warrant,
        origin,
        redacted: line.extra_redacted,
    })))
}
