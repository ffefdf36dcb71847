//! The engine's behaviour beyond one constraint: order, availability, the required
//! constraint, the validating side, the namespace's values and the patch.

use super::{default_named, defaults, namespace, pod_with};
use crate::pod_security::engine::{Engine, REQUIRED_SCC, Refusal, VALIDATED_SCC};
use crate::pod_security::field::{BadValue, FieldError, FieldPath, aggregate};
use crate::pod_security::namespace::{Namespace, parse_block};
use crate::pod_security::patch::patch;
use crate::pod_security::subjects::{Identity, SubjectType, Subjects};
use crate::pod_security::{SecurityContextConstraints, constraint::IdRange};
use k8s_openapi::api::core::v1::Pod;
use serde_json::json;

/// Availability as RBAC would answer it: `granted` names the constraints the requester may
/// `use`; restricted-v2 is every authenticated user's.
fn granting(
    granted: &'static [&'static str],
) -> impl Fn(&SecurityContextConstraints) -> Option<SubjectType> {
    move |c| {
        (c.name() == "restricted-v2" || granted.contains(&c.name())).then_some(SubjectType::User)
    }
}

fn with_annotation(mut pod: Pod, key: &str, value: &str) -> Pod {
    pod.metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(key.to_owned(), value.to_owned());
    pod
}

fn container_uid(pod: &Pod) -> Option<i64> {
    pod.spec.as_ref()?.containers[0]
        .security_context
        .as_ref()?
        .run_as_user
}

#[test]
fn defaults_are_tried_by_priority_then_restriction_then_name() {
    let engine = Engine::new(defaults());
    let order: Vec<&str> = engine.constraints().iter().map(|c| c.name()).collect();
    assert_eq!(
        order,
        [
            "anyuid",
            "restricted-v2",
            "restricted",
            "nonroot-v2",
            "nonroot",
            "hostmount-anyuid",
            "hostnetwork-v2",
            "hostnetwork",
            "hostaccess",
            "privileged"
        ]
    );
}

#[test]
fn a_user_without_anyuid_gets_restricted_v2_and_a_uid_from_the_namespace() {
    let engine = Engine::new(defaults());
    let pod = pod_with(json!({}), json!({}));
    let admitted = engine
        .admit(&namespace(), &pod, &granting(&[]))
        .expect("admitted");
    assert_eq!(admitted.constraint, "restricted-v2");
    assert_eq!(container_uid(&admitted.pod), Some(1_000_680_000));
    let annotations = admitted
        .pod
        .metadata
        .annotations
        .clone()
        .unwrap_or_default();
    assert_eq!(
        annotations.get(VALIDATED_SCC).map(String::as_str),
        Some("restricted-v2")
    );
    assert_eq!(
        annotations
            .get("security.openshift.io/validated-scc-subject-type")
            .map(String::as_str),
        Some("user")
    );
    assert_eq!(admitted.denied, ["anyuid"]);
    let ops = serde_json::to_value(patch(&pod, &admitted.pod).expect("patch")).expect("json");
    let text = ops.to_string();
    for expected in [
        "\"/spec/containers/0/securityContext\"",
        "\"runAsUser\":1000680000",
        "\"drop\":[\"ALL\"]",
        "\"allowPrivilegeEscalation\":false",
        "\"runAsNonRoot\":true",
        "\"fsGroup\":1000680000",
        "\"level\":\"s0:c26,c5\"",
        "\"type\":\"RuntimeDefault\"",
        "openshift.io/scc",
    ] {
        assert!(text.contains(expected), "{expected} missing from {text}");
    }
}

#[test]
fn a_user_with_anyuid_keeps_the_uid_by_priority() {
    let engine = Engine::new(defaults());
    let pod = pod_with(json!({}), json!({"securityContext": {"runAsUser": 0}}));
    let admitted = engine
        .admit(&namespace(), &pod, &granting(&["anyuid"]))
        .expect("admitted");
    assert_eq!(admitted.constraint, "anyuid");
    assert_eq!(container_uid(&admitted.pod), Some(0));
}

#[test]
fn priority_beats_restrictiveness_even_for_a_pod_restricted_v2_admits() {
    let engine = Engine::new(defaults());
    let pod = pod_with(json!({}), json!({}));
    let admitted = engine
        .admit(&namespace(), &pod, &granting(&["anyuid"]))
        .expect("admitted");
    assert_eq!(admitted.constraint, "anyuid");
    assert_eq!(container_uid(&admitted.pod), None);
}

#[test]
fn a_privileged_pod_is_refused_with_every_reason_in_openshift_format() {
    let engine = Engine::new(defaults());
    let pod = pod_with(json!({}), json!({"securityContext": {"privileged": true}}));
    let refusal = engine
        .admit(&namespace(), &pod, &granting(&[]))
        .expect_err("refused");
    let text = refusal.to_string();
    assert!(
        text.starts_with("unable to validate against any security context constraint: [provider \"anyuid\": Forbidden: not usable by user or serviceaccount, provider restricted-v2: .containers[0].privileged: Invalid value: true: Privileged containers are not allowed, provider \"restricted\": Forbidden: not usable by user or serviceaccount"),
        "{text}"
    );
    assert!(
        text.contains("provider \"privileged\": Forbidden: not usable by user or serviceaccount")
    );
    assert!(text.ends_with(']'));
}

#[test]
fn restricted_v2_refusal_says_when_restricted_would_have_admitted() {
    let engine = Engine::new(defaults());
    let pod = pod_with(
        json!({}),
        json!({"securityContext": {"allowPrivilegeEscalation": true}}),
    );
    let text = engine
        .admit(&namespace(), &pod, &granting(&[]))
        .expect_err("refused")
        .to_string();
    assert!(
        text.contains("no access to scc/restricted: Forbidden: the pod fails to validate against the `restricted-v2` security context constraint, but would validate successfully against the `restricted` security context constraint"),
        "{text}"
    );
}

#[test]
fn required_scc_pins_the_choice_to_one_constraint() {
    let engine = Engine::new(defaults());
    let pod = with_annotation(pod_with(json!({}), json!({})), REQUIRED_SCC, "nonroot-v2");
    let admitted = engine
        .admit(&namespace(), &pod, &granting(&["anyuid", "nonroot-v2"]))
        .expect("admitted");
    assert_eq!(admitted.constraint, "nonroot-v2");
    let unusable = engine
        .admit(&namespace(), &pod, &granting(&["anyuid"]))
        .expect_err("refused")
        .to_string();
    assert_eq!(
        unusable,
        "unable to validate against any security context constraint: provider \"nonroot-v2\": Forbidden: not usable by user or serviceaccount"
    );
    let missing = with_annotation(pod_with(json!({}), json!({})), REQUIRED_SCC, "gone");
    assert_eq!(
        engine
            .admit(&namespace(), &missing, &granting(&[]))
            .expect_err("refused")
            .to_string(),
        "failed to retrieve the required SCC \"gone\": securitycontextconstraints.security.openshift.io \"gone\" not found"
    );
}

#[test]
fn the_validating_side_admits_the_mutated_pod_and_refuses_a_later_change() {
    let engine = Engine::new(defaults());
    let pod = pod_with(json!({}), json!({}));
    let admitted = engine
        .admit(&namespace(), &pod, &granting(&[]))
        .expect("admitted");
    let again = engine
        .validate(&namespace(), &admitted.pod, &granting(&[]))
        .expect("still valid");
    assert_eq!(again.constraint, "restricted-v2");
    let mut changed = admitted.pod.clone();
    if let Some(sc) = changed
        .spec
        .as_mut()
        .and_then(|s| s.containers[0].security_context.as_mut())
    {
        sc.privileged = Some(true);
    }
    let refusal = engine
        .validate(&namespace(), &changed, &granting(&[]))
        .expect_err("refused");
    assert!(matches!(refusal, Refusal::NoConstraintAcceptsUnchanged(_)));
    assert!(
        refusal
            .to_string()
            .contains("provider restricted-v2: .containers[0].privileged: Invalid value: true: Privileged containers are not allowed"),
        "{refusal}"
    );
    let pinned = with_annotation(admitted.pod, REQUIRED_SCC, "anyuid");
    assert_eq!(
        engine
            .validate(&namespace(), &pinned, &granting(&[]))
            .expect_err("refused")
            .to_string(),
        "required scc/anyuid does not match the suggested scc/restricted-v2"
    );
}

#[test]
fn a_namespace_without_its_annotations_refuses_every_pod() {
    let engine = Engine::new(defaults());
    let bare = Namespace {
        name: "bare".to_owned(),
        ..Namespace::default()
    };
    let text = engine
        .admit(&bare, &pod_with(json!({}), json!({})), &granting(&[]))
        .expect_err("refused")
        .to_string();
    assert_eq!(
        text,
        "error fetching namespace \"bare\": unable to find annotation openshift.io/sa.scc.uid-range"
    );
}

#[test]
fn supplemental_groups_fall_back_to_the_uid_range_and_blocks_parse_both_ways() {
    let ns = Namespace {
        supplemental_groups: None,
        ..namespace()
    };
    assert_eq!(
        ns.supplemental_groups().expect("groups"),
        [IdRange {
            min: 1_000_680_000,
            max: 1_000_689_999
        }]
    );
    assert_eq!(
        parse_block("5-10").expect("block"),
        IdRange { min: 5, max: 10 }
    );
    assert!(parse_block("x/10").is_err());
    assert!(parse_block("10").is_err());
    let engine = Engine::new([default_named("hostnetwork-v2")]);
    let ns = Namespace {
        supplemental_groups: Some("2000/10,3000/10".to_owned()),
        ..namespace()
    };
    let pod = pod_with(
        json!({"securityContext": {"supplementalGroups": [3005]}}),
        json!({}),
    );
    let everyone = |_: &_| Some(SubjectType::User);
    let admitted = engine
        .admit(&ns, &pod, &everyone)
        .expect("3005 is in the second block");
    let fs_group = admitted
        .pod
        .spec
        .and_then(|s| s.security_context)
        .and_then(|c| c.fs_group);
    assert_eq!(
        fs_group,
        Some(2000),
        "fsGroup is the first id of the first block"
    );
}

#[test]
fn the_service_account_is_asked_before_the_user_and_a_controller_is_not_asked() {
    let user = Identity {
        name: "alice".to_owned(),
        groups: vec!["system:authenticated".to_owned()],
        ..Identity::default()
    };
    let subjects = Subjects::of_pod(user.clone(), "team-a", "builder");
    let anyuid = default_named("anyuid");
    let both = subjects.available(&anyuid, |_, _| true);
    assert_eq!(both, Some(SubjectType::ServiceAccount));
    let user_only = subjects.available(&anyuid, |who, _| who.name == "alice");
    assert_eq!(user_only, Some(SubjectType::User));
    let mut listed = anyuid.clone();
    listed.groups = Some(vec!["system:serviceaccounts:team-a".to_owned()]);
    assert_eq!(
        subjects.available(&listed, |_, _| false),
        Some(SubjectType::ServiceAccount)
    );
    let controller = Identity {
        name: "system:serviceaccount:kube-system:replicaset-controller".to_owned(),
        ..Identity::default()
    };
    let subjects = Subjects::of_pod(controller, "team-a", "default");
    assert!(subjects.requester.is_none());
    let asked = std::cell::RefCell::new(Vec::new());
    let answer = subjects.available(&anyuid, |who, _| {
        asked.borrow_mut().push(who.name.clone());
        false
    });
    assert_eq!(answer, None);
    assert_eq!(asked.into_inner(), ["system:serviceaccount:team-a:default"]);
}

#[test]
fn field_errors_print_as_openshift_prints_them() {
    let root = FieldPath::root("provider x: ");
    let errors = [
        FieldError::invalid(
            root.child("containers").index(0).child("capabilities"),
            BadValue::Null,
            "d",
        ),
        FieldError::invalid(
            root.child("a"),
            BadValue::Capabilities(Some(vec!["KILL".to_owned()])),
            "d",
        ),
        FieldError::invalid(
            root.child("a"),
            BadValue::Capabilities(Some(vec!["KILL".to_owned()])),
            "d",
        ),
        FieldError::required(root.child("runAsUser"), ""),
    ];
    assert_eq!(
        aggregate(&errors),
        "[provider x: .containers[0].capabilities: Invalid value: \"null\": d, provider x: .a: Invalid value: []core.Capability{\"KILL\"}: d, provider x: .runAsUser: Required value]"
    );
    assert_eq!(aggregate(&errors[..1]), errors[0].to_string());
}
