//! Shadow mode over real HTTPS: an authorizer and a policy rule in `mode: Observe` are
//! evaluated on every review, their would-be answers are audited (`mode`, `wouldHave`,
//! `shadowRules`) and counted (`warrant_shadow_decisions_total`,
//! `warrant_shadow_disagreements_total`), and the answer is the rest of the chain's. The audit
//! record keeps the whole review, less the extra keys `--audit-redact-extra` names.

use crate::support::{BIN, Options, Warrant, metrics_text, post_review, repo};
use serde_json::{Value, json};
use std::time::Duration;

const CONFIG: &str = r#"apiVersion: warrant.dev/v1alpha1
kind: AuthorizationConfiguration
authorizers:
  - type: Policy
    name: candidate
    mode: Observe
    policy:
      rules:
        - name: no-secrets
          effect: Deny
          expression: "has(request.resourceAttributes) && request.resourceAttributes.resource == 'secrets'"
          message: nobody reads secrets any more
          code: NO_SECRETS
  - type: Policy
    name: tenants
    policy:
      rules:
        - name: no-prod-deletes
          effect: Deny
          mode: Observe
          expression: "has(request.resourceAttributes) && request.resourceAttributes.verb == 'delete' && request.resourceAttributes.namespace == 'prod'"
          message: deletions in prod are about to be refused
          code: PROD_DELETE
        - name: dev-team
          effect: Allow
          expression: "'dev' in request.groups"
          message: developers may
  - type: AlwaysDeny
    name: deny-the-rest
"#;

fn review(verb: &str, resource: &str, namespace: &str) -> String {
    json!({
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {
            "user": "jane",
            "uid": "u-1",
            "groups": ["dev", "system:authenticated"],
            "extra": {
                "warrant.dev/ticket": ["CHG-1"],
                "authentication.kubernetes.io/credential-id": ["JTI=secret"]
            },
            "resourceAttributes": {
                "namespace": namespace, "verb": verb, "group": "", "version": "v1",
                "resource": resource,
                "labelSelector": {"requirements": [{"key": "app", "operator": "In", "values": ["web"]}]}
            }
        }
    })
    .to_string()
}

async fn audit_lines(w: &Warrant, n: usize) -> Vec<Value> {
    for _ in 0..200 {
        let lines: Vec<Value> = std::fs::read_to_string(w.path("audit.log"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        if lines.len() >= n {
            return lines;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("fewer than {n} audit records");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shadow_entries_and_rules_are_audited_counted_and_never_the_answer() {
    let w = Warrant::start(Options {
        config: Some(CONFIG.into()),
        audit: true,
        audit_redact_extra: vec!["authentication.kubernetes.io/credential-id".into()],
        ..Options::default()
    })
    .await;
    let c = w.client();
    let url = w.url("/authorize");
    // The shadow entry would deny reading secrets; the chain allows (dev-team).
    let (code, v) = post_review(&c, &url, &review("get", "secrets", "dev")).await;
    assert_eq!(code, 200);
    assert_eq!(v["status"]["allowed"], true, "{v}");
    assert_eq!(v["status"]["reason"], "tenants/dev-team: developers may");
    // The shadow rule would deny a delete in prod; the chain allows.
    let (_, v) = post_review(&c, &url, &review("delete", "configmaps", "prod")).await;
    assert_eq!(v["status"]["allowed"], true, "{v}");
    // Neither shadow matches.
    let (_, v) = post_review(&c, &url, &review("get", "configmaps", "dev")).await;
    assert_eq!(v["status"]["allowed"], true, "{v}");

    let recs = audit_lines(&w, 3).await;
    let secrets = &recs[0];
    let step = &secrets["authorizers"][0];
    assert_eq!(step["authorizer"], "candidate");
    assert_eq!(step["mode"], "Observe");
    assert_eq!(step["decision"], "NoOpinion");
    assert_eq!(step["wouldHave"], "Deny");
    assert_eq!(step["rule"], "no-secrets");
    assert_eq!(step["code"], "NO_SECRETS");
    assert!(secrets["authorizers"][1].get("mode").is_none(), "{secrets}");
    assert_eq!(secrets["decision"], "Allow");
    assert_eq!(secrets["decidedBy"], "tenants");
    // The whole review is kept, but for the redacted extra key.
    assert_eq!(secrets["uid"], "u-1");
    assert_eq!(secrets["extra"], json!({"warrant.dev/ticket": ["CHG-1"]}));
    assert_eq!(
        secrets["extraRedacted"],
        json!(["authentication.kubernetes.io/credential-id"])
    );
    assert_eq!(
        secrets["resourceAttributes"]["labelSelector"],
        json!({"requirements": [{"key": "app", "operator": "In", "values": ["web"]}]})
    );
    assert_eq!(secrets["resourceAttributes"]["version"], "v1");
    assert!(!secrets.to_string().contains("JTI=secret"), "{secrets}");

    let delete = &recs[1];
    assert_eq!(delete["authorizers"][0]["wouldHave"], "NoOpinion");
    assert_eq!(
        delete["authorizers"][1]["shadowRules"],
        json!([{
            "rule": "no-prod-deletes", "wouldHave": "Deny",
            "message": "deletions in prod are about to be refused", "code": "PROD_DELETE"
        }])
    );
    assert!(recs[2]["authorizers"][1].get("shadowRules").is_none());

    let text = metrics_text(&c, &w).await;
    for want in [
        "warrant_shadow_decisions_total{authorizer=\"candidate\",rule=\"no-secrets\",would=\"Deny\"} 1",
        "warrant_shadow_decisions_total{authorizer=\"candidate\",rule=\"\",would=\"NoOpinion\"} 2",
        "warrant_shadow_decisions_total{authorizer=\"tenants\",rule=\"no-prod-deletes\",would=\"Deny\"} 1",
        "warrant_shadow_disagreements_total{authorizer=\"candidate\",rule=\"no-secrets\",would=\"Deny\",chain=\"Allow\"} 1",
        "warrant_shadow_disagreements_total{authorizer=\"tenants\",rule=\"no-prod-deletes\",would=\"Deny\",chain=\"Allow\"} 1",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
    // A shadow's Deny is no decision of its authorizer.
    assert!(
        !text.contains("name=\"candidate\",decision=\"denied\""),
        "{text}"
    );
    w.stop().await;
}

/// The shipped shadow example: its suite passes, and `warrant check` shows the shadows in the
/// trace (text and JSON).
#[test]
fn the_shipped_shadow_example() {
    let out = std::process::Command::new(BIN)
        .args(["test", &repo("authz-config/tests/shadow-example.yaml")])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let config = repo("authz-config/shadow-example.yaml");
    let args = [
        "check",
        "delete",
        "configmaps/web",
        "-n",
        "shop",
        "--as",
        "ann",
        "--as-group",
        "team-shop",
        "--at",
        "2026-12-24T10:00:00Z",
        "--config",
        &config,
    ];
    let out = std::process::Command::new(BIN).args(args).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    for want in [
        "  1. candidate-freeze (Policy): NoOpinion (shadow: would have Deny) rule=december-freeze code=DECEMBER_FREEZE",
        "     shadow rule deletes-need-ticket would have Deny code=DELETE_TICKET \"deletions need a change ticket (user extra warrant.dev/ticket)\"",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
    let out = std::process::Command::new(BIN)
        .args(args)
        .args(["-o", "json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["allowed"], true);
    assert_eq!(v["trace"][0]["mode"], "Observe");
    assert_eq!(v["trace"][0]["wouldHave"], "Deny");
    assert_eq!(
        v["trace"][1]["shadowRules"][0]["rule"],
        "deletes-need-ticket"
    );
}
