//! The differential test: every (expression, review) pair of
//! `tests/celdiff/corpus.yaml` is judged by warrant's CEL and by Kubernetes' own authorization
//! CEL (the Go program in `tests/celdiff/`, k8s.io/apiserver's compiler and matcher), and each
//! must reach the same outcome: `true`, `false`, `compile_error` or `eval_error`. A disagreement
//! is allowed only when `tests/celdiff/known-differences.yaml` lists it with a reason; a listed
//! case that agrees is an error too, so the list stays true.
//!
//! The Go results come from `$WARRANT_CELDIFF_RESULTS` when set (`.ci/run` builds and runs the
//! Go side once), else this test runs `tests/celdiff/run.sh` itself.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use warrant::cel::{Binding, Expression, Variables};

#[derive(serde::Deserialize)]
struct Corpus {
    reviews: BTreeMap<String, serde_json::Value>,
    cases: Vec<Case>,
}

#[derive(serde::Deserialize)]
struct Case {
    id: String,
    expression: String,
    review: String,
}

#[derive(serde::Deserialize)]
struct GoResult {
    id: String,
    outcome: String,
    #[serde(default)]
    detail: String,
}

#[derive(serde::Deserialize)]
struct Known {
    id: String,
    reason: String,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn go_results() -> String {
    if let Ok(path) = std::env::var("WARRANT_CELDIFF_RESULTS") {
        return std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("results.jsonl");
    let status = std::process::Command::new("bash")
        .arg(root().join("tests/celdiff/run.sh"))
        .arg(&out)
        .status()
        .expect("run tests/celdiff/run.sh (needs Go)");
    assert!(status.success(), "tests/celdiff/run.sh failed");
    std::fs::read_to_string(&out).unwrap()
}

fn warrant_outcome(
    expression: &str,
    spec: &k8s_openapi::api::authorization::v1::SubjectAccessReviewSpec,
) -> (String, String) {
    let compiled = match Expression::compile(expression, Variables::Request) {
        Ok(c) => c,
        Err(e) => return ("compile_error".into(), e.to_string()),
    };
    let now = chrono::Utc::now();
    let binding = Binding::new(spec, now);
    let bound = binding.with(compiled.uses());
    match compiled.evaluate(&bound) {
        Ok(b) => (b.to_string(), String::new()),
        Err(e) => ("eval_error".into(), e.to_string()),
    }
}

fn load<T: serde::de::DeserializeOwned>(path: &Path) -> T {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn warrant_cel_agrees_with_kubernetes_cel() {
    let corpus: Corpus = load(&root().join("tests/celdiff/corpus.yaml"));
    let known: Vec<Known> = load(&root().join("tests/celdiff/known-differences.yaml"));
    let known: HashMap<&str, &str> = known
        .iter()
        .map(|k| (k.id.as_str(), k.reason.as_str()))
        .collect();
    let go: HashMap<String, GoResult> = go_results()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let r: GoResult = serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}"));
            (r.id.clone(), r)
        })
        .collect();
    assert!(
        corpus.cases.len() >= 500,
        "corpus has {} cases",
        corpus.cases.len()
    );
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut unexplained = Vec::new();
    let mut stale = Vec::new();
    let mut explained = 0;
    for case in &corpus.cases {
        let review = corpus
            .reviews
            .get(&case.review)
            .unwrap_or_else(|| panic!("{}: no review {}", case.id, case.review));
        let spec = serde_json::from_value(review.clone())
            .unwrap_or_else(|e| panic!("review {}: {e}", case.review));
        let (ours, our_detail) = warrant_outcome(&case.expression, &spec);
        let theirs = go
            .get(&case.id)
            .unwrap_or_else(|| panic!("{}: no Go result", case.id));
        *counts
            .entry(format!("{} (kubernetes)", theirs.outcome))
            .or_default() += 1;
        let agree = ours == theirs.outcome;
        match (agree, known.get(case.id.as_str())) {
            (true, Some(_)) => stale.push(case.id.clone()),
            (true, None) => {}
            (false, Some(_)) => explained += 1,
            (false, None) => unexplained.push(format!(
                "{}: `{}`\n    kubernetes: {} {}\n    warrant:    {} {}",
                case.id, case.expression, theirs.outcome, theirs.detail, ours, our_detail
            )),
        }
    }
    eprintln!(
        "celdiff: {} cases, {:?}; {} known differences, {} unexplained",
        corpus.cases.len(),
        counts,
        explained,
        unexplained.len()
    );
    assert!(
        unexplained.is_empty(),
        "{} unexplained disagreements:\n{}",
        unexplained.len(),
        unexplained.join("\n")
    );
    assert!(
        stale.is_empty(),
        "listed as known differences but now agree: {stale:?}"
    );
}
