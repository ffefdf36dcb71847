//! Printing tickets as kubectl does: `-o name` (`deletionticket.warrant.dev/<name>`), `-o json`
//! and `-o yaml` (one object, or a `v1` `List`), and the table of `kubectl get` (NAMESPACE with
//! `-A`, NAME, PHASE, REQUESTED-BY, APPROVERS, EXPIRES, AGE), ages spelled as kubectl spells
//! them (`45s`, `12m`, `5h`, `3d`).

use super::session::TicketError;
use crate::tickets::{DeletionTicket, GROUP, status_of};
use chrono::{DateTime, Utc};
use std::fmt::Write as _;

/// How tickets are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// A table (an action prints `deletionticket.warrant.dev/<name> <what>`).
    Table,
    /// `deletionticket.warrant.dev/<name>`.
    Name,
    /// JSON.
    Json,
    /// YAML.
    Yaml,
}

fn name(t: &DeletionTicket) -> String {
    format!(
        "deletionticket.{GROUP}/{}",
        t.metadata.name.as_deref().unwrap_or("")
    )
}

/// One ticket after an action (`done`: created, approved, rejected).
pub fn one(t: &DeletionTicket, format: Format, done: &str) -> Result<String, TicketError> {
    match format {
        Format::Table => Ok(format!("{} {done}\n", name(t))),
        Format::Name => Ok(format!("{}\n", name(t))),
        Format::Json => json(&serde_json::to_value(t).map_err(decode_error)?),
        Format::Yaml => yaml(t),
    }
}

/// Many tickets.
pub fn many(
    tickets: &[DeletionTicket],
    format: Format,
    all_namespaces: bool,
    now: DateTime<Utc>,
) -> Result<String, TicketError> {
    let list = || serde_json::json!({"apiVersion": "v1", "kind": "List", "metadata": {}, "items": tickets});
    match format {
        Format::Table => Ok(table(tickets, all_namespaces, now)),
        Format::Name => Ok(tickets.iter().map(|t| name(t) + "\n").collect()),
        Format::Json => json(&list()),
        Format::Yaml => yaml(&list()),
    }
}

fn json(v: &serde_json::Value) -> Result<String, TicketError> {
    serde_json::to_string_pretty(v)
        .map(|s| s + "\n")
        .map_err(decode_error)
}

fn yaml<T: serde::Serialize>(v: &T) -> Result<String, TicketError> {
    serde_saphyr::to_string(v).map_err(|e| TicketError::Decode(e.to_string()))
}

fn decode_error(e: serde_json::Error) -> TicketError {
    TicketError::Decode(e.to_string())
}

/// The table, columns padded as kubectl pads them (three spaces apart).
pub fn table(tickets: &[DeletionTicket], all_namespaces: bool, now: DateTime<Utc>) -> String {
    if tickets.is_empty() {
        return "No resources found.\n".into();
    }
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut head = vec![
        "NAME",
        "PHASE",
        "REQUESTED-BY",
        "APPROVERS",
        "EXPIRES",
        "AGE",
    ];
    if all_namespaces {
        head.insert(0, "NAMESPACE");
    }
    rows.push(head.into_iter().map(str::to_owned).collect());
    for t in tickets {
        let status = status_of(t);
        let approvers: Vec<&str> = status.approvals.iter().map(|a| a.user.as_str()).collect();
        let created = t
            .metadata
            .creation_timestamp
            .as_ref()
            .map(|c| c.0.as_second());
        let mut row = vec![
            t.metadata.name.clone().unwrap_or_default(),
            status.phase().as_str().to_owned(),
            t.spec.requested_by.clone(),
            if approvers.is_empty() {
                "<none>".into()
            } else {
                approvers.join(",")
            },
            t.spec
                .expires_at
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            created
                .map(|s| age(now.timestamp() - s))
                .unwrap_or_else(|| "<unknown>".into()),
        ];
        if all_namespaces {
            row.insert(0, t.metadata.namespace.clone().unwrap_or_default());
        }
        rows.push(row);
    }
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|c| rows.iter().map(|r| r[c].len()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in &rows {
        let last = r.len() - 1;
        for (c, cell) in r.iter().enumerate() {
            if c == last {
                let _ = writeln!(out, "{cell}");
            } else {
                let _ = write!(out, "{cell:<w$}   ", w = widths[c]);
            }
        }
    }
    out
}

/// An age as kubectl's `HumanDuration` prints it, to one unit.
fn age(seconds: i64) -> String {
    match seconds.max(0) {
        s if s < 120 => format!("{s}s"),
        s if s < 3600 * 3 => format!("{}m", s / 60),
        s if s < 86400 * 2 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ticket(name: &str, approvals: &[&str]) -> DeletionTicket {
        let approvals: Vec<serde_json::Value> = approvals
            .iter()
            .map(|u| serde_json::json!({"user": u, "time": "2026-12-04T10:00:00Z"}))
            .collect();
        serde_json::from_value(serde_json::json!({
            "apiVersion": "warrant.dev/v1alpha1", "kind": "DeletionTicket",
            "metadata": {"name": name, "namespace": "shop", "creationTimestamp": "2026-12-04T09:00:00Z"},
            "spec": {"requestedBy": "alice", "targets": [{"group": "apps", "resource": "statefulsets", "namespace": "shop", "name": "db"}], "expiresAt": "2026-12-05T09:00:00Z"},
            "status": {"phase": if approvals.is_empty() { "Pending" } else { "Approved" }, "approvals": approvals},
        }))
        .unwrap()
    }

    #[test]
    fn the_table_reads_like_kubectl_get() {
        let now = DateTime::parse_from_rfc3339("2026-12-04T11:30:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let t = table(
            &[ticket("drop-db", &["bob", "carol"]), ticket("x", &[])],
            true,
            now,
        );
        assert_eq!(
            t,
            "NAMESPACE   NAME      PHASE      REQUESTED-BY   APPROVERS   EXPIRES                AGE\n\
             shop        drop-db   Approved   alice          bob,carol   2026-12-05T09:00:00Z   150m\n\
             shop        x         Pending    alice          <none>      2026-12-05T09:00:00Z   150m\n"
        );
        assert_eq!(table(&[], false, now), "No resources found.\n");
        assert_eq!(
            one(&ticket("drop-db", &[]), Format::Table, "approved").unwrap(),
            "deletionticket.warrant.dev/drop-db approved\n"
        );
        let listed: serde_json::Value =
            serde_json::from_str(&many(&[ticket("a", &[])], Format::Json, false, now).unwrap())
                .unwrap();
        assert_eq!(listed["kind"], "List");
        assert_eq!(listed["items"][0]["spec"]["requestedBy"], "alice");
        assert!(
            many(&[ticket("a", &[])], Format::Yaml, false, now)
                .unwrap()
                .contains("requestedBy: alice")
        );
    }
}
