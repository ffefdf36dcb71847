//! Property tests (proptest) of the chain's invariants and of review decoding, against a model.
//!
//! Chains are generated as configuration files and go through the real loader
//! (`config::parse`, `Chain::build`); reviews are generated as JSON and go through the real
//! decoder. Every rule and matchCondition is one of a few CEL predicates whose value (or error)
//! the model computes in Rust, so the expected answer of any chain is known:
//! - the first authorizer with an opinion (Allow, Deny, or a failure under failurePolicy Deny)
//!   decides, and nothing after it is asked;
//! - in a Policy, a matching Deny rule beats every Allow rule, whatever errors other rules raise;
//! - NoOpinion (no matching rule, an excluding matchCondition, a failure under failurePolicy
//!   NoOpinion) never becomes Allow;
//! - a failure under failurePolicy Deny never yields Allow.
//!
//! Decoding: a spec encoded as v1 and as v1beta1 decodes to the same `Review` spec, and the
//! downstream webhooks' cache key is the same for every equivalent encoding (key order,
//! whitespace, escapes, empty values spelled or omitted, either version).

use chrono::{DateTime, TimeZone, Utc};
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use warrant::authorizer::webhook::Core;
use warrant::authorizer::{Answer, Chain, Deadline, Input, StepOutcome};
use warrant::decision::Decision;
use warrant::review::{self, ApiVersion, Review};

/// Cases per property; each builds a chain, so keep it moderate.
const CASES: u32 = 256;

// ---------------------------------------------------------------------------------------------
// Requests

/// A generated request: a resource or a non-resource review.
#[derive(Debug, Clone)]
struct Request {
    user: &'static str,
    groups: Vec<&'static str>,
    /// `(verb, namespace)` of a resource request; `None` for a non-resource one.
    resource: Option<(&'static str, &'static str)>,
}

impl Request {
    fn json(&self, version: ApiVersion) -> Vec<u8> {
        let groups_field = match version {
            ApiVersion::V1 => "groups",
            ApiVersion::V1beta1 => "group",
        };
        let mut spec = json!({ "user": self.user, groups_field: self.groups });
        match self.resource {
            Some((verb, namespace)) => {
                spec["resourceAttributes"] = json!({
                    "verb": verb, "namespace": namespace, "version": "v1", "resource": "pods"
                })
            }
            None => spec["nonResourceAttributes"] = json!({ "verb": "get", "path": "/healthz" }),
        }
        serde_json::to_vec(&json!({
            "apiVersion": version.as_str(), "kind": "SubjectAccessReview", "spec": spec
        }))
        .expect("a JSON value encodes")
    }

    fn review(&self, version: ApiVersion) -> Review {
        review::decode(&self.json(version)).expect("a generated review decodes")
    }
}

fn request() -> impl Strategy<Value = Request> {
    (
        select(vec!["ann", "bob", "system:kube-scheduler"]),
        proptest::sample::subsequence(vec!["dev", "ops", "team-a"], 0..=3),
        prop::option::weighted(
            0.8,
            (
                select(vec!["get", "list", "delete", "create"]),
                select(vec!["", "a", "b"]),
            ),
        ),
    )
        .prop_map(|(user, groups, resource)| Request {
            user,
            groups,
            resource,
        })
}

// ---------------------------------------------------------------------------------------------
// Predicates: CEL text and the model's value

/// A predicate a rule or matchCondition tests; `Errors` fails to evaluate on every generated
/// request (no generated review has that `extra` key).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pred {
    True,
    False,
    UserAnn,
    GroupDev,
    VerbDelete,
    NamespaceA,
    Errors,
}

const PREDS: [Pred; 7] = [
    Pred::True,
    Pred::False,
    Pred::UserAnn,
    Pred::GroupDev,
    Pred::VerbDelete,
    Pred::NamespaceA,
    Pred::Errors,
];

impl Pred {
    fn cel(self) -> &'static str {
        match self {
            Pred::True => "true",
            Pred::False => "false",
            Pred::UserAnn => "request.user == 'ann'",
            Pred::GroupDev => "'dev' in request.groups",
            Pred::VerbDelete => {
                "has(request.resourceAttributes) && request.resourceAttributes.verb == 'delete'"
            }
            Pred::NamespaceA => {
                "has(request.resourceAttributes) && request.resourceAttributes.namespace == 'a'"
            }
            Pred::Errors => "request.extra['warrant.dev/absent'][0] == 'x'",
        }
    }

    /// `Err(())` when the expression fails to evaluate.
    fn eval(self, r: &Request) -> Result<bool, ()> {
        Ok(match self {
            Pred::True => true,
            Pred::False => false,
            Pred::UserAnn => r.user == "ann",
            Pred::GroupDev => r.groups.contains(&"dev"),
            Pred::VerbDelete => r.resource.is_some_and(|(v, _)| v == "delete"),
            Pred::NamespaceA => r.resource.is_some_and(|(_, n)| n == "a"),
            Pred::Errors => return Err(()),
        })
    }
}

fn pred() -> impl Strategy<Value = Pred> {
    select(PREDS.to_vec())
}

// ---------------------------------------------------------------------------------------------
// Chains: entries as configuration, and the model's outcome of each

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Effect {
    Allow,
    Deny,
}

#[derive(Debug, Clone)]
enum Kind {
    AlwaysAllow,
    AlwaysDeny,
    Policy(Vec<(Effect, Pred)>),
}

#[derive(Debug, Clone)]
struct EntrySpec {
    kind: Kind,
    condition: Option<Pred>,
    /// failurePolicy Deny (else NoOpinion).
    fail_deny: bool,
}

/// What one entry contributes, as the model sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Allow,
    Deny,
    NoOpinion,
    Failed,
}

impl EntrySpec {
    fn outcome(&self, r: &Request) -> Outcome {
        match self.condition.map(|c| c.eval(r)) {
            Some(Ok(false)) => return Outcome::NoOpinion,
            Some(Err(())) => return Outcome::Failed,
            None | Some(Ok(true)) => {}
        }
        match &self.kind {
            Kind::AlwaysAllow => Outcome::Allow,
            Kind::AlwaysDeny => Outcome::Deny,
            Kind::Policy(rules) => policy_outcome(rules, r),
        }
    }

    fn decision(&self, r: &Request) -> Decision {
        match self.outcome(r) {
            Outcome::Allow => Decision::Allow,
            Outcome::Deny => Decision::Deny,
            Outcome::Failed if self.fail_deny => Decision::Deny,
            Outcome::Failed | Outcome::NoOpinion => Decision::NoOpinion,
        }
    }

    fn yaml(&self, name: &str) -> String {
        let kind = match self.kind {
            Kind::AlwaysAllow => "AlwaysAllow",
            Kind::AlwaysDeny => "AlwaysDeny",
            Kind::Policy(_) => "Policy",
        };
        let policy = if self.fail_deny { "Deny" } else { "NoOpinion" };
        let mut s = format!("- type: {kind}\n  name: {name}\n  failurePolicy: {policy}\n");
        if let Some(c) = self.condition {
            s.push_str(&format!(
                "  matchConditions:\n  - expression: {}\n",
                quoted(c.cel())
            ));
        }
        if let Kind::Policy(rules) = &self.kind {
            s.push_str("  policy:\n    rules:\n");
            for (i, (effect, p)) in rules.iter().enumerate() {
                s.push_str(&format!(
                    "    - name: r{i}\n      effect: {effect:?}\n      expression: {}\n      message: rule {i}\n",
                    quoted(p.cel())
                ));
            }
        }
        s
    }
}

/// Policy semantics: the first matching Deny rule; else an erroring Deny rule fails; else the
/// first matching Allow rule; else an erroring Allow rule fails; else no opinion.
fn policy_outcome(rules: &[(Effect, Pred)], r: &Request) -> Outcome {
    for (effect, matched) in [
        (Effect::Deny, Outcome::Deny),
        (Effect::Allow, Outcome::Allow),
    ] {
        let values: Vec<_> = rules
            .iter()
            .filter(|(e, _)| *e == effect)
            .map(|(_, p)| p.eval(r))
            .collect();
        if values.contains(&Ok(true)) {
            return matched;
        }
        if values.contains(&Err(())) {
            return Outcome::Failed;
        }
    }
    Outcome::NoOpinion
}

fn quoted(s: &str) -> String {
    serde_json::to_string(s).expect("a string encodes")
}

fn effect() -> impl Strategy<Value = Effect> {
    prop_oneof![Just(Effect::Allow), Just(Effect::Deny)]
}

fn rules() -> impl Strategy<Value = Vec<(Effect, Pred)>> {
    prop::collection::vec((effect(), pred()), 1..6)
}

fn entry() -> impl Strategy<Value = EntrySpec> {
    (
        prop_oneof![
            1 => Just(Kind::AlwaysAllow),
            1 => Just(Kind::AlwaysDeny),
            3 => rules().prop_map(Kind::Policy),
        ],
        prop::option::of(pred()),
        any::<bool>(),
    )
        .prop_map(|(kind, condition, fail_deny)| EntrySpec {
            kind,
            condition,
            fail_deny,
        })
}

/// The chain file of `entries`, named e0, e1, ...
fn chain_yaml(entries: &[EntrySpec]) -> String {
    let mut s = String::from(
        "apiVersion: warrant.dev/v1alpha1\nkind: AuthorizationConfiguration\nauthorizers:\n",
    );
    for (i, e) in entries.iter().enumerate() {
        s.push_str(&e.yaml(&format!("e{i}")));
    }
    s
}

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 4, 10, 0, 0)
        .single()
        .expect("a valid time")
}

/// Loads `entries` through the real loader and runs the chain for `r`.
fn run(entries: &[EntrySpec], r: &Request, version: ApiVersion) -> Answer {
    let yaml = chain_yaml(entries);
    let loaded = warrant::config::parse("properties.yaml", yaml.as_bytes())
        .unwrap_or_else(|e| panic!("generated config is valid: {e}\n{yaml}"));
    let chain = Chain::build(&loaded.config).expect("the chain builds");
    let input = Input::new(r.review(version), now());
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime")
        .block_on(chain.authorize(&input, Deadline::after(std::time::Duration::from_secs(10))))
}

fn version() -> impl Strategy<Value = ApiVersion> {
    prop_oneof![Just(ApiVersion::V1), Just(ApiVersion::V1beta1)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    /// The first entry with an opinion decides, is named as the decider, and is the last one
    /// asked; with none, the chain has no opinion and asked every entry.
    #[test]
    fn chain_first_opinion_wins(
        entries in prop::collection::vec(entry(), 1..6),
        r in request(),
        v in version(),
    ) {
        let answer = run(&entries, &r, v);
        let first = entries
            .iter()
            .enumerate()
            .find(|(_, e)| e.decision(&r) != Decision::NoOpinion);
        match first {
            Some((i, e)) => {
                prop_assert_eq!(answer.decision, e.decision(&r));
                prop_assert_eq!(answer.decided_by.as_ref().map(|n| n.to_string()), Some(format!("e{i}")));
                prop_assert_eq!(answer.trace.len(), i + 1, "entries after the decider were asked");
            }
            None => {
                prop_assert_eq!(answer.decision, Decision::NoOpinion);
                prop_assert_eq!(answer.decided_by, None);
                prop_assert_eq!(answer.trace.len(), entries.len());
            }
        }
        for (step, e) in answer.trace.iter().zip(&entries) {
            prop_assert_eq!(step.decision(), e.decision(&r), "step {:?}", step.authorizer);
        }
    }

    /// In a Policy, a matching Deny rule (inserted anywhere among arbitrary Allow, Deny and
    /// erroring rules) denies, by the first matching Deny rule.
    #[test]
    fn policy_matching_deny_beats_allow(
        mut rules in rules(),
        at in any::<prop::sample::Index>(),
        r in request(),
        v in version(),
        fail_deny in any::<bool>(),
    ) {
        let deny = match r.user { "ann" => Pred::UserAnn, _ => Pred::True };
        rules.insert(at.index(rules.len() + 1), (Effect::Deny, deny));
        let first_deny = rules
            .iter()
            .position(|(e, p)| *e == Effect::Deny && p.eval(&r) == Ok(true))
            .expect("the inserted rule matches");
        let entries = [EntrySpec { kind: Kind::Policy(rules), condition: None, fail_deny }];
        let answer = run(&entries, &r, v);
        prop_assert_eq!(answer.decision, Decision::Deny);
        prop_assert_eq!(answer.rule.as_ref().map(|n| n.to_string()), Some(format!("r{first_deny}")));
        prop_assert!(!answer.status().allowed);
        prop_assert_eq!(answer.status().denied, Some(true));
    }

    /// Entries that each have no opinion (no matching rule, an excluding matchCondition, a
    /// failure under failurePolicy NoOpinion) never add up to Allow.
    #[test]
    fn no_opinion_never_becomes_allow(
        entries in prop::collection::vec(entry(), 1..6),
        r in request(),
        v in version(),
    ) {
        // Keep only the entries without an opinion on this request.
        let quiet: Vec<_> = entries
            .into_iter()
            .filter(|e| e.decision(&r) == Decision::NoOpinion)
            .collect();
        prop_assume!(!quiet.is_empty());
        let answer = run(&quiet, &r, v);
        prop_assert_eq!(answer.decision, Decision::NoOpinion);
        prop_assert!(!answer.status().allowed);
        prop_assert_eq!(answer.status().denied, None);
        prop_assert_eq!(answer.trace.len(), quiet.len());
        for step in &answer.trace {
            prop_assert!(!matches!(&step.outcome, StepOutcome::Verdict(v) if v.decision == Decision::Allow));
        }
    }

    /// An entry that fails under failurePolicy Deny, reached before any opinion, denies: the
    /// AlwaysAllow and Allow rules after it are never asked.
    #[test]
    fn failure_policy_deny_never_allows(
        before in prop::collection::vec(entry(), 0..4),
        failing_kind in prop_oneof![
            Just(0u8), // an AlwaysAllow whose matchCondition errors
            Just(1u8), // a Policy whose only matching-or-erroring Allow rule errors
        ],
        after in prop::collection::vec(entry(), 0..3),
        r in request(),
        v in version(),
    ) {
        let mut entries: Vec<_> = before
            .into_iter()
            .filter(|e| e.decision(&r) == Decision::NoOpinion)
            .collect();
        let failing = match failing_kind {
            0 => EntrySpec { kind: Kind::AlwaysAllow, condition: Some(Pred::Errors), fail_deny: true },
            _ => EntrySpec {
                kind: Kind::Policy(vec![(Effect::Allow, Pred::Errors), (Effect::Allow, Pred::False)]),
                condition: None,
                fail_deny: true,
            },
        };
        prop_assert_eq!(failing.outcome(&r), Outcome::Failed);
        let at = entries.len();
        entries.push(failing);
        entries.extend(after);
        entries.push(EntrySpec { kind: Kind::AlwaysAllow, condition: None, fail_deny: false });
        let answer = run(&entries, &r, v);
        prop_assert_eq!(answer.decision, Decision::Deny);
        prop_assert!(!answer.status().allowed);
        prop_assert_eq!(answer.decided_by.as_ref().map(|n| n.to_string()), Some(format!("e{at}")));
        let failed = matches!(
            answer.trace.last().map(|s| &s.outcome),
            Some(StepOutcome::Failed { .. })
        );
        prop_assert!(failed, "the last step asked is the failure");
    }
}

// ---------------------------------------------------------------------------------------------
// Decoding: v1 and v1beta1 agree; the cache key is stable across equivalent encodings

/// A generated spec in the v1 shape, as JSON; only non-empty values are present.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[a-z0-9:._/-]{1,12}",
        1 => "\\PC{1,8}",
    ]
}

fn spec() -> impl Strategy<Value = Map<String, Value>> {
    let resource = (
        prop::option::of(text()),
        prop::option::of(text()),
        prop::option::of(text()),
        prop::option::of(text()),
        prop::option::of(text()),
        prop::option::of(text()),
        prop::option::of(text()),
    )
        .prop_map(|(ns, verb, group, version, res, sub, name)| {
            let mut m = Map::new();
            for (k, v) in [
                ("namespace", ns),
                ("verb", verb),
                ("group", group),
                ("version", version),
                ("resource", res),
                ("subresource", sub),
                ("name", name),
            ] {
                if let Some(v) = v {
                    m.insert(k.into(), Value::String(v));
                }
            }
            ("resourceAttributes", Value::Object(m))
        });
    let non_resource =
        (prop::option::of(text()), prop::option::of(text())).prop_map(|(path, verb)| {
            let mut m = Map::new();
            if let Some(p) = path {
                m.insert("path".into(), Value::String(p));
            }
            if let Some(v) = verb {
                m.insert("verb".into(), Value::String(v));
            }
            ("nonResourceAttributes", Value::Object(m))
        });
    (
        prop::option::of(text()),
        prop::option::of(text()),
        prop::collection::vec(text(), 0..4),
        prop::collection::btree_map(text(), prop::collection::vec(text(), 0..3), 0..3),
        prop_oneof![resource, non_resource],
    )
        .prop_map(|(user, uid, groups, extra, (attr_key, attrs))| {
            let mut m = Map::new();
            if let Some(u) = user {
                m.insert("user".into(), Value::String(u));
            }
            if let Some(u) = uid {
                m.insert("uid".into(), Value::String(u));
            }
            if !groups.is_empty() {
                m.insert("groups".into(), json!(groups));
            }
            if !extra.is_empty() {
                m.insert("extra".into(), json!(extra));
            }
            m.insert(attr_key.into(), attrs);
            m
        })
}

/// `spec` as a review of `version` (the groups renamed for v1beta1).
fn envelope(version: ApiVersion, spec: &Map<String, Value>) -> Value {
    let mut spec = spec.clone();
    if version == ApiVersion::V1beta1
        && let Some(g) = spec.remove("groups")
    {
        spec.insert("group".into(), g);
    }
    json!({"apiVersion": version.as_str(), "kind": "SubjectAccessReview", "spec": spec})
}

/// A variant encoding of the same review: reversed key order, pretty whitespace, non-ASCII
/// escaped as `\uXXXX`, and the empty values Go's encoder omits spelled out.
fn variant(doc: &Value, with_empties: bool) -> Vec<u8> {
    let mut out = String::new();
    write_variant(doc, with_empties, &mut out, 0);
    out.into_bytes()
}

fn write_variant(v: &Value, with_empties: bool, out: &mut String, depth: usize) {
    let pad = "  ".repeat(depth + 1);
    match v {
        Value::Object(m) => {
            let mut m = m.clone();
            if with_empties && m.contains_key("spec") {
                let beta = m["apiVersion"] == "authorization.k8s.io/v1beta1";
                let spec = m.get_mut("spec").and_then(Value::as_object_mut);
                if let Some(spec) = spec {
                    let groups = if beta { "group" } else { "groups" };
                    spec.entry("user").or_insert(json!(""));
                    spec.entry("uid").or_insert(json!(""));
                    spec.entry(groups).or_insert(json!([]));
                    spec.entry("extra").or_insert(json!({}));
                    for attrs in ["resourceAttributes", "nonResourceAttributes"] {
                        if let Some(Value::Object(a)) = spec.get_mut(attrs) {
                            let keys: &[&str] = if attrs == "resourceAttributes" {
                                &[
                                    "namespace",
                                    "verb",
                                    "group",
                                    "version",
                                    "resource",
                                    "subresource",
                                    "name",
                                ]
                            } else {
                                &["path", "verb"]
                            };
                            for k in keys {
                                a.entry(k.to_string()).or_insert(json!(""));
                            }
                        }
                    }
                }
            }
            out.push_str("{\n");
            let entries: Vec<_> = m.iter().rev().collect();
            for (i, (k, v)) in entries.iter().enumerate() {
                out.push_str(&pad);
                escaped(k, out);
                out.push_str(" : ");
                write_variant(v, with_empties, out, depth + 1);
                if i + 1 < entries.len() {
                    out.push(',');
                }
                out.push('\n');
            }
            out.push_str(&"  ".repeat(depth));
            out.push('}');
        }
        Value::Array(a) => {
            out.push_str("[ ");
            for (i, v) in a.iter().enumerate() {
                write_variant(v, with_empties, out, depth + 1);
                if i + 1 < a.len() {
                    out.push_str(" , ");
                }
            }
            out.push_str(" ]");
        }
        Value::String(s) => escaped(s, out),
        other => out.push_str(&other.to_string()),
    }
}

/// A JSON string with every non-ASCII character (and `/`) escaped.
fn escaped(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '/' => out.push_str("\\/"),
            c if c.is_ascii() && !c.is_ascii_control() => out.push(c),
            c => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
        }
    }
    out.push('"');
}

fn key(review: Review) -> String {
    Core::key(&Input::new(review, now())).0.to_string()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    /// The same spec sent as v1 and as v1beta1 decodes to the same v1-shaped spec.
    #[test]
    fn v1_and_v1beta1_decoding_agree(spec in spec()) {
        let v1 = review::decode(&serde_json::to_vec(&envelope(ApiVersion::V1, &spec)).unwrap());
        let beta = review::decode(&serde_json::to_vec(&envelope(ApiVersion::V1beta1, &spec)).unwrap());
        let (v1, beta) = match (v1, beta) {
            (Ok(a), Ok(b)) => (a, b),
            (a, b) => return Err(TestCaseError::fail(format!("decode: v1 {a:?}, v1beta1 {b:?}"))),
        };
        prop_assert_eq!(v1.version(), ApiVersion::V1);
        prop_assert_eq!(beta.version(), ApiVersion::V1beta1);
        prop_assert_eq!(v1.spec(), beta.spec());
        let groups: Vec<String> = spec.get("groups").and_then(Value::as_array).map(|a| {
            a.iter().filter_map(|g| g.as_str().map(str::to_owned)).collect()
        }).unwrap_or_default();
        prop_assert_eq!(beta.groups(), groups.as_slice());
    }

    /// Every equivalent encoding of a review (either version, any key order and whitespace,
    /// escaped characters, empty values spelled out or omitted) has the same webhook cache key.
    #[test]
    fn webhook_cache_key_stable_across_encodings(spec in spec(), with_empties in any::<bool>()) {
        let canonical = key(review::decode(&serde_json::to_vec(&envelope(ApiVersion::V1, &spec)).unwrap()).unwrap());
        for version in [ApiVersion::V1, ApiVersion::V1beta1] {
            let doc = envelope(version, &spec);
            let bytes = variant(&doc, with_empties);
            let decoded = review::decode(&bytes).map_err(|e| {
                TestCaseError::fail(format!("{e}: {}", String::from_utf8_lossy(&bytes)))
            })?;
            prop_assert_eq!(&key(decoded), &canonical, "{}", String::from_utf8_lossy(&bytes));
        }
    }
}

/// The properties' model is not vacuous: the generator reaches every outcome.
#[test]
fn property_model_reaches_every_outcome() {
    let r = Request {
        user: "ann",
        groups: vec!["dev"],
        resource: Some(("delete", "a")),
    };
    let mut seen = BTreeMap::new();
    for p in PREDS {
        for effect in [Effect::Allow, Effect::Deny] {
            let e = EntrySpec {
                kind: Kind::Policy(vec![(effect, p)]),
                condition: None,
                fail_deny: true,
            };
            seen.insert(format!("{:?}", e.outcome(&r)), ());
        }
    }
    assert_eq!(seen.len(), 4, "{seen:?}");
    let denied = run(
        &[EntrySpec {
            kind: Kind::Policy(vec![
                (Effect::Allow, Pred::True),
                (Effect::Deny, Pred::UserAnn),
            ]),
            condition: None,
            fail_deny: false,
        }],
        &r,
        ApiVersion::V1,
    );
    assert_eq!(denied.decision, Decision::Deny, "{denied:?}");
}

// ---------------------------------------------------------------------------------------------
// The Policy rule index: a review evaluates only the rules that can match it, and the
// verdict (decision, deciding rule, shadows) or the error is exactly that of evaluating every
// rule in order.

/// Conjuncts the index reads (verb, resource, group, namespace, the kind of review), others it
/// must leave alone, and ones that error or spend steps.
const INDEX_LEAVES: &[&str] = &[
    "request.resourceAttributes.verb == 'get'",
    "request.resourceAttributes.verb == 'delete'",
    "request.resourceAttributes.verb in ['list', 'delete']",
    "request.resourceAttributes.verb in ['get', 'get']",
    "request.resourceAttributes.resource == 'pods'",
    "'secrets' == request.resourceAttributes.resource",
    "request.resourceAttributes.namespace == 'a'",
    "request.resourceAttributes.namespace in ['b', '']",
    "request.resourceAttributes.group == ''",
    "request.resourceAttributes.group == 'apps'",
    "has(request.resourceAttributes)",
    "has(request.nonResourceAttributes)",
    "request.nonResourceAttributes.verb == 'get'",
    "request.nonResourceAttributes.verb in ['post']",
    "request.nonResourceAttributes.path == '/healthz'",
    "'dev' in request.groups",
    "'ops' in request.groups",
    "request.user.startsWith('a')",
    "request.resourceAttributes.name == 'x'",
    "int(request.user) > 0",
    "request.groups.exists(g, g == 'dev')",
    "true",
    "false",
];

fn index_expression() -> impl Strategy<Value = String> {
    let leaf = (select(INDEX_LEAVES), any::<bool>())
        .prop_map(|(l, not)| if not { format!("!({l})") } else { l.to_owned() });
    (
        proptest::collection::vec(leaf, 1..=4),
        proptest::collection::vec(prop_oneof![3 => Just(" && "), 1 => Just(" || ")], 3),
        any::<bool>(),
    )
        .prop_map(|(leaves, joins, grouped)| {
            let mut s = leaves[0].clone();
            for (i, l) in leaves.iter().enumerate().skip(1) {
                s.push_str(joins[i - 1]);
                // Sometimes nest the tail, so that the `&&` tree is not only left-deep.
                if grouped && i == 1 && leaves.len() > 2 {
                    s.push('(');
                }
                s.push_str(l);
            }
            if grouped && leaves.len() > 2 {
                s.push(')');
            }
            s
        })
}

fn index_review() -> impl Strategy<Value = Value> {
    let resource = (
        select(&["get", "list", "delete"][..]),
        select(&["pods", "secrets"][..]),
        select(&["a", "b", ""][..]),
        select(&["", "apps"][..]),
    )
        .prop_map(|(verb, res, ns, group)| {
            json!({"resourceAttributes": {"verb": verb, "resource": res, "namespace": ns, "group": group}})
        });
    let non_resource = (
        select(&["get", "post"][..]),
        select(&["/healthz", "/x"][..]),
    )
        .prop_map(|(verb, path)| json!({"nonResourceAttributes": {"verb": verb, "path": path}}));
    (
        prop_oneof![resource, non_resource],
        select(&["alice", "42", "bob"][..]),
        // Groups may repeat, as a review may send them.
        proptest::collection::vec(select(&["dev", "ops", "qa"][..]), 0..4),
    )
        .prop_map(|(mut spec, user, groups)| {
            spec["user"] = json!(user);
            spec["groups"] = json!(groups);
            spec
        })
}

fn index_policy(rules: &[(bool, bool, String)]) -> warrant::authorizer::Policy {
    let mut yaml = String::from(
        "apiVersion: warrant.dev/v1alpha1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: Policy\n  name: p\n  policy:\n    rules:\n",
    );
    for (i, (deny, observe, expr)) in rules.iter().enumerate() {
        let effect = if *deny { "Deny" } else { "Allow" };
        let mode = if *observe {
            "      mode: Observe\n"
        } else {
            ""
        };
        yaml.push_str(&format!(
            "    - name: r{i}\n      effect: {effect}\n      expression: {}\n      message: rule {i}\n{mode}",
            quoted(expr)
        ));
    }
    let loaded = warrant::config::parse("index.yaml", yaml.as_bytes())
        .unwrap_or_else(|e| panic!("generated policy is valid: {e}\n{yaml}"));
    let warrant::config::AuthorizerSpec::Policy(spec) = &loaded.config.authorizers[0].spec else {
        panic!("a Policy");
    };
    warrant::authorizer::Policy::new(
        spec,
        &loaded.config.authorizers[0].name,
        &warrant::authorizer::metrics::Families::default(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES * 4))]

    /// The index changes nothing but the work done.
    #[test]
    fn policy_index_agrees_with_every_rule(
        rules in proptest::collection::vec((any::<bool>(), prop::bool::weighted(0.2), index_expression()), 1..10),
        spec in index_review(),
    ) {
        let indexed = index_policy(&rules);
        let every = index_policy(&rules).without_index();
        let review = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec});
        let review = review::decode(&serde_json::to_vec(&review).expect("encodes")).expect("decodes");
        let input = Input::new(review, now());
        let deadline = Deadline::after(std::time::Duration::from_secs(10));
        let a = format!("{:?}", indexed.judge(&input, deadline));
        let b = format!("{:?}", every.judge(&input, deadline));
        prop_assert_eq!(a, b);
    }
}
