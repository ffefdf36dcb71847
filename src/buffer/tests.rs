//! The buffer ring's pure parts: the decision, the patches, the snapshot, the holds.

use super::decide::{self, Deleting, Live, Observed, Release, Waiting};
use super::holds::Holds;
use super::patch;
use super::snapshot::snapshot;
use crate::authorizer::deletion_guard::RiskLevel;
use crate::config::model::buffer::{BufferSettings, DEFAULT_FINALIZER};
use crate::config::model::guard::{Kind, Level};
use chrono::{DateTime, TimeZone, Utc};
use serde_json::json;
use std::time::Duration;

fn settings(require_confirmation: bool) -> BufferSettings {
    BufferSettings {
        finalizer: DEFAULT_FINALIZER.into(),
        finalize_at: Level::High,
        resources: vec![Kind {
            group: "apps".into(),
            resource: "statefulsets".into(),
        }],
        cooldown: Duration::from_secs(600),
        require_confirmation,
        confirmation_annotation: "warrant.dev/deletion-confirmed".into(),
        requester_annotation: "warrant.dev/deletion-requested-by".into(),
        max_hold: Duration::from_secs(24 * 3600),
        notify: Vec::new(),
    }
}

fn t(secs: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_800_000_000 + secs, 0).unwrap()
}

fn seen(has_finalizer: bool, protected: bool) -> Observed {
    Observed {
        has_finalizer,
        protected,
        deletion: None,
        confirmed: false,
    }
}

#[test]
fn a_live_object_gets_the_finalizer_when_protected_and_loses_it_when_not() {
    assert_eq!(decide::live(&seen(false, true)), Live::Attach);
    assert_eq!(decide::live(&seen(true, false)), Live::Detach);
    assert_eq!(decide::live(&seen(true, true)), Live::Nothing);
    assert_eq!(decide::live(&seen(false, false)), Live::Nothing);
}

#[test]
fn observe_mode_puts_no_finalizer_on_and_holds_no_deletion() {
    use crate::config::model::guard::Mode;
    let s = settings(false);
    assert!(decide::protects(Some(Level::Critical), &s, Mode::Enforce));
    assert!(!decide::protects(Some(Level::Standard), &s, Mode::Enforce));
    // Observe: a critical object is not the ring's to hold, so a finalizer it carries from
    // Enforce comes off, and a held deletion is let go.
    let observed = decide::protects(Some(Level::Critical), &s, Mode::Observe);
    assert!(!observed);
    assert_eq!(decide::live(&seen(false, observed)), Live::Nothing);
    assert_eq!(decide::live(&seen(true, observed)), Live::Detach);
    assert!(decide::holds(Mode::Enforce));
    assert!(!decide::holds(Mode::Observe));
    assert_eq!(Release::Observing.as_str(), "OBSERVE_MODE");
}

#[test]
fn below_critical_is_released_at_once() {
    let s = settings(false);
    for level in [RiskLevel::Low, RiskLevel::Medium, RiskLevel::High] {
        assert_eq!(
            decide::deleting(t(0), false, Some(level), t(1), &s),
            Deleting::Release(Release::BelowCritical)
        );
    }
}

#[test]
fn critical_is_held_until_the_cooldown_from_the_deletion_timestamp() {
    let s = settings(false);
    let d = decide::deleting(t(0), false, Some(RiskLevel::Critical), t(30), &s);
    assert_eq!(
        d,
        Deleting::Hold {
            waiting: Waiting::Cooldown,
            next: t(600),
            cooldown_ends: t(600),
            deadline: t(86_400),
        }
    );
    assert_eq!(
        decide::deleting(t(0), false, Some(RiskLevel::Critical), t(600), &s),
        Deleting::Release(Release::CooldownElapsed)
    );
}

#[test]
fn an_unknown_risk_is_held_as_critical() {
    let s = settings(false);
    assert!(matches!(
        decide::deleting(t(0), false, None, t(10), &s),
        Deleting::Hold { .. }
    ));
}

#[test]
fn confirmation_is_waited_for_after_the_cooldown_and_not_before() {
    let s = settings(true);
    // Confirmed early: still held until the cool-down ends.
    assert!(matches!(
        decide::deleting(t(0), true, Some(RiskLevel::Critical), t(10), &s),
        Deleting::Hold {
            waiting: Waiting::Cooldown,
            ..
        }
    ));
    assert_eq!(
        decide::deleting(t(0), false, Some(RiskLevel::Critical), t(700), &s),
        Deleting::Hold {
            waiting: Waiting::Confirmation,
            next: t(86_400),
            cooldown_ends: t(600),
            deadline: t(86_400),
        }
    );
    assert_eq!(
        decide::deleting(t(0), true, Some(RiskLevel::Critical), t(700), &s),
        Deleting::Release(Release::Confirmed)
    );
}

#[test]
fn max_hold_releases_whatever_else_and_bounds_the_cooldown() {
    let mut s = settings(true);
    assert_eq!(
        decide::deleting(t(0), false, Some(RiskLevel::Critical), t(86_400), &s),
        Deleting::Release(Release::Expired)
    );
    assert_eq!(Release::Expired.as_str(), "COOLDOWN_EXPIRED");
    // A cool-down longer than maxHold ends at maxHold.
    s.cooldown = Duration::from_secs(100_000);
    let Deleting::Hold { cooldown_ends, .. } =
        decide::deleting(t(0), false, Some(RiskLevel::Critical), t(1), &s)
    else {
        panic!("not held");
    };
    assert_eq!(cooldown_ends, t(86_400));
}

#[test]
fn the_risk_is_needed_only_while_the_finalizer_holds_within_max_hold() {
    let s = settings(false);
    let mut o = seen(true, true);
    assert!(!decide::needs_risk(&o, t(0), &s));
    o.deletion = Some(t(0));
    assert!(decide::needs_risk(&o, t(10), &s));
    assert!(!decide::needs_risk(&o, t(86_400), &s));
    o.has_finalizer = false;
    assert!(!decide::needs_risk(&o, t(10), &s));
}

#[test]
fn the_finalizer_list_changes_only_ours_and_the_patch_carries_the_resource_version() {
    let list = vec![
        "a/x".to_owned(),
        DEFAULT_FINALIZER.to_owned(),
        "b/y".to_owned(),
    ];
    assert_eq!(
        patch::changed(&list, DEFAULT_FINALIZER, false),
        Some(vec!["a/x".to_owned(), "b/y".to_owned()])
    );
    assert_eq!(patch::changed(&list, DEFAULT_FINALIZER, true), None);
    assert_eq!(
        patch::changed(&["a/x".to_owned()], DEFAULT_FINALIZER, true),
        Some(vec!["a/x".to_owned(), DEFAULT_FINALIZER.to_owned()])
    );
    assert_eq!(patch::changed(&[], DEFAULT_FINALIZER, false), None);
    assert_eq!(
        patch::body("42", &[]),
        json!({"metadata": {"resourceVersion": "42", "finalizers": []}})
    );
}

#[test]
fn a_snapshot_keeps_metadata_and_spec_and_never_data() {
    let secret = json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "s", "managedFields": [{"manager": "kubectl"}], "labels": {"a": "b"}},
        "data": {"password": "aHVudGVyMg=="}, "stringData": {"x": "y"},
        "status": {"x": 1}
    });
    assert_eq!(
        snapshot(&secret),
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "labels": {"a": "b"}}})
    );
    let sts = json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
                     "spec": {"replicas": 3}, "status": {"readyReplicas": 3}});
    assert_eq!(
        snapshot(&sts),
        json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"}, "spec": {"replicas": 3}})
    );
}

#[test]
fn holds_are_announced_once_and_summarised() {
    let holds = Holds::default();
    assert!(holds.hold("u1", t(0)));
    assert!(!holds.hold("u1", t(0)));
    assert!(holds.hold("u2", t(50)));
    assert_eq!(holds.summary(t(100)), (2, 100.0));
    holds.release("u1");
    assert_eq!(holds.summary(t(100)), (1, 50.0));
    holds.clear();
    assert_eq!(holds.summary(t(100)), (0, 0.0));
}

#[test]
fn a_dropped_block_or_kind_retires_its_finalizer_and_a_kept_one_does_not() {
    let old = settings(false);
    let mut renamed = settings(false);
    renamed.finalizer = "example.com/other".into();
    let sts = Kind {
        group: "apps".into(),
        resource: "statefulsets".into(),
    };
    assert_eq!(
        super::retire::retired([&old], &[]),
        vec![(DEFAULT_FINALIZER.to_owned(), sts.clone())]
    );
    assert_eq!(super::retire::retired([&old], &[&settings(true)]), vec![]);
    assert_eq!(
        super::retire::retired([&old], &[&renamed]),
        vec![(DEFAULT_FINALIZER.to_owned(), sts)]
    );
}

#[tokio::test]
async fn leadership_lost_stops_at_once_and_a_closed_always_true_channel_never_does() {
    use std::time::Duration;
    let (tx, mut rx) = tokio::sync::watch::channel(true);
    let stopped = tokio::spawn(async move { super::run::lost(&mut rx).await });
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert!(!stopped.is_finished());
    tx.send_replace(false);
    tokio::time::timeout(Duration::from_secs(1), stopped)
        .await
        .expect("not stopped within a second")
        .unwrap();

    // serve without leader election: the sender is dropped, the value stays true.
    let (tx, mut rx) = tokio::sync::watch::channel(true);
    drop(tx);
    let never = tokio::time::timeout(Duration::from_millis(100), super::run::lost(&mut rx)).await;
    assert!(never.is_err(), "an always-true receiver lost leadership");
}

/// The buffer ring's records of a deletion carry the id the other rings derived for the
/// DELETE: from the object, the requester annotation and `deletionTimestamp`; none without a
/// requester.
#[test]
fn a_deletion_is_joined_to_the_delete_its_requester_asked_for() {
    use crate::telemetry::audit::{DecisionId, JoinKey};
    use kube::api::ObjectMeta;
    use kube::discovery::ApiResource;
    let resource = |group: &str, plural: &str, kind: &str| ApiResource {
        group: group.into(),
        version: "v1".into(),
        api_version: if group.is_empty() {
            "v1".into()
        } else {
            format!("{group}/v1")
        },
        kind: kind.into(),
        plural: plural.into(),
    };
    let meta = |namespace: Option<&str>, name: &str| ObjectMeta {
        namespace: namespace.map(Into::into),
        name: Some(name.into()),
        ..ObjectMeta::default()
    };
    let at = Utc.with_ymd_and_hms(2026, 12, 2, 10, 0, 1).unwrap();
    let key = |group, resource, namespace, name| JoinKey {
        operation: "DELETE",
        group,
        resource,
        subresource: "",
        namespace,
        name,
        user: "jane",
        at,
    };
    let sts = resource("apps", "statefulsets", "StatefulSet");
    assert_eq!(
        super::context::deletion_decision_id(&sts, &meta(Some("shop"), "db"), at, Some("jane")),
        Some(DecisionId::derive(&key(
            "apps",
            "statefulsets",
            "shop",
            "db"
        )))
    );
    assert_eq!(
        super::context::deletion_decision_id(&sts, &meta(Some("shop"), "db"), at, None),
        None
    );
    // A Namespace is its own namespace in the attributes the other rings see.
    let ns = resource("", "namespaces", "Namespace");
    assert_eq!(
        super::context::deletion_decision_id(&ns, &meta(None, "shop"), at, Some("jane")),
        Some(DecisionId::derive(&key("", "namespaces", "shop", "shop")))
    );
}
