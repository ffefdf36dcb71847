use super::*;

#[test]
fn every_type_parses_from_its_own_spelling_only() {
    for t in WARRANT_TYPES {
        assert_eq!(parse_type(t.as_str()), Some(t), "{t}");
        assert_eq!(parse_type(&t.as_str().to_lowercase()), None, "{t}");
    }
    for s in ["", "RBAC", "Node", "ABAC", "Foo", " Webhook"] {
        assert_eq!(parse_type(s), None, "{s:?}");
    }
}

#[test]
fn flavours_list_their_types_in_message_order() {
    assert_eq!(
        Flavour::Upstream.supported_types(),
        ["AlwaysAllow", "AlwaysDeny", "Webhook"]
    );
    assert_eq!(
        Flavour::Warrant.supported_types(),
        [
            "AlwaysAllow",
            "AlwaysDeny",
            "Webhook",
            "Policy",
            "DeletionGuard"
        ]
    );
    assert!(UPSTREAM_TYPES.iter().all(|t| WARRANT_TYPES.contains(t)));
}
