//! The writes an audit history records: who created, changed or deleted which object, and when,
//! read from kube-apiserver's audit log (`audit.k8s.io/v1` `Event` JSON lines, as written by
//! `--audit-log-path`) and from warrant's own audit records, each file told apart line by line.
//!
//! - kube-apiserver: an event at stage `ResponseComplete` of verb `create`, `update`, `patch`
//!   or `delete` on a named object (not a subresource) whose `responseStatus.code` is 2xx. The
//!   audit layer fills `objectRef.name` and `namespace` of a create from the request's object
//!   when the URL has none (`LogRequestObject` in k8s.io/apiserver's `pkg/audit/request.go`),
//!   so a create by `generateName` names the object it made only at level Request or above;
//!   the user is `impersonatedUser` when there is one;
//! - warrant: a record of the authorization stage whose verb is one of those four and whose
//!   decision is `Allow`, unless a record of the validation ring with the same `decisionId`
//!   refused it; and a record of the validation ring that admitted a `DELETE` (not a dry run).
//!
//! The same act seen twice (by both logs, or by warrant's two rings) is kept once: for one
//! object, a write of the same operation by the same user within [`SAME_ACT`] of the last one
//! kept. Two successful deletions of one object need a creation between them, so nothing real
//! is merged; of an act both logs recorded, kube-apiserver's record is kept. Every line is read within [`MAX_LINE_BYTES`]; a line that is neither kind of
//! record is an error naming its file and line.

use crate::replay::audit_event::{ObjectRef, UserInfo};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The longest line read (an event at level RequestResponse may carry whole objects).
pub const MAX_LINE_BYTES: u64 = 4 * 1024 * 1024;

/// Two records of one operation on one object by one user this close are one act.
pub const SAME_ACT: chrono::TimeDelta = chrono::TimeDelta::seconds(10);

/// An object as the API names it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectKey {
    /// API group (`""` core).
    pub group: String,
    /// Plural resource.
    pub resource: String,
    /// Namespace (`""` when cluster-scoped).
    pub namespace: String,
    /// Name.
    pub name: String,
}

impl ObjectKey {
    /// Whether this is a Namespace.
    pub fn is_namespace(&self) -> bool {
        self.group.is_empty() && self.resource == "namespaces"
    }

    /// The namespace the object lives in, or names (for a Namespace); `""` for other
    /// cluster-scoped objects.
    pub fn home(&self) -> &str {
        if self.is_namespace() {
            &self.name
        } else {
            &self.namespace
        }
    }
}

/// What a write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Op {
    /// `create`.
    Create,
    /// `update` or `patch`.
    Update,
    /// `delete`.
    Delete,
}

/// Which log a write was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Log {
    /// kube-apiserver's audit log.
    ApiServer,
    /// warrant's audit records.
    Warrant,
}

/// One write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Write {
    /// When it was made.
    pub at: DateTime<Utc>,
    /// What it did.
    pub op: Op,
    /// The object.
    pub key: ObjectKey,
    /// The API version it was written at (`""` when the record does not say).
    pub version: String,
    /// The user.
    pub user: String,
    /// The user's groups.
    pub groups: Vec<String>,
    /// Which log says so.
    pub log: Log,
}

/// Every write of the files read, oldest first, and the span the files cover.
#[derive(Debug, Clone, Default)]
pub struct History {
    /// The writes, oldest first, each act once.
    pub writes: Vec<Write>,
    /// The earliest record of any kind (reads included).
    pub from: Option<DateTime<Utc>>,
    /// The latest.
    pub to: Option<DateTime<Utc>>,
    /// Records read (every line that was a record).
    pub records: u64,
}

/// An audit file that cannot be read.
#[derive(Debug, Error)]
pub enum HistoryError {
    /// The file cannot be opened or read.
    #[error("{}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A line is longer than [`MAX_LINE_BYTES`].
    #[error("{}:{line}: longer than {MAX_LINE_BYTES} bytes", path.display())]
    TooLong {
        /// The file.
        path: PathBuf,
        /// The line.
        line: u64,
    },
    /// A line is not JSON, or not a record of either kind.
    #[error("{}:{line}: {message}", path.display())]
    Line {
        /// The file.
        path: PathBuf,
        /// The line.
        line: u64,
        /// What is wrong.
        message: String,
    },
}

/// The part of an `audit.k8s.io/v1` Event read here.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Event {
    stage: String,
    verb: String,
    #[serde(default)]
    user: UserInfo,
    #[serde(default)]
    impersonated_user: Option<UserInfo>,
    #[serde(default)]
    object_ref: Option<ObjectRef>,
    #[serde(default)]
    response_status: Option<ResponseStatus>,
    #[serde(default)]
    request_received_timestamp: Option<String>,
    #[serde(default)]
    stage_timestamp: Option<String>,
}

#[derive(Debug, Deserialize)]
struct ResponseStatus {
    #[serde(default)]
    code: Option<i32>,
}

/// The part of one of warrant's audit records read here.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Record {
    #[serde(default)]
    time: Option<String>,
    #[serde(default)]
    stage: Option<String>,
    #[serde(default)]
    decision_id: Option<String>,
    #[serde(default)]
    user: Option<String>,
    #[serde(default)]
    groups: Option<Vec<String>>,
    #[serde(default)]
    resource_attributes: Option<Attributes>,
    #[serde(default)]
    admission: Option<AdmissionPart>,
    #[serde(default)]
    decision: Option<String>,
    #[serde(default)]
    allowed: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
struct Attributes {
    #[serde(default)]
    group: Option<String>,
    #[serde(default)]
    version: Option<String>,
    #[serde(default)]
    resource: Option<String>,
    #[serde(default)]
    subresource: Option<String>,
    #[serde(default)]
    namespace: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    verb: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct AdmissionPart {
    #[serde(default)]
    operation: Option<String>,
    #[serde(default)]
    dry_run: Option<bool>,
}

/// A write of warrant's log before refused deletions are taken out.
struct Pending {
    write: Write,
    decision_id: Option<String>,
    authorization: bool,
}

/// What one line says.
enum Line {
    /// A record that is no write (a read, a refusal, a failure).
    Other(Option<DateTime<Utc>>),
    /// A write of kube-apiserver's log.
    Event(Write),
    /// A write of warrant's log.
    Warrant(Pending),
    /// warrant's validation ring refused this decision.
    Refused(String, Option<DateTime<Utc>>),
}

/// Reads every file, in order, into one history.
pub fn read(paths: &[PathBuf]) -> Result<History, HistoryError> {
    let mut history = History::default();
    let mut pending = Vec::new();
    let mut refused = HashSet::new();
    let mut writes = Vec::new();
    for path in paths {
        let file = std::fs::File::open(path).map_err(|source| HistoryError::Read {
            path: path.clone(),
            source,
        })?;
        read_lines(path, BufReader::new(file), &mut |line, at| {
            history.records += 1;
            if let Some(at) = at {
                history.from = Some(history.from.map_or(at, |f| f.min(at)));
                history.to = Some(history.to.map_or(at, |t| t.max(at)));
            }
            match line {
                Line::Other(_) => {}
                Line::Event(w) => writes.push(w),
                Line::Warrant(p) => pending.push(p),
                Line::Refused(id, _) => {
                    refused.insert(id);
                }
            }
        })?;
    }
    for p in pending {
        let refused_later = p.authorization
            && p.write.op == Op::Delete
            && p.decision_id
                .as_ref()
                .is_some_and(|id| refused.contains(id));
        if !refused_later {
            writes.push(p.write);
        }
    }
    history.writes = once_each(writes);
    Ok(history)
}

/// Reads `reader`'s lines, calling `each` with every record and its time.
fn read_lines(
    path: &Path,
    mut reader: impl BufRead,
    each: &mut dyn FnMut(Line, Option<DateTime<Utc>>),
) -> Result<(), HistoryError> {
    let mut buf = Vec::new();
    let mut number = 0u64;
    loop {
        buf.clear();
        number += 1;
        let n = reader
            .by_ref()
            .take(MAX_LINE_BYTES + 1)
            .read_until(b'\n', &mut buf)
            .map_err(|source| HistoryError::Read {
                path: path.to_path_buf(),
                source,
            })?;
        if n == 0 {
            return Ok(());
        }
        if buf.len() as u64 > MAX_LINE_BYTES {
            return Err(HistoryError::TooLong {
                path: path.to_path_buf(),
                line: number,
            });
        }
        if buf.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let line = parse(&buf).map_err(|message| HistoryError::Line {
            path: path.to_path_buf(),
            line: number,
            message,
        })?;
        let at = match &line {
            Line::Other(at) | Line::Refused(_, at) => *at,
            Line::Event(w) => Some(w.at),
            Line::Warrant(p) => Some(p.write.at),
        };
        each(line, at);
    }
}

/// One line, told apart by its shape.
fn parse(bytes: &[u8]) -> Result<Line, String> {
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    let is_event = value.get("kind").and_then(|k| k.as_str()) == Some("Event")
        && value.get("apiVersion").and_then(|k| k.as_str()) == Some("audit.k8s.io/v1");
    if is_event {
        let e = Event::deserialize(&value).map_err(|e| format!("audit event: {e}"))?;
        return event(e);
    }
    if value.get("decision").is_some() || value.get("stage").is_some() {
        let r = Record::deserialize(&value).map_err(|e| format!("warrant record: {e}"))?;
        return record(r);
    }
    Err("neither an audit.k8s.io/v1 Event nor a warrant audit record".to_owned())
}

fn time(field: &str, value: Option<&str>) -> Result<Option<DateTime<Utc>>, String> {
    value
        .map(|t| {
            DateTime::parse_from_rfc3339(t)
                .map(|t| t.with_timezone(&Utc))
                .map_err(|e| format!("{field} {t:?}: {e}"))
        })
        .transpose()
}

fn op(verb: &str) -> Option<Op> {
    match verb {
        "create" => Some(Op::Create),
        "update" | "patch" => Some(Op::Update),
        "delete" => Some(Op::Delete),
        _ => None,
    }
}

fn nonempty(s: Option<String>) -> Option<String> {
    s.filter(|s| !s.is_empty())
}

/// A kube-apiserver event.
fn event(e: Event) -> Result<Line, String> {
    let at = time(
        "stageTimestamp",
        e.stage_timestamp
            .as_deref()
            .or(e.request_received_timestamp.as_deref()),
    )?;
    let succeeded = e
        .response_status
        .as_ref()
        .and_then(|s| s.code)
        .is_some_and(|c| (200..300).contains(&c));
    let (Some(at), Some(op), Some(o), true, "ResponseComplete") =
        (at, op(&e.verb), e.object_ref, succeeded, e.stage.as_str())
    else {
        return Ok(Line::Other(at));
    };
    let (Some(resource), Some(name), None) = (
        nonempty(o.resource),
        nonempty(o.name),
        nonempty(o.subresource),
    ) else {
        return Ok(Line::Other(Some(at)));
    };
    let user = e.impersonated_user.unwrap_or(e.user);
    Ok(Line::Event(Write {
        at,
        op,
        key: ObjectKey {
            group: o.api_group.unwrap_or_default(),
            resource,
            namespace: o.namespace.unwrap_or_default(),
            name,
        },
        version: o.api_version.unwrap_or_default(),
        user: user.username.unwrap_or_default(),
        groups: user.groups.unwrap_or_default(),
        log: Log::ApiServer,
    }))
}

/// One of warrant's records.
fn record(r: Record) -> Result<Line, String> {
    let at = time("time", r.time.as_deref())?;
    let Some(at) = at else {
        return Ok(Line::Other(None));
    };
    let admission = r.stage.as_deref() == Some("admission");
    if admission && r.allowed == Some(false) {
        return Ok(match r.decision_id {
            Some(id) => Line::Refused(id, Some(at)),
            None => Line::Other(Some(at)),
        });
    }
    let Some(a) = r.resource_attributes else {
        return Ok(Line::Other(Some(at)));
    };
    let op = if admission {
        let a = r.admission.as_ref();
        let delete = a.and_then(|a| a.operation.as_deref()) == Some("DELETE");
        let dry = a.and_then(|a| a.dry_run).unwrap_or(false);
        (delete && !dry).then_some(Op::Delete)
    } else if r.stage.as_deref().is_none_or(|s| s == "authorization")
        && r.decision.as_deref() == Some("Allow")
    {
        a.verb.as_deref().and_then(op)
    } else {
        None
    };
    let (Some(op), Some(resource), Some(name), None) = (
        op,
        nonempty(a.resource),
        nonempty(a.name),
        nonempty(a.subresource),
    ) else {
        return Ok(Line::Other(Some(at)));
    };
    Ok(Line::Warrant(Pending {
        write: Write {
            at,
            op,
            key: ObjectKey {
                group: a.group.unwrap_or_default(),
                resource,
                namespace: a.namespace.unwrap_or_default(),
                name,
            },
            version: a.version.unwrap_or_default(),
            user: r.user.unwrap_or_default(),
            groups: r.groups.unwrap_or_default(),
            log: Log::Warrant,
        },
        decision_id: r.decision_id,
        authorization: !admission,
    }))
}

/// The writes oldest first, each act once (see the module's documentation); of an act both
/// logs recorded, kube-apiserver's record is kept (its time is when the act completed).
fn once_each(mut writes: Vec<Write>) -> Vec<Write> {
    writes.sort_by(|a, b| a.at.cmp(&b.at).then(a.log.cmp_key().cmp(&b.log.cmp_key())));
    let mut last: BTreeMap<ObjectKey, usize> = BTreeMap::new();
    let mut out: Vec<Write> = Vec::with_capacity(writes.len());
    for w in writes {
        if let Some(&i) = last.get(&w.key) {
            let kept = &out[i];
            if kept.op == w.op && kept.user == w.user && w.at - kept.at <= SAME_ACT {
                if kept.log == Log::Warrant && w.log == Log::ApiServer {
                    out[i] = w;
                }
                continue;
            }
        }
        last.insert(w.key.clone(), out.len());
        out.push(w);
    }
    out.sort_by_key(|w| w.at);
    out
}

impl Log {
    /// kube-apiserver's record first when two are at the same instant.
    fn cmp_key(self) -> u8 {
        match self {
            Log::ApiServer => 0,
            Log::Warrant => 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn history(lines: &[&str]) -> History {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        std::fs::write(&path, lines.join("\n")).unwrap();
        read(&[path]).unwrap()
    }

    fn event(verb: &str, name: &str, code: u16, at: &str, user: &str) -> String {
        format!(
            r#"{{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"x","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/shop/configmaps","verb":"{verb}","user":{{"username":"{user}","groups":["dev"]}},"objectRef":{{"resource":"configmaps","namespace":"shop","name":"{name}","apiVersion":"v1"}},"responseStatus":{{"metadata":{{}},"code":{code}}},"requestReceivedTimestamp":"{at}","stageTimestamp":"{at}"}}"#
        )
    }

    #[test]
    fn apiserver_events_give_successful_writes_of_named_objects() {
        let h = history(&[
            &event("create", "a", 201, "2026-12-01T10:00:00Z", "ana"),
            &event("get", "a", 200, "2026-12-01T10:01:00Z", "ana"),
            &event("delete", "a", 403, "2026-12-01T10:02:00Z", "eve"),
            &event("delete", "a", 200, "2026-12-01T10:03:00Z", "ben"),
            &event("patch", "a", 200, "2026-12-01T10:04:00Z", "chen"),
            "",
        ]);
        let got: Vec<(Op, &str)> = h.writes.iter().map(|w| (w.op, w.user.as_str())).collect();
        assert_eq!(
            got,
            [
                (Op::Create, "ana"),
                (Op::Delete, "ben"),
                (Op::Update, "chen")
            ]
        );
        assert_eq!(h.records, 5);
        assert_eq!(h.from.unwrap().to_rfc3339(), "2026-12-01T10:00:00+00:00");
        assert_eq!(h.to.unwrap().to_rfc3339(), "2026-12-01T10:04:00+00:00");
        assert_eq!(h.writes[0].key.resource, "configmaps");
        assert_eq!(h.writes[0].version, "v1");
    }

    #[test]
    fn warrant_records_count_allowed_writes_unless_admission_refused_them() {
        let auth = |id: &str, verb: &str, decision: &str, at: &str| {
            format!(
                r#"{{"time":"{at}","stage":"authorization","decisionId":"{id}","user":"ana","resourceAttributes":{{"group":"apps","version":"v1","resource":"deployments","namespace":"shop","name":"web","verb":"{verb}"}},"authorizers":[],"decision":"{decision}"}}"#
            )
        };
        let admit = |id: &str, allowed: bool, dry: bool, at: &str| {
            format!(
                r#"{{"time":"{at}","stage":"admission","decisionId":"{id}","admission":{{"uid":"u","operation":"DELETE","dryRun":{dry}}},"user":"ana","resourceAttributes":{{"group":"apps","version":"v1","resource":"deployments","namespace":"shop","name":"web","verb":"delete"}},"authorizers":[],"decision":"Allow","allowed":{allowed}}}"#
            )
        };
        let h = history(&[
            &auth("d1", "delete", "Allow", "2026-12-01T10:00:00Z"),
            &admit("d1", false, false, "2026-12-01T10:00:01Z"),
            &auth("d2", "delete", "Deny", "2026-12-01T10:01:00Z"),
            &auth("d3", "delete", "Allow", "2026-12-01T10:02:00Z"),
            &admit("d3", true, false, "2026-12-01T10:02:01Z"),
            &auth("d4", "create", "Allow", "2026-12-01T10:03:00Z"),
            &admit("d5", true, true, "2026-12-01T10:04:00Z"),
        ]);
        let got: Vec<(Op, String)> = h
            .writes
            .iter()
            .map(|w| (w.op, w.at.format("%M:%S").to_string()))
            .collect();
        // d1 refused at admission, d2 denied, d3 seen by both rings once, d5 a dry run.
        assert_eq!(
            got,
            [(Op::Delete, "02:00".into()), (Op::Create, "03:00".into())]
        );
    }

    #[test]
    fn one_act_in_both_logs_is_kept_once_as_the_api_server_saw_it_but_a_second_deletion_after_a_creation_is_not()
     {
        let warrant = |verb: &str, at: &str| {
            format!(
                r#"{{"time":"{at}","stage":"authorization","user":"ben","resourceAttributes":{{"version":"v1","resource":"configmaps","namespace":"shop","name":"a","verb":"{verb}"}},"authorizers":[],"decision":"Allow"}}"#
            )
        };
        let h = history(&[
            &warrant("delete", "2026-12-01T10:02:59Z"),
            &event("delete", "a", 200, "2026-12-01T10:03:00Z", "ben"),
            &event("create", "a", 201, "2026-12-01T10:03:05Z", "ben"),
            &event("delete", "a", 200, "2026-12-01T10:03:08Z", "ben"),
        ]);
        let got: Vec<(Op, Log)> = h.writes.iter().map(|w| (w.op, w.log)).collect();
        assert_eq!(
            got,
            [
                (Op::Delete, Log::ApiServer),
                (Op::Create, Log::ApiServer),
                (Op::Delete, Log::ApiServer)
            ]
        );
        assert_eq!(h.writes[0].at.format("%M:%S").to_string(), "03:00");
    }

    #[test]
    fn a_line_of_neither_kind_is_an_error_with_its_place() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.jsonl");
        std::fs::write(&path, "\n{\"hello\": 1}\n").unwrap();
        let e = read(std::slice::from_ref(&path)).unwrap_err().to_string();
        assert!(
            e.ends_with("x.jsonl:2: neither an audit.k8s.io/v1 Event nor a warrant audit record"),
            "{e}"
        );
        std::fs::write(&path, "not json\n").unwrap();
        let e = read(std::slice::from_ref(&path)).unwrap_err().to_string();
        assert!(e.contains("x.jsonl:1: expected"), "{e}");
        let e = read(&[dir.path().join("absent")]).unwrap_err();
        assert!(matches!(e, HistoryError::Read { .. }));
    }
}
