//! The reviewer against a scripted API server on loopback (plain HTTP, a fault-injecting
//! stand-in: the real API server answers these reviews in the kube-apiserver tier).

use super::*;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use k8s_openapi::api::authorization::v1::SubjectAccessReviewStatus;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What the scripted API server answers, and after how long.
#[derive(Clone)]
struct Script {
    status: SubjectAccessReviewStatus,
    delay: Duration,
}

/// A scripted API server: counts the reviews it receives and keeps the last one.
struct FakeApiServer {
    url: String,
    calls: Arc<AtomicUsize>,
    last: Arc<std::sync::Mutex<Option<SubjectAccessReview>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeApiServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn fake_api_server(script: Script) -> FakeApiServer {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let calls = Arc::new(AtomicUsize::new(0));
    let last = Arc::new(std::sync::Mutex::new(None));
    let (c, l) = (calls.clone(), last.clone());
    let task = tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let (c, l, script) = (c.clone(), l.clone(), script.clone());
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                    let (c, l, script) = (c.clone(), l.clone(), script.clone());
                    async move {
                        assert_eq!(
                            req.uri().path(),
                            "/apis/authorization.k8s.io/v1/subjectaccessreviews"
                        );
                        let body = req.into_body().collect().await.unwrap().to_bytes();
                        let mut review: SubjectAccessReview =
                            serde_json::from_slice(&body).unwrap();
                        c.fetch_add(1, Ordering::SeqCst);
                        *l.lock().unwrap() = Some(review.clone());
                        tokio::time::sleep(script.delay).await;
                        review.status = Some(script.status);
                        let json = serde_json::to_vec(&review).unwrap();
                        Ok::<_, std::convert::Infallible>(
                            Response::builder()
                                .status(201)
                                .header("content-type", "application/json")
                                .body(Full::new(Bytes::from(json)))
                                .unwrap(),
                        )
                    }
                });
                let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    FakeApiServer {
        url,
        calls,
        last,
        task,
    }
}

fn reviewer(server: &FakeApiServer, settings: AccessReviewSettings) -> AccessReviewer {
    let config = kube::Config::new(server.url.parse().unwrap());
    let client = kube::Client::try_from(config).unwrap();
    AccessReviewer::new(client, settings, AccessReviewMetrics::default())
}

fn allowed() -> Script {
    Script {
        status: SubjectAccessReviewStatus {
            allowed: true,
            ..Default::default()
        },
        delay: Duration::ZERO,
    }
}

fn approver_question() -> AccessQuestion {
    AccessQuestion {
        user: "ana".into(),
        groups: vec!["approvers".into(), "system:authenticated".into()],
        verb: "approve".into(),
        group: "warrant.dev".into(),
        resource: "deletiontickets".into(),
        namespace: "shop".into(),
        name: "drop-db".into(),
        ..Default::default()
    }
}

#[tokio::test]
async fn an_allowed_answer_is_served_from_the_cache_until_its_ttl() {
    let server = fake_api_server(allowed()).await;
    let r = reviewer(
        &server,
        AccessReviewSettings {
            allowed_ttl: Duration::from_millis(300),
            ..Default::default()
        },
    );
    let q = approver_question();
    assert_eq!(r.review(&q).await, Ok(AccessAnswer::Allowed));
    assert_eq!(r.review(&q).await, Ok(AccessAnswer::Allowed));
    assert_eq!(server.calls.load(Ordering::SeqCst), 1);
    assert_eq!(r.metrics.cache_hit_count(), 1);
    assert_eq!(r.metrics.count(AccessReviewResult::Allowed), 1);
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(r.review(&q).await, Ok(AccessAnswer::Allowed));
    assert_eq!(server.calls.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn the_review_sent_carries_the_user_and_the_resource_attributes() {
    let server = fake_api_server(allowed()).await;
    let r = reviewer(&server, AccessReviewSettings::default());
    let mut q = approver_question();
    q.uid = Some("u-1".into());
    q.extra = BTreeMap::from([("scopes".to_string(), vec!["a".to_string()])]);
    r.review(&q).await.unwrap();
    let sent = server.last.lock().unwrap().clone().unwrap();
    assert_eq!(sent.spec.user.as_deref(), Some("ana"));
    assert_eq!(sent.spec.uid.as_deref(), Some("u-1"));
    assert_eq!(sent.spec.groups, Some(q.groups.clone()));
    assert_eq!(sent.spec.extra, Some(q.extra.clone()));
    let attrs = sent.spec.resource_attributes.unwrap();
    assert_eq!(attrs.verb.as_deref(), Some("approve"));
    assert_eq!(attrs.group.as_deref(), Some("warrant.dev"));
    assert_eq!(attrs.resource.as_deref(), Some("deletiontickets"));
    assert_eq!(attrs.namespace.as_deref(), Some("shop"));
    assert_eq!(attrs.name.as_deref(), Some("drop-db"));
    assert_eq!(
        attrs.subresource, None,
        "an empty subresource is left unset"
    );
}

#[tokio::test]
async fn a_refusal_keeps_the_api_servers_reason() {
    let server = fake_api_server(Script {
        status: SubjectAccessReviewStatus {
            allowed: false,
            denied: Some(true),
            reason: Some("policy says no".into()),
            ..Default::default()
        },
        delay: Duration::ZERO,
    })
    .await;
    let r = reviewer(&server, AccessReviewSettings::default());
    let answer = r.review(&approver_question()).await;
    assert_eq!(
        answer,
        Ok(AccessAnswer::NotAllowed {
            reason: "policy says no".into()
        })
    );
    assert_eq!(r.metrics.count(AccessReviewResult::NotAllowed), 1);
}

#[tokio::test]
async fn an_evaluation_error_without_a_decision_is_an_error_and_not_cached() {
    let server = fake_api_server(Script {
        status: SubjectAccessReviewStatus {
            allowed: false,
            evaluation_error: Some("webhook unreachable".into()),
            ..Default::default()
        },
        delay: Duration::ZERO,
    })
    .await;
    let r = reviewer(&server, AccessReviewSettings::default());
    let q = approver_question();
    assert_eq!(
        r.review(&q).await,
        Err(AccessReviewError::Evaluation("webhook unreachable".into()))
    );
    assert!(r.review(&q).await.is_err());
    assert_eq!(server.calls.load(Ordering::SeqCst), 2);
    assert_eq!(r.metrics.count(AccessReviewResult::Error), 2);
}

#[tokio::test]
async fn a_slow_api_server_is_a_timeout() {
    let mut script = allowed();
    script.delay = Duration::from_secs(5);
    let server = fake_api_server(script).await;
    let r = reviewer(
        &server,
        AccessReviewSettings {
            timeout: Duration::from_millis(200),
            ..Default::default()
        },
    );
    let started = Instant::now();
    let answer = r.review(&approver_question()).await;
    assert_eq!(
        answer,
        Err(AccessReviewError::Timeout(Duration::from_millis(200)))
    );
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identical_concurrent_questions_share_one_call() {
    let mut script = allowed();
    script.delay = Duration::from_millis(200);
    let server = fake_api_server(script).await;
    let r = Arc::new(reviewer(&server, AccessReviewSettings::default()));
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let r = r.clone();
            tokio::spawn(async move { r.review(&approver_question()).await })
        })
        .collect();
    for t in tasks {
        assert_eq!(t.await.unwrap(), Ok(AccessAnswer::Allowed));
    }
    assert_eq!(server.calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_unreachable_api_server_is_an_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let config = kube::Config::new(url.parse().unwrap());
    let client = kube::Client::try_from(config).unwrap();
    let r = AccessReviewer::new(
        client,
        AccessReviewSettings::default(),
        AccessReviewMetrics::default(),
    );
    assert!(matches!(
        r.review(&approver_question()).await,
        Err(AccessReviewError::Api(_))
    ));
}

#[test]
fn questions_that_differ_only_in_how_groups_split_have_different_keys() {
    let mut a = approver_question();
    a.groups = vec!["ab".into()];
    let mut b = approver_question();
    b.groups = vec!["a".into(), "b".into()];
    assert_ne!(key(&a), key(&b));
    assert_eq!(key(&a), key(&a.clone()));
}

#[test]
fn a_review_without_a_status_is_an_error() {
    let review = request(&approver_question());
    assert!(matches!(interpret(&review), Err(AccessReviewError::Api(_))));
}
