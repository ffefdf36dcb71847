//! `warrant test FILE...`: policy test suites. Each suite names a configuration (relative to the
//! suite file) and a list of cases; each case is a review, either a v1 `SubjectAccessReviewSpec`
//! (`review:`) or the `warrant check` flags as fields, an optional evaluation time `at`, and the
//! expected decision, code and reason substring. One line is printed per failing case
//! (`FILE: CASE: expected X, got Y (reason)`), then `N passed, M failed`. Exit status: 0 when all
//! pass, 1 on any failure, 2 on a usage or configuration error.
//!
//! A case with `pod:` is a pod's creation judged by pod security instead (`pod_case`), from the
//! suite's `constraints` (a file or directory, default its cluster state), the namespaces of its
//! cluster state and its `canUse` grants; it may expect `scc`, the constraint chosen.
//!
//! The expected `code` is the deciding code for an Allow or Deny. A NoOpinion has no deciding
//! code, so for it `code` is matched against the codes the authorizers that stood aside reported
//! (the deletion guard's `ALLOW`, `BREAK_GLASS`, `OBSERVED_*`), shadows included; likewise
//! `reasonContains` also matches their messages.

mod pod_case;

use super::ExitStatus;
use super::check::{Flags, InputError, TimeError, evaluate, offline_runtime, parse_at};
use super::object_input::{self, ObjectInputError};
use crate::authorizer::{Answer, BuildError, Chain, Input, StepOutcome};
use crate::config::{ConfigErrors, load_file};
use crate::decision::Decision;
use crate::object::ClusterView;
use crate::review::{ApiVersion, Review, ReviewError};
use k8s_openapi::api::authorization::v1::SubjectAccessReviewSpec;
use serde::Deserialize;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use thiserror::Error;

/// Why a suite could not run: a usage or configuration error, not a failing case.
#[derive(Debug, Error)]
pub(crate) enum SuiteError {
    /// The suite file cannot be read.
    #[error("{path}: cannot read: {source}")]
    Read {
        /// The suite file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The suite file is not a suite.
    #[error("{path}: {source}")]
    Decode {
        /// The suite file.
        path: String,
        /// The decoder's error, with its line.
        source: serde_saphyr::Error,
    },
    /// The configuration it names does not validate.
    #[error("{path}: config {config}:\n{source}")]
    Config {
        /// The suite file.
        path: String,
        /// The configuration, as the suite names it.
        config: String,
        /// Every error.
        source: ConfigErrors,
    },
    /// The configuration's chain cannot be built.
    #[error("{path}: config {config}: {source}")]
    Chain {
        /// The suite file.
        path: String,
        /// The configuration, as the suite names it.
        config: String,
        /// Why.
        source: BuildError,
    },
    /// Its cluster state cannot be loaded.
    #[error("{path}: {source}")]
    ClusterState {
        /// The suite file.
        path: String,
        /// Why.
        source: ObjectInputError,
    },
    /// Its pod cases have no constraints, or its grants cannot be read.
    #[error("{path}: {source}")]
    PodSecurity {
        /// The suite file.
        path: String,
        /// Why.
        source: ObjectInputError,
    },
    /// Two cases share a name.
    #[error("{path}: case name {name:?} is used twice")]
    DuplicateCase {
        /// The suite file.
        path: String,
        /// The name.
        name: String,
    },
    /// A case describes no input.
    #[error("{path}: {case}: {source}")]
    Case {
        /// The suite file.
        path: String,
        /// The case.
        case: String,
        /// Why.
        source: CaseError,
    },
}

/// Why a case describes no input.
#[derive(Debug, Error)]
pub(crate) enum CaseError {
    /// `object` or `oldObject` is not a Kubernetes object.
    #[error("{0}: not a Kubernetes object (a mapping with metadata)")]
    NotAnObject(&'static str),
    /// The object does not fit the verb.
    #[error(transparent)]
    Object(#[from] ObjectInputError),
    /// `at` is not an RFC 3339 time.
    #[error("at {0}")]
    At(#[source] TimeError),
    /// Both `review:` and check fields.
    #[error("give either review: or the check fields, not both")]
    ReviewAndFlags,
    /// Neither `review:` nor a verb and a resource.
    #[error("needs review: or verb and resource")]
    NoReview,
    /// `review:` is not a `SubjectAccessReviewSpec`.
    #[error("review: not a SubjectAccessReviewSpec: {0}")]
    Spec(#[source] serde_json::Error),
    /// `review:` is not a review warrant can judge.
    #[error("review: {0}")]
    Review(#[source] ReviewError),
    /// The check fields describe no review.
    #[error(transparent)]
    Flags(#[from] InputError),
    /// A pod case with review fields, or an expectation only a pod case has.
    #[error("a pod case takes pod, namespace, as and asGroups; scc is expected of pod cases only")]
    PodCase,
}

/// Arguments of `warrant test`.
#[derive(Debug, clap::Args)]
pub struct TestArgs {
    /// Suite files.
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
}

/// A suite file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Suite {
    /// The configuration, relative to the suite file.
    config: String,
    /// Saved cluster state for the admission cases, a directory relative to the suite file.
    #[serde(default)]
    cluster_state: Option<String>,
    /// For the pod cases: the SecurityContextConstraints, a file or directory relative to the
    /// suite file (default: those of the cluster state).
    #[serde(default)]
    constraints: Option<String>,
    /// For the pod cases: who may use which constraint, `WHO=CONSTRAINT`.
    #[serde(default)]
    can_use: Vec<String>,
    /// The cases, in order.
    cases: Vec<Case>,
}

/// One case.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Case {
    name: String,
    #[serde(default)]
    at: Option<String>,
    #[serde(default)]
    review: Option<serde_json::Value>,
    #[serde(default)]
    verb: Option<String>,
    #[serde(default)]
    resource: Option<String>,
    #[serde(default)]
    namespace: Option<String>,
    #[serde(default)]
    subresource: Option<String>,
    #[serde(default, rename = "as")]
    as_user: Option<String>,
    #[serde(default)]
    as_groups: Vec<String>,
    #[serde(default)]
    as_uid: Option<String>,
    #[serde(default)]
    extra: BTreeMap<String, Vec<String>>,
    /// An admission case (the validation ring): the object deleted, or the new object of an
    /// update.
    #[serde(default)]
    object: Option<serde_json::Value>,
    /// For an update: the stored object.
    #[serde(default)]
    old_object: Option<serde_json::Value>,
    /// The admission request is a dry run.
    #[serde(default)]
    dry_run: bool,
    /// A pod case: the pod created.
    #[serde(default)]
    pod: Option<serde_json::Value>,
    expect: Expect,
}

/// What a case expects.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Expect {
    decision: Want,
    #[serde(default)]
    code: Option<String>,
    #[serde(default)]
    reason_contains: Option<String>,
    /// For a pod case: the constraint chosen.
    #[serde(default)]
    scc: Option<String>,
}

/// A decision as a suite spells it.
#[derive(Debug, Clone, Copy, Deserialize)]
enum Want {
    Allow,
    Deny,
    NoOpinion,
}

impl Want {
    fn decision(self) -> Decision {
        match self {
            Want::Allow => Decision::Allow,
            Want::Deny => Decision::Deny,
            Want::NoOpinion => Decision::NoOpinion,
        }
    }
}

impl Case {
    /// A pod case names only the pod, its namespace and requester, and expects no code.
    fn check_pod_case(&self) -> Result<(), CaseError> {
        let review_fields = self.review.is_some()
            || self.verb.is_some()
            || self.resource.is_some()
            || self.subresource.is_some()
            || self.as_uid.is_some()
            || !self.extra.is_empty()
            || self.object.is_some()
            || self.old_object.is_some()
            || self.dry_run
            || self.at.is_some()
            || self.expect.code.is_some()
            || matches!(self.expect.decision, Want::NoOpinion);
        match review_fields {
            true => Err(CaseError::PodCase),
            false => Ok(()),
        }
    }

    /// Judges a pod case: why it failed, or `None`.
    fn run_pod(
        &self,
        runtime: &tokio::runtime::Runtime,
        security: &crate::pod_admission::PodSecurity,
        pod: &serde_json::Value,
    ) -> Option<String> {
        let case = pod_case::PodCase {
            pod,
            namespace: self.namespace.as_deref(),
            user: self.as_user.as_deref(),
            groups: &self.as_groups,
        };
        let expect = pod_case::PodExpect {
            allowed: matches!(self.expect.decision, Want::Allow),
            scc: self.expect.scc.as_deref(),
            reason_contains: self.expect.reason_contains.as_deref(),
        };
        pod_case::run(runtime, security, &case, &expect)
    }

    /// The input of the case: its review and, for an admission case, the object's context in
    /// the suite's cluster.
    fn input(&self, view: &Arc<dyn ClusterView>) -> Result<Input, CaseError> {
        if self.expect.scc.is_some() {
            return Err(CaseError::PodCase);
        }
        let input = self.review_input()?;
        let Some(object) = &self.object else {
            return Ok(input);
        };
        let as_object = |field: &'static str, v: &serde_json::Value| {
            object_input::object(v.clone()).ok_or(CaseError::NotAnObject(field))
        };
        let object = as_object("object", object)?;
        let old = match &self.old_object {
            Some(v) => Some(as_object("oldObject", v)?),
            None => None,
        };
        let verb = self.verb.as_deref().unwrap_or("");
        let ctx = object_input::context(verb, object, old, self.dry_run, view.clone())?;
        Ok(input.with_object(Arc::new(ctx)))
    }

    fn review_input(&self) -> Result<Input, CaseError> {
        let now = match &self.at {
            Some(at) => parse_at(at).map_err(CaseError::At)?,
            None => chrono::Utc::now(),
        };
        let has_flags = self.verb.is_some()
            || self.resource.is_some()
            || self.namespace.is_some()
            || self.subresource.is_some()
            || self.as_user.is_some()
            || !self.as_groups.is_empty()
            || self.as_uid.is_some()
            || !self.extra.is_empty();
        let review = match &self.review {
            Some(_) if has_flags => {
                return Err(CaseError::ReviewAndFlags);
            }
            Some(v) => {
                let spec: SubjectAccessReviewSpec =
                    serde_json::from_value(v.clone()).map_err(CaseError::Spec)?;
                Review::new(ApiVersion::V1, spec).map_err(CaseError::Review)?
            }
            None => {
                let (Some(verb), Some(target)) = (&self.verb, &self.resource) else {
                    return Err(CaseError::NoReview);
                };
                Flags {
                    verb,
                    target,
                    namespace: self.namespace.as_deref(),
                    subresource: self.subresource.as_deref(),
                    user: self.as_user.as_deref(),
                    groups: &self.as_groups,
                    uid: self.as_uid.as_deref(),
                    extra: (!self.extra.is_empty()).then(|| self.extra.clone()),
                }
                .review()?
            }
        };
        Ok(Input::new(review, now))
    }
}

/// The codes an answer shows: the deciding one, or for NoOpinion those of the steps that stood
/// aside with a code.
fn codes(answer: &Answer) -> Vec<&str> {
    if let Some(c) = &answer.code {
        return vec![c.as_str()];
    }
    if answer.decision != Decision::NoOpinion {
        return Vec::new();
    }
    answer
        .trace
        .iter()
        .filter_map(|s| match &s.outcome {
            StepOutcome::Verdict(v) => v.reason.as_ref()?.code.as_ref().map(|c| c.as_str()),
            _ => None,
        })
        .collect()
}

/// The reasons an answer shows: its own, and for NoOpinion also those of the steps that stood
/// aside, shadows included (a shadow's reason is recorded, never part of the answer).
fn reasons(answer: &Answer) -> impl Iterator<Item = &str> {
    let stood_aside = answer
        .trace
        .iter()
        .filter(move |_| answer.decision == Decision::NoOpinion)
        .filter_map(|s| match &s.outcome {
            StepOutcome::Verdict(v) => v.reason.as_ref().map(|r| r.message.as_str()),
            _ => None,
        });
    std::iter::once(answer.reason.as_str()).chain(stood_aside)
}

/// Why a case failed, or `None` when it passed.
fn mismatch(expect: &Expect, answer: &Answer) -> Option<String> {
    let got_codes = codes(answer);
    let got = match got_codes.as_slice() {
        [] => answer.decision.to_string(),
        cs => format!("{} [{}]", answer.decision, cs.join(", ")),
    };
    let want = expect.decision.decision();
    let mut wanted = want.to_string();
    if let Some(c) = &expect.code {
        wanted.push_str(&format!(" [{c}]"));
    }
    if let Some(r) = &expect.reason_contains {
        wanted.push_str(&format!(" with reason containing {r:?}"));
    }
    let ok = answer.decision == want
        && expect
            .code
            .as_ref()
            .is_none_or(|c| got_codes.contains(&c.as_str()))
        && expect
            .reason_contains
            .as_ref()
            .is_none_or(|r| reasons(answer).any(|reason| reason.contains(r.as_str())));
    (!ok).then(|| {
        let reason = answer.reason.replace('\n', "; ");
        format!("expected {wanted}, got {got} ({reason})")
    })
}

/// Counts of one run.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Tally {
    passed: usize,
    failed: usize,
}

/// Runs one suite file, printing its failures; `Err` on a usage or configuration error.
fn run_suite(runtime: &tokio::runtime::Runtime, path: &Path) -> Result<Tally, Box<SuiteError>> {
    let shown = path.display();
    let name = || shown.to_string();
    let text = std::fs::read_to_string(path).map_err(|source| SuiteError::Read {
        path: name(),
        source,
    })?;
    let suite: Suite = serde_saphyr::from_str(&text).map_err(|source| SuiteError::Decode {
        path: name(),
        source,
    })?;
    let config_path = path.parent().unwrap_or(Path::new("")).join(&suite.config);
    let loaded = load_file(&config_path).map_err(|source| SuiteError::Config {
        path: name(),
        config: suite.config.clone(),
        source,
    })?;
    let chain = Chain::build(&loaded.config).map_err(|source| SuiteError::Chain {
        path: name(),
        config: suite.config.clone(),
        source,
    })?;
    let state = suite
        .cluster_state
        .as_ref()
        .map(|d| path.parent().unwrap_or(Path::new("")).join(d));
    let view = object_input::cluster_view(state.as_deref()).map_err(|source| {
        SuiteError::ClusterState {
            path: name(),
            source,
        }
    })?;
    let base = path.parent().unwrap_or(Path::new(""));
    let security = match suite.cases.iter().any(|c| c.pod.is_some()) {
        true => Some(
            object_input::pod_security(
                state.as_deref(),
                suite.constraints.as_ref().map(|c| base.join(c)).as_deref(),
                &suite.can_use,
            )
            .map_err(|source| SuiteError::PodSecurity {
                path: name(),
                source,
            })?,
        ),
        false => None,
    };
    let mut names = HashSet::new();
    let mut inputs = Vec::with_capacity(suite.cases.len());
    for case in &suite.cases {
        if !names.insert(case.name.as_str()) {
            return Err(Box::new(SuiteError::DuplicateCase {
                path: name(),
                name: case.name.clone(),
            }));
        }
        let input = match case.pod {
            Some(_) => case.check_pod_case().map(|()| None),
            None => case.input(&view).map(Some),
        };
        inputs.push(input.map_err(|source| SuiteError::Case {
            path: name(),
            case: case.name.clone(),
            source,
        })?);
    }
    let mut tally = Tally::default();
    for (case, input) in suite.cases.iter().zip(&inputs) {
        let failed = match (input, &security, &case.pod) {
            (Some(input), _, _) => mismatch(&case.expect, &evaluate(runtime, &chain, input)),
            (None, Some(security), Some(pod)) => case.run_pod(runtime, security, pod),
            (None, _, _) => Some("a pod case without pod security".to_owned()),
        };
        match failed {
            None => tally.passed += 1,
            Some(why) => {
                tally.failed += 1;
                println!("{shown}: {}: {why}", case.name);
            }
        }
    }
    Ok(tally)
}

/// Runs every suite and prints the summary line.
pub fn run(args: TestArgs) -> ExitStatus {
    let runtime = match offline_runtime() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitStatus::Usage;
        }
    };
    let mut total = Tally::default();
    let mut usage = false;
    for file in &args.files {
        match run_suite(&runtime, file) {
            Ok(t) => {
                total.passed += t.passed;
                total.failed += t.failed;
            }
            Err(e) => {
                eprintln!("error: {e}");
                usage = true;
            }
        }
    }
    println!("{} passed, {} failed", total.passed, total.failed);
    if usage {
        ExitStatus::Usage
    } else if total.failed > 0 {
        ExitStatus::Failure
    } else {
        ExitStatus::Success
    }
}
