//! The pod cases of a suite: a case with `pod:` is the creation of that pod, judged by pod
//! security from the suite's constraints and namespaces and its `canUse` grants (as
//! `warrant check --pod` judges one); `expect.decision` is Allow or Deny, `expect.scc` the
//! constraint chosen, `expect.reasonContains` part of the refusal.

use crate::pod_admission::PodSecurity;
use crate::pod_admission::offline::{self, Judged};
use serde_json::Value;

/// What a pod case asks: the pod, its namespace and requester.
#[derive(Debug)]
pub(super) struct PodCase<'a> {
    /// The pod manifest.
    pub pod: &'a Value,
    /// The namespace (default: the pod's, else `default`).
    pub namespace: Option<&'a str>,
    /// The requester.
    pub user: Option<&'a str>,
    /// The requester's groups.
    pub groups: &'a [String],
}

/// What a pod case expects.
#[derive(Debug)]
pub(super) struct PodExpect<'a> {
    /// Admitted or not.
    pub allowed: bool,
    /// The constraint chosen.
    pub scc: Option<&'a str>,
    /// Part of the refusal.
    pub reason_contains: Option<&'a str>,
}

/// Judges the case: why it failed, or `None` when it passed.
pub(super) fn run(
    runtime: &tokio::runtime::Runtime,
    security: &PodSecurity,
    case: &PodCase<'_>,
    expect: &PodExpect<'_>,
) -> Option<String> {
    let from_pod = case.pod["metadata"]["namespace"]
        .as_str()
        .filter(|n| !n.is_empty());
    let namespace = case.namespace.or(from_pod).unwrap_or("default");
    let requester = offline::requester(case.user, case.groups);
    match runtime.block_on(offline::judge(security, case.pod, namespace, &requester)) {
        Ok(judged) => mismatch(expect, &judged),
        Err(e) => Some(format!("cannot judge the pod: {e}")),
    }
}

fn mismatch(expect: &PodExpect<'_>, judged: &Judged) -> Option<String> {
    let reason = judged.reason.as_deref().unwrap_or("");
    let ok = judged.allowed == expect.allowed
        && expect
            .scc
            .is_none_or(|s| judged.constraint.as_deref() == Some(s))
        && expect.reason_contains.is_none_or(|r| reason.contains(r));
    if ok {
        return None;
    }
    let decision = |allowed: bool| if allowed { "Allow" } else { "Deny" };
    let mut wanted = decision(expect.allowed).to_owned();
    if let Some(s) = expect.scc {
        wanted.push_str(&format!(" with {s}"));
    }
    if let Some(r) = expect.reason_contains {
        wanted.push_str(&format!(" with reason containing {r:?}"));
    }
    let mut got = decision(judged.allowed).to_owned();
    if let Some(c) = &judged.constraint {
        got.push_str(&format!(" with {c}"));
    }
    Some(format!("expected {wanted}, got {got} ({reason})"))
}
