//! The replay itself: every recorded review is judged by the candidate chain (and by the
//! baseline chain, when there is one) at the time it says, and the answers are compared.
//!
//! Without a baseline the recorded answer is the baseline. warrant's own records carry
//! warrant's answer, so every change counts, to and from NoOpinion included. A kube-apiserver
//! event carries the API server's answer (`allow` or `forbid`, its whole chain): a candidate
//! Allow or Deny replaces it, and a candidate NoOpinion leaves it to the API server's other
//! authorizers, so it counts as unchanged (`deferred`); give `--baseline` to compare two
//! configurations exactly instead.

use super::input::{InputError, Reader};
use super::lockout::Bootstrap;
use super::record::{Item, Recorded, Source};
use super::report::{Builder, Example, GroupKey, Report};
use crate::authorizer::{Answer, Chain, Deadline, Input};
use crate::decision::Decision;
use chrono::{DateTime, SecondsFormat, Utc};
use std::path::PathBuf;
use std::time::Duration;

/// When reviews are judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum At {
    /// At the time the input records (now when it records none).
    #[default]
    Recorded,
    /// All at the moment the replay starts.
    Now,
    /// All at this time.
    Fixed(DateTime<Utc>),
}

impl At {
    /// Parses `recorded`, `now` or an RFC 3339 time.
    pub fn parse(s: &str) -> Result<Self, chrono::ParseError> {
        match s {
            "recorded" => Ok(At::Recorded),
            "now" => Ok(At::Now),
            t => DateTime::parse_from_rfc3339(t).map(|t| At::Fixed(t.with_timezone(&Utc))),
        }
    }

    fn describe(self) -> String {
        match self {
            At::Recorded => "recorded".into(),
            At::Now => "now".into(),
            At::Fixed(t) => rfc3339(t),
        }
    }
}

/// How to replay.
#[derive(Debug, Clone)]
pub struct Options {
    /// When reviews are judged.
    pub at: At,
    /// Examples kept per group of flips.
    pub examples: usize,
    /// Who counts as a bootstrap identity.
    pub bootstrap: Bootstrap,
    /// How the candidate is named in the report.
    pub(crate) candidate_name: String,
    /// How the baseline is named in the report (when there is a baseline chain).
    pub(crate) baseline_name: String,
    /// The time budget of one review (per chain).
    pub review_timeout: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            at: At::Recorded,
            examples: 3,
            bootstrap: Bootstrap::default(),
            candidate_name: "candidate".into(),
            baseline_name: "baseline".into(),
            review_timeout: Duration::from_secs(10),
        }
    }
}

/// Replays `inputs` against `candidate`, compared with `baseline` or the recorded answers.
pub async fn replay(
    inputs: &[PathBuf],
    candidate: &Chain,
    baseline: Option<&Chain>,
    options: &Options,
) -> Result<Report, InputError> {
    let mut reader = Reader::new(inputs)?;
    let baseline_name = match baseline {
        Some(_) => options.baseline_name.clone(),
        None => "recorded decisions".to_owned(),
    };
    let mut report = Builder::new(
        options.candidate_name.clone(),
        baseline_name,
        options.at.describe(),
        options.examples,
    );
    let started = Utc::now();
    while let Some(next) = reader.next_item() {
        match next? {
            Err(e) => report.malformed(format!("{}: {}", e.origin, e.message)),
            Ok(Item::Skipped(why)) => report.skipped(why),
            Ok(Item::Review(rec)) => {
                report.totals().read += 1;
                let now = match options.at {
                    At::Recorded => rec.at.unwrap_or(started),
                    At::Now => started,
                    At::Fixed(t) => t,
                };
                judge(&mut report, *rec, now, candidate, baseline, options).await;
            }
        }
    }
    Ok(report.finish())
}

/// One side of a comparison: what was (or would be) answered, by whom, and why.
struct Side {
    decision: Decision,
    decider: String,
    reason: String,
}

impl Side {
    fn of(a: &Answer) -> Self {
        Self {
            decision: a.decision,
            decider: decider(a),
            reason: a.reason.clone(),
        }
    }
}

/// Judges one record and counts what changed.
async fn judge(
    report: &mut Builder,
    rec: Recorded,
    now: DateTime<Utc>,
    candidate: &Chain,
    baseline: Option<&Chain>,
    options: &Options,
) {
    let input = Input::new(rec.review, now);
    let deadline = || Deadline::after(options.review_timeout);
    let after = Side::of(&candidate.authorize(&input, deadline()).await);
    let before = match baseline {
        Some(b) => Some(Side::of(&b.authorize(&input, deadline()).await)),
        None => rec.decision.map(|decision| Side {
            decision,
            decider: rec.decided_by.clone().unwrap_or_default(),
            reason: String::new(),
        }),
    };
    let Some(before) = before else {
        report.totals().unrecorded += 1;
        return;
    };
    let t = report.totals();
    t.replayed += 1;
    if !rec.redacted.is_empty() {
        t.redacted += 1;
    }
    // Against the API server's own answer, a NoOpinion is left to its other authorizers.
    let deferred = baseline.is_none()
        && rec.source == Source::ApiServer
        && after.decision == Decision::NoOpinion;
    let to = if deferred {
        before.decision
    } else {
        after.decision
    };
    if deferred {
        t.deferred += 1;
    }
    if to == before.decision {
        t.unchanged += 1;
        return;
    }
    let review = &input.review;
    let lockout = (to == Decision::Deny)
        .then(|| options.bootstrap.identity(review.user(), review.groups()))
        .flatten();
    let flip = flip_label(before.decision, to);
    // The side that decides names the rule: the candidate, or the one it no longer gives.
    let decided = if after.decision.is_final() {
        after
    } else {
        before
    };
    let key = GroupKey {
        flip,
        rule: if decided.decider.is_empty() {
            "-".into()
        } else {
            decided.decider
        },
        user: review.user().to_owned(),
        resource: resource_label(review),
    };
    let example = example(&rec.origin, &rec.redacted, review, now, decided.reason);
    report.flip(key, lockout, example);
}

/// One flipped review as a report shows it.
fn example(
    origin: &super::record::Origin,
    redacted: &[String],
    review: &crate::review::Review,
    now: DateTime<Utc>,
    reason: String,
) -> Example {
    let attrs = review.spec().resource_attributes.as_ref();
    let namespace = attrs.and_then(|a| a.namespace.clone()).unwrap_or_default();
    let name = attrs.and_then(|a| a.name.clone()).unwrap_or_default();
    Example {
        origin: origin.to_string(),
        at: rfc3339(now),
        verb: review.verb().to_owned(),
        namespace,
        name,
        reason,
        redacted: !redacted.is_empty(),
    }
}

/// `authorizer/rule` (or `authorizer`) of the entry that decided, or "".
fn decider(a: &Answer) -> String {
    match (&a.decided_by, &a.rule) {
        (Some(by), Some(rule)) => format!("{by}/{rule}"),
        (Some(by), None) => by.to_string(),
        _ => String::new(),
    }
}

fn label(d: Decision) -> &'static str {
    match d {
        Decision::Allow => "allow",
        Decision::Deny => "deny",
        Decision::NoOpinion => "no-opinion",
    }
}

/// `allow->deny` and the like.
fn flip_label(from: Decision, to: Decision) -> &'static str {
    match (label(from), label(to)) {
        ("allow", "deny") => "allow->deny",
        ("allow", "no-opinion") => "allow->no-opinion",
        ("deny", "allow") => "deny->allow",
        ("deny", "no-opinion") => "deny->no-opinion",
        ("no-opinion", "allow") => "no-opinion->allow",
        ("no-opinion", "deny") => "no-opinion->deny",
        _ => "unchanged",
    }
}

/// `resource[.group][/subresource]`, or the non-resource path.
fn resource_label(review: &crate::review::Review) -> String {
    let spec = review.spec();
    if let Some(a) = &spec.resource_attributes {
        let mut s = a.resource.clone().unwrap_or_default();
        if let Some(g) = a.group.as_deref().filter(|g| !g.is_empty()) {
            s.push('.');
            s.push_str(g);
        }
        if let Some(sub) = a.subresource.as_deref().filter(|s| !s.is_empty()) {
            s.push('/');
            s.push_str(sub);
        }
        s
    } else {
        spec.non_resource_attributes
            .as_ref()
            .and_then(|n| n.path.clone())
            .unwrap_or_default()
    }
}

fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Micros, true)
}

/// Runs [`replay`] on a current-thread runtime of its own (offline commands, the reload gate).
pub fn replay_blocking(
    inputs: &[PathBuf],
    candidate: &Chain,
    baseline: Option<&Chain>,
    options: &Options,
) -> Result<Report, ReplayError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ReplayError::Runtime)?;
    runtime
        .block_on(replay(inputs, candidate, baseline, options))
        .map_err(ReplayError::Input)
}

/// Why a replay could not run.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// An input cannot be read.
    #[error(transparent)]
    Input(#[from] InputError),
    /// The runtime could not start.
    #[error("cannot start runtime: {0}")]
    Runtime(#[source] std::io::Error),
}
