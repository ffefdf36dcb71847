//! `tickets:`: the file (resolved against the configuration file's directory), the extra key,
//! the levels that always need a ticket, the approvals per level, whether `DeletionTicket`s may
//! name targets with wildcards, and the source: `cluster: {}` or `webhook` (a kubeconfig with an
//! absolute path to a regular file, a timeout above zero and at most [`MAX_TIMEOUT`], TTLs of
//! zero or more). Tickets come from one place: a file, the cluster or a webhook.

use super::super::webhook::kube_config_file;
use super::super::{Checker, invalid, line};
use super::level;
use crate::config::duration::GoDuration;
use crate::config::error::ErrorKind;
use crate::config::model::guard::{ClusterTickets, TicketSettings, TicketWebhook};
use crate::config::schema::At;
use crate::config::schema::guard::{TicketWebhookFile, TicketsFile};
use std::path::Path;
use std::time::Duration;

/// The longest lookup a ticket webhook may take: it runs inside a review's budget.
pub(crate) const MAX_TIMEOUT: Duration = Duration::from_secs(10);
/// A lookup's timeout when none is written.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(2);
/// How long an Approved answer is reused when no `approvedTTL` is written.
const DEFAULT_APPROVED_TTL: Duration = Duration::from_secs(30);
/// How long any other answer is reused when no `unapprovedTTL` is written.
const DEFAULT_UNAPPROVED_TTL: Duration = Duration::from_secs(5);

/// The default extra key a ticket id is presented under.
const EXTRA_KEY: &str = "warrant.dev/ticket";

/// Checks `tickets` at `p` (the guard's path); the defaults when absent.
pub(super) fn check(c: &mut Checker, p: &str, tickets: Option<&At<TicketsFile>>) -> TicketSettings {
    let Some(t) = tickets else {
        return TicketSettings {
            file: None,
            extra_key: EXTRA_KEY.into(),
            required_for: Vec::new(),
            approvals: [0, 1, 2],
            cluster: None,
            webhook: None,
            allow_wildcard_targets: false,
        };
    };
    let tl = line(t);
    let tp = format!("{p}.tickets");
    let mut required_for = Vec::new();
    for (i, l) in t.value.required_for.iter().enumerate() {
        if let Some(l) = level(c, tl, &format!("{tp}.requiredFor[{i}]"), l) {
            required_for.push(l);
        }
    }
    let a = t.value.approvals.as_ref();
    let file = t.value.file.as_ref().map(|name| {
        let dir = Path::new(&*c.file).parent().unwrap_or(Path::new(""));
        dir.join(name)
    });
    if t.value.file.as_deref() == Some("") {
        c.push(tl, format!("{tp}.file"), ErrorKind::Required(None));
    }
    let source = t.value.source.as_ref();
    let cluster = source
        .and_then(|s| s.cluster.as_ref())
        .map(|_| ClusterTickets {});
    let hook = source.and_then(|s| s.webhook.as_ref());
    let webhook = hook.and_then(|w| webhook(c, &format!("{tp}.source.webhook"), w));
    if source.is_some() && cluster.is_none() && hook.is_none() {
        c.push(tl, format!("{tp}.source"), ErrorKind::Required(None));
    }
    let places = [file.is_some(), cluster.is_some(), hook.is_some()];
    if places.iter().filter(|p| **p).count() > 1 {
        c.push(
            tl,
            format!("{tp}.source"),
            invalid(
                if cluster.is_some() {
                    "cluster"
                } else {
                    "webhook"
                },
                "tickets come from one place: file, source.cluster or source.webhook",
            ),
        );
    }
    TicketSettings {
        file,
        extra_key: t
            .value
            .extra_key
            .clone()
            .unwrap_or_else(|| EXTRA_KEY.into()),
        required_for,
        approvals: [
            a.and_then(|a| a.standard).unwrap_or(0),
            a.and_then(|a| a.high).unwrap_or(1),
            a.and_then(|a| a.critical).unwrap_or(2),
        ],
        cluster,
        webhook,
        allow_wildcard_targets: t.value.allow_wildcard_targets.unwrap_or(false),
    }
}

/// `source.webhook` at `wp`; `None` when anything is wrong (errors recorded).
fn webhook(c: &mut Checker, wp: &str, w: &At<TicketWebhookFile>) -> Option<TicketWebhook> {
    let wl = line(w);
    let f = &w.value;
    let kubeconfig = kube_config_file(
        c,
        format!("{wp}.kubeConfigFile"),
        wl,
        f.kube_config_file.as_ref(),
    );
    let timeout = duration(c, wp, "timeout", f.timeout.as_ref(), DEFAULT_TIMEOUT);
    let timeout = timeout.filter(|d| {
        let ok = !d.is_zero() && *d <= MAX_TIMEOUT;
        if !ok {
            let (at, value) = f
                .timeout
                .as_ref()
                .map_or((wl, ""), |t| (line(t), t.value.as_str()));
            c.push(
                at,
                format!("{wp}.timeout"),
                invalid(
                    value,
                    "must be > 0s and <= 10s (a lookup runs inside the review's budget)",
                ),
            );
        }
        ok
    });
    let approved_ttl = duration(
        c,
        wp,
        "approvedTTL",
        f.approved_ttl.as_ref(),
        DEFAULT_APPROVED_TTL,
    );
    let unapproved_ttl = duration(
        c,
        wp,
        "unapprovedTTL",
        f.unapproved_ttl.as_ref(),
        DEFAULT_UNAPPROVED_TTL,
    );
    Some(TicketWebhook {
        kubeconfig: kubeconfig?,
        timeout: timeout?,
        approved_ttl: approved_ttl?,
        unapproved_ttl: unapproved_ttl?,
    })
}

/// The Go duration `field` of the block at `wp`, zero or more; `default` when absent.
fn duration(
    c: &mut Checker,
    wp: &str,
    field: &str,
    v: Option<&At<String>>,
    default: Duration,
) -> Option<Duration> {
    let Some(v) = v else {
        return Some(default);
    };
    let path = format!("{wp}.{field}");
    match GoDuration::parse(&v.value) {
        Err(e) => c.push(line(v), path, invalid(&v.value, e)),
        Ok(d) => match d.to_std() {
            Some(d) => return Some(d),
            None => c.push(line(v), path, invalid(&v.value, "must not be negative")),
        },
    }
    None
}
