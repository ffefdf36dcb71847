//! `warrant check --pod FILE`: the creation of one pod judged by pod security from saved
//! files (constraints, namespaces) and written `use` grants, as the server's two webhooks
//! would judge it. Prints the constraint chosen and its patch, or every constraint's reason;
//! exits 0 when admitted, 3 when refused, 2 on a usage error. The requester is in
//! `system:authenticated`, as impersonation puts every user there.

use super::args::{CheckArgs, Output};
use super::runtime::offline_runtime;
use crate::cli::{ExitStatus, object_input};
use crate::pod_admission::offline::{self, Judged};
use std::fmt::Write as _;
use std::path::Path;

/// Judges `--pod` and prints the outcome.
pub fn run(args: &CheckArgs, pod: &Path) -> ExitStatus {
    let usage = |msg: String| {
        eprintln!("error: {msg}");
        ExitStatus::Usage
    };
    let manifest = match object_input::read_object(pod) {
        Ok(o) => o,
        Err(e) => return usage(e.to_string()),
    };
    let security = match object_input::pod_security(
        args.cluster_state.as_deref(),
        args.constraints.as_deref(),
        &args.can_use,
    ) {
        Ok(s) => s,
        Err(e) => return usage(e.to_string()),
    };
    let namespace = match pod_namespace(args.namespace.as_deref(), manifest.namespace()) {
        Ok(n) => n,
        Err(e) => return usage(e),
    };
    let requester = offline::requester(args.as_user.as_deref(), &args.as_group);
    let runtime = match offline_runtime() {
        Ok(r) => r,
        Err(e) => return usage(e.to_string()),
    };
    let judged = match runtime.block_on(offline::judge(
        &security,
        manifest.json(),
        &namespace,
        &requester,
    )) {
        Ok(j) => j,
        Err(e) => return usage(e.to_string()),
    };
    match args.output {
        Output::Json => match serde_json::to_string_pretty(&judged) {
            Ok(s) => println!("{s}"),
            Err(e) => return usage(e.to_string()),
        },
        Output::Text => print!("{}", text(&judged)),
    }
    match judged.allowed {
        true => ExitStatus::Success,
        false => ExitStatus::Denied,
    }
}

/// The namespace the pod is created in: `-n` or the manifest's, which must agree when both
/// are given, else `default`. A mismatch is refused in kubectl's words (its resource builder,
/// k8s.io/cli-runtime/pkg/resource/visitor.go, `SetNamespace`, refuses an object whose
/// namespace differs from the one asked for).
fn pod_namespace(flag: Option<&str>, manifest: &str) -> Result<String, String> {
    match (flag, manifest) {
        (Some(f), m) if !m.is_empty() && f != m => Err(format!(
            "the namespace from the provided object \"{m}\" does not match the namespace \"{f}\". You must pass '--namespace={m}' to perform this operation."
        )),
        (Some(f), _) => Ok(f.to_owned()),
        (None, m) if !m.is_empty() => Ok(m.to_owned()),
        (None, _) => Ok("default".to_owned()),
    }
}

/// The outcome as people read it.
fn text(j: &Judged) -> String {
    let mut out = String::new();
    match (&j.constraint, &j.reason) {
        (Some(c), _) if j.allowed => {
            let who = j.subject_type.as_deref().unwrap_or("");
            let _ = writeln!(out, "admitted: {c} (available to the {who})");
        }
        _ => {
            let _ = writeln!(out, "refused: {}", j.reason.as_deref().unwrap_or(""));
        }
    }
    if let Some(patch) = &j.patch {
        let _ = writeln!(out, "patch: {patch}");
    }
    for w in &j.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::pod_namespace;

    #[test]
    fn the_namespace_flag_and_the_manifest_must_agree_as_kubectl_requires() {
        assert_eq!(pod_namespace(None, ""), Ok("default".to_owned()));
        assert_eq!(pod_namespace(None, "shop"), Ok("shop".to_owned()));
        assert_eq!(pod_namespace(Some("shop"), ""), Ok("shop".to_owned()));
        assert_eq!(pod_namespace(Some("shop"), "shop"), Ok("shop".to_owned()));
        assert_eq!(
            pod_namespace(Some("ci"), "shop"),
            Err("the namespace from the provided object \"shop\" does not match the namespace \"ci\". You must pass '--namespace=shop' to perform this operation.".to_owned())
        );
    }
}
