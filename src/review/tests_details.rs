//! `authorizationDetails`: the key shape, the 1 KiB bound and how entries are left out.

use super::*;

#[track_caller]
fn key(k: &str) -> DetailKey {
    DetailKey::new(k).unwrap()
}

#[test]
fn warrant_keys_are_domain_prefixed_keys() {
    for k in WARRANT_KEYS.iter().chain([&TRUNCATED_KEY]) {
        assert_eq!(DetailKey::new(k).map(|k| k.to_string()).as_deref(), Ok(*k));
        assert!(k.starts_with("warrant.dev/"), "{k}");
    }
}

#[test]
fn keys_without_a_domain_prefix_or_with_a_bad_name_are_refused() {
    let long_name = format!("warrant.dev/{}", "a".repeat(64));
    let long_prefix = format!("{}/rule", "a".repeat(254));
    for bad in [
        "authorizer",
        "/rule",
        "Warrant.dev/rule",
        "warrant_dev/rule",
        "-warrant.dev/rule",
        "warrant.dev/",
        "warrant.dev/-rule",
        "warrant.dev/rule-",
        "warrant.dev/a rule",
        "warrant.dev/a/b",
        long_name.as_str(),
        long_prefix.as_str(),
    ] {
        assert!(DetailKey::new(bad).is_err(), "{bad:?} was accepted");
    }
    let at_limit = format!("warrant.dev/{}", "a".repeat(63));
    for good in [
        "policy.example.com/name",
        "cedar.example.com/policyId",
        "a/b_c.D",
        at_limit.as_str(),
    ] {
        assert!(DetailKey::new(good).is_ok(), "{good:?} was refused");
    }
}

#[track_caller]
fn assert_len_is_the_json_length(d: &AuthorizationDetails) {
    let json = serde_json::to_vec(d).unwrap();
    assert_eq!(
        d.encoded_len(),
        json.len(),
        "{}",
        String::from_utf8_lossy(&json)
    );
    assert!(
        json.len() <= MAX_AUTHORIZATION_DETAILS_BYTES,
        "{} bytes",
        json.len()
    );
}

#[test]
fn the_counted_size_is_the_size_of_the_json_escapes_included() {
    let mut d = AuthorizationDetails::new();
    assert_len_is_the_json_length(&d);
    d.insert_one(&key("warrant.dev/authorizer"), "guard");
    assert_len_is_the_json_length(&d);
    d.insert(
        &key("x.example.com/quoted"),
        vec!["say \"no\"\n".into(), "tab\there".into(), "é \u{1}".into()],
    );
    assert_len_is_the_json_length(&d);
    d.insert_one(&key("x.example.com/huge"), "y".repeat(2000));
    assert!(d.is_truncated());
    assert_len_is_the_json_length(&d);
}

#[test]
fn an_entry_that_does_not_fit_is_left_out_whole_and_the_map_says_so() {
    let mut d = AuthorizationDetails::new();
    assert!(d.insert_one(&key("warrant.dev/authorizer"), "deletion-guard"));
    assert!(!d.insert_one(&key("warrant.dev/rule"), "r".repeat(1100)));
    // A later, smaller entry still fits: entries are judged one by one, in the order offered.
    assert!(d.insert_one(&key("warrant.dev/code"), "WINDOW_BLOCKED"));
    let json: serde_json::Value = serde_json::to_value(&d).unwrap();
    assert_eq!(
        json,
        serde_json::json!({
            "warrant.dev/authorizer": ["deletion-guard"],
            "warrant.dev/code": ["WINDOW_BLOCKED"],
            "warrant.dev/truncated": ["true"],
        })
    );
    assert_eq!(d.get("warrant.dev/rule"), None, "no value is ever cut");
}

#[test]
fn entries_fill_the_map_up_to_exactly_the_bound_with_room_for_the_marker() {
    let k = key("x.example.com/v");
    // `{"x.example.com/v":["…"]}` is 24 bytes around the value; the marker needs 33 more.
    let marker = ",\"warrant.dev/truncated\":[\"true\"]".len();
    let room = MAX_AUTHORIZATION_DETAILS_BYTES - marker - 24;
    let mut d = AuthorizationDetails::new();
    assert!(!d.clone().insert_one(&k, "v".repeat(room + 1)));
    assert!(d.insert_one(&k, "v".repeat(room)));
    assert_eq!(d.encoded_len() + marker, MAX_AUTHORIZATION_DETAILS_BYTES);
    assert!(!d.insert_one(&key("x.example.com/w"), "w"));
    assert!(d.is_truncated());
    assert_eq!(d.encoded_len(), MAX_AUTHORIZATION_DETAILS_BYTES);
    assert_len_is_the_json_length(&d);
}

#[test]
fn many_entries_never_take_the_map_past_the_bound() {
    let mut d = AuthorizationDetails::new();
    for i in 0..200 {
        d.insert(
            &key(&format!("x.example.com/k{i}")),
            vec![format!("value-{i}"); i % 4 + 1],
        );
        assert_len_is_the_json_length(&d);
    }
    assert!(d.is_truncated());
}

#[test]
fn empty_values_and_repeated_keys_add_nothing() {
    let mut d = AuthorizationDetails::new();
    assert!(!d.insert(&key("warrant.dev/rule"), Vec::new()));
    assert!(d.is_empty());
    assert!(d.insert_one(&key("warrant.dev/rule"), "first"));
    assert!(!d.insert_one(&key("warrant.dev/rule"), "second"));
    assert_eq!(d.get("warrant.dev/rule"), Some(&["first".to_owned()][..]));
    assert!(!d.is_truncated());
}

#[test]
fn warrants_largest_values_fit_without_truncation() {
    // The longest names warrant's own entries can carry: a 253-character authorizer, 63-character
    // code and rule, a `sha256:` revision and a UUID.
    let mut d = AuthorizationDetails::new();
    let authorizer = [
        "a".repeat(63),
        "b".repeat(63),
        "c".repeat(63),
        "d".repeat(61),
    ]
    .join(".");
    assert_eq!(authorizer.len(), 253);
    for (k, v) in [
        (AUTHORIZER_KEY, authorizer),
        (CODE_KEY, "C".repeat(63)),
        (RULE_KEY, "r".repeat(63)),
        (CONFIG_REVISION_KEY, format!("sha256:{}", "0".repeat(64))),
        (
            DECISION_ID_KEY,
            "f1cd3e2c-d483-86c1-b22e-6a0b8becac8e".into(),
        ),
    ] {
        assert!(d.insert_one(&DetailKey::known(k), v), "{k}");
    }
    assert!(!d.is_truncated());
    assert_len_is_the_json_length(&d);
}

#[test]
fn the_answer_carries_the_details_in_either_version_only_when_given() {
    use k8s_openapi::api::authorization::v1::SubjectAccessReviewStatus;
    let status = SubjectAccessReviewStatus {
        allowed: false,
        denied: Some(true),
        reason: Some("no".into()),
        evaluation_error: None,
    };
    let mut d = AuthorizationDetails::new();
    d.insert_one(&key("warrant.dev/code"), "WINDOW_BLOCKED");
    for version in [ApiVersion::V1, ApiVersion::V1beta1] {
        let with: serde_json::Value =
            serde_json::from_slice(&encode_response_with_details(version, &status, Some(&d)))
                .unwrap();
        assert_eq!(with["apiVersion"], version.as_str());
        assert_eq!(
            with["status"],
            serde_json::json!({"allowed": false, "denied": true, "reason": "no",
                "authorizationDetails": {"warrant.dev/code": ["WINDOW_BLOCKED"]}})
        );
        let without: serde_json::Value =
            serde_json::from_slice(&encode_response(version, &status)).unwrap();
        assert_eq!(
            without["status"],
            serde_json::json!({"allowed": false, "denied": true, "reason": "no"})
        );
        let empty = AuthorizationDetails::new();
        let bytes = encode_response_with_details(version, &status, Some(&empty));
        assert_eq!(
            bytes,
            encode_response(version, &status),
            "an empty map is not sent"
        );
    }
}
