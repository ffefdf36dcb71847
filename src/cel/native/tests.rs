use crate::cel::{Binding, EvalError, Expression, Variables};
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, ResourceAttributes, SubjectAccessReviewSpec,
};
use proptest::prelude::*;

const WORDS: [&str; 8] = [
    "",
    "a",
    "alice",
    "get",
    "system:",
    "system:node",
    "ns-1",
    "x",
];

const STRING_FIELDS: [&str; 11] = [
    "request.user",
    "request.uid",
    "request.resourceAttributes.namespace",
    "request.resourceAttributes.verb",
    "request.resourceAttributes.group",
    "request.resourceAttributes.version",
    "request.resourceAttributes.resource",
    "request.resourceAttributes.subresource",
    "request.resourceAttributes.name",
    "request.nonResourceAttributes.verb",
    "request.nonResourceAttributes.path",
];

fn word() -> impl Strategy<Value = String> {
    proptest::sample::select(WORDS.to_vec()).prop_map(str::to_owned)
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        proptest::sample::select(STRING_FIELDS.to_vec()).prop_map(str::to_owned),
        word().prop_map(|w| format!("'{w}'")),
    ]
}

fn leaf() -> impl Strategy<Value = String> {
    let flags = proptest::sample::select(vec![
        "has(request.resourceAttributes)",
        "has(request.nonResourceAttributes)",
        "has(request.user)",
        "true",
        "false",
    ])
    .prop_map(str::to_owned);
    prop_oneof![
        flags,
        (text(), text()).prop_map(|(a, b)| format!("{a} == {b}")),
        (text(), text()).prop_map(|(a, b)| format!("{a} != {b}")),
        (text(), text()).prop_map(|(a, b)| format!("{a}.startsWith({b})")),
        (text(), text()).prop_map(|(a, b)| format!("{a}.endsWith({b})")),
        (text(), text()).prop_map(|(a, b)| format!("{a}.contains({b})")),
        (text(), proptest::collection::vec(word(), 0..3)).prop_map(|(a, ws)| {
            let list: Vec<String> = ws.iter().map(|w| format!("'{w}'")).collect();
            format!("{a} in [{}]", list.join(", "))
        }),
        text().prop_map(|a| format!("{a} in request.groups")),
    ]
}

fn expression() -> impl Strategy<Value = String> {
    leaf().prop_recursive(3, 16, 2, |inner| {
        prop_oneof![
            inner.clone().prop_map(|e| format!("!({e})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}) && ({b})")),
            (inner.clone(), inner).prop_map(|(a, b)| format!("({a}) || ({b})")),
        ]
    })
}

fn maybe_word() -> impl Strategy<Value = Option<String>> {
    proptest::option::of(word())
}

fn review() -> impl Strategy<Value = SubjectAccessReviewSpec> {
    let resource = proptest::option::of(proptest::collection::vec(maybe_word(), 7).prop_map(|f| {
        ResourceAttributes {
            namespace: f[0].clone(),
            verb: f[1].clone(),
            group: f[2].clone(),
            version: f[3].clone(),
            resource: f[4].clone(),
            subresource: f[5].clone(),
            name: f[6].clone(),
            ..Default::default()
        }
    }));
    let non_resource = proptest::option::of(
        (maybe_word(), maybe_word()).prop_map(|(verb, path)| NonResourceAttributes { path, verb }),
    );
    (
        maybe_word(),
        maybe_word(),
        proptest::option::of(proptest::collection::vec(word(), 0..3)),
        resource,
        non_resource,
    )
        .prop_map(|(user, uid, groups, ra, nra)| SubjectAccessReviewSpec {
            user,
            uid,
            groups,
            resource_attributes: ra,
            non_resource_attributes: nra,
            ..Default::default()
        })
}

fn compiled(src: &str) -> Expression {
    match Expression::compile(src, Variables::RequestAndNow) {
        Ok(e) => e,
        Err(e) => panic!("{src}: {e}"),
    }
}

proptest::proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn the_native_tree_answers_as_the_engine_does_and_whenever_the_engine_does(
        src in expression(),
        spec in review(),
    ) {
        let e = compiled(&src);
        let native = e.native.as_ref().expect("every generated shape compiles natively");
        let binding = Binding::new(&spec, chrono::Utc::now());
        let bound = binding.with(e.uses());
        let engine: Result<bool, EvalError> = e.evaluate_by_engine(&bound);
        // Certain exactly when the engine succeeds, and then with the engine's value.
        prop_assert_eq!(native.eval(&spec), engine.clone().ok(), "{}", src);
        // What callers see (the engine's error included) is the engine's answer.
        prop_assert_eq!(e.evaluate(&bound), engine, "{}", src);
    }
}

#[test]
fn the_benchmarks_match_conditions_and_rules_compile_natively() {
    for src in [
        "has(request.resourceAttributes)",
        "!('system:masters' in request.groups)",
        "!request.user.startsWith('system:')",
        "request.resourceAttributes.namespace == 'ns-0' && request.resourceAttributes.verb == 'delete'",
        "'team-1' in request.groups",
        "request.resourceAttributes.verb in ['delete', 'deletecollection']",
    ] {
        assert!(compiled(src).native.is_some(), "{src}");
    }
}

#[test]
fn other_shapes_are_left_to_the_engine() {
    for src in [
        "request.groups.exists(g, g.startsWith('x'))",
        "size(request.user) > 3",
        "'a' in request.extra",
        "request.user.matches('^a')",
        "now > timestamp('2020-01-01T00:00:00Z')",
        "request.user == 'a' ? true : false",
    ] {
        assert!(compiled(src).native.is_none(), "{src}");
    }
}

#[test]
fn a_field_of_absent_attributes_gets_the_engines_error() {
    let e = compiled("request.resourceAttributes.verb == 'get'");
    let spec = SubjectAccessReviewSpec {
        user: Some("alice".into()),
        non_resource_attributes: Some(NonResourceAttributes {
            path: Some("/x".into()),
            verb: Some("get".into()),
        }),
        ..Default::default()
    };
    let binding = Binding::new(&spec, chrono::Utc::now());
    let bound = binding.with(e.uses());
    assert_eq!(e.native.as_ref().and_then(|n| n.eval(&spec)), None);
    let err = e.evaluate(&bound).map_err(|e| e.to_string());
    assert_eq!(err, Err("no such key: resourceAttributes".to_owned()));
}
