//! Replay against real recordings: `tests/fixtures/apiserver-audit/` holds kube-apiserver's own
//! audit events and warrant's audit records of the same traffic (see its README), so every
//! audit Event shape is checked against what the API server really sent warrant.

use super::input::Reader;
use super::record::{Item, Recorded, Skip, Source};
use super::*;
use crate::authorizer::Chain;
use crate::decision::Decision;
use serde_json::{Value, json};
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/apiserver-audit")
        .join(name)
}

/// Every item of the inputs: reviews, skips, and the messages of malformed lines.
fn read_all(inputs: &[PathBuf]) -> (Vec<Recorded>, Vec<Skip>, Vec<String>) {
    let mut reader = Reader::new(inputs).unwrap();
    let (mut reviews, mut skips, mut errors) = (Vec::new(), Vec::new(), Vec::new());
    while let Some(next) = reader.next_item() {
        match next.unwrap() {
            Ok(Item::Review(r)) => reviews.push(*r),
            Ok(Item::Skipped(s)) => skips.push(s),
            Err(e) => errors.push(format!("{}: {}", e.origin, e.message)),
        }
    }
    (reviews, skips, errors)
}

fn spec(r: &Recorded) -> Value {
    serde_json::to_value(r.review.spec()).unwrap()
}

/// The recorded reviews of a user, in order.
fn of<'a>(reviews: &'a [Recorded], user: &str) -> Vec<&'a Recorded> {
    reviews.iter().filter(|r| r.review.user() == user).collect()
}

#[test]
fn stages_are_filtered_and_audit_ids_deduplicated() {
    let (reviews, skips, errors) = read_all(&[fixture("events.jsonl")]);
    assert!(errors.is_empty(), "{errors:?}");
    // 23 events: 11 requests, each with a RequestReceived event; the watch also has a
    // ResponseStarted event before its ResponseComplete, which is the duplicate.
    assert_eq!(reviews.len(), 11);
    assert_eq!(skips.iter().filter(|s| **s == Skip::Stage).count(), 11);
    assert_eq!(skips.iter().filter(|s| **s == Skip::Duplicate).count(), 1);
    let watch = reviews.iter().find(|r| r.review.verb() == "watch").unwrap();
    assert_eq!(
        watch.origin.line, 18,
        "the ResponseStarted event is the one replayed"
    );
    assert!(reviews.iter().all(|r| r.source == Source::ApiServer));
}

#[test]
fn the_create_caveat_takes_name_and_namespace_from_the_path() {
    let (reviews, ..) = read_all(&[fixture("events.jsonl")]);
    let create = reviews
        .iter()
        .find(|r| r.review.verb() == "create")
        .unwrap();
    // The event's objectRef names the created object; the authorizer saw no name.
    assert_eq!(
        spec(create)["resourceAttributes"],
        json!({"namespace": "replay-a", "verb": "create", "version": "v1", "resource": "configmaps"})
    );
    assert_eq!(create.decision, Some(Decision::Allow));
    assert_eq!(
        create.at.unwrap().to_rfc3339(),
        "2026-12-03T13:22:07.065823+00:00"
    );
    let secret = of(&reviews, "pol-alice")[2];
    assert_eq!(spec(secret)["resourceAttributes"]["name"], "nope");
    assert_eq!(secret.decision, Some(Decision::Deny));
}

#[test]
fn impersonation_authorizes_the_impersonated_user() {
    let (reviews, ..) = read_all(&[fixture("events.jsonl")]);
    let bob = of(&reviews, "pol-bob");
    let impersonated = bob.last().unwrap();
    let mut got = spec(impersonated);
    got.as_object_mut().unwrap().remove("resourceAttributes");
    assert_eq!(
        got,
        json!({"user": "pol-bob", "groups": ["team-b", "system:authenticated"]})
    );
    // admin's own list stays admin's.
    assert_eq!(of(&reviews, "admin").len(), 1);
}

#[test]
fn selectors_become_the_requirements_the_webhook_sent() {
    let (reviews, ..) = read_all(&[fixture("events.jsonl")]);
    let bob = of(&reviews, "pol-bob");
    let ra = |r: &Recorded| spec(r)["resourceAttributes"].clone();
    assert_eq!(
        ra(bob[2])["labelSelector"],
        json!({"requirements": [
            {"key": "app", "operator": "In", "values": ["api", "web"]},
            {"key": "legacy", "operator": "DoesNotExist"},
        ]})
    );
    assert_eq!(
        ra(bob[3])["fieldSelector"],
        json!({"requirements": [
            {"key": "spec.nodeName", "operator": "In", "values": ["node-1"]},
            {"key": "status.phase", "operator": "NotIn", "values": ["Failed"]},
        ]})
    );
    // A watch carries its selector; a get none.
    assert_eq!(
        ra(bob[4])["labelSelector"],
        json!({"requirements": [{"key": "app", "operator": "In", "values": ["web"]}]})
    );
    assert!(ra(bob[0]).get("labelSelector").is_none());
}

#[test]
fn a_non_resource_request_keeps_its_path() {
    let (reviews, ..) = read_all(&[fixture("events.jsonl")]);
    let version = reviews
        .iter()
        .find(|r| r.review.spec().non_resource_attributes.is_some())
        .unwrap();
    assert_eq!(
        spec(version)["nonResourceAttributes"],
        json!({"path": "/version", "verb": "get"})
    );
}

/// What the API server sent warrant (warrant's records of the same traffic) is exactly what
/// replay rebuilds from the API server's events, for every review warrant received.
#[test]
fn every_review_warrant_received_is_rebuilt_from_the_events() {
    let (events, ..) = read_all(&[fixture("events.jsonl")]);
    let (received, _, errors) = read_all(&[fixture("warrant.jsonl")]);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(received.len(), 9);
    let rebuilt: Vec<Value> = events.iter().map(spec).collect();
    for r in &received {
        assert_eq!(r.source, Source::Warrant);
        assert!(rebuilt.contains(&spec(r)), "not rebuilt: {}", spec(r));
    }
    assert_eq!(
        received[0].decided_by.as_deref(),
        Some("tenants/team-a"),
        "the deciding rule is read from the record's steps"
    );
}

fn chain(yaml: &str) -> Chain {
    let loaded = crate::config::parse("c.yaml", yaml.as_bytes()).unwrap();
    Chain::build(&loaded.config).unwrap()
}

fn config(file: &str) -> String {
    std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/apiserver/testdata")
            .join(file),
    )
    .unwrap()
}

/// A group as a tuple: flip, rule, user, resource, count, lockout.
type Flat<'a> = (String, String, String, String, u64, Option<&'a str>);

fn groups(report: &Report) -> Vec<Flat<'_>> {
    let mut g: Vec<_> = report
        .groups
        .iter()
        .map(|g| {
            (
                g.flip.clone(),
                g.rule.clone(),
                g.user.clone(),
                g.resource.clone(),
                g.count,
                g.lockout,
            )
        })
        .collect();
    g.sort();
    g
}

fn run(inputs: &[PathBuf], candidate: &Chain, baseline: Option<&Chain>) -> Report {
    replay_blocking(inputs, candidate, baseline, &Options::default()).unwrap()
}

/// The tier scenario's flips, offline: the candidate tightens one rule.
#[test]
fn the_api_server_log_against_a_tightened_rule() {
    let candidate = chain(&config("replay-candidate.yaml"));
    let r = run(&[fixture("events.jsonl")], &candidate, None);
    let s = |x: &str| x.to_owned();
    assert_eq!(
        groups(&r),
        vec![
            (
                s("allow->deny"),
                s("tenants/list-needs-selector"),
                s("admin"),
                s("configmaps"),
                1,
                Some("system:masters")
            ),
            (
                s("allow->deny"),
                s("tenants/list-needs-selector"),
                s("pol-bob"),
                s("configmaps"),
                2,
                None
            ),
        ]
    );
    assert_eq!(
        (r.totals.replayed, r.totals.flipped, r.totals.lockouts),
        (11, 3, 1)
    );
    // `/version` is not warrant's to answer: left to the API server's other authorizers.
    assert_eq!(r.totals.deferred, 1);
    let text = r.text();
    assert!(
        text.contains("LOCKOUT (system:masters) allow->deny tenants/list-needs-selector user=admin resource=configmaps: 1"),
        "{text}"
    );
    // The current configuration reproduces every recorded answer.
    let current = chain(&config("replay-current.yaml"));
    assert_eq!(
        run(&[fixture("events.jsonl")], &current, None)
            .totals
            .flipped,
        0
    );
}

/// warrant's own log: every change counts, to and from NoOpinion, and a baseline configuration
/// gives the same flips as the recorded answers.
#[test]
fn warrant_log_flips_to_no_opinion_and_baselines_agree() {
    let narrowed = config("replay-candidate.yaml").replace(
        "request.resourceAttributes.verb in ['get', 'list', 'watch']",
        "request.resourceAttributes.verb == 'get'",
    );
    let candidate = chain(&narrowed);
    let s = |x: &str| x.to_owned();
    let want = vec![
        (
            s("allow->deny"),
            s("tenants/list-needs-selector"),
            s("pol-bob"),
            s("configmaps"),
            2,
            None,
        ),
        (
            s("allow->no-opinion"),
            s("tenants/team-b-reads"),
            s("pol-bob"),
            s("configmaps"),
            2,
            None,
        ),
        (
            s("allow->no-opinion"),
            s("tenants/team-b-reads"),
            s("pol-bob"),
            s("pods"),
            1,
            None,
        ),
    ];
    let recorded = run(&[fixture("warrant.jsonl")], &candidate, None);
    assert_eq!(groups(&recorded), want);
    assert_eq!(
        (recorded.totals.replayed, recorded.totals.unchanged),
        (9, 4)
    );
    let baseline = chain(&config("replay-current.yaml"));
    let compared = run(&[fixture("warrant.jsonl")], &candidate, Some(&baseline));
    assert_eq!(groups(&compared), want);
    // With a baseline, the API server's log is compared exactly too: NoOpinion is a flip.
    let exact = run(&[fixture("events.jsonl")], &candidate, Some(&baseline));
    assert_eq!(exact.totals.deferred, 0);
    assert_eq!(exact.flips.get("allow->no-opinion"), Some(&3));
}

/// Time-aware rules replay at the recorded time by default, or at another.
#[test]
fn time_aware_rules_replay_at_the_recorded_time_or_another() {
    let candidate = chain(
        "apiVersion: warrant.dev/v1alpha1
kind: AuthorizationConfiguration
authorizers:
- type: Policy
  name: clock
  policy:
    rules:
    - {name: before-2027, effect: Allow, expression: \"now < timestamp('2027-01-01T00:00:00Z')\", message: m}
",
    );
    let at = |a: At| {
        let options = Options {
            at: a,
            ..Options::default()
        };
        replay_blocking(&[fixture("warrant.jsonl")], &candidate, None, &options).unwrap()
    };
    // Recorded in December 2026: before 2027, so every record is allowed.
    let recorded = at(At::Recorded);
    assert_eq!(recorded.flips.get("deny->allow"), Some(&2));
    let later = at(At::parse("2027-06-01T00:00:00Z").unwrap());
    assert_eq!(later.flips.get("allow->no-opinion"), Some(&7));
    assert_eq!(later.at, "2027-06-01T00:00:00.000000Z");
}

/// The record warrant writes is complete: read back, it is the review that was judged, with
/// uid, extra and selectors; a redacted key is flagged.
#[test]
fn an_audit_record_reads_back_as_the_review_it_records() {
    use crate::authorizer::{Deadline, Input};
    use crate::telemetry::audit::{AuditRecord, AuditSink, AuditTarget};
    let review = crate::review::decode(
        json!({
            "apiVersion": "authorization.k8s.io/v1beta1",
            "kind": "SubjectAccessReview",
            "spec": {
                "user": "jane", "uid": "u-1", "group": ["dev"],
                "extra": {"warrant.dev/ticket": ["CHG-1"], "secret": ["s"]},
                "resourceAttributes": {
                    "namespace": "shop", "verb": "list", "group": "apps", "version": "v1",
                    "resource": "deployments",
                    "fieldSelector": {"requirements": [{"key": "metadata.name", "operator": "In", "values": ["web"]}]},
                    "labelSelector": {"rawSelector": "app=web"}
                }
            }
        })
        .to_string()
        .as_bytes(),
    )
    .unwrap();
    let original = review.spec().clone();
    let now = chrono::DateTime::parse_from_rfc3339("2026-05-04T03:02:01.123456Z")
        .unwrap()
        .with_timezone(&chrono::Utc);
    let input = Input::new(review, now);
    let chain = chain(&config("replay-current.yaml"));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let answer = runtime
        .block_on(chain.authorize(&input, Deadline::after(std::time::Duration::from_secs(5))));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    for redact in [vec![], vec!["secret".to_owned()]] {
        let sink = AuditSink::open(
            &AuditTarget::File(path.clone()),
            std::sync::Arc::new(crate::telemetry::metrics::Metrics::new()),
        )
        .unwrap()
        .with_redacted_extra(redact);
        sink.write(&AuditRecord::new(
            &input,
            &answer,
            std::time::Duration::ZERO,
            None,
        ));
    }
    // Dropping the sinks flushed both records.
    let (back, ..) = read_all(&[path]);
    assert_eq!(back.len(), 2);
    assert_eq!(back[0].review.spec(), &original);
    assert_eq!(back[0].at, Some(now));
    assert_eq!(back[0].decision, Some(answer.decision));
    assert!(back[0].redacted.is_empty());
    let mut without = original.clone();
    without.extra.as_mut().unwrap().remove("secret");
    assert_eq!(back[1].review.spec(), &without);
    assert_eq!(back[1].redacted, vec!["secret".to_owned()]);
}

/// SubjectAccessReview files: one per file (pretty-printed), arrays, one per line; the status
/// is the recorded answer.
#[test]
fn subject_access_review_files() {
    let dir = tempfile::tempdir().unwrap();
    let sar = |user: &str, status: Value| {
        json!({
            "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
            "spec": {"user": user, "resourceAttributes": {"verb": "get", "resource": "pods"}},
            "status": status
        })
    };
    std::fs::write(
        dir.path().join("a.json"),
        serde_json::to_string_pretty(&sar("a", json!({"allowed": true}))).unwrap(),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("b.json"),
        serde_json::to_string(&json!([
            sar("b", json!({"allowed": false, "denied": true})),
            sar("c", json!({"allowed": false}))
        ]))
        .unwrap(),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("c.jsonl"),
        format!("{}\nnot json\n", sar("d", Value::Null)),
    )
    .unwrap();
    let (reviews, _, errors) = read_all(&[dir.path().to_path_buf()]);
    let got: Vec<_> = reviews
        .iter()
        .map(|r| (r.review.user().to_owned(), r.decision))
        .collect();
    assert_eq!(
        got,
        vec![
            ("a".into(), Some(Decision::Allow)),
            ("b".into(), Some(Decision::Deny)),
            ("c".into(), Some(Decision::NoOpinion)),
            ("d".into(), None),
        ]
    );
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("c.jsonl:2"), "{errors:?}");
    assert!(Reader::new(&[dir.path().join("missing")]).is_err());
}

/// Lines past the limit and unknown JSON are errors of their line, never a crash.
#[test]
fn malformed_inputs_are_errors_of_their_line() {
    let dir = tempfile::tempdir().unwrap();
    let events = std::fs::read_to_string(fixture("events.jsonl")).unwrap();
    let mut lines: Vec<&str> = events.lines().take(2).collect();
    let long = format!(
        "{{\"kind\":\"Event\",\"x\":\"{}\"}}",
        "x".repeat(5 * 1024 * 1024)
    );
    lines.push(&long);
    lines.push("{\"kind\":\"Event\",\"apiVersion\":\"audit.k8s.io/v1\"}");
    let path = dir.path().join("events.jsonl");
    std::fs::write(&path, lines.join("\n")).unwrap();
    let (reviews, skips, errors) = read_all(std::slice::from_ref(&path));
    assert_eq!((reviews.len(), skips.len()), (1, 1));
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        errors[0].ends_with(":3: line longer than 4194304 bytes"),
        "{errors:?}"
    );
    assert!(errors[1].contains(":4: missing field"), "{errors:?}");
    let unknown = dir.path().join("other.jsonl");
    std::fs::write(&unknown, "{\"hello\": 1}\n{\"hello\": 2}\n").unwrap();
    let (reviews, _, errors) = read_all(&[unknown]);
    assert!(reviews.is_empty());
    assert_eq!(errors.len(), 1, "{errors:?}");
}
