use super::*;

#[track_caller]
fn errors(yaml: &str) -> Vec<String> {
    match parse("c.yaml", yaml.as_bytes()) {
        Ok(l) => panic!("valid: {:?}", l.config),
        Err(e) => e.iter().map(|e| e.to_string()).collect(),
    }
}

#[track_caller]
fn assert_has(errs: &[String], want: &str) {
    assert!(
        errs.iter().any(|e| e == want),
        "missing {want:?} in\n{}",
        errs.join("\n")
    );
}

const UPSTREAM: &str = "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\n";
const WARRANT: &str = "apiVersion: warrant.dev/v1alpha1\nkind: AuthorizationConfiguration\n";

#[test]
fn embedded_default_is_valid_and_matches_the_shipped_file() {
    let l = parse(EMBEDDED_DEFAULT_NAME, EMBEDDED_DEFAULT.as_bytes()).unwrap();
    assert!(!l.config.authorizers.is_empty());
    assert!(l.source.hash.starts_with("sha256:"));
    assert_eq!(l.source.hash.len(), 7 + 64);
}

#[test]
fn upstream_file_is_accepted_verbatim() {
    let l = parse(
        "c.yaml",
        format!("{UPSTREAM}authorizers:\n- type: AlwaysAllow\n  name: alwaysallow\n").as_bytes(),
    )
    .unwrap();
    assert_eq!(l.config.authorizers[0].spec, AuthorizerSpec::AlwaysAllow);
    for v in ["v1beta1", "v1alpha1"] {
        let y = format!(
            "apiVersion: apiserver.config.k8s.io/{v}\nkind: AuthorizationConfiguration\nauthorizers:\n- type: AlwaysDeny\n  name: alwaysdeny\n"
        );
        assert!(parse("c.yaml", y.as_bytes()).is_ok(), "{v}");
    }
}

#[test]
fn upstream_validation_vectors() {
    // Vector 31: no authorizers; no type; unknown type.
    assert_has(
        &errors(&format!("{UPSTREAM}authorizers: []\n")),
        "c.yaml:3: authorizers: Required value: at least one authorization mode must be defined",
    );
    let e = errors(&format!(
        "{UPSTREAM}authorizers:\n- name: foo\n- type: Foo\n  name: bar\n"
    ));
    assert_has(&e, "c.yaml:4: authorizers[0].type: Required value");
    assert_has(
        &e,
        "c.yaml:5: authorizers[1].type: Unsupported value: \"Foo\": supported values: \"AlwaysAllow\", \"AlwaysDeny\", \"Webhook\"",
    );
    // Vector 32: empty, duplicate and invalid names.
    let e = errors(&format!(
        "{WARRANT}authorizers:\n- type: AlwaysDeny\n  name: ''\n- type: AlwaysDeny\n  name: foo\n- type: AlwaysAllow\n  name: foo\n- type: AlwaysAllow\n  name: FOO.example.domain\n"
    ));
    assert_has(&e, "c.yaml:5: authorizers[0].name: Required value");
    assert_has(
        &e,
        "c.yaml:9: authorizers[2].name: Duplicate value: \"foo\"",
    );
    assert!(e.iter().any(|x| x.starts_with("c.yaml:11: authorizers[3].name: Invalid value: \"FOO.example.domain\": authorizer name is invalid: a lowercase RFC 1123 subdomain")));
    // Vector 33: a non-repeatable type twice (upstream flavour).
    assert_has(
        &errors(&format!(
            "{UPSTREAM}authorizers:\n- type: AlwaysDeny\n  name: alwaysdeny\n- type: AlwaysDeny\n  name: alwaysdeny2\n"
        )),
        "c.yaml:6: authorizers[1].type: Duplicate value: \"AlwaysDeny\"",
    );
    // Vector 34: webhook block on another type.
    assert_has(
        &errors(&format!(
            "{WARRANT}authorizers:\n- type: AlwaysDeny\n  name: x\n  webhook: {{}}\n"
        )),
        "c.yaml:6: authorizers[0].webhook: Invalid value: \"non-null\": may only be specified when type=Webhook",
    );
    assert_has(
        &errors(&format!(
            "{WARRANT}authorizers:\n- type: Webhook\n  name: x\n"
        )),
        "c.yaml:4: authorizers[0].webhook: Required value: required when type=Webhook",
    );
}

#[test]
fn webhook_block_follows_upstream_rules() {
    let e = errors(&format!(
        "{UPSTREAM}authorizers:\n- type: Webhook\n  name: wh\n  webhook:\n    timeout: 0s\n    authorizedTTL: -1s\n    subjectAccessReviewVersion: v2beta1\n    failurePolicy: AlwaysAllow\n    connectionInfo:\n      type: InClusterConfig\n      kubeConfigFile: ''\n    matchConditions:\n    - expression: '  '\n"
    ));
    assert_has(&e, "c.yaml:7: authorizers[0].timeout: Required value");
    assert_has(
        &e,
        "c.yaml:8: authorizers[0].authorizedTTL: Invalid value: \"-1s\": must be > 0s",
    );
    assert_has(
        &e,
        "c.yaml:9: authorizers[0].subjectAccessReviewVersion: Unsupported value: \"v2beta1\": supported values: \"v1\", \"v1beta1\"",
    );
    assert_has(
        &e,
        "c.yaml:10: authorizers[0].failurePolicy: Unsupported value: \"AlwaysAllow\": supported values: \"NoOpinion\", \"Deny\"",
    );
    assert_has(
        &e,
        "c.yaml:13: authorizers[0].connectionInfo.kubeConfigFile: Invalid value: \"\": can only be set when type=KubeConfigFile",
    );
    assert_has(
        &e,
        "c.yaml:7: authorizers[0].matchConditionSubjectAccessReviewVersion: Required value: required if match conditions are specified",
    );
    assert_has(
        &e,
        "c.yaml:15: authorizers[0].matchConditions[0].expression: Required value",
    );
    let e = errors(&format!(
        "{UPSTREAM}authorizers:\n- type: Webhook\n  name: wh\n  webhook:\n    timeout: 31s\n    subjectAccessReviewVersion: v1\n    failurePolicy: Deny\n    connectionInfo:\n      type: KubeConfigFile\n"
    ));
    assert_has(
        &e,
        "c.yaml:7: authorizers[0].timeout: Invalid value: \"31s\": must be > 0s and <= 30s",
    );
    assert_has(
        &e,
        "c.yaml:11: authorizers[0].connectionInfo.kubeConfigFile: Required value",
    );
}

#[test]
fn too_many_and_duplicate_match_conditions() {
    let many: String = (0..65)
        .map(|i| format!("  - expression: 'c{i}'\n"))
        .collect();
    let e = errors(&format!(
        "{WARRANT}authorizers:\n- type: AlwaysDeny\n  name: x\n  matchConditions:\n{many}"
    ));
    assert_has(
        &e,
        "c.yaml:7: authorizers[0].matchConditions: Too many: 65: must have at most 64 items",
    );
    let e = errors(&format!(
        "{WARRANT}authorizers:\n- type: AlwaysDeny\n  name: x\n  matchConditions:\n  - expression: a\n  - expression: a\n"
    ));
    assert_has(
        &e,
        "c.yaml:8: authorizers[0].matchConditions[1].expression: Duplicate value: \"a\"",
    );
}

#[test]
fn cluster_state_types_are_refused_with_why() {
    // ABAC is refused for what it is (a policy file on the API server's
    // disk), not for needing cluster state.
    for (t, why) in [
        ("RBAC", "needs cluster state that warrant does not hold"),
        ("Node", "needs cluster state that warrant does not hold"),
        (
            "ABAC",
            "ABAC (a policy file on the API server's disk) is not supported by warrant yet",
        ),
    ] {
        let e = errors(&format!(
            "{UPSTREAM}authorizers:\n- type: {t}\n  name: {}\n",
            t.to_lowercase()
        ));
        assert!(e[0].contains(why), "{t}: {e:?}");
    }
}

#[test]
fn decoding_is_strict_and_located() {
    let e = errors(&format!(
        "{WARRANT}authorizers:\n- type: AlwaysDeny\n  name: x\n  nmae: y\n"
    ));
    assert!(e[0].starts_with("c.yaml:6: unknown field `nmae`"), "{e:?}");
    let e = errors("apiVersion: v9\nkind: Other\nextra: 1\n");
    assert!(e[0].starts_with("c.yaml:3: unknown field `extra`"), "{e:?}");
    let e = errors("apiVersion: v9\nkind: Other\nauthorizers: []\n");
    assert!(
        e[0].starts_with("c.yaml:1: apiVersion: Unsupported value: \"v9\""),
        "{e:?}"
    );
    assert_has(
        &e,
        "c.yaml:2: kind: Unsupported value: \"Other\": supported values: \"AuthorizationConfiguration\"",
    );
}

#[test]
fn warrant_failure_policy() {
    let l = parse(
        "c.yaml",
        format!("{WARRANT}authorizers:\n- type: AlwaysAllow\n  name: a\n  failurePolicy: NoOpinion\n- type: AlwaysDeny\n  name: b\n").as_bytes(),
    )
    .unwrap();
    assert_eq!(
        l.config.authorizers[0].failure_policy,
        FailurePolicy::NoOpinion
    );
    assert_eq!(l.config.authorizers[1].failure_policy, FailurePolicy::Deny);
    assert_has(
        &errors(&format!(
            "{WARRANT}authorizers:\n- type: AlwaysAllow\n  name: a\n  failurePolicy: Maybe\n"
        )),
        "c.yaml:6: authorizers[0].failurePolicy: Unsupported value: \"Maybe\": supported values: \"NoOpinion\", \"Deny\"",
    );
}

#[test]
fn webhook_settings_are_defaulted_as_upstream() {
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kc.yaml");
    std::fs::write(&kc, "apiVersion: v1\nkind: Config\n").unwrap();
    let text = format!(
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: Webhook\n  name: wh\n  webhook:\n    timeout: 1500ms\n    authorizedTTL: 0s\n    cacheUnauthorizedRequests: false\n    subjectAccessReviewVersion: v1beta1\n    failurePolicy: NoOpinion\n    connectionInfo:\n      type: KubeConfigFile\n      kubeConfigFile: {}\n",
        kc.display()
    );
    let loaded = parse("c.yaml", text.as_bytes()).unwrap();
    let a = &loaded.config.authorizers[0];
    assert_eq!(a.failure_policy, FailurePolicy::NoOpinion);
    let AuthorizerSpec::Webhook(w) = &a.spec else {
        panic!("{:?}", a.spec)
    };
    assert_eq!(
        *w,
        WebhookConfig {
            timeout: std::time::Duration::from_millis(1500),
            authorized_ttl: std::time::Duration::from_secs(300),
            unauthorized_ttl: std::time::Duration::from_secs(30),
            cache_authorized: true,
            cache_unauthorized: false,
            version: crate::review::ApiVersion::V1beta1,
            kubeconfig: kc.clone(),
            single_flight: true,
            stale_if_error: None,
        }
    );
}

/// `warrantServiceAccount` names warrant's own account instead of the
/// default one; without it the default stays exempt.
#[test]
fn warrant_service_account_replaces_the_default_exemption() {
    let guard = |extra: &str| {
        let yaml = format!(
            "{WARRANT}authorizers:\n- type: DeletionGuard\n  name: guard\n  guard:\n    protectedNamespaces: [{{names: [prod], level: high}}]\n{extra}"
        );
        let loaded = super::parse("sa.yaml", yaml.as_bytes()).unwrap();
        let super::AuthorizerSpec::DeletionGuard(spec) = &loaded.config.authorizers[0].spec else {
            panic!("not a guard");
        };
        spec.excluded_principals.clone()
    };
    let default = "system:serviceaccount:warrant-system:warrant";
    let named = "system:serviceaccount:security/warrant-guard";
    let plain = guard("");
    assert!(plain.contains(default, &[]));
    let own = guard("    warrantServiceAccount: security/warrant-guard\n");
    assert!(!own.contains(default, &[]));
    assert!(own.contains(&named.replace('/', ":"), &[]));
    // The control plane stays exempt either way.
    assert!(own.contains("system:kube-controller-manager", &[]));
}

/// `mode` on any entry and any policy rule; a guard's entry `mode` and `guard.mode`
/// are one setting (either spelling sets both).
#[test]
fn shadow_mode_on_entries_rules_and_guards() {
    let l = parse(
        "c.yaml",
        format!(
            "{WARRANT}authorizers:
- type: AlwaysDeny
  name: deny-all
  mode: Observe
- type: Policy
  name: tenants
  policy:
    rules:
    - {{name: a, effect: Deny, expression: 'true', message: m, mode: Observe}}
    - {{name: b, effect: Allow, expression: 'true', message: m}}
- type: DeletionGuard
  name: by-entry
  mode: Observe
  guard: {{protectedNamespaces: [{{names: [prod], level: critical}}]}}
- type: DeletionGuard
  name: by-guard
  guard: {{mode: Observe, protectedNamespaces: [{{names: [prod], level: critical}}]}}
- type: DeletionGuard
  name: both
  mode: Observe
  guard: {{mode: Observe, protectedNamespaces: [{{names: [prod], level: critical}}]}}
- type: AlwaysAllow
  name: allow-all
"
        )
        .as_bytes(),
    )
    .unwrap();
    let a = &l.config.authorizers;
    assert_eq!(a[0].mode, Mode::Observe);
    let AuthorizerSpec::Policy(p) = &a[1].spec else {
        panic!("{:?}", a[1].spec)
    };
    assert_eq!(a[1].mode, Mode::Enforce);
    assert_eq!(
        (p.rules[0].mode, p.rules[1].mode),
        (Mode::Observe, Mode::Enforce)
    );
    for g in &a[2..5] {
        let AuthorizerSpec::DeletionGuard(spec) = &g.spec else {
            panic!("{:?}", g.spec)
        };
        assert_eq!(
            (g.mode, spec.mode),
            (Mode::Observe, Mode::Observe),
            "{}",
            g.name
        );
    }
    assert_eq!(a[5].mode, Mode::Enforce);
}

/// An Allow rule that constrains no verb also grants the verbs Kubernetes
/// adds (constrained impersonation, DRA); a valid file says so in a warning.
#[test]
fn an_allow_rule_without_a_verb_is_valid_with_a_warning() {
    let file = |effect: &str, expression: &str| {
        format!(
            "apiVersion: warrant.dev/v1alpha1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: Policy\n  name: p\n  policy:\n    rules:\n    - name: r\n      effect: {effect}\n      expression: \"{expression}\"\n      message: m\n"
        )
    };
    let warnings = |effect: &str, expression: &str| {
        crate::config::parse("w.yaml", file(effect, expression).as_bytes())
            .unwrap()
            .config
            .warnings
            .iter()
            .map(|w| w.to_string())
            .collect::<Vec<_>>()
    };
    let no_verb = warnings("Allow", "'dev' in request.groups");
    assert_eq!(no_verb.len(), 1, "{no_verb:?}");
    assert!(
        no_verb[0].starts_with(
            "w.yaml:8: authorizers[0].policy.rules[0].expression: warning: this Allow rule constrains no verb"
        ),
        "{}",
        no_verb[0]
    );
    assert!(no_verb[0].contains("impersonate:serviceaccount"));
    assert!(warnings("Allow", "request.resourceAttributes.verb == 'get'").is_empty());
    assert!(
        warnings(
            "Allow",
            "request.?nonResourceAttributes.verb.orValue('') == 'get'"
        )
        .is_empty()
    );
    assert!(warnings("Deny", "'dev' in request.groups").is_empty());
}

/// `buffer:` takes its defaults when written empty, and reports each bad field at
/// its path.
#[test]
fn buffer_block_defaults_and_errors() {
    let guard = |buffer: &str| {
        format!(
            "{WARRANT}authorizers:\n- type: DeletionGuard\n  name: guard\n  guard:\n    protectionLabel: warrant.dev/protection\n    buffer:\n{buffer}"
        )
    };
    let loaded = super::parse("b.yaml", guard("      {}\n").as_bytes()).unwrap();
    let super::AuthorizerSpec::DeletionGuard(spec) = &loaded.config.authorizers[0].spec else {
        panic!("not a guard");
    };
    let b = spec.buffer.as_ref().expect("buffer block");
    assert_eq!(b.finalizer, "warrant.dev/deletion-cooldown");
    assert_eq!(b.finalize_at, model::guard::Level::High);
    assert_eq!(b.cooldown, std::time::Duration::from_secs(600));
    assert_eq!(b.max_hold, std::time::Duration::from_secs(86_400));
    assert!(!b.require_confirmation);
    assert!(b.covers("apps", "statefulsets") && !b.covers("", "pods"));
    let errs = errors(&guard(
        "      finalizer: cooldown\n      finalizeAt: huge\n      resources: [{group: apps, resource: '*'}]\n      cooldown: 2h\n      maxHold: 1h\n      notify:\n      - url: http://example.com/hook\n        attempts: 0\n",
    ));
    for want in [
        "c.yaml:9: authorizers[0].guard.buffer.finalizer: Invalid value: \"cooldown\": must have a domain prefix (example.com/name)",
        "c.yaml:10: authorizers[0].guard.buffer.finalizeAt: Unsupported value: \"huge\": supported values: \"critical\", \"high\", \"standard\"",
        "c.yaml:13: authorizers[0].guard.buffer.maxHold: Invalid value: \"3600s\": must be at least the cooldown (7200s)",
    ] {
        assert_has(&errs, want);
    }
    let joined = errs.join("\n");
    for path in [
        "buffer.resources[0]",
        "buffer.maxHold",
        "notify[0].url",
        "notify[0].attempts",
    ] {
        assert!(joined.contains(path), "missing {path} in\n{joined}");
    }
}

#[test]
fn validate_warns_of_deleting_verbs_named_apart_and_of_unguarded_evictions() {
    let policy = |expression: &str| {
        format!(
            "apiVersion: warrant.dev/v1alpha1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: Policy\n  name: p\n  policy:\n    rules:\n    - name: r\n      effect: Deny\n      expression: \"{expression}\"\n      message: m\n"
        )
    };
    let warnings = |file: String| {
        crate::config::parse("w.yaml", file.as_bytes())
            .unwrap()
            .config
            .warnings
            .iter()
            .map(|w| w.to_string())
            .collect::<Vec<_>>()
    };
    let apart = warnings(policy(
        "request.resourceAttributes.verb in ['update', 'delete']",
    ));
    assert_eq!(apart.len(), 1, "{apart:?}");
    assert!(
        apart[0].starts_with("w.yaml:8: authorizers[0].policy.rules[0].expression: warning: this rule names verb 'delete' or 'deletecollection' but not both"),
        "{}",
        apart[0]
    );
    assert!(
        warnings(policy(
            "request.resourceAttributes.verb in ['delete', 'deletecollection']"
        ))
        .is_empty()
    );
    assert!(warnings(policy("request.resourceAttributes.verb == 'update'")).is_empty());

    let guard = |resource: &str| {
        format!(
            "apiVersion: warrant.dev/v1alpha1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: DeletionGuard\n  name: g\n  guard:\n    protectedResources:\n    - {{group: \"\", resource: {resource}, level: high}}\n"
        )
    };
    let pods = warnings(guard("pods"));
    assert_eq!(pods.len(), 1, "{pods:?}");
    assert!(
        pods[0].contains(
            "guard.protectedResources: warning: deletes of pods are guarded, but an eviction"
        ),
        "{}",
        pods[0]
    );
    assert!(warnings(guard("persistentvolumeclaims")).is_empty());
}
