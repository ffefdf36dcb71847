//! SIGTERM under load: reviews held in flight by a slow downstream webhook are all answered,
//! over HTTP/2 and HTTP/1.1, and the process exits within `--shutdown-grace-period`.

use super::load::{Answer, ask, http1_client};
use super::served::Served;
use crate::webhook::fault::{Behaviour, FaultServer};
use crate::webhook::{Kube, review, write_kubeconfig};
use std::time::{Duration, Instant};

const IN_FLIGHT_H2: usize = 16;
const IN_FLIGHT_H1: usize = 4;
const DOWNSTREAM_DELAY: Duration = Duration::from_millis(2500);
const GRACE: Duration = Duration::from_secs(5);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_under_load_answers_every_in_flight_review_and_exits_within_grace() {
    let fault = FaultServer::start(None).await;
    fault.always(Behaviour::status(true, false, "slow yes").after(DOWNSTREAM_DELAY));
    let dir = tempfile::tempdir().unwrap();
    let kc = write_kubeconfig(
        dir.path(),
        "kc.yaml",
        &Kube::new(fault.url("/"), &fault.ca.cert_pem),
    );
    let config = format!(
        "apiVersion: warrant.dev/v1alpha1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: Webhook\n  name: slow\n  webhook:\n    timeout: 8s\n    subjectAccessReviewVersion: v1\n    failurePolicy: NoOpinion\n    connectionInfo:\n      type: KubeConfigFile\n      kubeConfigFile: {}\n",
        kc.display()
    );
    let mut s = Served::start(&config, &["--shutdown-grace-period", "5s"]);
    let h2 = s.client();
    let mut reviews = Vec::new();
    for i in 0..IN_FLIGHT_H2 + IN_FLIGHT_H1 {
        let c = if i < IN_FLIGHT_H2 {
            h2.clone()
        } else {
            http1_client(&s.ca.cert_pem, &s.client)
        };
        let url = s.url("/authorize");
        let body = review(&format!("user-{i}"), "team-a");
        reviews.push(tokio::spawn(async move { ask(&c, &url, &body).await }));
    }
    // Every review has reached the downstream: all are in flight inside warrant.
    let started = Instant::now();
    while fault.calls() < IN_FLIGHT_H2 + IN_FLIGHT_H1 {
        assert!(
            started.elapsed() < DOWNSTREAM_DELAY,
            "only {} reviews in flight",
            fault.calls()
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let signalled = Instant::now();
    s.signal("-TERM");
    for r in reviews {
        assert_eq!(r.await.unwrap(), Answer::Allowed);
    }
    let status = tokio::task::block_in_place(|| s.wait_exit(GRACE + Duration::from_secs(2)));
    let took = signalled.elapsed();
    let status = status.unwrap_or_else(|| panic!("no exit {took:?} after SIGTERM"));
    assert!(status.success(), "{status}: {:#?}", s.log());
    assert!(took < GRACE, "exit took {took:?}, past the grace period");
    assert_eq!(fault.calls(), IN_FLIGHT_H2 + IN_FLIGHT_H1, "no retries");
    eprintln!(
        "SIGTERM with {} reviews in flight: all answered, exit after {took:?}",
        IN_FLIGHT_H2 + IN_FLIGHT_H1
    );
}
