//! `buffer:`: the finalizer (a qualified name with a domain prefix, as apiserver's
//! `ValidateFinalizerName` wants for non-standard finalizers), the annotations (qualified
//! names), the kinds (no wildcard: the controller patches concrete kinds), Go durations with
//! `cooldown <= maxHold`, and `https://` receivers.

use super::super::{Checker, invalid, line};
use super::{level, objects::qualified_name};
use crate::config::duration::GoDuration;
use crate::config::error::ErrorKind;
use crate::config::model::buffer::*;
use crate::config::model::guard::{Kind, Level};
use crate::config::schema::At;
use crate::config::schema::buffer::{BufferFile, NotifyFile};
use std::path::Path;
use std::time::Duration;

/// The most attempts a receiver may be given.
const MAX_ATTEMPTS: u32 = 20;

/// Checks `buffer` at `p` (the guard's path); `None` when absent or wrong (errors recorded).
pub(super) fn check(
    c: &mut Checker,
    p: &str,
    b: Option<&At<BufferFile>>,
) -> Option<BufferSettings> {
    let b = b?;
    let before = c.errors.len();
    let bp = format!("{p}.buffer");
    let f = &b.value;
    let mut key = |field: &str, v: Option<&At<String>>, default: &str, domain: bool| {
        let Some(v) = v else {
            return default.to_owned();
        };
        let why = qualified_name(&v.value).err().or_else(|| {
            (domain && !v.value.contains('/'))
                .then_some("must have a domain prefix (example.com/name)")
        });
        if let Some(why) = why {
            c.push(line(v), format!("{bp}.{field}"), invalid(&v.value, why));
        }
        v.value.clone()
    };
    let finalizer = key("finalizer", f.finalizer.as_ref(), DEFAULT_FINALIZER, true);
    let confirmation_annotation = key(
        "confirmationAnnotation",
        f.confirmation_annotation.as_ref(),
        DEFAULT_CONFIRMATION_ANNOTATION,
        false,
    );
    let requester_annotation = key(
        "requesterAnnotation",
        f.requester_annotation.as_ref(),
        DEFAULT_REQUESTER_ANNOTATION,
        false,
    );
    let finalize_at = f
        .finalize_at
        .as_ref()
        .map_or(Some(Level::High), |l| {
            level(c, line(l), &format!("{bp}.finalizeAt"), &l.value)
        })
        .unwrap_or(Level::High);
    let resources = resources(c, &bp, f);
    let cooldown = duration(c, &bp, "cooldown", f.cooldown.as_ref(), DEFAULT_COOLDOWN);
    let max_hold = duration(c, &bp, "maxHold", f.max_hold.as_ref(), DEFAULT_MAX_HOLD);
    if cooldown > max_hold {
        let at = f.max_hold.as_ref().map_or(line(b), line);
        c.push(
            at,
            format!("{bp}.maxHold"),
            invalid(
                &format!("{}s", max_hold.as_secs()),
                format!("must be at least the cooldown ({}s)", cooldown.as_secs()),
            ),
        );
    }
    let notify = f
        .notify
        .iter()
        .enumerate()
        .filter_map(|(i, n)| notify(c, &format!("{bp}.notify[{i}]"), n))
        .collect();
    (c.errors.len() == before).then_some(BufferSettings {
        finalizer,
        finalize_at,
        resources,
        cooldown,
        require_confirmation: f.require_confirmation.unwrap_or(false),
        confirmation_annotation,
        requester_annotation,
        max_hold,
        notify,
    })
}

/// `resources`: concrete kinds, the defaults when absent.
fn resources(c: &mut Checker, bp: &str, f: &BufferFile) -> Vec<Kind> {
    let Some(listed) = &f.resources else {
        return DEFAULT_RESOURCES
            .iter()
            .map(|(group, resource)| Kind {
                group: (*group).to_owned(),
                resource: (*resource).to_owned(),
            })
            .collect();
    };
    let mut kinds = Vec::new();
    for (i, k) in listed.iter().enumerate() {
        if k.value.group == "*" || k.value.resource == "*" || k.value.resource.is_empty() {
            c.push(
                line(k),
                format!("{bp}.resources[{i}]"),
                invalid(
                    &format!("{}/{}", k.value.group, k.value.resource),
                    "must name one group and one resource (no wildcard)",
                ),
            );
            continue;
        }
        kinds.push(Kind {
            group: k.value.group.clone(),
            resource: k.value.resource.clone(),
        });
    }
    kinds
}

/// A positive Go duration, `default` when absent.
fn duration(
    c: &mut Checker,
    bp: &str,
    field: &str,
    v: Option<&At<String>>,
    default: Duration,
) -> Duration {
    let Some(v) = v else {
        return default;
    };
    match GoDuration::parse(&v.value).map(|d| d.to_std().filter(|d| !d.is_zero())) {
        Ok(Some(d)) => d,
        Ok(None) => {
            c.push(
                line(v),
                format!("{bp}.{field}"),
                invalid(&v.value, "must be positive"),
            );
            default
        }
        Err(e) => {
            c.push(line(v), format!("{bp}.{field}"), invalid(&v.value, e));
            default
        }
    }
}

/// One receiver: an `https://` URL, a CA file resolved against the configuration file's
/// directory, a positive timeout (default 5s) and 1-20 attempts (default 5).
fn notify(c: &mut Checker, np: &str, n: &At<NotifyFile>) -> Option<Notify> {
    let l = line(n);
    let v = &n.value;
    let before = c.errors.len();
    match reqwest::Url::parse(&v.url) {
        Ok(u) if u.scheme() == "https" && u.host_str().is_some() => {}
        Ok(_) => c.push(
            l,
            format!("{np}.url"),
            invalid(&v.url, "must be an https:// URL with a host"),
        ),
        Err(e) => c.push(l, format!("{np}.url"), invalid(&v.url, e)),
    }
    let timeout = match v.timeout.as_deref().map(GoDuration::parse) {
        None => Some(Duration::from_secs(5)),
        Some(Ok(d)) => d.to_std().filter(|d| !d.is_zero()),
        Some(Err(_)) => None,
    };
    if timeout.is_none() {
        let value = v.timeout.as_deref().unwrap_or_default();
        c.push(
            l,
            format!("{np}.timeout"),
            invalid(value, "must be a positive Go duration"),
        );
    }
    let attempts = v.attempts.unwrap_or(5);
    if !(1..=MAX_ATTEMPTS).contains(&attempts) {
        c.push(
            l,
            format!("{np}.attempts"),
            invalid(
                &attempts.to_string(),
                format!("must be between 1 and {MAX_ATTEMPTS}"),
            ),
        );
    }
    if v.ca_file.as_deref() == Some("") {
        c.push(l, format!("{np}.caFile"), ErrorKind::Required(None));
    }
    let ca_file = v.ca_file.as_ref().map(|name| {
        let dir = Path::new(&*c.file).parent().unwrap_or(Path::new(""));
        dir.join(name)
    });
    (c.errors.len() == before).then(|| Notify {
        url: v.url.clone(),
        ca_file,
        timeout: timeout.unwrap_or_default(),
        attempts,
    })
}
