//! `warrant check`: one review, from flags shaped like `kubectl auth can-i` or from a JSON file,
//! evaluated against a configuration without a server. Prints the answer and the trace; the
//! exit status is 0 for Allow, 3 for Deny, 4 for NoOpinion and 2 for a usage or config error.

use super::{ConfigSource, ExitStatus, check_conditions, object_input};
use crate::authorizer::{Answer, Chain, Deadline, Input};
use crate::decision::Decision;
use crate::review::{self, ApiVersion, ConditionsReview, DecisionType, Review, ReviewError};
use crate::telemetry::audit::StepRecord;
use chrono::{DateTime, Utc};
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, ResourceAttributes, SubjectAccessReviewSpec,
};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use thiserror::Error;

/// Why the flags of `warrant check` (or the fields of a `warrant test` case) describe no review.
#[derive(Debug, Error)]
pub enum InputError {
    /// The object or cluster state of an admission check.
    #[error("{0}")]
    Object(#[from] super::object_input::ObjectInputError),
    /// Both a review file and flags.
    #[error("give either -f REVIEW.json or VERB RESOURCE, not both")]
    FileAndFlags,
    /// The review file cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    ReadFile {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The review file is not a usable review.
    #[error("{}: {source}", path.display())]
    DecodeFile {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: ReviewError,
    },
    /// Neither a review file nor VERB and RESOURCE.
    #[error("VERB and RESOURCE are required (or -f REVIEW.json)")]
    MissingTarget,
    /// A non-resource path with a namespace or subresource.
    #[error("a non-resource path takes no namespace or subresource")]
    NonResourceScope,
    /// `RESOURCE/` with nothing after the slash.
    #[error("{target:?}: name after '/' is empty")]
    EmptyName {
        /// The target as given.
        target: String,
    },
    /// `.GROUP` or `/NAME` without a resource.
    #[error("{target:?}: resource is empty")]
    EmptyResource {
        /// The target as given.
        target: String,
    },
    /// The spec the flags make is not a review.
    #[error("{0}")]
    Review(#[source] ReviewError),
    /// An `--extra` that is not `KEY=VALUE`.
    #[error("--extra {pair:?}: expected KEY=VALUE")]
    Extra {
        /// The argument as given.
        pair: String,
    },
    /// `--at` is not an RFC 3339 time.
    #[error("--at {0}")]
    At(#[source] TimeError),
}

/// An evaluation time that is not RFC 3339.
#[derive(Debug, Error)]
#[error("{input:?}: not an RFC 3339 time: {source}")]
pub struct TimeError {
    /// The time as given.
    pub input: String,
    /// chrono's error.
    pub source: chrono::ParseError,
}

/// The runtime of the offline commands could not start.
#[derive(Debug, Error)]
#[error("cannot start runtime: {0}")]
pub struct RuntimeError(#[source] pub std::io::Error);

/// Output format of `warrant check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Output {
    /// Human-readable answer and trace.
    Text,
    /// `{"allowed", "denied", "reason", "code", "evaluationError", "trace"}`.
    Json,
}

/// Arguments of `warrant check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The verb (`get`, `delete`, ...; for a non-resource path, the lower-case HTTP method).
    #[arg(value_name = "VERB")]
    pub verb: Option<String>,
    /// `RESOURCE[.GROUP][/NAME]`, or a non-resource path starting with `/`.
    #[arg(value_name = "RESOURCE")]
    pub resource: Option<String>,
    /// Namespace of the resource.
    #[arg(short = 'n', long)]
    pub namespace: Option<String>,
    /// Subresource (`status`, `log`, ...).
    #[arg(long)]
    pub subresource: Option<String>,
    /// The user asking.
    #[arg(long = "as", value_name = "USER")]
    pub as_user: Option<String>,
    /// A group of the user (repeatable).
    #[arg(long = "as-group", value_name = "GROUP")]
    pub as_group: Vec<String>,
    /// The user's UID.
    #[arg(long = "as-uid", value_name = "UID")]
    pub as_uid: Option<String>,
    /// An extra attribute `KEY=VALUE` (repeatable; repeated keys collect values).
    #[arg(long = "extra", value_name = "KEY=VALUE")]
    pub extra: Vec<String>,
    /// Evaluation time (RFC 3339), for time-aware rules; default now.
    #[arg(long, value_name = "RFC3339")]
    pub at: Option<String>,
    /// Configuration file; default `authz-config/warrant.yaml` or the embedded copy.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// A SubjectAccessReview JSON file instead of the flags.
    #[arg(short = 'f', long = "filename", value_name = "REVIEW.json")]
    pub file: Option<PathBuf>,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = Output::Text)]
    pub output: Output,
    /// Judge an admission request instead (the validation ring): the object deleted, or for an
    /// update the new object (YAML or JSON).
    #[arg(long, value_name = "FILE")]
    pub object: Option<PathBuf>,
    /// For an update judged with `--object`: the stored object.
    #[arg(long, value_name = "FILE", requires = "object")]
    pub old_object: Option<PathBuf>,
    /// Saved cluster state for `--object`: a directory of YAML/JSON objects (pods, ReplicaSets,
    /// Services, Ingresses, PersistentVolumeClaims, Namespaces). Without it the cluster is empty.
    #[arg(long, value_name = "DIR", requires = "object")]
    pub cluster_state: Option<PathBuf>,
    /// With `--object`: the request is a dry run.
    #[arg(long, requires = "object")]
    pub dry_run: bool,
    /// Ask as a Kubernetes 1.38 API server with conditional authorization does
    /// (`authorizationOptions` with Allow, ConditionsMap, Deny, NoOpinion and Union; a v1
    /// review file carrying them does the same) and print the conditions of a conditional
    /// answer. With `--object` (and `--old-object`), evaluate them as the API server's enforcer
    /// round trip would, instead of judging with the validation ring. Differences from the API
    /// server: the admission request is made from the flags (fixed uid, `kind` from the
    /// object, no `requestKind`, `options` or `namespaceObject`), the object is used as
    /// written (no conversion or defaulting), and nothing is cached.
    #[arg(long, verbatim_doc_comment)]
    pub conditions: bool,
}

impl CheckArgs {
    /// The review these arguments describe, opted in to conditions with `--conditions`.
    pub fn review(&self) -> Result<Review, InputError> {
        let review = self.plain_review()?;
        Ok(if self.conditions {
            review.with_options(Some(crate::review::AuthorizationOptions::conditional()))
        } else {
            review
        })
    }

    fn plain_review(&self) -> Result<Review, InputError> {
        if let Some(path) = &self.file {
            if self.verb.is_some() || self.resource.is_some() {
                return Err(InputError::FileAndFlags);
            }
            let bytes = std::fs::read(path).map_err(|source| InputError::ReadFile {
                path: path.clone(),
                source,
            })?;
            return review::decode(&bytes).map_err(|source| InputError::DecodeFile {
                path: path.clone(),
                source,
            });
        }
        let (Some(verb), Some(target)) = (&self.verb, &self.resource) else {
            return Err(InputError::MissingTarget);
        };
        Flags {
            verb,
            target,
            namespace: self.namespace.as_deref(),
            subresource: self.subresource.as_deref(),
            user: self.as_user.as_deref(),
            groups: &self.as_group,
            uid: self.as_uid.as_deref(),
            extra: parse_extra(&self.extra)?,
        }
        .review()
    }

    /// The input these arguments describe: the review, and with `--object` its admission
    /// context (not when the review handles conditions: the objects then go to the round trip,
    /// [`CheckArgs::conditions_objects`]).
    pub fn input(&self) -> Result<Input, InputError> {
        let input = Input::new(self.review()?, self.now()?);
        let Some(path) = &self.object else {
            return Ok(input);
        };
        if input.review.supports_conditions() {
            return Ok(input);
        }
        let object = object_input::read_object(path)?;
        let old = self
            .old_object
            .as_deref()
            .map(object_input::read_object)
            .transpose()?;
        let view = object_input::cluster_view(self.cluster_state.as_deref())?;
        let verb = self.verb.as_deref().unwrap_or("");
        let ctx = object_input::context(verb, object, old, self.dry_run, view)?;
        Ok(input.with_object(Arc::new(ctx)))
    }

    /// The objects of the enforcer round trip: `--object` and `--old-object`, as JSON.
    pub fn conditions_objects(&self) -> Result<(Option<Value>, Option<Value>), InputError> {
        let read = |p: &Option<PathBuf>| {
            p.as_deref()
                .map(|p| object_input::read_object(p).map(|o| o.json().clone()))
                .transpose()
        };
        Ok((read(&self.object)?, read(&self.old_object)?))
    }

    /// The evaluation time.
    pub fn now(&self) -> Result<DateTime<Utc>, InputError> {
        match &self.at {
            None => Ok(Utc::now()),
            Some(s) => parse_at(s).map_err(InputError::At),
        }
    }
}

/// Parses an RFC 3339 evaluation time.
pub fn parse_at(s: &str) -> Result<DateTime<Utc>, TimeError> {
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|source| TimeError {
            input: s.to_owned(),
            source,
        })
}

/// A review described as `kubectl auth can-i` describes one: the flags of `warrant check`, also
/// the fields of a `warrant test` case.
#[derive(Debug, Clone)]
pub struct Flags<'a> {
    /// The verb.
    pub verb: &'a str,
    /// `RESOURCE[.GROUP][/NAME]`, or a non-resource path starting with `/`.
    pub target: &'a str,
    /// Namespace of the resource.
    pub namespace: Option<&'a str>,
    /// Subresource.
    pub subresource: Option<&'a str>,
    /// The user.
    pub user: Option<&'a str>,
    /// The user's groups.
    pub groups: &'a [String],
    /// The user's UID.
    pub uid: Option<&'a str>,
    /// The extra attributes.
    pub extra: Option<BTreeMap<String, Vec<String>>>,
}

impl Flags<'_> {
    /// The v1 review these flags describe.
    pub fn review(self) -> Result<Review, InputError> {
        let (verb, target) = (self.verb, self.target);
        let mut spec = SubjectAccessReviewSpec {
            user: self.user.map(str::to_owned),
            groups: (!self.groups.is_empty()).then(|| self.groups.to_vec()),
            uid: self.uid.map(str::to_owned),
            extra: self.extra,
            ..Default::default()
        };
        if target.starts_with('/') {
            if self.namespace.is_some() || self.subresource.is_some() {
                return Err(InputError::NonResourceScope);
            }
            spec.non_resource_attributes = Some(NonResourceAttributes {
                path: Some(target.to_owned()),
                verb: Some(verb.to_owned()),
            });
        } else {
            let (kind, name) = match target.split_once('/') {
                Some((k, n)) if !n.is_empty() => (k, Some(n.to_owned())),
                Some(_) => {
                    return Err(InputError::EmptyName {
                        target: target.to_owned(),
                    });
                }
                None => (target, None),
            };
            let (resource, group) = match kind.split_once('.') {
                Some((r, g)) => (r, g),
                None => (kind, ""),
            };
            if resource.is_empty() {
                return Err(InputError::EmptyResource {
                    target: target.to_owned(),
                });
            }
            spec.resource_attributes = Some(ResourceAttributes {
                namespace: self.namespace.map(str::to_owned),
                verb: Some(verb.to_owned()),
                group: Some(group.to_owned()),
                resource: Some(resource.to_owned()),
                subresource: self.subresource.map(str::to_owned),
                name,
                ..Default::default()
            });
        }
        Review::new(ApiVersion::V1, spec).map_err(InputError::Review)
    }
}

/// Evaluates one input against a chain on a current-thread runtime, as `check` and `test` do:
/// an admission input through the validation ring, a review through the whole chain.
pub fn evaluate(runtime: &tokio::runtime::Runtime, chain: &Chain, input: &Input) -> Answer {
    let deadline = Deadline::after(Duration::from_secs(30));
    match input.object {
        Some(_) => runtime.block_on(chain.admit(input, deadline)),
        None => runtime.block_on(chain.authorize(input, deadline)),
    }
}

/// The current-thread runtime offline commands evaluate on.
pub fn offline_runtime() -> Result<tokio::runtime::Runtime, RuntimeError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(RuntimeError)
}

fn parse_extra(pairs: &[String]) -> Result<Option<BTreeMap<String, Vec<String>>>, InputError> {
    let mut extra: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for p in pairs {
        let (k, v) = p
            .split_once('=')
            .ok_or_else(|| InputError::Extra { pair: p.clone() })?;
        extra.entry(k.to_owned()).or_default().push(v.to_owned());
    }
    Ok((!extra.is_empty()).then_some(extra))
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonAnswer<'a> {
    allowed: bool,
    denied: bool,
    reason: &'a str,
    code: Option<&'a str>,
    evaluation_error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    conditional_decision: Option<&'a crate::review::ConditionsAwareDecision>,
    /// The outcome of the conditions against `--object`.
    #[serde(skip_serializing_if = "Option::is_none")]
    evaluated: Option<&'a crate::review::ConditionsAwareDecision>,
    trace: Vec<StepRecord<'a>>,
}

/// Evaluates the review against the chain and prints the result.
pub fn run(args: CheckArgs) -> ExitStatus {
    let usage = |msg: String| {
        eprintln!("error: {msg}");
        ExitStatus::Usage
    };
    let input = match args.input() {
        Ok(i) => i,
        Err(e) => return usage(e.to_string()),
    };
    let loaded = match ConfigSource::resolve(args.config.as_deref()).load() {
        Ok(l) => l,
        Err(errors) => {
            for e in errors.iter() {
                eprintln!("{e}");
            }
            return ExitStatus::Usage;
        }
    };
    let chain = match Chain::build(&loaded.config) {
        Ok(c) => c,
        Err(e) => return usage(format!("{}: {e}", loaded.source.name)),
    };
    let runtime = match offline_runtime() {
        Ok(r) => r,
        Err(e) => return usage(e.to_string()),
    };
    let answer = evaluate(&runtime, &chain, &input);
    let admission = input.object.is_some();
    let outcome = match (&answer.conditional, args.object.is_some()) {
        (Some(conditional), true) => match round_trip(&args, &runtime, &chain, &input, conditional)
        {
            Ok(o) => Some(o),
            Err(e) => return usage(e.to_string()),
        },
        _ => None,
    };
    print!(
        "{}",
        render_with(&answer, args.output, admission, outcome.as_ref())
    );
    exit_status(match outcome.map(|o| o.decision_type) {
        None => answer.decision,
        Some(DecisionType::Allow) => Decision::Allow,
        Some(DecisionType::Deny) => Decision::Deny,
        Some(_) => Decision::NoOpinion,
    })
}

/// The enforcer's round trip: the conditional answer evaluated against `--object` (and
/// `--old-object`) as warrant evaluates the API server's AuthorizationConditionsReview.
fn round_trip(
    args: &CheckArgs,
    runtime: &tokio::runtime::Runtime,
    chain: &Chain,
    input: &Input,
    conditional: &crate::review::ConditionsAwareDecision,
) -> Result<crate::review::ConditionsAwareDecision, InputError> {
    let (object, old) = args.conditions_objects()?;
    let request = check_conditions::admission_request(
        &input.review,
        object.as_ref(),
        old.as_ref(),
        args.dry_run,
    );
    let review = ConditionsReview {
        decision: conditional.clone(),
        admission_request: request,
        uid: check_conditions::CHECK_UID.to_owned(),
    };
    let deadline = Deadline::after(Duration::from_secs(30));
    Ok(runtime.block_on(chain.evaluate_conditions(&review, deadline)))
}

fn exit_status(decision: Decision) -> ExitStatus {
    match decision {
        Decision::Allow => ExitStatus::Success,
        Decision::Deny => ExitStatus::Denied,
        Decision::NoOpinion => ExitStatus::NoOpinion,
    }
}

/// Renders an answer as `warrant check` prints it (`admission`: the answer of the validation
/// ring, which admits or refuses).
pub fn render(answer: &Answer, output: Output, admission: bool) -> String {
    render_with(answer, output, admission, None)
}

/// Renders an answer and, for a conditional one, its conditions and the `outcome` of their
/// evaluation against an object, when there is one.
pub fn render_with(
    answer: &Answer,
    output: Output,
    admission: bool,
    outcome: Option<&crate::review::ConditionsAwareDecision>,
) -> String {
    let mut s = render_answer(answer, output, admission, outcome);
    if output == Output::Text {
        if let Some(c) = &answer.conditional {
            s.push_str(&check_conditions::render_decision(c));
        }
        if let Some(o) = outcome {
            s.push_str(&check_conditions::render_outcome(o));
        }
    }
    s
}

fn render_answer(
    answer: &Answer,
    output: Output,
    admission: bool,
    outcome: Option<&crate::review::ConditionsAwareDecision>,
) -> String {
    match output {
        Output::Json => {
            let j = JsonAnswer {
                allowed: answer.decision == Decision::Allow,
                denied: answer.decision == Decision::Deny,
                reason: &answer.reason,
                code: answer.code.as_ref().map(|c| c.as_str()),
                evaluation_error: answer.evaluation_error(),
                conditional_decision: answer.conditional.as_ref(),
                evaluated: outcome,
                trace: answer.trace.iter().map(StepRecord::new).collect(),
            };
            let mut s = serde_json::to_string_pretty(&j).unwrap_or_default();
            s.push('\n');
            s
        }
        Output::Text => {
            let mut s = String::new();
            let verdict = match answer.decision {
                _ if answer.conditional.is_some() => {
                    "conditional (the API server evaluates the conditions below at admission)"
                }
                Decision::Deny if admission => "refused (the API server answers 403)",
                _ if admission => "admitted",
                Decision::Allow => "yes (Allow)",
                Decision::Deny => "no (Deny)",
                Decision::NoOpinion => {
                    "no opinion (NoOpinion: the API server would ask its next authorizer)"
                }
            };
            s.push_str(verdict);
            s.push('\n');
            if !answer.reason.is_empty() {
                for line in answer.reason.lines() {
                    s.push_str(&format!("reason: {line}\n"));
                }
            }
            if let Some(e) = answer.evaluation_error() {
                s.push_str(&format!("evaluationError: {e}\n"));
            }
            s.push_str("trace:\n");
            for (i, step) in answer.trace.iter().enumerate() {
                let rec = StepRecord::new(step);
                s.push_str(&format!(
                    "  {}. {} ({}): {}",
                    i + 1,
                    rec.authorizer,
                    rec.authorizer_type,
                    rec.decision
                ));
                if let Some(would) = rec.would_have {
                    s.push_str(&format!(" (shadow: would have {would})"));
                }
                if let Some(rule) = rec.rule {
                    s.push_str(&format!(" rule={rule}"));
                }
                if let Some(code) = rec.code {
                    s.push_str(&format!(" code={code}"));
                }
                if let Some(m) = rec.message {
                    s.push_str(&format!(" \"{m}\""));
                }
                if let Some(e) = &rec.error {
                    s.push_str(&format!(
                        " error=\"{e}\" failurePolicy={}",
                        rec.failure_policy.unwrap_or("")
                    ));
                }
                s.push('\n');
                for shadow in &rec.shadow_rules {
                    s.push_str(&format!(
                        "     shadow rule {} would have {}",
                        shadow.rule.unwrap_or("-"),
                        shadow.would_have
                    ));
                    if let Some(code) = shadow.code {
                        s.push_str(&format!(" code={code}"));
                    }
                    s.push_str(&format!(
                        " \"{}\"\n",
                        shadow.error.unwrap_or(shadow.message)
                    ));
                }
                s.push_str(&report(step));
            }
            s
        }
    }
}

/// The risk report of a step whose verdict carries one (the deletion guard's assessment at
/// admission): level, score, every reason, and what the object takes down with it.
fn report(step: &crate::authorizer::Step) -> String {
    let crate::authorizer::StepOutcome::Verdict(v) = &step.outcome else {
        return String::new();
    };
    let Some(detail) = &v.detail else {
        return String::new();
    };
    let d = detail.audit_value();
    let Some(impact) = d.get("impact") else {
        return String::new();
    };
    let list = |key: &str| {
        let items: Vec<&str> = impact[key]
            .as_array()
            .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
            .unwrap_or_default();
        if items.is_empty() {
            "none".to_owned()
        } else {
            items.join(", ")
        }
    };
    let mut s = format!(
        "     risk {} score {}\n",
        d["riskLevel"].as_str().unwrap_or(""),
        d["riskScore"]
    );
    for r in d["riskReasons"].as_array().into_iter().flatten() {
        s.push_str(&format!("       {}\n", r.as_str().unwrap_or("")));
    }
    s.push_str(&format!(
        "     running pods {}; services {}; ingresses {}; bound volumes {}; estimated traffic {} QPS\n",
        impact["runningPods"],
        list("services"),
        list("ingresses"),
        list("boundVolumes"),
        impact["estimatedQps"]
    ));
    s
}

#[cfg(test)]
mod tests;
