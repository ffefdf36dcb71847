//! One structured audit record (a JSON line) per review: who asked for what (the whole review
//! spec: user, uid, groups, extra, attributes with their selectors, and the time it was judged
//! at, so that `warrant replay` can judge it again exactly), each authorizer consulted with its
//! outcome and latency (a shadow's `mode` and `wouldHave`, shadow rules under `shadowRules`),
//! and the final answer. Records are written by a
//! dedicated thread so that a slow disk never stalls a review, in batches (`queue`: no wake-up
//! per record); if the writer falls behind by more than [`QUEUE_CAPACITY`] records (or 64 MiB),
//! new ones are dropped and counted (`warrant_audit_records_dropped_total`).

use super::metrics::Metrics;
use crate::authorizer::{Answer, Input, Step, StepOutcome};
use crate::config::Mode;
use crate::decision::{Shadow, VerdictDetail};
use crate::review::{ConditionsAwareDecision, DecisionType};
use chrono::{DateTime, SecondsFormat, Utc};
use k8s_openapi::api::authorization::v1::{NonResourceAttributes, ResourceAttributes};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

mod decision_id;
pub mod kafka;
mod queue;
mod record_id;
pub mod remote;
pub mod webhook;
mod writer;

pub use decision_id::{DecisionId, JoinKey, WINDOW_SECONDS};
use queue::Queue;
pub use record_id::new_record_id;

/// How many records may wait for the writer.
pub(crate) const QUEUE_CAPACITY: usize = 65_536;

/// One authorizer consulted, as audit records and `warrant check -o json` show it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StepRecord<'a> {
    /// The authorizer's name.
    pub authorizer: &'a str,
    /// Its type.
    #[serde(rename = "type")]
    pub(crate) authorizer_type: &'static str,
    /// The decision it contributed (after failure policy).
    pub decision: &'static str,
    /// The rule that decided inside it, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<&'a str>,
    /// Its message, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<&'a str>,
    /// Its code, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<&'a str>,
    /// Its error, if it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The failure policy applied, if it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_policy: Option<&'static str>,
    /// How long it took, in seconds.
    pub(crate) latency_seconds: f64,
    /// `Observe` for an authorizer in shadow mode (absent when it enforces).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<&'static str>,
    /// In shadow mode: what it would have contributed had it been enforced (`decision` is then
    /// always NoOpinion).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) would_have: Option<&'static str>,
    /// The rules in shadow mode that matched (or failed) inside it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) shadow_rules: Vec<ShadowRecord<'a>>,
    /// What the authorizer's type adds (the deletion guard's assessment under `guard`: code,
    /// `OBSERVED_<CODE>` in Observe mode, mode, risk score and level, protection, reasons).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub detail: Option<DetailRecord<'a>>,
}

/// A rule in shadow mode that matched (or failed), as audit records show it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ShadowRecord<'a> {
    /// The rule.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<&'a str>,
    /// What it would have answered (`Allow`, `Deny`), or `Error`.
    pub(crate) would_have: &'static str,
    /// Its message.
    pub message: &'a str,
    /// Its code, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<&'a str>,
    /// Its evaluation error, if it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<&'a str>,
}

impl<'a> ShadowRecord<'a> {
    /// The record of one shadow rule.
    pub fn new(shadow: &'a Shadow) -> Self {
        Self {
            rule: shadow.reason.rule.as_ref().map(|r| r.as_str()),
            would_have: shadow.would_label(),
            message: &shadow.reason.message,
            code: shadow.reason.code.as_ref().map(|c| c.as_str()),
            error: shadow.error.as_deref(),
        }
    }
}

/// A verdict's type-owned detail, written under the key its type names.
#[derive(Debug)]
pub struct DetailRecord<'a>(pub &'a dyn VerdictDetail);

impl Serialize for DetailRecord<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry(self.0.audit_key(), &self.0.audit_value())?;
        map.end()
    }
}

impl<'a> StepRecord<'a> {
    /// The record of one step.
    pub fn new(step: &'a Step) -> Self {
        let (rule, message, code, error, failure_policy) = match &step.outcome {
            StepOutcome::Verdict(v) => match &v.reason {
                Some(r) => (
                    r.rule.as_ref().map(|n| n.as_str()),
                    Some(r.message.as_str()),
                    r.code.as_ref().map(|c| c.as_str()),
                    None,
                    None,
                ),
                None => (None, None, None, None, None),
            },
            StepOutcome::Excluded => (None, Some("excluded by matchConditions"), None, None, None),
            StepOutcome::Failed { error, policy } => (
                None,
                None,
                None,
                Some(error.to_string()),
                Some(policy.as_str()),
            ),
        };
        Self {
            authorizer: step.authorizer.as_str(),
            authorizer_type: step.authorizer_type.as_str(),
            decision: step.decision().as_str(),
            rule,
            message,
            code,
            error,
            failure_policy,
            latency_seconds: step.elapsed.as_secs_f64(),
            mode: step.mode.is_observe().then_some(Mode::Observe.as_str()),
            would_have: step.is_shadow().then(|| step.would_have().as_str()),
            shadow_rules: match &step.outcome {
                StepOutcome::Verdict(v) => v.shadows.iter().map(ShadowRecord::new).collect(),
                _ => Vec::new(),
            },
            detail: match &step.outcome {
                StepOutcome::Verdict(v) => v.detail.as_deref().map(DetailRecord),
                _ => None,
            },
        }
    }
}

/// One condition of a conditional decision, as audit records show it: the authorizer that
/// authored it (a path through nested unions, `opa/owners`), its effect and its id.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConditionRecord<'a> {
    /// The authorizer path.
    pub authorizer: String,
    /// `Deny`, `NoOpinion` or `Allow`.
    pub effect: &'static str,
    /// The condition's id.
    pub id: &'a str,
}

/// The conditions of `d`, depth first, in the order kube-apiserver would visit them.
pub(crate) fn condition_records(d: &ConditionsAwareDecision) -> Vec<ConditionRecord<'_>> {
    fn walk<'a>(path: &str, d: &'a ConditionsAwareDecision, out: &mut Vec<ConditionRecord<'a>>) {
        if let Some(map) = &d.conditions_map {
            let groups = [
                ("Deny", &map.deny_conditions),
                ("NoOpinion", &map.no_opinion_conditions),
                ("Allow", &map.allow_conditions),
            ];
            for (effect, conditions) in groups {
                for c in conditions {
                    out.push(ConditionRecord {
                        authorizer: path.to_owned(),
                        effect,
                        id: &c.id,
                    });
                }
            }
        }
        for m in &d.union {
            let deeper = if path.is_empty() {
                m.authorizer_name.clone()
            } else {
                format!("{path}/{}", m.authorizer_name)
            };
            walk(&deeper, &m.decision, out);
        }
    }
    let mut out = Vec::new();
    walk("", d, &mut out);
    out
}

/// What an admission request adds to its record.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionAudit<'a> {
    /// `request.uid`, as kube-apiserver's own audit log can be joined on.
    pub uid: &'a str,
    /// `request.operation` (`DELETE`, `UPDATE`, ...).
    pub operation: &'static str,
    /// `request.dryRun`.
    pub dry_run: bool,
}

/// One review's audit record: a SubjectAccessReview (`"stage": "authorization"`) or an admission
/// request judged as one (`"stage": "admission"`, with [`AdmissionAudit`]).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditRecord<'a> {
    /// This record's own id (a random UUID), for de-duplication downstream.
    pub id: String,
    /// The id every ring's records about the same request share ([`DecisionId`]).
    pub decision_id: DecisionId,
    /// When the review was judged (RFC 3339, UTC).
    pub time: String,
    /// The ring that answered: `authorization` or `admission`.
    pub stage: &'static str,
    /// The review's apiVersion (`admission.k8s.io/v1` at admission).
    pub api_version: &'static str,
    /// At admission: the request's uid, operation and dry run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub admission: Option<AdmissionAudit<'a>>,
    /// The user.
    pub user: &'a str,
    /// The user's UID, when sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uid: Option<&'a str>,
    /// The groups, in order.
    pub groups: &'a [String],
    /// The extra attributes, when sent (less those `--audit-redact-extra` names, which are
    /// then listed under `extraRedacted`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra: Option<&'a BTreeMap<String, Vec<String>>>,
    /// The resource attributes of a resource request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_attributes: Option<&'a ResourceAttributes>,
    /// The attributes of a non-resource request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) non_resource_attributes: Option<&'a NonResourceAttributes>,
    /// Every authorizer consulted, in order.
    pub authorizers: Vec<StepRecord<'a>>,
    /// The final decision (`Conditional` when the answer is a conditional decision; for an
    /// AuthorizationConditionsReview, the evaluated outcome).
    pub decision: &'static str,
    /// The conditions of a conditional answer, or of the decision an
    /// AuthorizationConditionsReview asked to evaluate.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<ConditionRecord<'a>>,
    /// The authorizer that decided.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<&'a str>,
    /// The deciding code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<&'a str>,
    /// `status.allowed` as answered (at admission: `response.allowed`).
    pub allowed: bool,
    /// `status.denied` as answered (at admission: refused).
    pub denied: bool,
    /// `status.reason` as answered (at admission: the refusal's message, or the reasons).
    pub reason: &'a str,
    /// `status.evaluationError` as answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evaluation_error: Option<String>,
    /// Whole-chain latency in seconds.
    pub(crate) latency_seconds: f64,
    /// The revision of the configuration that answered: `sha256:<hex>` of the chain file's
    /// bytes, as `warrant_config_info` reports it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) config_hash: Option<&'a str>,
}

impl<'a> AuditRecord<'a> {
    /// The record of one answered review.
    pub fn new(
        input: &'a Input,
        answer: &'a Answer,
        elapsed: Duration,
        config_hash: Option<&'a str>,
    ) -> Self {
        let spec = input.review.spec();
        Self {
            id: new_record_id(),
            decision_id: DecisionId::of_review(spec, input.now),
            time: rfc3339(input.now),
            stage: "authorization",
            api_version: input.review.version().as_str(),
            admission: None,
            user: input.review.user(),
            uid: spec.uid.as_deref(),
            groups: input.review.groups(),
            extra: spec.extra.as_ref(),
            resource_attributes: spec.resource_attributes.as_ref(),
            non_resource_attributes: spec.non_resource_attributes.as_ref(),
            authorizers: answer.trace.iter().map(StepRecord::new).collect(),
            decision: match &answer.conditional {
                Some(_) => CONDITIONAL,
                None => answer.decision.as_str(),
            },
            conditions: answer
                .conditional
                .as_ref()
                .map(condition_records)
                .unwrap_or_default(),
            decided_by: answer.decided_by.as_ref().map(|n| n.as_str()),
            code: answer.code.as_ref().map(|c| c.as_str()),
            // A conditional answer leaves allowed, denied and reason zero on the wire.
            allowed: answer.conditional.is_none()
                && answer.decision == crate::decision::Decision::Allow,
            denied: answer.conditional.is_none()
                && answer.decision == crate::decision::Decision::Deny,
            reason: if answer.conditional.is_some() {
                ""
            } else {
                &answer.reason
            },
            evaluation_error: answer.evaluation_error(),
            latency_seconds: elapsed.as_secs_f64(),
            config_hash,
        }
    }

    /// The record of one answered admission request: admitted unless the validation ring
    /// refused it.
    pub fn admission(
        input: &'a Input,
        answer: &'a Answer,
        elapsed: Duration,
        config_hash: Option<&'a str>,
        admission: AdmissionAudit<'a>,
    ) -> Self {
        let denied = answer.decision == crate::decision::Decision::Deny;
        let record = Self::new(input, answer, elapsed, config_hash);
        // An admitted request has no deciding authorizer; its code is the one the validation
        // ring gave for admitting it (the first step that gave one), as in its annotations.
        let code = record
            .code
            .or_else(|| record.authorizers.iter().find_map(|s| s.code));
        Self {
            stage: "admission",
            api_version: crate::admission::API_VERSION,
            admission: Some(admission),
            allowed: !denied,
            denied,
            code,
            ..record
        }
    }
}

impl<'a> AuditRecord<'a> {
    /// The record of one answered AuthorizationConditionsReview (`"stage": "conditions"`):
    /// `input` is its admission request mapped onto a review, `decision` the decision it asked
    /// to evaluate (its conditions are listed) and `outcome` what warrant answered.
    pub(crate) fn conditions_review(
        input: &'a Input,
        decision: &'a ConditionsAwareDecision,
        outcome: &'a ConditionsAwareDecision,
        elapsed: Duration,
        config_hash: Option<&'a str>,
    ) -> Self {
        let spec = input.review.spec();
        let (reason, error) = outcome.parts();
        Self {
            id: new_record_id(),
            decision_id: DecisionId::of_review(spec, input.now),
            time: rfc3339(input.now),
            stage: "conditions",
            api_version: crate::review::CONDITIONS_REVIEW_API_VERSION,
            admission: None,
            user: input.review.user(),
            uid: spec.uid.as_deref(),
            groups: input.review.groups(),
            extra: spec.extra.as_ref(),
            resource_attributes: spec.resource_attributes.as_ref(),
            non_resource_attributes: spec.non_resource_attributes.as_ref(),
            authorizers: Vec::new(),
            decision: match outcome.decision_type {
                DecisionType::Allow => "Allow",
                DecisionType::Deny => "Deny",
                _ => "NoOpinion",
            },
            conditions: condition_records(decision),
            decided_by: None,
            code: None,
            allowed: outcome.decision_type == DecisionType::Allow,
            denied: outcome.decision_type == DecisionType::Deny,
            reason,
            evaluation_error: (!error.is_empty()).then(|| error.to_owned()),
            latency_seconds: elapsed.as_secs_f64(),
            config_hash,
        }
    }
}

/// The room an encoded record starts with (a review's record is 0.6-1.5 KB).
const LINE_CAPACITY: usize = 2048;

/// The `decision` of a record whose answer was a conditional decision.
pub(crate) const CONDITIONAL: &str = "Conditional";

/// Removes `keys` from the record's `extra` (dropping `extra` when nothing is left) and lists
/// the removed ones, sorted, under `extraRedacted`.
fn redact(record: &mut serde_json::Map<String, serde_json::Value>, keys: &[String]) {
    let Some(serde_json::Value::Object(extra)) = record.get_mut("extra") else {
        return;
    };
    let mut removed: Vec<&String> = keys.iter().filter(|k| extra.remove(*k).is_some()).collect();
    removed.sort();
    removed.dedup();
    if extra.is_empty() {
        record.remove("extra");
    }
    record.insert("extraRedacted".into(), serde_json::json!(removed));
}

fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Micros, true)
}

/// Where audit records go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuditTarget {
    /// Nowhere.
    Disabled,
    /// Standard output.
    Stdout,
    /// A file, appended to.
    File(PathBuf),
}

/// The audit writer: a queue and the thread that drains it ([`writer`]). A review never waits
/// for it: a record that does not fit in the queue is dropped and counted, and so is every record
/// the writer cannot write.
#[derive(Debug)]
pub struct AuditSink {
    tx: Option<Arc<Queue>>,
    thread: Option<JoinHandle<()>>,
    metrics: Arc<Metrics>,
    redact_extra: Vec<String>,
    remotes: Vec<Arc<remote::RemoteSink>>,
}

impl AuditSink {
    /// Opens the target and starts the writer thread.
    pub fn open(target: &AuditTarget, metrics: Arc<Metrics>) -> std::io::Result<Self> {
        let output = match target {
            AuditTarget::Disabled => {
                return Ok(Self {
                    tx: None,
                    thread: None,
                    metrics,
                    redact_extra: Vec::new(),
                    remotes: Vec::new(),
                });
            }
            AuditTarget::Stdout => writer::Output::Stdout,
            AuditTarget::File(p) => writer::Output::file(p)?,
        };
        let tx = Arc::new(Queue::new(QUEUE_CAPACITY));
        let (queue, thread_metrics) = (tx.clone(), metrics.clone());
        let thread = std::thread::Builder::new()
            .name("warrant-audit".into())
            .spawn(move || writer::drain(queue, output, thread_metrics))?;
        Ok(Self {
            tx: Some(tx),
            thread: Some(thread),
            metrics,
            redact_extra: Vec::new(),
            remotes: Vec::new(),
        })
    }

    /// The same sink also sending every record to `remote` (Kafka, an HTTPS endpoint).
    pub fn with_remote(mut self, remote: Arc<remote::RemoteSink>) -> Self {
        self.remotes.push(remote);
        self
    }

    /// What `/readyz?verbose` says of each remote sink.
    pub fn remote_statuses(&self) -> Vec<remote::SinkStatus> {
        self.remotes.iter().map(|r| r.status()).collect()
    }

    /// Stops the remote sinks, giving them up to `within` together to deliver (or spool)
    /// what waits.
    pub async fn close_remotes(&self, within: Duration) {
        let deadline = std::time::Instant::now() + within;
        for r in &self.remotes {
            r.close(deadline.saturating_duration_since(std::time::Instant::now()))
                .await;
        }
    }

    /// The same sink leaving the user's `extra` values under `keys` out of every record
    /// (`--audit-redact-extra`): a record that had any lists them under `extraRedacted`, so a
    /// replay knows it cannot reproduce that review exactly.
    pub fn with_redacted_extra(mut self, keys: Vec<String>) -> Self {
        self.redact_extra = keys;
        self
    }

    /// Queues one record. Never fails; it waits only for a remote sink set to `Block` whose
    /// queue is full, at most that sink's block timeout.
    pub fn write(&self, record: &AuditRecord<'_>) {
        if !self.is_enabled() {
            return;
        }
        match self.encode(record) {
            Ok(line) => self.send(line, Some(record.decision_id)),
            Err(e) => {
                tracing::error!(error = %e, "audit record cannot be encoded; dropped");
                self.metrics.record_audit_dropped();
            }
        }
    }

    /// Queues one record of another stage (the buffer ring's, `"stage": "buffer"`), under
    /// its decision id when it has one, as [`AuditSink::write`] does. The record carries no
    /// user `extra`, so nothing is redacted.
    pub(crate) fn write_other(&self, record: &impl Serialize, decision_id: Option<DecisionId>) {
        if !self.is_enabled() {
            return;
        }
        match serde_json::to_vec(record) {
            Ok(line) => self.send(line, decision_id),
            Err(e) => {
                tracing::error!(error = %e, "audit record cannot be encoded; dropped");
                self.metrics.record_audit_dropped();
            }
        }
    }

    /// The record's JSON, with the redacted extra keys left out.
    fn encode(&self, record: &AuditRecord<'_>) -> serde_json::Result<Vec<u8>> {
        let redacts = |extra: &BTreeMap<String, Vec<String>>| {
            self.redact_extra.iter().any(|k| extra.contains_key(k))
        };
        if !record.extra.is_some_and(redacts) {
            // Sized for a typical record and its newline: growing from serde_json's default
            // took four copies per record.
            let mut line = Vec::with_capacity(LINE_CAPACITY);
            serde_json::to_writer(&mut line, record)?;
            return Ok(line);
        }
        let mut value = serde_json::to_value(record)?;
        if let Some(object) = value.as_object_mut() {
            redact(object, &self.redact_extra);
        }
        serde_json::to_vec(&value)
    }

    /// Queues one encoded record (no newline) for the file and every remote sink; a full
    /// file queue drops it and counts it, a remote sink applies its own choice.
    fn send(&self, mut line: Vec<u8>, decision_id: Option<DecisionId>) {
        if !self.remotes.is_empty() {
            let key = decision_id.map(|d| d.to_string());
            for r in &self.remotes {
                r.offer(remote::SinkRecord::now(key.clone(), line.clone()));
            }
        }
        let Some(tx) = &self.tx else { return };
        line.push(b'\n');
        if !tx.push(&line) {
            self.metrics.record_audit_dropped();
        }
    }

    /// Reopens the audit file at its path before the next write (SIGHUP; a rotation by `mv`
    /// or `rm` is followed anyway within a second). Nothing for standard output.
    pub(crate) fn reopen(&self) {
        if let Some(tx) = &self.tx {
            tx.request_reopen();
        }
    }

    /// Whether records are written anywhere.
    pub(crate) fn is_enabled(&self) -> bool {
        self.tx.is_some() || !self.remotes.is_empty()
    }
}

impl Drop for AuditSink {
    fn drop(&mut self) {
        // Closing the queue lets the thread write what is left and end.
        if let Some(tx) = self.tx.take() {
            tx.close();
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests;
