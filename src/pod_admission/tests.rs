//! Pod security wired: AdmissionReviews through the cache, the `use` answers and the engine,
//! with a scripted access review standing in for the API server.

use super::{OnUnavailable, PodSecurity, PodSecuritySettings, Stage};
use crate::admission::{self, AdmissionResponse};
use crate::cluster::constraints::ConstraintCache;
use crate::config::Mode;
use crate::object::{AccessAnswer, AccessFuture, AccessQuestion, AccessReview};
use k8s_openapi::api::core::v1::Namespace as NamespaceObject;
use kube::api::{DynamicObject, PartialObjectMeta};
use kube::runtime::watcher::Event;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

const DEFAULTS: &str = include_str!("../../charts/warrant/files/pod-security/defaults.yaml");

/// Answers `use` from a list of (user, constraint) grants, recording every question.
#[derive(Debug, Default)]
struct Grants {
    allowed: Vec<(&'static str, &'static str)>,
    asked: Mutex<Vec<(String, String, String)>>,
}

impl AccessReview for Grants {
    fn review<'a>(&'a self, q: &'a AccessQuestion) -> AccessFuture<'a> {
        if let Ok(mut asked) = self.asked.lock() {
            asked.push((q.user.clone(), q.name.clone(), q.namespace.clone()));
        }
        let ok = q.verb == "use"
            && q.group == "security.openshift.io"
            && q.resource == "securitycontextconstraints"
            && self
                .allowed
                .iter()
                .any(|(u, c)| *u == q.user && *c == q.name);
        Box::pin(async move {
            Ok(if ok {
                AccessAnswer::Allowed
            } else {
                AccessAnswer::NotAllowed {
                    reason: String::new(),
                }
            })
        })
    }
}

fn synced_cache() -> Arc<ConstraintCache> {
    let cache = Arc::new(ConstraintCache::default());
    let docs: Vec<Value> = serde_saphyr::from_multiple(DEFAULTS).expect("defaults");
    cache.constraint_event(Event::Init);
    for doc in docs {
        let object: DynamicObject = serde_json::from_value(doc).expect("object");
        cache.constraint_event(Event::InitApply(object));
    }
    cache.constraint_event(Event::InitDone);
    cache.namespace_event(Event::Init);
    let ns: PartialObjectMeta<NamespaceObject> = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "team-a", "annotations": {
            "openshift.io/sa.scc.uid-range": "1000680000/10000",
            "openshift.io/sa.scc.supplemental-groups": "1000680000/10000",
            "openshift.io/sa.scc.mcs": "s0:c26,c5"
        }}
    }))
    .expect("namespace");
    cache.namespace_event(Event::InitApply(ns));
    cache.namespace_event(Event::InitDone);
    cache
}

fn review(
    user: &str,
    operation: &str,
    container: Value,
    annotations: Value,
) -> admission::AdmissionRequest {
    let pod = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "namespace": "team-a", "annotations": annotations},
        "spec": {"serviceAccountName": "builder", "containers": [container]}
    });
    let mut request = json!({
        "uid": "u-1", "operation": operation,
        "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"},
        "namespace": "team-a", "name": "p",
        "userInfo": {"username": user, "groups": ["system:authenticated"]},
        "object": pod,
    });
    if operation == "UPDATE" {
        request["oldObject"] = request["object"].clone();
        request["oldObject"]["metadata"]["annotations"] = json!({});
    }
    let body =
        json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request});
    admission::decode(body.to_string().as_bytes()).expect("decodes")
}

fn app() -> Value {
    json!({"name": "app", "image": "registry.example/app:1"})
}

fn pod_security(grants: Grants, mode: Mode, cache: Arc<ConstraintCache>) -> PodSecurity {
    let settings = PodSecuritySettings {
        mode,
        on_unavailable: OnUnavailable::Fail,
    };
    PodSecurity::new(settings, cache, Arc::new(grants))
}

fn wire(response: &AdmissionResponse) -> Value {
    serde_json::from_slice(&response.encode()).expect("json")
}

fn deadline() -> tokio::time::Instant {
    tokio::time::Instant::now() + std::time::Duration::from_secs(2)
}

#[tokio::test]
async fn a_created_pod_is_patched_with_restricted_v2_granted_by_rbac() {
    let grants = Grants {
        allowed: vec![("alice", "restricted-v2")],
        ..Grants::default()
    };
    let security = pod_security(grants, Mode::Enforce, synced_cache());
    let response = security
        .review(
            Stage::Mutate,
            &review("alice", "CREATE", app(), json!({})),
            deadline(),
        )
        .await;
    let out = wire(&response);
    assert_eq!(out["response"]["allowed"], true, "{out}");
    assert_eq!(out["response"]["patchType"], "JSONPatch", "{out}");
    assert_eq!(
        out["response"]["auditAnnotations"]["scc"], "restricted-v2",
        "{out}"
    );
    use base64::Engine as _;
    let patch = base64::prelude::BASE64_STANDARD
        .decode(out["response"]["patch"].as_str().expect("patch"))
        .expect("base64");
    let text = String::from_utf8_lossy(&patch);
    assert!(
        text.contains("1000680000") && text.contains("/metadata/annotations/openshift.io~1scc"),
        "{text}"
    );
}

#[tokio::test]
async fn the_service_account_alone_decides_for_a_controller() {
    let grants = Grants {
        allowed: vec![("system:serviceaccount:team-a:builder", "anyuid")],
        ..Grants::default()
    };
    let security = pod_security(grants, Mode::Enforce, synced_cache());
    let container = json!({"name": "app", "image": "i", "securityContext": {"runAsUser": 0}});
    let controller = "system:serviceaccount:kube-system:replicaset-controller";
    let response = security
        .review(
            Stage::Mutate,
            &review(controller, "CREATE", container, json!({})),
            deadline(),
        )
        .await;
    let out = wire(&response);
    assert_eq!(
        out["response"]["auditAnnotations"]["scc"], "anyuid",
        "{out}"
    );
    assert_eq!(
        out["response"]["auditAnnotations"]["scc-subject-type"], "serviceaccount",
        "{out}"
    );
}

#[tokio::test]
async fn observe_mode_admits_unchanged_and_records_the_refusal() {
    let security = pod_security(Grants::default(), Mode::Observe, synced_cache());
    let container = json!({"name": "app", "image": "i", "securityContext": {"privileged": true}});
    let response = security
        .review(
            Stage::Mutate,
            &review("alice", "CREATE", container, json!({})),
            deadline(),
        )
        .await;
    let out = wire(&response);
    assert_eq!(out["response"]["allowed"], true, "{out}");
    assert!(out["response"].get("patch").is_none(), "{out}");
    let would = out["response"]["auditAnnotations"]["scc-would-refuse"]
        .as_str()
        .unwrap_or_default();
    assert!(
        would.starts_with("unable to validate against any security context constraint: "),
        "{out}"
    );
    assert!(
        out["response"]["warnings"][0]
            .as_str()
            .unwrap_or_default()
            .starts_with("pod security (Observe) would refuse")
    );
}

#[tokio::test]
async fn an_unsynced_cache_refuses_by_default_and_admits_visibly_when_ignored() {
    let cache = Arc::new(ConstraintCache::default());
    let security = pod_security(Grants::default(), Mode::Enforce, cache.clone());
    let response = security
        .review(
            Stage::Mutate,
            &review("alice", "CREATE", app(), json!({})),
            deadline(),
        )
        .await;
    let out = wire(&response);
    assert_eq!(out["response"]["allowed"], false, "{out}");
    assert_eq!(
        out["response"]["status"]["message"],
        "pod security cannot judge the pod: the securitycontextconstraints watch has not listed yet"
    );
    let ignoring = PodSecurity::new(
        PodSecuritySettings {
            mode: Mode::Enforce,
            on_unavailable: OnUnavailable::Ignore,
        },
        cache,
        Arc::new(Grants::default()),
    );
    let out = wire(
        &ignoring
            .review(
                Stage::Mutate,
                &review("alice", "CREATE", app(), json!({})),
                deadline(),
            )
            .await,
    );
    assert_eq!(out["response"]["allowed"], true, "{out}");
    assert!(
        out["response"]["auditAnnotations"]["scc-unjudged"].is_string(),
        "{out}"
    );
}

#[tokio::test]
async fn use_is_asked_in_the_pods_namespace_and_the_validating_side_accepts_the_result() {
    let grants = Grants {
        allowed: vec![("alice", "restricted-v2")],
        ..Grants::default()
    };
    let grants = Arc::new(grants);
    let security = PodSecurity::new(
        PodSecuritySettings::default(),
        synced_cache(),
        grants.clone(),
    );
    let annotations = json!({"openshift.io/scc": "restricted-v2"});
    let mutated = json!({"name": "app", "image": "i", "securityContext": {
        "runAsUser": 1000680000, "runAsNonRoot": true, "allowPrivilegeEscalation": false,
        "capabilities": {"drop": ["ALL"]}
    }});
    let mut request = review("alice", "CREATE", mutated, annotations);
    if let Some(object) = request.object.as_mut() {
        let mut json = object.json().clone();
        json["spec"]["securityContext"] = json!({
            "fsGroup": 1000680000,
            "seLinuxOptions": {"level": "s0:c26,c5"},
            "seccompProfile": {"type": "RuntimeDefault"}
        });
        json["metadata"]["annotations"]["seccomp.security.alpha.kubernetes.io/pod"] =
            json!("runtime/default");
        json["metadata"]["annotations"]["security.openshift.io/validated-scc-subject-type"] =
            json!("user");
        *object = crate::object::Subject::new(json);
    }
    let out = wire(&security.review(Stage::Validate, &request, deadline()).await);
    assert_eq!(out["response"]["allowed"], true, "{out}");
    let asked = grants.asked.lock().map(|a| a.clone()).unwrap_or_default();
    assert!(asked.iter().all(|(_, _, ns)| ns == "team-a"), "{asked:?}");
    assert!(
        asked
            .iter()
            .any(|(u, c, _)| u == "alice" && c == "restricted-v2"),
        "{asked:?}"
    );
}

#[tokio::test]
async fn an_update_may_not_change_the_required_constraint() {
    let security = pod_security(Grants::default(), Mode::Enforce, synced_cache());
    let request = review(
        "alice",
        "UPDATE",
        app(),
        json!({"openshift.io/required-scc": "privileged"}),
    );
    let out = wire(&security.review(Stage::Validate, &request, deadline()).await);
    assert_eq!(out["response"]["allowed"], false, "{out}");
    assert_eq!(
        out["response"]["status"]["message"],
        "invalid change of required security context constraint annotation: openshift.io/required-scc"
    );
}

#[tokio::test]
async fn observe_mode_validates_an_unpatched_pod_as_the_mutating_side_would() {
    let grants = Grants {
        allowed: vec![("alice", "restricted-v2")],
        ..Grants::default()
    };
    let security = pod_security(grants, Mode::Observe, synced_cache());
    let out = wire(
        &security
            .review(
                Stage::Validate,
                &review("alice", "CREATE", app(), json!({})),
                deadline(),
            )
            .await,
    );
    assert_eq!(out["response"]["allowed"], true, "{out}");
    assert!(out["response"].get("warnings").is_none(), "{out}");
    assert_eq!(
        out["response"]["auditAnnotations"]["scc"], "restricted-v2",
        "{out}"
    );
}
