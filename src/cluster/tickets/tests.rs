//! The ticket watch's events applied to the feed: objects warrant cannot read are skipped,
//! counted and leave the others published.

use super::Seen;
use crate::authorizer::deletion_guard::tickets::{Snapshot, TicketFeed};
use kube::api::DynamicObject;
use kube::runtime::watcher::Event;
use serde_json::{Value, json};

fn object(name: &str, spec: Value) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": "warrant.dev/v1alpha1",
        "kind": "DeletionTicket",
        "metadata": {"name": name, "namespace": "shop"},
        "spec": spec,
    }))
    .unwrap()
}

fn good_spec() -> Value {
    json!({
        "requestedBy": "alice",
        "targets": [{"group": "apps", "resource": "statefulsets", "namespace": "shop", "name": "db"}],
        "expiresAt": "2026-12-31T00:00:00Z",
    })
}

#[track_caller]
fn published(feed: &TicketFeed) -> Vec<String> {
    match feed.snapshot().as_ref() {
        Snapshot::Loaded(t) => {
            let mut ids: Vec<String> = t.keys().cloned().collect();
            ids.sort();
            ids
        }
        Snapshot::Unreadable(e) => panic!("unreadable: {e}"),
    }
}

#[test]
fn malformed_tickets_are_skipped_counted_and_never_break_the_others() {
    let feed = TicketFeed::new();
    let mut seen = Seen::default();
    let mut bad_time = good_spec();
    bad_time["expiresAt"] = json!("tomorrow");
    let mut no_targets = good_spec();
    no_targets["targets"] = json!([]);
    let mut wrong_type = good_spec();
    wrong_type["targets"] = json!("db");
    let events = [
        Event::Init,
        Event::InitApply(object("good", good_spec())),
        Event::InitApply(object("bad-time", bad_time)),
        Event::InitApply(object("no-targets", no_targets)),
        Event::InitApply(object("wrong-type", wrong_type)),
        Event::InitApply(object("no-spec", json!(null))),
    ];
    for e in events {
        assert!(!seen.apply(e, &feed));
    }
    assert!(seen.apply(Event::InitDone, &feed), "the list completes");
    assert_eq!(published(&feed), vec!["shop/good"]);
    assert_eq!(feed.skipped(), 4);
    // A change that makes a ticket unreadable drops it (what was approved is gone); the others
    // stay, and later good changes are published.
    seen.apply(Event::Apply(object("second", good_spec())), &feed);
    assert_eq!(published(&feed), vec!["shop/good", "shop/second"]);
    seen.apply(
        Event::Apply(object("good", json!({"requestedBy": 7}))),
        &feed,
    );
    assert_eq!(published(&feed), vec!["shop/second"]);
    assert_eq!(feed.skipped(), 5);
    seen.apply(Event::Delete(object("second", good_spec())), &feed);
    assert_eq!(published(&feed), Vec::<String>::new());
}
