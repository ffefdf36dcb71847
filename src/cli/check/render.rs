//! How `warrant check` prints an answer: text (the answer, each step, a risk report) or JSON.

use super::args::Output;
use crate::authorizer::Answer;
use crate::cli::check_conditions;
use crate::decision::Decision;
use crate::telemetry::audit::StepRecord;
use serde::Serialize;

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
        Output::Json => json(answer, outcome),
        Output::Text => text(answer, admission),
    }
}

/// The JSON form: the status fields, the conditions and the trace.
fn json(answer: &Answer, outcome: Option<&crate::review::ConditionsAwareDecision>) -> String {
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

/// The text form: the verdict, the reason and error lines, and one line per step.
fn text(answer: &Answer, admission: bool) -> String {
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
        s.push_str(&step_line(i + 1, step));
        s.push_str(&report(step));
    }
    s
}

/// Step `n` of the trace, with its shadow rules on lines of their own.
fn step_line(n: usize, step: &crate::authorizer::Step) -> String {
    let rec = StepRecord::new(step);
    let mut s = format!(
        "  {n}. {} ({}): {}",
        rec.authorizer, rec.authorizer_type, rec.decision
    );
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
    s
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
