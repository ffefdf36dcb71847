//! Serving-certificate rotation under load: the key and certificate files are rewritten while
//! reviews flow on long-lived and on fresh connections; new handshakes get the new certificate
//! and no review fails.

use super::load::{Answer, Connection, Load, unexpected};
use super::served::Served;
use crate::support::{V1_REVIEW, client_config, replace_file};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName};
use std::sync::Arc;
use std::time::{Duration, Instant};

const ROTATIONS: usize = 5;

/// The certificate a new TLS handshake gets.
async fn presented(s: &Served) -> Vec<u8> {
    let connector =
        tokio_rustls::TlsConnector::from(Arc::new(client_config(&s.ca.cert_pem, Some(&s.client))));
    let tcp = tokio::net::TcpStream::connect(s.addr).await.unwrap();
    let name = ServerName::IpAddress(s.addr.ip().into());
    let tls = connector.connect(name, tcp).await.unwrap();
    tls.get_ref().1.peer_certificates().unwrap()[0].to_vec()
}

fn der(pem: &str) -> Vec<u8> {
    CertificateDer::from_pem_slice(pem.as_bytes())
        .unwrap()
        .to_vec()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serving_certificate_rotation_under_load_fails_no_review() {
    let s = Served::start(crate::support::ALLOW_ALL, &[]);
    let h2 = s.client();
    let fresh = Connection::Fresh {
        ca_pem: s.ca.cert_pem.clone(),
        leaf: s.client.clone(),
    };
    let load = Load::start(
        vec![
            Connection::Shared(h2.clone()),
            Connection::Shared(h2),
            fresh.clone(),
            fresh,
        ],
        s.url("/authorize"),
        V1_REVIEW.to_owned(),
    );
    for k in 0..ROTATIONS {
        let leaf = s.ca.server(&format!("warrant-rotated-{k}"));
        // The key first: until the certificate follows, the pair does not match and the
        // current one stays in use.
        replace_file(&s.path("tls.key"), &leaf.key_pem);
        replace_file(&s.path("tls.crt"), &leaf.cert_pem);
        let want = der(&leaf.cert_pem);
        let started = Instant::now();
        while presented(&s).await != want {
            assert!(
                started.elapsed() < Duration::from_secs(5),
                "rotation {k}: new handshakes still get the old certificate"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        eprintln!("rotation {k} served after {:?}", started.elapsed());
    }
    let outcomes = load.finish().await;
    let bad = unexpected(&outcomes, |a| *a == Answer::Allowed);
    assert!(bad.is_empty(), "failed reviews: {bad:#?}");
    let reloaded = s
        .log()
        .iter()
        .filter(|l| l.contains("serving certificate reloaded"))
        .count();
    assert!(reloaded >= ROTATIONS, "{reloaded} reloads logged");
    eprintln!(
        "{ROTATIONS} rotations under load: {} reviews, 0 failed",
        outcomes.len()
    );
    assert!(outcomes.len() >= 100, "too little load: {}", outcomes.len());
}
