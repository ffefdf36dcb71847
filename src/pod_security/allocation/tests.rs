//! The allocator's pure parts, with the vectors of OpenShift's own tests
//! (`pkg/security/mcs/label_test.go`, `TestCategoriesForOffset`;
//! `pkg/security/controller/namespace_security_allocation_controller_test.go`, `TestController`).

use super::*;
use crate::pod_security::constraint::IdRange;

fn plan(uids: &str, mcs: &str, per: u32) -> Plan {
    Plan {
        uids: UidRange::parse(uids).unwrap(),
        mcs: McsRange::parse(mcs).unwrap(),
        labels_per_namespace: per,
    }
}

#[test]
fn default_range_holds_openshifts_hundred_thousand_blocks() {
    let range = UidRange::parse(uid_range::DEFAULT).unwrap();
    assert_eq!(range.blocks(), 100_000);
    assert_eq!(
        range.block_at(0),
        Some(IdRange {
            min: 1_000_000_000,
            max: 1_000_009_999
        })
    );
    assert_eq!(
        range.block_at(99_999),
        Some(IdRange {
            min: 1_999_990_000,
            max: 1_999_999_999
        })
    );
    assert_eq!(range.block_at(100_000), None);
    assert_eq!(range.to_string(), uid_range::DEFAULT);
}

#[test]
fn bad_uid_ranges_are_refused_with_the_reason() {
    for (text, want) in [
        ("1000-2000", "not in the format"),
        ("2000-1000/10", "must be less than end"),
        ("0-100/0", "positive integer"),
        ("0-10/20", "less than or equal to the range"),
        ("0-4294967295/1", "more than 1048576 blocks"),
        ("a-b/c", "not in the format"),
    ] {
        let error = UidRange::parse(text).unwrap_err().to_string();
        assert!(error.contains(want), "{text}: {error}");
    }
}

#[test]
fn a_block_is_found_back_at_its_offset_and_a_misaligned_one_is_not() {
    let range = UidRange::parse("10-20/2").unwrap();
    assert_eq!(range.blocks(), 5);
    assert_eq!(range.offset_of(IdRange { min: 14, max: 15 }), Some(2));
    assert_eq!(range.offset_of(IdRange { min: 15, max: 16 }), None);
    assert_eq!(range.overlapping(IdRange { min: 15, max: 16 }), Some(2..=3));
    assert_eq!(range.overlapping(IdRange { min: 0, max: 9 }), None);
    assert_eq!(range.overlapping(IdRange { min: 21, max: 99 }), None);
    assert_eq!(range.overlapping(IdRange { min: 0, max: 99 }), Some(0..=4));
}

#[test]
fn mcs_labels_by_offset_match_openshifts_vectors() {
    let two = McsRange::parse("/2").unwrap();
    for (offset, want) in [
        (0, "c1,c0"),
        (1, "c2,c0"),
        (3, "c3,c0"),
        (521_730, "c1021,c1020"),
    ] {
        assert_eq!(
            two.label_at(offset).as_deref(),
            Some(want),
            "offset {offset}"
        );
    }
    let three = McsRange::parse("s0:/3").unwrap();
    assert_eq!(three.label_at(1).as_deref(), Some("s0:c3,c1,c0"));
    assert_eq!(three.label_at(121).as_deref(), Some("s0:c10,c2,c0"));
    let small = McsRange::parse("s0:/2,10").unwrap();
    assert_eq!(small.size(), 45);
    assert_eq!(small.label_at(45), None);
    assert_eq!(small.to_string(), "s0:/2,10");
}

#[test]
fn bad_mcs_ranges_are_refused_with_the_reason() {
    for (text, want) in [
        ("s0:", "not in the format"),
        ("s0:/6", "more than 5 labels"),
        ("s0:/2,2048", "more than 1024 categories"),
        ("s0:/0", "positive integers"),
    ] {
        let error = McsRange::parse(text).unwrap_err().to_string();
        assert!(error.contains(want), "{text}: {error}");
    }
}

#[test]
fn first_namespace_gets_the_first_block_as_openshifts_controller_test_says() {
    let plan = plan("10-20/2", "s0:/2,10", 5);
    let taken = Ledger::new(plan.uids);
    let got = plan.next(&taken, None).unwrap();
    assert_eq!(got.uid_range, "10/2");
    assert_eq!(got.supplemental_groups, "10/2");
    assert_eq!(got.mcs.as_deref(), Some("s0:c1,c0"));
}

#[test]
fn default_plan_gives_consecutive_blocks_labels_five_apart() {
    let plan = plan(uid_range::DEFAULT, mcs::DEFAULT, 5);
    let mut taken = Ledger::new(plan.uids);
    let first = plan.next(&taken, None).unwrap();
    taken.take(first.offset);
    let second = plan.next(&taken, None).unwrap();
    assert_eq!(first.uid_range, "1000000000/10000");
    assert_eq!(second.uid_range, "1000010000/10000");
    assert_eq!(first.mcs.as_deref(), Some("s0:c1,c0"));
    // Offset 5 of the 2-category labels.
    assert_eq!(second.mcs.as_deref(), Some("s0:c3,c2"));
}

#[test]
fn an_existing_mcs_label_is_kept() {
    let plan = plan("10-20/2", "s0:/2,10", 5);
    let got = plan
        .next(&Ledger::new(plan.uids), Some("s0:c9,c8"))
        .unwrap();
    assert_eq!(got.mcs, None);
    assert!(!got.annotations().contains_key("openshift.io/sa.scc.mcs"));
}

#[test]
fn namespaces_annotations_keep_their_blocks_and_what_they_touch_from_others() {
    let plan = plan("10-20/2", "s0:/2,10", 1);
    let taken = plan.taken_by(["10/2", "15-16", "not a block", "1000/5"]);
    assert!(taken.is_taken(0));
    assert!(!taken.is_taken(1));
    assert!(taken.is_taken(2) && taken.is_taken(3));
    assert_eq!(taken.taken(), 3);
    assert_eq!(plan.next(&taken, None).unwrap().uid_range, "12/2");
}

#[test]
fn a_full_range_is_an_error_naming_it() {
    let plan = plan("10-20/2", "s0:/2,10", 1);
    let taken = plan.taken_by(["10-19"]);
    assert_eq!(
        plan.next(&taken, None).unwrap_err().to_string(),
        "uid range 10-20/2 exceeded: every block is taken; widen the range"
    );
}

#[test]
fn the_mcs_range_running_out_is_an_error() {
    let plan = plan("0-1000/10", "s0:/2,4", 5);
    // 4 choose 2 = 6 labels: block 1 asks offset 5, block 2 offset 10.
    assert!(plan.at(1, None).is_ok());
    assert!(
        plan.at(2, None)
            .unwrap_err()
            .to_string()
            .contains("no label at offset 10")
    );
}

#[test]
fn ledger_round_trips_and_refuses_another_range() {
    let range = UidRange::parse(uid_range::DEFAULT).unwrap();
    let mut ledger = Ledger::new(range);
    for offset in [0, 1, 63, 64, 99_999] {
        ledger.take(offset);
    }
    let text = ledger.encode();
    let back = Ledger::decode(range, uid_range::DEFAULT, &text).unwrap();
    assert_eq!(back, ledger);
    assert_eq!(back.first_free(), Some(2));
    let empty = Ledger::decode(range, uid_range::DEFAULT, "").unwrap();
    assert_eq!(empty.taken(), 0);
    let other = Ledger::decode(range, "0-100/10", &text).unwrap_err();
    assert!(other.to_string().starts_with("conflicting UID range"));
    assert!(matches!(
        Ledger::decode(range, uid_range::DEFAULT, "%%%"),
        Err(LedgerError::Encoding(_))
    ));
    let small = UidRange::parse("0-99/10").unwrap();
    assert!(matches!(
        Ledger::decode(small, "0-99/10", &text),
        Err(LedgerError::TooLong { .. })
    ));
}

#[test]
fn merge_and_release_change_only_the_blocks_named() {
    let range = UidRange::parse("0-99/10").unwrap();
    let mut a = Ledger::new(range);
    a.take(1);
    let mut b = Ledger::new(range);
    b.take(4);
    a.merge(&b);
    assert!(a.is_taken(1) && a.is_taken(4));
    a.release(1);
    assert!(!a.is_taken(1));
    assert_eq!(a.first_free(), Some(0));
}
