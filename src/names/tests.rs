use super::*;

#[test]
fn dns1123_subdomain_follows_upstream() {
    let rows: &[(&str, bool)] = &[
        ("myauthorizer", true),
        ("foo.example.domain", true),
        ("a-b.c", true),
        ("0abc", true),
        ("FOO.example.domain", false),
        ("-foo", false),
        ("foo-", false),
        ("foo..bar", false),
        ("foo_bar", false),
        ("", false),
    ];
    for (name, ok) in rows {
        assert_eq!(AuthorizerName::new(name).is_ok(), *ok, "name {name:?}");
    }
    assert!(AuthorizerName::new(&"a".repeat(254)).is_err());
    assert!(AuthorizerName::new(&"a".repeat(63)).is_ok());
}

#[test]
fn codes_are_screaming_snake() {
    assert!(Code::new("PROTECTED_RESOURCE").is_ok());
    assert!(Code::new("WINDOW_BLOCKED2").is_ok());
    assert_eq!(Code::new(""), Err(NameError::Empty));
    assert!(Code::new("lower").is_err());
    assert!(Code::new("_LEADING").is_err());
    assert!(Code::new("WITH-DASH").is_err());
}

#[test]
fn rule_names() {
    assert!(RuleName::new("no-secrets-for-contractors").is_ok());
    assert!(RuleName::new("Rule_1.a").is_ok());
    assert!(RuleName::new("-x").is_err());
    assert!(RuleName::new("has space").is_err());
}
