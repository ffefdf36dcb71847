//! `warrant check --conditions` (KEP-5681): the conditional answer printed (effects, ids,
//! descriptions), and with `--object` / `--old-object` the conditions evaluated as the API
//! server's enforcer round trip would, the exit status following the outcome.

use crate::support::run_bin as run;

const CONFIG: &str = r#"apiVersion: warrant.dev/v1alpha1
kind: AuthorizationConfiguration
authorizers:
- type: DeletionGuard
  name: guard
  conditions:
    whenUnsupported: Fold
  guard:
    protectionLabel: warrant.dev/protection
- type: Policy
  name: owners
  policy:
    rules:
    - name: owner-updates
      effect: Allow
      expression: "request.resourceAttributes.verb == 'update'"
      condition: "has(object.metadata.labels) && 'owner' in object.metadata.labels && object.metadata.labels['owner'] in request.userInfo.groups"
      message: owners may update their objects
      code: OWNER_UPDATE
"#;

fn deployment(labels: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: prod\n  labels:\n{labels}"
    )
}

struct Files {
    dir: tempfile::TempDir,
}

impl Files {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("c.yaml"), CONFIG).unwrap();
        for (name, labels) in [
            ("critical.yaml", "    warrant.dev/protection: critical\n"),
            ("plain.yaml", "    app: web\n"),
            ("team-a.yaml", "    owner: team-a\n"),
            ("team-b.yaml", "    owner: team-b\n"),
        ] {
            std::fs::write(dir.path().join(name), deployment(labels)).unwrap();
        }
        Self { dir }
    }

    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).display().to_string()
    }

    fn check(&self, extra: &[&str]) -> (i32, String, String) {
        let config = self.path("c.yaml");
        let mut args = vec!["check", "--config", &config, "--conditions"];
        args.extend_from_slice(extra);
        run(&args)
    }
}

#[test]
fn conditional_answers_are_printed_with_effects_and_ids() {
    let f = Files::new();
    let (code, out, err) = f.check(&[
        "delete",
        "deployments.apps/web",
        "-n",
        "prod",
        "--as",
        "jane",
    ]);
    assert_eq!(
        code, 4,
        "no object: the answer stands as NoOpinion\n{out}{err}"
    );
    assert!(out.starts_with("conditional ("), "{out}");
    assert!(out.contains("guard: ConditionsMap"), "{out}");
    assert!(
        out.contains("Deny id=warrant.dev/protection-critical type=authorizer.kubernetes.io/cel"),
        "{out}"
    );
    assert!(out.contains("Deny id=warrant.dev/protection-high"), "{out}");
    assert!(
        out.contains("condition: has(oldObject.metadata.labels)"),
        "{out}"
    );
    // Without --conditions the same review is folded (a Deny condition exists: Deny).
    let config = f.path("c.yaml");
    let (code, out, _) = run(&[
        "check",
        "--config",
        &config,
        "delete",
        "deployments.apps/web",
        "-n",
        "prod",
        "--as",
        "jane",
    ]);
    assert_eq!(code, 3, "{out}");
    assert!(!out.contains("ConditionsMap"), "{out}");
}

#[test]
fn the_round_trip_evaluates_the_conditions_against_the_object() {
    let f = Files::new();
    let delete = [
        "delete",
        "deployments.apps/web",
        "-n",
        "prod",
        "--as",
        "jane",
    ];
    let critical = f.path("critical.yaml");
    let mut args = delete.to_vec();
    args.extend(["--object", &critical]);
    let (code, out, err) = f.check(&args);
    assert_eq!(code, 3, "{out}{err}");
    assert!(
        out.contains("evaluated against the object: no (Deny"),
        "{out}"
    );
    assert!(out.contains("reason: guard/protection-critical"), "{out}");
    let plain = f.path("plain.yaml");
    let mut args = delete.to_vec();
    args.extend(["--object", &plain]);
    let (code, out, _) = f.check(&args);
    assert_eq!(code, 4, "{out}");
    assert!(
        out.contains("evaluated against the object: no opinion"),
        "{out}"
    );

    // An update: the Policy's Allow condition reads the new object and the user's groups.
    let (a, b) = (f.path("team-a.yaml"), f.path("team-b.yaml"));
    let update = |object: &str| {
        f.check(&[
            "update",
            "deployments.apps/web",
            "-n",
            "prod",
            "--as",
            "jane",
            "--as-group",
            "team-a",
            "--object",
            object,
            "--old-object",
            &b,
            "-o",
            "json",
        ])
    };
    let (code, out, err) = update(&a);
    assert_eq!(code, 0, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["conditionalDecision"]["union"][0]["authorizerName"],
        "owners"
    );
    assert_eq!(v["evaluated"]["type"], "Allow", "{out}");
    assert!(
        v["evaluated"]["allow"]["reason"]
            .as_str()
            .unwrap()
            .contains("OWNER_UPDATE")
    );
    let (code, out, _) = update(&b);
    assert_eq!(code, 4, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["evaluated"]["type"], "NoOpinion", "{out}");
}
