//! `liveTraffic:`: a Prometheus server URL (`http://` or `https://` with a host, no query or
//! fragment; TLS files and a bearer token only over `https://`, a client certificate with its
//! key and a CA bundle), files resolved against the configuration file's directory, at least one query, each with
//! a kind and a template whose placeholders warrant knows (a label key a qualified name), a
//! `timeout` from 10ms to 5s (well inside the admission budget) and a `cacheTTL` from 1s to 10m.

use super::super::{Checker, invalid, line};
use super::objects::qualified_name;
use crate::config::duration::GoDuration;
use crate::config::error::ErrorKind;
use crate::config::model::guard::Kind;
use crate::config::model::traffic::*;
use crate::config::schema::At;
use crate::config::schema::traffic::{LiveTrafficFile, PrometheusFile, TrafficQueryFile};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The shortest and longest query timeout.
const TIMEOUT_RANGE: (Duration, Duration) = (Duration::from_millis(10), Duration::from_secs(5));
/// The shortest and longest cache lifetime.
const CACHE_TTL_RANGE: (Duration, Duration) = (Duration::from_secs(1), Duration::from_secs(600));
/// The most queries: one per kind is the use.
const MAX_QUERIES: usize = 64;
/// The longest template.
const MAX_TEMPLATE: usize = 4096;

/// Checks `liveTraffic` at `p` (the guard's path); `None` when absent or wrong (errors
/// recorded).
pub(super) fn check(
    c: &mut Checker,
    p: &str,
    t: Option<&At<LiveTrafficFile>>,
) -> Option<LiveTraffic> {
    let t = t?;
    let before = c.errors.len();
    let tp = format!("{p}.liveTraffic");
    let f = &t.value;
    let prometheus = match &f.prometheus {
        Some(s) => server(c, &format!("{tp}.prometheus"), s),
        None => {
            c.push(
                line(t),
                format!("{tp}.prometheus"),
                ErrorKind::Required(None),
            );
            None
        }
    };
    if f.queries.is_empty() {
        c.push(line(t), format!("{tp}.queries"), ErrorKind::Required(None));
    }
    if f.queries.len() > MAX_QUERIES {
        c.push(
            line(t),
            format!("{tp}.queries"),
            ErrorKind::TooMany {
                actual: f.queries.len(),
                max: MAX_QUERIES,
            },
        );
    }
    let queries: Vec<TrafficQuery> = f
        .queries
        .iter()
        .enumerate()
        .filter_map(|(i, q)| query(c, &format!("{tp}.queries[{i}]"), q))
        .collect();
    let timeout = bounded(
        c,
        &tp,
        "timeout",
        f.timeout.as_ref(),
        DEFAULT_TIMEOUT,
        TIMEOUT_RANGE,
    );
    let cache_ttl = bounded(
        c,
        &tp,
        "cacheTTL",
        f.cache_ttl.as_ref(),
        DEFAULT_CACHE_TTL,
        CACHE_TTL_RANGE,
    );
    (c.errors.len() == before).then_some(LiveTraffic {
        prometheus: prometheus?,
        queries,
        cache_ttl,
        timeout,
    })
}

/// The server: its URL and credentials.
fn server(c: &mut Checker, sp: &str, s: &At<PrometheusFile>) -> Option<PrometheusServer> {
    let before = c.errors.len();
    let v = &s.value;
    // Whether the URL is https://; `None` when it is missing or wrong (reported once, there).
    let https = match &v.url {
        None => {
            c.push(line(s), format!("{sp}.url"), ErrorKind::Required(None));
            None
        }
        Some(u) => match reqwest::Url::parse(&u.value) {
            Ok(url)
                if matches!(url.scheme(), "http" | "https")
                    && url.host_str().is_some()
                    && url.query().is_none()
                    && url.fragment().is_none() =>
            {
                Some(url.scheme() == "https")
            }
            Ok(_) => {
                c.push(
                    line(u),
                    format!("{sp}.url"),
                    invalid(
                        &u.value,
                        "must be an http:// or https:// URL with a host and no query or fragment",
                    ),
                );
                None
            }
            Err(e) => {
                c.push(line(u), format!("{sp}.url"), invalid(&u.value, e));
                None
            }
        },
    };
    let mut file = |field: &str, v: Option<&At<String>>| -> Option<PathBuf> {
        let v = v?;
        if v.value.is_empty() {
            c.push(line(v), format!("{sp}.{field}"), ErrorKind::Required(None));
            return None;
        }
        if https == Some(false) {
            // TLS files mean nothing over plain HTTP, and a token would travel in clear.
            c.push(
                line(v),
                format!("{sp}.{field}"),
                ErrorKind::Forbidden("only with an https:// url".into()),
            );
        }
        let dir = Path::new(&*c.file).parent().unwrap_or(Path::new(""));
        Some(dir.join(&v.value))
    };
    let ca_file = file("caFile", v.ca_file.as_ref());
    let cert = file("clientCertFile", v.client_cert_file.as_ref());
    let key = file("clientKeyFile", v.client_key_file.as_ref());
    let bearer_token_file = file("bearerTokenFile", v.bearer_token_file.as_ref());
    let client_identity = match (cert, key) {
        (Some(c), Some(k)) => Some((c, k)),
        (None, None) => None,
        (Some(_), None) => {
            c.push(
                line(s),
                format!("{sp}.clientKeyFile"),
                ErrorKind::Required(Some("required with clientCertFile".into())),
            );
            None
        }
        (None, Some(_)) => {
            c.push(
                line(s),
                format!("{sp}.clientCertFile"),
                ErrorKind::Required(Some("required with clientKeyFile".into())),
            );
            None
        }
    };
    if client_identity.is_some() && ca_file.is_none() {
        c.push(
            line(s),
            format!("{sp}.caFile"),
            ErrorKind::Required(Some("required with clientCertFile".into())),
        );
    }
    (c.errors.len() == before).then(|| PrometheusServer {
        url: v
            .url
            .as_ref()
            .map(|u| u.value.trim_end_matches('/').to_owned())
            .unwrap_or_default(),
        ca_file,
        client_identity,
        bearer_token_file,
    })
}

/// One query: a kind with a resource and a template warrant can render.
fn query(c: &mut Checker, qp: &str, q: &At<TrafficQueryFile>) -> Option<TrafficQuery> {
    let before = c.errors.len();
    let v = &q.value;
    if v.resource.is_empty() {
        c.push(line(q), format!("{qp}.resource"), ErrorKind::Required(None));
    }
    let template = match &v.query {
        None => {
            c.push(line(q), format!("{qp}.query"), ErrorKind::Required(None));
            None
        }
        Some(t) if t.value.trim().is_empty() => {
            c.push(line(t), format!("{qp}.query"), ErrorKind::Required(None));
            None
        }
        Some(t) if t.value.len() > MAX_TEMPLATE => {
            c.push(
                line(t),
                format!("{qp}.query"),
                invalid(
                    &format!("{}...", t.value.chars().take(40).collect::<String>()),
                    format!("must be at most {MAX_TEMPLATE} bytes"),
                ),
            );
            None
        }
        Some(t) => match QueryTemplate::parse(&t.value) {
            Ok(tpl) => {
                for key in tpl.label_keys() {
                    if let Err(why) = qualified_name(key) {
                        c.push(
                            line(t),
                            format!("{qp}.query"),
                            invalid(&format!("${{label:{key}}}"), why),
                        );
                    }
                }
                Some(tpl)
            }
            Err(e) => {
                c.push(line(t), format!("{qp}.query"), invalid(&t.value, e));
                None
            }
        },
    };
    (c.errors.len() == before).then_some(())?;
    Some(TrafficQuery {
        kind: Kind {
            group: v.group.clone(),
            resource: v.resource.clone(),
        },
        template: template?,
    })
}

/// A Go duration at `field` within `range`, `default` when absent.
fn bounded(
    c: &mut Checker,
    tp: &str,
    field: &str,
    v: Option<&At<String>>,
    default: Duration,
    (min, max): (Duration, Duration),
) -> Duration {
    let Some(v) = v else { return default };
    let parsed = GoDuration::parse(&v.value)
        .ok()
        .and_then(|d| d.to_std())
        .filter(|d| (min..=max).contains(d));
    match parsed {
        Some(d) => d,
        None => {
            c.push(
                line(v),
                format!("{tp}.{field}"),
                invalid(
                    &v.value,
                    format!("must be a Go duration from {min:?} to {max:?}"),
                ),
            );
            default
        }
    }
}
