//! What a replay found: totals, flips by kind, and every flip grouped by kind, deciding rule,
//! user and resource with its first few examples; rendered as text or JSON (`-o json`).

use super::record::Skip;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

/// The counts of one replay.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    /// Reviews read from the inputs.
    pub read: u64,
    /// Reviews judged against the candidate and compared.
    pub replayed: u64,
    /// Replayed reviews whose answer did not change.
    pub unchanged: u64,
    /// Replayed reviews whose answer changed.
    pub flipped: u64,
    /// Flips that would deny a bootstrap identity.
    pub(crate) lockouts: u64,
    /// kube-apiserver events the candidate had no opinion on: the API server's later
    /// authorizers answer those, so they count as unchanged.
    pub(crate) deferred: u64,
    /// Reviews without a recorded answer and without a baseline to compare with.
    pub(crate) unrecorded: u64,
    /// Replayed reviews whose recorder left extra keys out (`extraRedacted`): not exact.
    pub redacted: u64,
    /// Lines or documents that are no review.
    pub malformed: u64,
    /// Items skipped on purpose, by why.
    pub skipped: BTreeMap<Skip, u64>,
}

/// One flipped review, as a group shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Example {
    /// `FILE:LINE`.
    pub(crate) origin: String,
    /// When it was judged in the replay (RFC 3339).
    pub at: String,
    /// The verb.
    pub verb: String,
    /// The namespace, if any.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// The object name, if any.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// The reason of the side that decided (the candidate's, or the one it no longer gives).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// The recorder left extra keys out: the replay may not be exact.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub redacted: bool,
}

/// The flips of one kind, rule, user and resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Group {
    /// `allow->deny`, `no-opinion->deny`, `deny->allow`, ...
    pub flip: String,
    /// The deciding `authorizer/rule` (the candidate's, or the one that no longer decides), or
    /// `-`.
    pub rule: String,
    /// The user.
    pub user: String,
    /// `resource[.group][/subresource]`, or the non-resource path.
    pub resource: String,
    /// How many reviews.
    pub count: u64,
    /// The bootstrap identity this would lock out, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lockout: Option<&'static str>,
    /// The first few.
    pub examples: Vec<Example>,
}

/// A replay's findings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// The configuration judged.
    pub candidate: String,
    /// What it was compared with: a configuration, or `recorded decisions`.
    pub baseline: String,
    /// When reviews were judged: `recorded`, `now` or a time.
    pub at: String,
    /// The counts.
    pub totals: Totals,
    /// Flips by kind.
    pub flips: BTreeMap<String, u64>,
    /// Every flip, grouped: lockouts first, then the largest groups.
    pub groups: Vec<Group>,
    /// The first errors of malformed lines (`FILE:LINE: message`).
    pub errors: Vec<String>,
}

/// The key of a group.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GroupKey {
    /// The flip's label.
    pub flip: &'static str,
    /// The deciding rule.
    pub rule: String,
    /// The user.
    pub user: String,
    /// The resource.
    pub resource: String,
}

/// A report under construction.
#[derive(Debug)]
pub struct Builder {
    report: Report,
    groups: HashMap<GroupKey, Group>,
    examples: usize,
    max_errors: usize,
}

impl Builder {
    /// An empty report keeping `examples` examples per group and `max_errors` error lines.
    pub fn new(candidate: String, baseline: String, at: String, examples: usize) -> Self {
        Self {
            report: Report {
                candidate,
                baseline,
                at,
                totals: Totals::default(),
                flips: BTreeMap::new(),
                groups: Vec::new(),
                errors: Vec::new(),
            },
            groups: HashMap::new(),
            examples,
            max_errors: 20,
        }
    }

    /// The counts, to update.
    pub fn totals(&mut self) -> &mut Totals {
        &mut self.report.totals
    }

    /// Counts a skipped item.
    pub fn skipped(&mut self, why: Skip) {
        *self.report.totals.skipped.entry(why).or_default() += 1;
    }

    /// Counts a malformed line, keeping its message while there is room.
    pub fn malformed(&mut self, message: String) {
        self.report.totals.malformed += 1;
        if self.report.errors.len() < self.max_errors {
            self.report.errors.push(message);
        }
    }

    /// Adds one flip.
    pub fn flip(&mut self, key: GroupKey, lockout: Option<&'static str>, example: Example) {
        let t = &mut self.report.totals;
        t.flipped += 1;
        if lockout.is_some() {
            t.lockouts += 1;
        }
        *self.report.flips.entry(key.flip.to_owned()).or_default() += 1;
        let examples = self.examples;
        let g = self.groups.entry(key).or_insert_with_key(|k| Group {
            flip: k.flip.to_owned(),
            rule: k.rule.clone(),
            user: k.user.clone(),
            resource: k.resource.clone(),
            count: 0,
            lockout,
            examples: Vec::new(),
        });
        g.count += 1;
        if g.examples.len() < examples {
            g.examples.push(example);
        }
    }

    /// The report: groups sorted, lockouts first, then by size.
    pub fn finish(mut self) -> Report {
        let mut groups: Vec<Group> = self.groups.into_values().collect();
        groups.sort_by(|a, b| {
            (b.lockout.is_some(), b.count)
                .cmp(&(a.lockout.is_some(), a.count))
                .then_with(|| {
                    (&a.flip, &a.rule, &a.user, &a.resource).cmp(&(
                        &b.flip,
                        &b.rule,
                        &b.user,
                        &b.resource,
                    ))
                })
        });
        self.report.groups = groups;
        self.report
    }
}

impl Report {
    /// The report as `warrant replay` prints it.
    pub fn text(&self) -> String {
        let t = &self.totals;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "replayed {} of {} reviews against {} (baseline: {}; at: {})",
            t.replayed, t.read, self.candidate, self.baseline, self.at
        );
        let kinds: Vec<String> = self.flips.iter().map(|(k, n)| format!("{k} {n}")).collect();
        let _ = write!(s, "  unchanged {}, flipped {}", t.unchanged, t.flipped);
        if !kinds.is_empty() {
            let _ = write!(s, " ({})", kinds.join(", "));
        }
        if t.lockouts > 0 {
            let _ = write!(s, ", {} LOCKOUT", t.lockouts);
        }
        s.push('\n');
        for (n, what) in [
            (
                t.deferred,
                "kube-apiserver events the candidate has no opinion on (left to the API server's other authorizers)",
            ),
            (
                t.unrecorded,
                "reviews without a recorded answer (give --baseline to compare them)",
            ),
            (t.redacted, "reviews with redacted extra keys (not exact)"),
        ] {
            if n > 0 {
                let _ = writeln!(s, "  {n} {what}");
            }
        }
        for (why, n) in &t.skipped {
            let _ = writeln!(s, "  skipped {n} {}", why.describe());
        }
        if t.malformed > 0 {
            let _ = writeln!(s, "  {} malformed lines:", t.malformed);
            for e in &self.errors {
                let _ = writeln!(s, "    {e}");
            }
        }
        for g in &self.groups {
            let lockout = g
                .lockout
                .map(|l| format!("LOCKOUT ({l}) "))
                .unwrap_or_default();
            let _ = writeln!(
                s,
                "{lockout}{} {} user={} resource={}: {}",
                g.flip, g.rule, g.user, g.resource, g.count
            );
            for e in &g.examples {
                let mut target = e.verb.clone();
                if !e.name.is_empty() {
                    let _ = write!(target, " {}", e.name);
                }
                if !e.namespace.is_empty() {
                    let _ = write!(target, " -n {}", e.namespace);
                }
                let redacted = if e.redacted { " (extra redacted)" } else { "" };
                let _ = writeln!(s, "    {} {} {target}{redacted}", e.origin, e.at);
                if !e.reason.is_empty() {
                    let _ = writeln!(s, "      {}", e.reason.replace('\n', "; "));
                }
            }
        }
        s
    }
}
