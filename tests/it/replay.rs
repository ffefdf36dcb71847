//! `warrant replay`, `warrant validate --replay` and `warrant serve
//! --replay-on-reload`, over the real kube-apiserver and warrant recordings in
//! tests/fixtures/apiserver-audit/ and the configurations of the tier's replay scenario.

use crate::support::{BIN, repo, run_bin as run};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use warrant::reload::{ApplyError, LiveChain};
use warrant::replay::{LockoutGate, Options};
use warrant::telemetry::metrics::Metrics;

fn events() -> String {
    repo("tests/fixtures/apiserver-audit/events.jsonl")
}

fn current() -> String {
    repo("tests/apiserver/testdata/replay-current.yaml")
}

fn candidate() -> String {
    repo("tests/apiserver/testdata/replay-candidate.yaml")
}

#[test]
fn replay_prints_flips_grouped_with_examples() {
    let (code, out, err) = run(&["replay", "--config", &candidate(), &events()]);
    assert_eq!(code, 0, "{err}");
    let e = events();
    for want in [
        format!("replayed 11 of 11 reviews against {} (baseline: recorded decisions; at: recorded)", candidate()),
        "  unchanged 8, flipped 3 (allow->deny 3), 1 LOCKOUT".into(),
        "  1 kube-apiserver events the candidate has no opinion on".into(),
        "  skipped 11 audit events of other stages (RequestReceived, Panic)".into(),
        "  skipped 1 audit events of an auditID already replayed".into(),
        "LOCKOUT (system:masters) allow->deny tenants/list-needs-selector user=admin resource=configmaps: 1".into(),
        "allow->deny tenants/list-needs-selector user=pol-bob resource=configmaps: 2".into(),
        format!("    {e}:12 2026-12-03T13:22:07.128046Z list -n replay-b"),
        "      tenants/list-needs-selector: listing configmaps needs a label selector [SELECTOR_REQUIRED]".into(),
    ] {
        assert!(out.contains(&want), "missing {want:?} in\n{out}");
    }
    let (code, ..) = run(&[
        "replay",
        "--fail-on-flip",
        "--config",
        &candidate(),
        &events(),
    ]);
    assert_eq!(code, 1);
    let (code, ..) = run(&[
        "replay",
        "--fail-on-flip",
        "--config",
        &current(),
        &events(),
    ]);
    assert_eq!(code, 0);
}

#[test]
fn replay_json_and_reviews() {
    let (code, out, err) = run(&[
        "replay",
        "-o",
        "json",
        "--examples",
        "1",
        "--config",
        &candidate(),
        &events(),
    ]);
    assert_eq!(code, 0, "{err}");
    let r: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(r["totals"]["flipped"], 3);
    assert_eq!(r["totals"]["skipped"]["stage"], 11);
    assert_eq!(r["flips"]["allow->deny"], 3);
    assert_eq!(r["groups"][0]["lockout"], "system:masters");
    assert_eq!(r["groups"][1]["count"], 2);
    assert_eq!(r["groups"][1]["examples"].as_array().unwrap().len(), 1);
    // -o reviews: what the API server sent, one SubjectAccessReview per line, replayable.
    let (code, out, _) = run(&["replay", "-o", "reviews", &events()]);
    assert_eq!(code, 0);
    assert_eq!(out.lines().count(), 11);
    let dir = tempfile::tempdir().unwrap();
    let reviews = dir.path().join("reviews.jsonl");
    std::fs::write(&reviews, &out).unwrap();
    let (code, out, _) = run(&[
        "replay",
        "-o",
        "json",
        "--config",
        &candidate(),
        "--baseline",
        &current(),
        reviews.to_str().unwrap(),
    ]);
    assert_eq!(code, 0);
    let r: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(r["totals"]["replayed"], 11);
    // Compared with the current configuration, admin's list was no business of warrant's.
    assert_eq!(r["flips"]["allow->deny"], 2, "{r}");
    assert_eq!(r["flips"]["no-opinion->deny"], 1, "{r}");
}

#[test]
fn replay_usage_errors() {
    let (code, _, err) = run(&["replay", &events()]);
    assert_eq!(
        (code, err.trim()),
        (2, "error: --config CANDIDATE is required")
    );
    let (code, _, err) = run(&[
        "replay",
        "--at",
        "yesterday",
        "--config",
        &current(),
        &events(),
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--at \"yesterday\": expected recorded, now or an RFC 3339 time"),
        "{err}"
    );
    let (code, _, err) = run(&["replay", "--config", &current(), "/nonexistent/audit.log"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("/nonexistent/audit.log: no such file"),
        "{err}"
    );
}

#[test]
fn validate_replay_refuses_a_lockout() {
    let (code, out, _) = run(&["validate", "--replay", &events(), &current()]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("flipped 0"), "{out}");
    let (code, out, _) = run(&["validate", "--replay", &events(), &candidate()]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(&format!(
            "{}: refused: 1 flips would lock out a bootstrap identity",
            candidate()
        )),
        "{out}"
    );
    // Without the lockout (the admin's event left out), only --fail-on-flip refuses the flips.
    let dir = tempfile::tempdir().unwrap();
    let no_admin = dir.path().join("events.jsonl");
    let all = std::fs::read_to_string(events()).unwrap();
    let kept: Vec<&str> = all
        .lines()
        .filter(|l| !l.contains("\"username\":\"admin\"") || l.contains("impersonatedUser"))
        .collect();
    std::fs::write(&no_admin, kept.join("\n")).unwrap();
    let input = no_admin.to_str().unwrap();
    let (code, out, _) = run(&["validate", "--replay", input, &candidate()]);
    assert_eq!(code, 0, "{out}");
    let (code, out, _) = run(&[
        "validate",
        "--replay",
        input,
        "--fail-on-flip",
        &candidate(),
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("refused: 2 reviews flip (--fail-on-flip)"),
        "{out}"
    );
}

fn loaded(path: &str) -> warrant::config::Loaded {
    warrant::config::load_file(std::path::Path::new(path)).unwrap()
}

/// The reload gate keeps the last good chain when a reload would lock out a bootstrap identity,
/// and counts the refusal; a harmless reload goes through.
#[test]
fn replay_on_reload_keeps_the_last_good_chain() {
    let metrics = Metrics::new();
    let gate = LockoutGate::new(vec![events().into()], Options::default());
    let live = LiveChain::default().with_gate(Box::new(gate));
    assert!(live.apply(loaded(&current()), &metrics).unwrap());
    let served = live.load().unwrap().source.hash.clone();
    let err = live.apply(loaded(&candidate()), &metrics).unwrap_err();
    let ApplyError::Refused(refusal) = &err else {
        panic!("{err}")
    };
    assert_eq!(refusal.reason, "lockout");
    assert!(
        refusal.message.contains(
            "no-opinion->deny tenants/list-needs-selector user=admin (system:masters) resource=configmaps: 1"
        ),
        "{refusal}"
    );
    assert_eq!(live.load().unwrap().source.hash, served);
    let text = metrics.encode();
    for want in [
        "warrant_config_reload_refusals_total{reason=\"lockout\"} 1",
        "warrant_config_reloads_total{status=\"failure\"} 1",
    ] {
        assert!(text.contains(want), "missing {want} in\n{text}");
    }
    // The replayed traffic is not the live chain's: nothing of it in the metrics.
    assert!(
        !text.contains("warrant_authorization_decisions_total{"),
        "{text}"
    );
    // A reload that flips nobody important is applied.
    let narrower = std::fs::read_to_string(current())
        .unwrap()
        .replace("nobody reads secrets", "no secrets");
    let narrower = warrant::config::parse("narrower.yaml", narrower.as_bytes()).unwrap();
    assert!(live.apply(narrower, &metrics).unwrap());
    // An input that has become unreadable refuses the reload (visibly) instead of skipping it.
    let dir = tempfile::tempdir().unwrap();
    let gone = dir.path().join("audit.log");
    std::fs::write(&gone, "").unwrap();
    let live = LiveChain::default().with_gate(Box::new(LockoutGate::new(
        vec![gone.clone()],
        Options::default(),
    )));
    live.apply(loaded(&current()), &metrics).unwrap();
    std::fs::remove_file(&gone).unwrap();
    let err = live.apply(loaded(&candidate()), &metrics).unwrap_err();
    assert!(
        matches!(&err, ApplyError::Refused(r) if r.reason == "replay-error"),
        "{err}"
    );
}

/// `warrant serve --replay-on-reload`: the binary refuses a reload that would lock out a
/// bootstrap identity, with a log line, and keeps serving.
#[test]
fn serve_replay_on_reload_refuses_a_lockout() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("warrant.yaml");
    std::fs::copy(current(), &config).unwrap();
    let mut child = Command::new(BIN)
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--audit-log",
            "none",
            "--file-check-interval",
            "1s",
        ])
        .arg("--config")
        .arg(&config)
        .arg("--state-dir")
        .arg(dir.path().join("state"))
        .arg("--replay-on-reload")
        .arg(events())
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let wait_for = |what: &str, seen: &mut Vec<String>| {
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(20) {
            if let Ok(l) = rx.recv_timeout(Duration::from_millis(100)) {
                let hit = l.contains(what);
                seen.push(l);
                if hit {
                    return;
                }
            }
        }
        panic!("no {what:?} in {seen:#?}");
    };
    let mut seen = Vec::new();
    wait_for("configuration loaded", &mut seen);
    let tmp = dir.path().join("warrant.yaml.tmp");
    std::fs::copy(candidate(), &tmp).unwrap();
    std::fs::rename(&tmp, &config).unwrap();
    wait_for("configuration refused by --replay-on-reload", &mut seen);
    let refused = seen.last().unwrap().clone();
    assert!(refused.contains("\"lockout\""), "{refused}");
    assert!(refused.contains("user=admin (system:masters)"), "{refused}");
    assert!(
        child.try_wait().unwrap().is_none(),
        "warrant exited: {seen:#?}"
    );
    let _ = child.kill();
    let _ = child.wait();
}
