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
