//! The deletion guard through `warrant check --at ... --extra warrant.dev/ticket=...` against the
//! shipped example, and its failure policy when the tickets file is gone.

use crate::support::{BIN, repo};
use std::process::Command;

/// Runs `warrant check -o json` and returns (exit code, JSON answer).
fn check(config: &str, at: &str, args: &[&str]) -> (i32, serde_json::Value) {
    let o = Command::new(BIN)
        .args(["check", "-o", "json", "--config", config, "--at", at])
        .args(args)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
    (o.status.code().unwrap_or(-1), v)
}

fn guard_code(v: &serde_json::Value) -> String {
    v["trace"][0]["code"].as_str().unwrap_or("").to_owned()
}

const IN_WINDOW: &str = "2026-12-02T10:00:00Z";

#[test]
fn done_when_enforce() {
    let cfg = repo("authz-config/guard-example.yaml");
    let sts = [
        "delete",
        "statefulsets.apps/db",
        "-n",
        "production",
        "--as",
        "alice",
    ];
    let ticket = |t: &str| format!("warrant.dev/ticket={t}");

    let (rc, v) = check(
        &cfg,
        IN_WINDOW,
        &[
            "delete",
            "deployments.apps/web",
            "-n",
            "production",
            "--as",
            "alice",
        ],
    );
    assert_eq!(rc, 3, "{v}");
    assert_eq!(v["code"], "MISSING_TICKET", "{v}");
    assert!(
        v["reason"].as_str().unwrap().contains("risk=CRITICAL"),
        "{v}"
    );

    let t = ticket("CHG-100");
    let (rc, v) = check(&cfg, IN_WINDOW, &[&sts[..], &["--extra", &t]].concat());
    assert_eq!(rc, 4, "{v}");
    assert_eq!(guard_code(&v), "ALLOW_WITH_COOLDOWN", "{v}");

    for (t, code) in [
        ("CHG-101", "INSUFFICIENT_APPROVALS"),
        ("CHG-102", "TICKET_NOT_APPROVED"),
    ] {
        let t = ticket(t);
        let (rc, v) = check(&cfg, IN_WINDOW, &[&sts[..], &["--extra", &t]].concat());
        assert_eq!((rc, v["code"].as_str()), (3, Some(code)), "{v}");
    }

    let t = ticket("CHG-100");
    let (rc, v) = check(
        &cfg,
        "2026-12-02T21:00:00Z",
        &[&sts[..], &["--extra", &t]].concat(),
    );
    assert_eq!((rc, v["code"].as_str()), (3, Some("WINDOW_BLOCKED")), "{v}");

    let (rc, v) = check(
        &cfg,
        "2026-12-02T21:00:00Z",
        &[&sts[..], &["--as-group", "sre-break-glass"]].concat(),
    );
    assert_eq!(rc, 4, "{v}");
    assert_eq!(guard_code(&v), "BREAK_GLASS", "{v}");
}

#[test]
fn done_when_observe() {
    let cfg = repo("authz-config/guard-observe-example.yaml");
    let (rc, v) = check(
        &cfg,
        IN_WINDOW,
        &[
            "delete",
            "deployments.apps/web",
            "-n",
            "production",
            "--as",
            "alice",
        ],
    );
    assert_eq!(rc, 4, "{v}");
    assert_eq!(guard_code(&v), "OBSERVED_MISSING_TICKET", "{v}");
    let (rc, v) = check(
        &cfg,
        "2026-12-02T21:00:00Z",
        &[
            "delete",
            "statefulsets.apps/db",
            "-n",
            "production",
            "--as",
            "alice",
            "--extra",
            "warrant.dev/ticket=CHG-100",
        ],
    );
    assert_eq!(rc, 4, "{v}");
    assert_eq!(guard_code(&v), "OBSERVED_WINDOW_BLOCKED", "{v}");
}

#[test]
fn unreadable_tickets_file_applies_failure_policy() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = std::fs::read_to_string(repo("authz-config/guard-example.yaml")).unwrap();
    let p = dir.path().join("guard.yaml");
    std::fs::write(&p, cfg).unwrap(); // guard-tickets.yaml is not copied
    let (rc, v) = check(
        p.to_str().unwrap(),
        IN_WINDOW,
        &[
            "delete",
            "deployments.apps/web",
            "-n",
            "production",
            "--as",
            "alice",
            "--extra",
            "warrant.dev/ticket=CHG-100",
        ],
    );
    assert_eq!(rc, 3, "{v}");
    let reason = v["reason"].as_str().unwrap();
    assert!(
        reason.contains("ticket source unavailable") && reason.contains("guard-tickets.yaml"),
        "{v}"
    );
}

#[test]
fn guard_suites_pass() {
    let o = Command::new(BIN)
        .arg("test")
        .arg(repo("authz-config/tests/guard-example.yaml"))
        .arg(repo("authz-config/tests/guard-observe-example.yaml"))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.ends_with(" passed, 0 failed\n"), "{out}");
}

mod https {
    use crate::support::*;
    use serde_json::{Value, json};

    fn config(mode: &str, comment: &str) -> String {
        format!(
            "# {comment}
apiVersion: warrant.dev/v1alpha1
kind: AuthorizationConfiguration
authorizers:
- type: DeletionGuard
  name: guard
  guard:
    mode: {mode}
    protectedNamespaces: [{{names: [production], level: critical}}]
    protectedResources: [{{group: apps, resource: deployments, names: [web], level: critical}}]
    trusted: [{{serviceAccounts: [ci/deployer], maxLevel: standard}}]
    rateLimits:
    - {{resource: namespaces, count: 3, per: 1h}}
    - {{group: '*', resource: '*', count: 50, per: 1m}}
{}",
            // A change elsewhere in the chain (an unchanged file is not reloaded at all).
            if comment == "v2" {
                "- type: AlwaysDeny\n  name: tail\n"
            } else {
                ""
            }
        )
    }

    fn delete(user: &str, resource: Value) -> String {
        json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
               "spec": {"user": user, "groups": ["system:authenticated"], "resourceAttributes": resource}})
        .to_string()
    }

    fn deploy(ns: &str, name: &str) -> Value {
        json!({"verb": "delete", "group": "apps", "resource": "deployments", "namespace": ns, "name": name})
    }

    fn namespace(name: &str) -> Value {
        json!({"verb": "delete", "group": "", "resource": "namespaces", "name": name})
    }

    async fn audit_lines(w: &Warrant, n: usize) -> Vec<Value> {
        for _ in 0..200 {
            let lines: Vec<Value> = std::fs::read_to_string(w.path("audit.log"))
                .unwrap_or_default()
                .lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect();
            if lines.len() >= n {
                return lines;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        panic!("fewer than {n} audit records");
    }

    async fn wait_reloads(c: &reqwest::Client, w: &Warrant, n: u32) {
        let prefix = "warrant_config_reloads_total{status=\"success\"} ";
        for _ in 0..250 {
            let text = metrics_text(c, w).await;
            let count = text
                .lines()
                .find_map(|l| l.strip_prefix(prefix))
                .and_then(|v| v.trim().parse::<u32>().ok())
                .unwrap_or(0);
            if count >= n {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        let text = metrics_text(c, w).await;
        let reloads: Vec<&str> = text.lines().filter(|l| l.contains("reload")).collect();
        panic!("no reload {n}: {reloads:#?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn guard_over_https_enforce_then_observe() {
        let w = Warrant::start(Options {
            config: Some(config("Enforce", "v1")),
            audit: true,
            ..Options::default()
        })
        .await;
        let c = w.client();
        let url = w.url("/authorize");
        let (code, v) = post_review(&c, &url, &delete("alice", deploy("production", "web"))).await;
        assert_eq!(code, 200);
        assert_eq!(v["status"]["denied"], true, "{v}");
        let reason = v["status"]["reason"].as_str().unwrap();
        assert!(
            reason.contains("[MISSING_TICKET]") && reason.contains("risk=CRITICAL"),
            "{reason}"
        );

        for i in 0..200 {
            let (_, v) = post_review(
                &c,
                &url,
                &delete(
                    "system:serviceaccount:ci:deployer",
                    deploy("ci-tests", &format!("test-{i}")),
                ),
            )
            .await;
            assert_eq!(v["status"]["allowed"], false, "{v}");
            assert!(v["status"]["denied"].is_null(), "CI delete {i} denied: {v}");
        }
        for i in 1..=4 {
            let (_, v) =
                post_review(&c, &url, &delete("erin", namespace(&format!("tmp-{i}")))).await;
            let denied = v["status"]["denied"] == true;
            assert_eq!(denied, i == 4, "namespace delete {i}: {v}");
            if i == 4 {
                assert!(
                    v["status"]["reason"]
                        .as_str()
                        .unwrap()
                        .contains("[RATE_LIMITED]"),
                    "{v}"
                );
            }
        }
        let recs = audit_lines(&w, 205).await;
        let g = &recs[0]["authorizers"][0]["guard"];
        assert_eq!(g["code"], "MISSING_TICKET", "{g}");
        assert_eq!(g["riskLevel"], "CRITICAL", "{g}");
        assert_eq!(g["mode"], "Enforce", "{g}");
        assert!(g["riskScore"].as_u64().unwrap() >= 80, "{g}");
        assert_eq!(recs[1]["authorizers"][0]["guard"]["code"], "ALLOW");
        let text = metrics_text(&c, &w).await;
        for want in [
            "warrant_guard_decisions_total{name=\"guard\",code=\"MISSING_TICKET\",mode=\"Enforce\"} 1",
            "warrant_guard_decisions_total{name=\"guard\",code=\"ALLOW\",mode=\"Enforce\"} 203",
            "warrant_guard_decisions_total{name=\"guard\",code=\"RATE_LIMITED\",mode=\"Enforce\"} 1",
        ] {
            assert!(text.contains(want), "missing {want:?} in\n{text}");
        }

        // Same guard settings, another entry added: the buckets survive the reload, erin is
        // still limited by the guard itself.
        replace_file(&w.config_path(), &config("Enforce", "v2"));
        wait_reloads(&c, &w, 2).await;
        let (_, v) = post_review(&c, &url, &delete("erin", namespace("tmp-5"))).await;
        assert_eq!(v["status"]["denied"], true, "{v}");
        assert!(
            v["status"]["reason"]
                .as_str()
                .unwrap()
                .contains("[RATE_LIMITED]"),
            "{v}"
        );

        // Observe: everything above answers NoOpinion, audited OBSERVED_*.
        replace_file(&w.config_path(), &config("Observe", "v3"));
        wait_reloads(&c, &w, 3).await;
        let (_, v) = post_review(&c, &url, &delete("alice", deploy("production", "web"))).await;
        assert!(v["status"]["denied"].is_null(), "{v}");
        for i in 1..=4 {
            let (_, v) =
                post_review(&c, &url, &delete("erin", namespace(&format!("obs-{i}")))).await;
            assert!(v["status"]["denied"].is_null(), "{v}");
        }
        let recs = audit_lines(&w, 211).await;
        assert_eq!(
            recs[206]["authorizers"][0]["guard"]["code"],
            "OBSERVED_MISSING_TICKET"
        );
        assert_eq!(
            recs[206]["authorizers"][0]["code"],
            "OBSERVED_MISSING_TICKET"
        );
        assert_eq!(
            recs[210]["authorizers"][0]["guard"]["code"],
            "OBSERVED_RATE_LIMITED"
        );
        let text = metrics_text(&c, &w).await;
        for want in [
            "warrant_guard_decisions_total{name=\"guard\",code=\"MISSING_TICKET\",mode=\"Observe\"} 1",
            "warrant_guard_decisions_total{name=\"guard\",code=\"RATE_LIMITED\",mode=\"Observe\"} 1",
        ] {
            assert!(text.contains(want), "missing {want:?} in\n{text}");
        }
        w.stop().await;
    }
}
