//! The reference configuration (`bench/e2e/warrant-policy.yaml`), the review it is
//! measured with, in both API versions, and the policies of the scaling bench.
#![allow(dead_code)]

/// The review: a `get` of a Deployment by `owner-ann`, which only the last rule allows.
pub const REVIEW_V1: &str = r#"{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{
 "user":"owner-ann","uid":"42","groups":["dev","system:authenticated"],
 "extra":{"scopes":["a","b"]},
 "resourceAttributes":{"namespace":"shop","verb":"get","group":"apps","version":"v1","resource":"deployments","name":"web"}}}"#;

/// The same review as `authorization.k8s.io/v1beta1` spells it (`group` for the groups).
pub const REVIEW_V1BETA1: &str = r#"{"apiVersion":"authorization.k8s.io/v1beta1","kind":"SubjectAccessReview","spec":{
 "user":"owner-ann","uid":"42","group":["dev","system:authenticated"],
 "extra":{"scopes":["a","b"]},
 "resourceAttributes":{"namespace":"shop","verb":"get","group":"apps","version":"v1","resource":"deployments","name":"web"}}}"#;

/// The rule that matches the review, last.
const OWNERS: &str = "    - name: owners\n      effect: Allow\n      expression: \"request.user.startsWith('owner-') && request.resourceAttributes.resource in ['deployments', 'pods']\"\n      message: owners may act\n";

fn rule(name: &str, effect: &str, expr: &str) -> String {
    format!(
        "    - name: {name}\n      effect: {effect}\n      expression: \"{expr}\"\n      message: {name}\n"
    )
}

fn document(rules: &str) -> String {
    format!(
        "apiVersion: warrant.dev/v1alpha1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: Policy\n  name: bench\n  matchConditions:\n  - expression: \"has(request.resourceAttributes)\"\n  - expression: \"!('system:masters' in request.groups)\"\n  - expression: \"!request.user.startsWith('system:')\"\n  policy:\n    rules:\n{rules}"
    )
}

/// The reference configuration (a Policy of 20 rules behind 3 matchConditions: 19 that do not
/// match the review, then the owners rule): the one policy every benchmark loads, shared with the
/// end-to-end benchmark (bench/run.sh) and its Rego twin (bench/e2e/policy.rego).
pub const REFERENCE_CONFIG: &str = include_str!("../../bench/e2e/warrant-policy.yaml");

/// A policy of `n` rules: `n - 1` that cannot match the review, then [`OWNERS`]. The rules that
/// cannot match take turns among the shapes a real policy has: a verb with a namespace, a
/// resource, a namespace, a non-resource path, and a group the user is not in.
pub fn scaling_config(n: usize) -> String {
    let mut rules = String::new();
    for i in 0..n - 1 {
        let (effect, expr) = match i % 5 {
            0 => (
                "Deny",
                format!(
                    "request.resourceAttributes.verb == 'delete' && request.resourceAttributes.namespace == 'ns-{i}'"
                ),
            ),
            1 => (
                "Allow",
                format!(
                    "request.resourceAttributes.resource == 'res-{i}' && request.user.startsWith('svc-')"
                ),
            ),
            2 => (
                "Deny",
                format!(
                    "request.resourceAttributes.namespace == 'tenant-{i}' && !('admins' in request.groups)"
                ),
            ),
            3 => (
                "Allow",
                format!(
                    "has(request.nonResourceAttributes) && request.nonResourceAttributes.path == '/p-{i}'"
                ),
            ),
            _ => ("Allow", format!("'team-{i}' in request.groups")),
        };
        rules.push_str(&rule(&format!("rule-{i}"), effect, &expr));
    }
    rules.push_str(OWNERS);
    document(&rules)
}

/// The reference configuration's chain, built.
pub fn chain() -> warrant::authorizer::Chain {
    let loaded = warrant::config::parse("warrant-policy.yaml", REFERENCE_CONFIG.as_bytes())
        .expect("the reference configuration");
    warrant::authorizer::Chain::build(&loaded.config).expect("the reference chain")
}
