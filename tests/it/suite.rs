//! `warrant test`: the shipped suites pass, a failing case prints its line and exits 1, usage and
//! configuration errors exit 2.

use crate::support::{BIN, repo};
use std::process::{Command, Output};

fn run(files: &[&str]) -> Output {
    Command::new(BIN).arg("test").args(files).output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

const CONFIG: &str = "apiVersion: warrant.dev/v1alpha1
kind: AuthorizationConfiguration
authorizers:
  - type: Policy
    name: rules
    policy:
      rules:
        - name: no-secrets
          effect: Deny
          expression: \"request.resourceAttributes.resource == 'secrets'\"
          message: no secrets here
          code: NO_SECRETS
";

fn suite(dir: &std::path::Path, name: &str, body: &str) -> String {
    std::fs::write(dir.join("warrant.yaml"), CONFIG).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    p.display().to_string()
}

#[test]
fn shipped_policy_suite_passes() {
    let o = run(&[&repo("authz-config/tests/policy-example.yaml")]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert_eq!(stdout(&o), "28 passed, 0 failed\n");
}

#[test]
fn failing_cases_print_one_line_each_and_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let p = suite(
        dir.path(),
        "s.yaml",
        "config: warrant.yaml
cases:
  - name: secrets denied
    verb: get
    resource: secrets
    as: ann
    expect: {decision: Deny, code: NO_SECRETS, reasonContains: \"no secrets\"}
  - name: wrong decision
    verb: get
    resource: secrets
    as: ann
    expect: {decision: Allow}
  - name: wrong code
    review: {user: ann, resourceAttributes: {verb: get, resource: secrets}}
    expect: {decision: Deny, code: OTHER}
  - name: pods stand aside
    verb: get
    resource: pods
    expect: {decision: NoOpinion}
",
    );
    let o = run(&[&p]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stdout(&o),
        format!(
            "{p}: wrong decision: expected Allow, got Deny [NO_SECRETS] (rules/no-secrets: no secrets here [NO_SECRETS])\n\
             {p}: wrong code: expected Deny [OTHER], got Deny [NO_SECRETS] (rules/no-secrets: no secrets here [NO_SECRETS])\n\
             2 passed, 2 failed\n"
        )
    );
}

#[test]
fn usage_and_config_errors_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let both = suite(
        dir.path(),
        "both.yaml",
        "config: warrant.yaml
cases:
  - name: both
    verb: get
    resource: pods
    review: {user: ann, resourceAttributes: {verb: get, resource: pods}}
    expect: {decision: NoOpinion}
",
    );
    let dup = suite(
        dir.path(),
        "dup.yaml",
        "config: warrant.yaml
cases:
  - {name: a, verb: get, resource: pods, expect: {decision: NoOpinion}}
  - {name: a, verb: get, resource: pods, expect: {decision: NoOpinion}}
",
    );
    let missing = suite(
        dir.path(),
        "missing.yaml",
        "config: nowhere.yaml\ncases: []\n",
    );
    let unknown = suite(
        dir.path(),
        "unknown.yaml",
        "config: warrant.yaml\ncases:\n  - {name: a, verb: get, resource: pods, expect: {decision: Maybe}}\n",
    );
    for (p, needle) in [
        (&both, "not both"),
        (&dup, "used twice"),
        (&missing, "nowhere.yaml"),
        (&unknown, "Maybe"),
    ] {
        let o = run(&[p]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{p}: {err}");
        assert!(err.contains(needle), "{p}: {err}");
        assert_eq!(stdout(&o), "0 passed, 0 failed\n");
    }
}

#[test]
fn shipped_pod_security_suite_passes() {
    let o = run(&[&repo("authz-config/tests/pod-security-example.yaml")]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert_eq!(stdout(&o), "7 passed, 0 failed\n");
}

/// A namespace with pre-allocated values and two constraints, one listing `ops` in `users`.
const POD_STATE: &str = "apiVersion: v1
kind: Namespace
metadata:
  name: shop
  annotations:
    openshift.io/sa.scc.uid-range: 2000/100
    openshift.io/sa.scc.supplemental-groups: 2000/100
    openshift.io/sa.scc.mcs: s0:c1,c2
---
apiVersion: security.openshift.io/v1
kind: SecurityContextConstraints
metadata: {name: ranged}
runAsUser: {type: MustRunAsRange}
seLinuxContext: {type: MustRunAs}
fsGroup: {type: MustRunAs}
supplementalGroups: {type: RunAsAny}
---
apiVersion: security.openshift.io/v1
kind: SecurityContextConstraints
metadata: {name: any}
users: [ops]
runAsUser: {type: RunAsAny}
seLinuxContext: {type: MustRunAs}
fsGroup: {type: RunAsAny}
supplementalGroups: {type: RunAsAny}
";

#[test]
fn pod_cases_fail_on_a_wrong_constraint_or_decision_and_refuse_review_fields() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("state")).unwrap();
    std::fs::write(dir.path().join("state/all.yaml"), POD_STATE).unwrap();
    let root = "{metadata: {name: p, namespace: shop}, spec: {containers: [{name: c, image: i, securityContext: {runAsUser: 0}}]}}";
    let p = suite(
        dir.path(),
        "pods.yaml",
        &format!(
            "config: warrant.yaml
clusterState: state
canUse: [group:devs=ranged]
cases:
  - name: ops may run as root
    as: ops
    pod: {root}
    expect: {{decision: Allow, scc: any}}
  - name: wrong constraint
    as: dev
    asGroups: [devs]
    pod: {{metadata: {{name: p, namespace: shop}}, spec: {{containers: [{{name: c, image: i}}]}}}}
    expect: {{decision: Allow, scc: any}}
  - name: wrong decision
    as: dev
    asGroups: [devs]
    pod: {root}
    expect: {{decision: Allow}}
"
        ),
    );
    let o = run(&[&p]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let out = stdout(&o);
    assert!(
        out.starts_with(&format!(
            "{p}: wrong constraint: expected Allow with any, got Allow with ranged ()\n{p}: wrong decision: expected Allow, got Deny (unable to validate against any security context constraint: ["
        )) && out.contains("provider ranged: .containers[0].runAsUser: Invalid value: 0: must be in the ranges: [2000, 2099]")
            && out.ends_with("1 passed, 2 failed\n"),
        "{out}"
    );
    let bad = suite(
        dir.path(),
        "bad.yaml",
        &format!(
            "config: warrant.yaml
clusterState: state
cases:
  - name: a verb too
    verb: create
    pod: {root}
    expect: {{decision: Allow}}
"
        ),
    );
    let o = run(&[&bad]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("a verb too: a pod case takes pod, namespace, as and asGroups"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn check_pod_prints_the_constraint_and_patch_or_every_reason() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("state.yaml"), POD_STATE).unwrap();
    let pod = dir.path().join("pod.yaml");
    std::fs::write(
        &pod,
        "metadata: {name: p, namespace: shop}\nspec: {containers: [{name: c, image: i}]}\n",
    )
    .unwrap();
    let check = |args: &[&str]| {
        Command::new(BIN)
            .arg("check")
            .arg("--pod")
            .arg(&pod)
            .arg("--cluster-state")
            .arg(dir.path().join("state.yaml"))
            .args(args)
            .output()
            .unwrap()
    };
    let o = check(&["--as", "dev", "--can-use", "dev=ranged", "-o", "json"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let judged: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (
            &judged["allowed"],
            &judged["constraint"],
            &judged["subjectType"]
        ),
        (
            &serde_json::json!(true),
            &serde_json::json!("ranged"),
            &serde_json::json!("user")
        )
    );
    let patch = judged["patch"].to_string();
    assert!(
        patch.contains(r#""runAsUser":2000"#) && patch.contains(r#""fsGroup":2000"#),
        "{patch}"
    );
    let o = check(&["--as", "dev"]);
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(
        stdout(&o),
        "refused: unable to validate against any security context constraint: [provider \"ranged\": Forbidden: not usable by user or serviceaccount, provider \"any\": Forbidden: not usable by user or serviceaccount]\n"
    );
    let o = check(&["--can-use", "nobody"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("use grant \"nobody\": want WHO=CONSTRAINT")
    );
}
