use super::*;
use k8s_openapi::api::authorization::v1::SubjectAccessReviewSpec;

fn alice() -> SubjectAccessReviewSpec {
    serde_json::from_value(serde_json::json!({
        "user": "alice", "uid": "1", "groups": ["group1", "group2"],
        "extra": {"key1": ["a", "b", "c"]},
        "resourceAttributes": {"namespace": "kittensandponies", "verb": "get", "resource": "pods"}
    }))
    .unwrap()
}

fn alice2() -> SubjectAccessReviewSpec {
    serde_json::from_value(serde_json::json!({
        "user": "alice2", "nonResourceAttributes": {"path": "/x", "verb": "get"}
    }))
    .unwrap()
}

fn eval(src: &str, spec: &SubjectAccessReviewSpec) -> Result<bool, String> {
    let e =
        Expression::compile(src, Variables::RequestAndNow).map_err(|e| format!("compile: {e}"))?;
    let binding = Binding::new(spec, chrono::Utc::now());
    let bound = binding.with(e.uses());
    e.evaluate(&bound).map_err(|e| format!("eval: {e}"))
}

fn compile_error(src: &str) -> String {
    match Expression::compile(src, Variables::Request) {
        Ok(_) => panic!("{src} compiled"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn upstream_true_conditions_hold() {
    for src in [
        "request.user == 'alice'",
        "request.uid == '1'",
        "'group1' in request.groups",
        "'key1' in request.extra",
        "!('key2' in request.extra)",
        "'a' in request.extra['key1']",
        "!('z' in request.extra['key1'])",
        "has(request.resourceAttributes) && request.resourceAttributes.namespace == 'kittensandponies'",
    ] {
        assert_eq!(eval(src, &alice()), Ok(true), "{src}");
    }
    assert_eq!(eval("'group3' in request.groups", &alice()), Ok(false));
}

#[test]
fn type_errors_read_like_upstream() {
    let e = compile_error("('group3' in request.group)");
    assert!(
        e.contains("ERROR: <input>:1:21: undefined field 'group'"),
        "{e}"
    );
    assert_eq!(
        compile_error("request.user"),
        "must evaluate to bool but got string"
    );
    let e = compile_error("request.nonResourceAttributes.verb == 2");
    assert!(
        e.contains("found no matching overload for '_==_' applied to '(string, int)'"),
        "{e}"
    );
    assert!(compile_error("x.user").contains("undeclared reference to 'x'"));
    assert!(compile_error("request.time == 'now'").contains("undefined field 'time'"));
    assert!(compile_error("request++'").contains("ERROR"));
    assert!(compile_error("test").contains("undeclared reference to 'test'"));
    assert!(compile_error("now.getHours() > 1").contains("undeclared reference to 'now'"));
    assert!(compile_error("url('x').getHost() == 'y'").contains("not supported"));
}

#[test]
fn absent_keys_are_errors_not_false() {
    let e = eval(
        "request.resourceAttributes.namespace == 'kittensandponies'",
        &alice2(),
    );
    assert_eq!(e, Err("eval: no such key: resourceAttributes".into()));
    assert_eq!(
        eval(
            "request.user != 'alice2' && request.resourceAttributes.verb == 'get'",
            &alice2()
        ),
        Ok(false)
    );
}

#[test]
fn optionals_and_macros() {
    assert_eq!(
        eval(
            "request.?resourceAttributes.fieldSelector.requirements.orValue([]).size() == 0",
            &alice()
        ),
        Ok(true)
    );
    assert_eq!(
        eval("request.groups.exists(g, g.startsWith('group'))", &alice()),
        Ok(true)
    );
    assert_eq!(
        eval(
            "request.groups.map(g, g.upperAscii()) == ['GROUP1', 'GROUP2']",
            &alice()
        ),
        Ok(true)
    );
    assert_eq!(
        eval(
            "request.groups.filter(g, g.endsWith('2')).size() == 1",
            &alice()
        ),
        Ok(true)
    );
    // Kubernetes' authorization CEL has no cel.bind, and neither has warrant's.
    assert!(
        eval("cel.bind(u, request.user, u + u == 'alicealice')", &alice())
            .unwrap_err()
            .contains("undeclared reference to 'cel'")
    );
    assert!(
        eval("request.groups.existsOne(g, g == 'x')", &alice())
            .unwrap_err()
            .contains("undeclared reference to 'existsOne'")
    );
    assert!(
        eval("int('x') == 1", &alice())
            .unwrap_err()
            .starts_with("compile:")
    );
    assert_eq!(
        eval(
            "request.user.matches('^al') && request.user.find('l.c') == 'lic'",
            &alice()
        ),
        Ok(true)
    );
    assert_eq!(
        eval(
            "[3, 1, 2].sum() == 6 && [1, 2].isSorted() && [2, 5].max() == 5",
            &alice()
        ),
        Ok(true)
    );
    assert_eq!(
        eval("sets.contains(request.groups, ['group1'])", &alice()),
        Ok(true)
    );
    assert_eq!(
        eval("now > timestamp('2020-01-01T00:00:00Z')", &alice()),
        Ok(true)
    );
}

#[test]
fn budget_stops_runaway_comprehensions() {
    let src = "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, a > 0))))))";
    assert_eq!(
        eval(src, &alice()),
        Err(format!("eval: {}", limits::COST_EXCEEDED))
    );
}

#[test]
fn deep_nesting_is_refused_before_parsing() {
    let src = format!("{}true{}", "(".repeat(1_000), ")".repeat(1_000));
    assert!(matches!(
        Expression::compile(&src, Variables::Request),
        Err(CompileError::TooDeep { .. })
    ));
    let ok = format!("{}true{}", "(".repeat(60), ")".repeat(60));
    assert!(Expression::compile(&ok, Variables::Request).is_ok());
    let long = "request.user == 'a' || ".repeat(2000) + "true";
    assert!(matches!(
        Expression::compile(&long, Variables::Request),
        Err(CompileError::TooLong { .. })
    ));
}

#[test]
fn growth_and_odd_input_are_bounded_not_fatal() {
    // Repeated replace grows tenfold per call: stopped by the budget, not by memory.
    let blow = format!(
        "'aaaaaaaaaa'{}.size() > 0",
        ".replace('a', 'aaaaaaaaaa')".repeat(8)
    );
    assert_eq!(
        eval(&blow, &alice()),
        Err(format!("eval: {}", limits::COST_EXCEEDED))
    );
    // Non-ASCII outside a string literal (a comment) is no panic.
    assert_eq!(
        eval("request.user == 'alice' // für alice", &alice()),
        Ok(true)
    );
    // A long selection chain nests without brackets: refused by depth, no stack overflow.
    let chain = format!("request{} == 'x'", ".a".repeat(9_990));
    assert!(matches!(
        Expression::compile(&chain, Variables::Request),
        Err(CompileError::TooDeep { .. })
    ));
}

#[test]
fn checker_matches_cel_go_on_literals_and_maps() {
    assert!(
        compile_error("{?'a': 1}.size() == 1")
            .contains("expected type 'optional_type(int)' but found 'int'")
    );
    assert!(
        compile_error("[1, dyn('a')].size() == 2").contains("expected type 'int' but found 'dyn'")
    );
    assert!(compile_error("request.user.matches('a{1001}')").contains("invalid repeat count"));
    assert!(Expression::compile("request.user.matches('a{2,1000}')", Variables::Request).is_ok());
    assert_eq!(
        eval("{1: 'a'}.foo == 'a'", &alice()).map_err(|e| e.starts_with("eval")),
        Err(true)
    );
}

/// `replace` and `join` charge the size of their result before building
/// it. The results here would be about 10^12 and 6 * 10^10 bytes: built first and charged after,
/// they would exhaust the memory of any machine instead of failing on the budget.
#[test]
fn replace_and_join_are_charged_before_they_allocate() {
    let uid = "u".repeat(1_000_000);
    let groups: Vec<String> = (0..60_000).map(|i| format!("g{i}")).collect();
    let spec: SubjectAccessReviewSpec = serde_json::from_value(serde_json::json!({
        "user": "mallory", "uid": uid, "groups": groups,
        "nonResourceAttributes": {"path": "/", "verb": "get"}
    }))
    .unwrap();
    for src in [
        "request.uid.replace('', request.uid).size() > 0",
        "request.uid.replace('u', request.uid, 5).size() > 0",
        "request.groups.join(request.uid).size() > 0",
    ] {
        let e = eval(src, &spec).unwrap_err();
        assert!(e.contains(limits::COST_EXCEEDED), "{src}: {e}");
    }
    // Within the budget they answer as cel-go does.
    let a = alice();
    for src in [
        "request.user.replace('', '-') == '-a-l-i-c-e-'",
        "request.user.replace('l', 'L', 0) == 'alice'",
        "request.user.replace('', '.', 2) == '.a.lice'",
        "request.user.replace('a', 'b', -1) == 'blice'",
        "request.groups.join('+') == 'group1+group2'",
        "[].join(',') == ''",
    ] {
        assert_eq!(eval(src, &a), Ok(true), "{src}");
    }
}

#[test]
fn fields_read_directly_equal_the_same_fields_selected() {
    // `request.?x` is not rewritten: it reads the field through the bound `request` map.
    for field in fields::RESOURCE_FIELDS {
        let src = format!(
            "request.resourceAttributes.{field} == request.?resourceAttributes.value().{field}"
        );
        assert_eq!(eval(&src, &alice()), Ok(true), "{src}");
    }
    for field in fields::NON_RESOURCE_FIELDS {
        let src = format!(
            "request.nonResourceAttributes.{field} == request.?nonResourceAttributes.value().{field}"
        );
        assert_eq!(eval(&src, &alice2()), Ok(true), "{src}");
    }
    for field in ["user", "uid", "groups", "extra"] {
        let src = format!("has(request.{field}) && request.{field} == request.?{field}.value()");
        assert_eq!(eval(&src, &alice()), Ok(true), "{src}");
        assert_eq!(eval(&src, &alice2()), Ok(true), "{src}");
    }
    assert_eq!(eval("has(request.resourceAttributes)", &alice()), Ok(true));
    assert_eq!(
        eval("has(request.resourceAttributes)", &alice2()),
        Ok(false)
    );
    assert_eq!(
        eval("has(request.nonResourceAttributes)", &alice2()),
        Ok(true)
    );
    assert_eq!(
        eval("request.nonResourceAttributes.path == '/x'", &alice()),
        Err("eval: no such key: nonResourceAttributes".into())
    );
}

#[test]
fn a_variable_named_request_hides_the_review() {
    assert_eq!(
        eval(
            "[{'user': 'bob'}].exists(request, request.user == 'bob') && request.user == 'alice'",
            &alice()
        ),
        Ok(true)
    );
}

/// `extra` is bound only for an expression that may read it, and every
/// way of reading it (selection, `has`, optional selection, `request` used whole) keeps it.
#[test]
fn extra_is_bound_only_when_it_may_be_read() {
    let reads = |src: &str| {
        Expression::compile(src, Variables::RequestAndNow)
            .unwrap()
            .uses()
            .extra
    };
    for src in [
        "'key1' in request.extra",
        "has(request.extra)",
        "request.?extra.orValue({}).size() > 0",
        "dyn(request)['extra'].size() > 0",
        "[request].size() == 1",
        "request.user == 'a' || request.extra.size() == 0",
    ] {
        assert!(reads(src), "{src}");
        assert!(eval(src, &alice()).is_ok(), "{src}");
    }
    // Evaluated on a binding shared by the expressions, one that may read `extra` builds it...
    for src in ["'key1' in request.extra", "[request].size() == 1"] {
        let e = Expression::compile(src, Variables::RequestAndNow).unwrap();
        let spec = alice();
        let binding = Binding::new(&spec, chrono::Utc::now());
        assert_eq!(e.evaluate(&binding.with(e.uses())), Ok(true), "{src}");
        assert!(binding.built_extra(), "{src}");
    }
    // ...and one that does not never does, even when it reads `request` through the whole map.
    let spec = alice();
    let binding = Binding::new(&spec, chrono::Utc::now());
    for src in [
        "request.user == 'alice'",
        "request.resourceAttributes.verb == 'get'",
        "[{'extra': 1}].all(m, m.extra == 1)",
        "request.?resourceAttributes.value().verb == 'get'",
        "!has(request.resourceAttributes.fieldSelector)",
    ] {
        assert!(!reads(src), "{src}");
        let e = Expression::compile(src, Variables::RequestAndNow).unwrap();
        assert_eq!(e.evaluate(&binding.with(e.uses())), Ok(true), "{src}");
    }
    assert!(!binding.built_extra());
    assert_eq!(
        eval("dyn(request)['extra']['key1'][0] == 'a'", &alice()),
        Ok(true)
    );
    assert_eq!(
        eval(
            "request.?extra.key1.orValue([]) == ['a', 'b', 'c']",
            &alice()
        ),
        Ok(true)
    );
}
