//! The `guard` block of a `DeletionGuard` authorizer: levels, kinds, IANA time zones, `HH:MM`
//! times, RFC 3339 freezes, Go durations, thresholds in order. The tickets file is resolved
//! against the configuration file's directory. Control-plane exclusions are always added. One
//! function per block of the file, called in file order by [`check`].

use super::{Checker, invalid, line, parse_mode};
use crate::config::duration::GoDuration;
use crate::config::error::ErrorKind;
use crate::config::model::guard::*;
use crate::config::model::pattern::Pattern;
use crate::config::model::window::{Freeze, Weekly, parse_day};
use crate::config::schema::At;
use crate::config::schema::guard::{self as file, GuardFile};
use chrono::{DateTime, NaiveTime, Utc, Weekday};
use chrono_tz::Tz;

mod buffer;
mod objects;
mod tickets;
mod traffic;
mod unusual;

/// Checks the block of the entry at `base`; `None` when anything is wrong (errors recorded).
/// Blocks are checked in file order, so errors come out in the order they always have.
pub(super) fn check(
    c: &mut Checker,
    base: &str,
    entry_line: u32,
    guard: Option<&At<GuardFile>>,
) -> Option<GuardSpec> {
    let before = c.errors.len();
    let Some(g) = guard else {
        c.push(
            entry_line,
            format!("{base}.guard"),
            ErrorKind::Required(Some("required when type=DeletionGuard".into())),
        );
        return None;
    };
    let p = format!("{base}.guard");
    let f = &g.value;
    let mode = mode(c, &p, f);
    let time_zone = time_zone(c, &p, f);
    // Without valid business hours nothing else is checked.
    let business_hours = business_hours(c, &p, f, time_zone)?;
    let update_resources = update_resources(c, &p, f);
    let namespaces = protected_namespaces(c, &p, f);
    let resources = protected_resources(c, &p, f);
    super::shapes::evictions(c, line(g), &format!("{p}.protectedResources"), &resources);
    let (excluded_namespaces, excluded_principals) = exclusions(c, &p, line(g), f);
    never_applies(c, &p, f, &excluded_namespaces);
    let trusted = trusted(c, &p, f);
    let windows = windows(c, &p, f, time_zone);
    let freezes = freezes(c, &p, f);
    let tickets = tickets::check(c, &p, f.tickets.as_ref());
    let rate_limits = rate_limits(c, &p, f);
    let unusual_deletions = unusual::check(c, &p, f.unusual_deletions.as_ref());
    let thresholds = thresholds(c, &p, f.risk_thresholds.as_ref());
    let weights = objects::weights(c, &p, f.risk_weights.as_ref());
    let object_protection = objects::protection(c, &p, f);
    let rate_limit_stage = objects::rate_limit_stage(c, &p, f);
    let buffer = buffer::check(c, &p, f.buffer.as_ref());
    let live_traffic = traffic::check(c, &p, f.live_traffic.as_ref());
    if namespaces.is_empty()
        && resources.is_empty()
        && f.rate_limits.is_empty()
        && f.unusual_deletions.is_none()
        && f.protection_label.is_none()
    {
        c.push(
            line(g),
            p.clone(),
            ErrorKind::Required(Some(
                "a guard needs protectedNamespaces, protectedResources, protectionLabel, rateLimits or unusualDeletions".into(),
            )),
        );
    }
    (c.errors.len() == before).then_some(GuardSpec {
        mode,
        time_zone,
        business_hours,
        update_resources,
        namespaces,
        resources,
        excluded_namespaces,
        excluded_principals,
        break_glass_groups: f.break_glass_groups.clone(),
        trusted,
        windows,
        freezes,
        tickets,
        rate_limits,
        unusual_deletions,
        thresholds,
        weights,
        objects: object_protection,
        rate_limit_stage,
        buffer,
        live_traffic,
        warrant_service_account: own_account(f),
    })
}

/// warrant's own service account as a user name: `warrantServiceAccount` when it is valid
/// (an invalid one is reported by `exclusions`), else the default.
fn own_account(f: &GuardFile) -> String {
    f.warrant_service_account
        .as_ref()
        .and_then(|sa| service_account(&sa.value))
        .unwrap_or_else(|| DEFAULT_WARRANT_SERVICE_ACCOUNT.to_owned())
}

/// `mode`: `Enforce` (default) or `Observe`. The entry's own `mode` is the same setting
/// (`entry::check` reconciles the two).
fn mode(c: &mut Checker, p: &str, f: &GuardFile) -> Mode {
    f.mode
        .as_ref()
        .and_then(|m| parse_mode(c, line(m), &format!("{p}.mode"), &m.value))
        .unwrap_or_default()
}

/// `timeZone`: an IANA zone, default UTC.
fn time_zone(c: &mut Checker, p: &str, f: &GuardFile) -> Tz {
    match &f.time_zone {
        None => Tz::UTC,
        Some(z) => tz(c, line(z), &format!("{p}.timeZone"), &z.value).unwrap_or(Tz::UTC),
    }
}

/// `businessHours`: a weekly window, default every day 10:00-22:00 in the guard's zone (the
/// risk model as our users wrote it).
fn business_hours(c: &mut Checker, p: &str, f: &GuardFile, time_zone: Tz) -> Option<Weekly> {
    match &f.business_hours {
        None => Some(Weekly {
            days: vec![
                Weekday::Mon,
                Weekday::Tue,
                Weekday::Wed,
                Weekday::Thu,
                Weekday::Fri,
                Weekday::Sat,
                Weekday::Sun,
            ],
            start: NaiveTime::from_hms_opt(10, 0, 0).unwrap_or_default(),
            end: NaiveTime::from_hms_opt(22, 0, 0).unwrap_or_default(),
            time_zone,
        }),
        Some(w) => window(
            c,
            line(w),
            &format!("{p}.businessHours"),
            &w.value,
            time_zone,
        ),
    }
}

/// `updateResources`: kinds whose `update` and `patch` are guarded too.
fn update_resources(c: &mut Checker, p: &str, f: &GuardFile) -> Vec<Kind> {
    let mut update_resources = Vec::new();
    for (i, k) in f.update_resources.iter().enumerate() {
        if k.value.resource.is_empty() {
            c.push(
                line(k),
                format!("{p}.updateResources[{i}].resource"),
                ErrorKind::Required(None),
            );
        }
        update_resources.push(kind(&k.value.resource, &k.value.group));
    }
    update_resources
}

/// `protectedNamespaces`: names and a level each.
fn protected_namespaces(c: &mut Checker, p: &str, f: &GuardFile) -> Vec<ProtectedNamespace> {
    let mut namespaces = Vec::new();
    for (i, n) in f.protected_namespaces.iter().enumerate() {
        let np = format!("{p}.protectedNamespaces[{i}]");
        if n.value.names.is_empty() {
            c.push(line(n), format!("{np}.names"), ErrorKind::Required(None));
        }
        if let Some(level) = level(c, line(n), &format!("{np}.level"), &n.value.level) {
            namespaces.push(ProtectedNamespace {
                names: pats(&n.value.names),
                level,
            });
        }
    }
    namespaces
}

/// `protectedResources`: a kind, optional names and a level each.
fn protected_resources(c: &mut Checker, p: &str, f: &GuardFile) -> Vec<ProtectedResource> {
    let mut resources = Vec::new();
    for (i, r) in f.protected_resources.iter().enumerate() {
        let rp = format!("{p}.protectedResources[{i}]");
        if r.value.resource.is_empty() {
            c.push(line(r), format!("{rp}.resource"), ErrorKind::Required(None));
        }
        if let Some(level) = level(c, line(r), &format!("{rp}.level"), &r.value.level) {
            resources.push(ProtectedResource {
                kind: kind(&r.value.resource, &r.value.group),
                names: pats(&r.value.names),
                level,
            });
        }
    }
    resources
}

/// `excludedNamespaces`, `excludedPrincipals` and `warrantServiceAccount`, with the control
/// plane's namespaces and users always added. `gl` is the line of the `guard:` block.
fn exclusions(c: &mut Checker, p: &str, gl: u32, f: &GuardFile) -> (Vec<Pattern>, Principals) {
    let mut excluded: Vec<&str> = DEFAULT_EXCLUDED_NAMESPACES.to_vec();
    excluded.extend(f.excluded_namespaces.iter().map(String::as_str));
    let excluded_namespaces = excluded.into_iter().map(Pattern::new).collect();
    let mut excluded_principals = principals(
        c,
        gl,
        &format!("{p}.excludedPrincipals"),
        &f.excluded_principals.users,
        &f.excluded_principals.groups,
        &f.excluded_principals.service_accounts,
    );
    // `warrantServiceAccount` names warrant's own account instead of the default one: the
    // default stays exempt only while no other is named.
    let own = f
        .warrant_service_account
        .as_ref()
        .and_then(|sa| service_account(&sa.value));
    excluded_principals.users.extend(
        DEFAULT_EXCLUDED_USERS
            .iter()
            .filter(|u| own.is_none() || **u != DEFAULT_WARRANT_SERVICE_ACCOUNT)
            .map(|u| Pattern::new(u)),
    );
    if let Some(sa) = &f.warrant_service_account {
        match own {
            Some(u) => excluded_principals.users.push(Pattern::new(&u)),
            None => c.push(
                line(sa),
                format!("{p}.warrantServiceAccount"),
                invalid(&sa.value, "must be namespace/name"),
            ),
        }
    }
    (excluded_namespaces, excluded_principals)
}

/// A protected namespace named exactly (no `*`) that an exclusion always covers can never be
/// protected: refused, rather than valid and silently without effect.
fn never_applies(c: &mut Checker, p: &str, f: &GuardFile, excluded: &[Pattern]) {
    for (i, entry) in f.protected_namespaces.iter().enumerate() {
        for (j, name) in entry.value.names.iter().enumerate() {
            if !name.contains('*') && excluded.iter().any(|x| x.matches(name)) {
                c.push(
                    line(entry),
                    format!("{p}.protectedNamespaces[{i}].names[{j}]"),
                    invalid(
                        name,
                        "this namespace is always excluded (the control plane's, or excludedNamespaces): its protection could never apply",
                    ),
                );
            }
        }
    }
}

/// `trusted`: principals (at least one) and a `maxLevel` (default `standard`) each.
fn trusted(c: &mut Checker, p: &str, f: &GuardFile) -> Vec<Trusted> {
    let mut trusted = Vec::new();
    for (i, t) in f.trusted.iter().enumerate() {
        let tp = format!("{p}.trusted[{i}]");
        let who = principals(
            c,
            line(t),
            &tp,
            &t.value.users,
            &t.value.groups,
            &t.value.service_accounts,
        );
        if who.users.is_empty() && who.groups.is_empty() {
            c.push(
                line(t),
                tp.clone(),
                ErrorKind::Required(Some(
                    "name at least one user, group or service account".into(),
                )),
            );
        }
        let max_level = match &t.value.max_level {
            None => Some(Level::Standard),
            Some(l) => level(c, line(t), &format!("{tp}.maxLevel"), l),
        };
        if let Some(max_level) = max_level {
            trusted.push(Trusted {
                principals: who,
                max_level,
            });
        }
    }
    trusted
}

/// `windows`: weekly windows, in the guard's zone unless they name theirs.
fn windows(c: &mut Checker, p: &str, f: &GuardFile, time_zone: Tz) -> Vec<Weekly> {
    let mut windows = Vec::new();
    for (i, w) in f.windows.iter().enumerate() {
        if let Some(w) = window(
            c,
            line(w),
            &format!("{p}.windows[{i}]"),
            &w.value,
            time_zone,
        ) {
            windows.push(w);
        }
    }
    windows
}

/// `freezes`: RFC 3339 start and end, end after start.
fn freezes(c: &mut Checker, p: &str, f: &GuardFile) -> Vec<Freeze> {
    let mut freezes = Vec::new();
    for (i, fr) in f.freezes.iter().enumerate() {
        let fp = format!("{p}.freezes[{i}]");
        let start = time(c, line(fr), &format!("{fp}.start"), &fr.value.start);
        let end = time(c, line(fr), &format!("{fp}.end"), &fr.value.end);
        if let (Some(start), Some(end)) = (start, end) {
            if end <= start {
                c.push(
                    line(fr),
                    format!("{fp}.end"),
                    invalid(&fr.value.end, "must be after start"),
                );
            }
            freezes.push(Freeze {
                start,
                end,
                reason: fr.value.reason.clone(),
            });
        }
    }
    freezes
}

/// `rateLimits`: a kind, a count of at least 1 and a positive Go duration each.
fn rate_limits(c: &mut Checker, p: &str, f: &GuardFile) -> Vec<RateLimit> {
    let mut rate_limits = Vec::new();
    for (i, r) in f.rate_limits.iter().enumerate() {
        let rp = format!("{p}.rateLimits[{i}]");
        let rv: &file::RateLimitFile = &r.value;
        if rv.count == 0 {
            c.push(
                line(r),
                format!("{rp}.count"),
                invalid("0", "must be at least 1"),
            );
        }
        let period = match GoDuration::parse(&rv.per) {
            Ok(d) if d.is_positive() => d.to_std(),
            Ok(_) => None,
            Err(e) => {
                c.push(line(r), format!("{rp}.per"), invalid(&rv.per, e));
                continue;
            }
        };
        match period {
            Some(period) => rate_limits.push(RateLimit {
                kind: kind(&rv.resource, &rv.group),
                count: rv.count,
                period,
                scope: objects::rate_limit_scope(c, &rp, rv),
            }),
            None => c.push(
                line(r),
                format!("{rp}.per"),
                invalid(&rv.per, "must be positive"),
            ),
        }
    }
    rate_limits
}

/// `riskThresholds`: defaults 25/50/80, increasing.
fn thresholds(c: &mut Checker, p: &str, t: Option<&At<file::ThresholdsFile>>) -> Thresholds {
    let mut thresholds = Thresholds::default();
    let Some(t) = t else {
        return thresholds;
    };
    thresholds.medium = t.value.medium.unwrap_or(thresholds.medium);
    thresholds.high = t.value.high.unwrap_or(thresholds.high);
    thresholds.critical = t.value.critical.unwrap_or(thresholds.critical);
    if !(thresholds.medium < thresholds.high && thresholds.high < thresholds.critical) {
        c.push(
            line(t),
            format!("{p}.riskThresholds"),
            invalid(
                &format!(
                    "{}/{}/{}",
                    thresholds.medium, thresholds.high, thresholds.critical
                ),
                "must increase: medium < high < critical",
            ),
        );
    }
    thresholds
}

fn kind(resource: &str, group: &str) -> Kind {
    Kind {
        group: group.to_owned(),
        resource: resource.to_owned(),
    }
}

fn pats(v: &[String]) -> Vec<Pattern> {
    v.iter().map(|s| Pattern::new(s)).collect()
}

fn service_account(s: &str) -> Option<String> {
    let (ns, name) = s.split_once('/')?;
    (!ns.is_empty() && !name.is_empty() && !name.contains('/'))
        .then(|| format!("system:serviceaccount:{ns}:{name}"))
}

fn principals(
    c: &mut Checker,
    l: u32,
    p: &str,
    users: &[String],
    groups: &[String],
    service_accounts: &[String],
) -> Principals {
    let mut out = Principals {
        users: pats(users),
        groups: groups.to_vec(),
    };
    for (i, sa) in service_accounts.iter().enumerate() {
        match service_account(sa) {
            Some(u) => out.users.push(Pattern::new(&u)),
            None => c.push(
                l,
                format!("{p}.serviceAccounts[{i}]"),
                invalid(sa, "must be namespace/name"),
            ),
        }
    }
    out
}

pub(super) fn level(c: &mut Checker, l: u32, p: &str, v: &str) -> Option<Level> {
    let r = Level::parse(v);
    if r.is_none() {
        c.push(
            l,
            p,
            ErrorKind::NotSupported {
                value: v.into(),
                supported: vec!["critical", "high", "standard"],
                detail: None,
            },
        );
    }
    r
}

fn tz(c: &mut Checker, l: u32, p: &str, v: &str) -> Option<Tz> {
    match v.parse::<Tz>() {
        Ok(z) => Some(z),
        Err(_) => {
            c.push(l, p, invalid(v, "not an IANA time zone"));
            None
        }
    }
}

fn time(c: &mut Checker, l: u32, p: &str, v: &str) -> Option<DateTime<Utc>> {
    match DateTime::parse_from_rfc3339(v) {
        Ok(t) => Some(t.with_timezone(&Utc)),
        Err(e) => {
            c.push(l, p, invalid(v, format!("not an RFC 3339 time: {e}")));
            None
        }
    }
}

fn window(
    c: &mut Checker,
    l: u32,
    p: &str,
    w: &file::WindowFile,
    default_tz: Tz,
) -> Option<Weekly> {
    let before = c.errors.len();
    let mut days = Vec::new();
    if w.days.is_empty() {
        c.push(l, format!("{p}.days"), ErrorKind::Required(None));
    }
    for (i, d) in w.days.iter().enumerate() {
        match parse_day(d) {
            Some(d) => days.push(d),
            None => c.push(
                l,
                format!("{p}.days[{i}]"),
                invalid(d, "not a day (Mon .. Sun)"),
            ),
        }
    }
    let hm = |c: &mut Checker, field: &str, v: &str| match NaiveTime::parse_from_str(v, "%H:%M") {
        Ok(t) => Some(t),
        Err(_) => {
            c.push(l, format!("{p}.{field}"), invalid(v, "must be HH:MM"));
            None
        }
    };
    let start = hm(c, "start", &w.start);
    let end = hm(c, "end", &w.end);
    if start.is_some() && start == end {
        c.push(
            l,
            format!("{p}.end"),
            invalid(&w.end, "must differ from start"),
        );
    }
    let time_zone = match &w.time_zone {
        None => Some(default_tz),
        Some(z) => tz(c, l, &format!("{p}.timeZone"), z),
    };
    if c.errors.len() != before {
        return None;
    }
    Some(Weekly {
        days,
        start: start?,
        end: end?,
        time_zone: time_zone?,
    })
}
