//! Serving-certificate rotation: new handshakes get the new certificate, while a keep-alive
//! connection opened before the rotation keeps working.

use crate::support::*;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use rustls_pki_types::ServerName;
use std::sync::Arc;
use std::time::{Duration, Instant};

type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

/// Opens one TLS connection; returns the server's leaf certificate and an HTTP/1.1 sender.
async fn connect(w: &Warrant) -> (Vec<u8>, Sender) {
    let mut cfg = client_config(&w.ca.cert_pem, Some(&w.client));
    cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
    let connector = tokio_rustls::TlsConnector::from(Arc::new(cfg));
    let tcp = tokio::net::TcpStream::connect(w.addr).await.unwrap();
    let tls = connector
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .unwrap();
    let leaf = tls.get_ref().1.peer_certificates().unwrap()[0].to_vec();
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
        .await
        .unwrap();
    tokio::spawn(conn);
    (leaf, sender)
}

async fn review(sender: &mut Sender) -> u16 {
    // Wait until the connection can take the next request; an error here means it was closed.
    sender.ready().await.unwrap();
    let req = hyper::Request::post("/authorize")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from_static(V1_REVIEW.as_bytes())))
        .unwrap();
    let resp = sender.send_request(req).await.unwrap();
    let code = resp.status().as_u16();
    let _ = resp.into_body().collect().await.unwrap();
    code
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn certificate_rotation_keeps_open_connections() {
    let w = Warrant::start(Options::default()).await;
    let (old_leaf, mut kept) = connect(&w).await;
    assert_eq!(review(&mut kept).await, 200);

    // Rotate: key first, then certificate (a half-done rotation must not break serving).
    let new = w.ca.server("warrant-rotated");
    replace_file(&w.path("tls.key"), &new.key_pem);
    replace_file(&w.path("tls.crt"), &new.cert_pem);

    let started = Instant::now();
    let new_leaf = loop {
        let (leaf, _) = connect(&w).await;
        if leaf != old_leaf {
            break leaf;
        }
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "new certificate not served within 2s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    eprintln!("rotated certificate served after {:?}", started.elapsed());
    let expected =
        rustls_pki_types::CertificateDer::from_pem_slice(new.cert_pem.as_bytes()).unwrap();
    assert_eq!(new_leaf, expected.to_vec());
    // The connection opened before the rotation is still alive and answering.
    assert!(!kept.is_closed());
    assert_eq!(review(&mut kept).await, 200);
    assert_eq!(review(&mut kept).await, 200);
    w.stop().await;
}

use rustls_pki_types::pem::PemObject;

/// A TLS connection to `w` offering only `alpn`, with the test client certificate.
async fn connect_alpn(
    w: &Warrant,
    alpn: &[u8],
) -> tokio_rustls::client::TlsStream<tokio::net::TcpStream> {
    let mut cfg = client_config(&w.ca.cert_pem, Some(&w.client));
    cfg.alpn_protocols = vec![alpn.to_vec()];
    let connector = tokio_rustls::TlsConnector::from(Arc::new(cfg));
    let tcp = tokio::net::TcpStream::connect(w.addr).await.unwrap();
    connector
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_headers_are_cut_off() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let w = Warrant::start(Options::default()).await;
    let mut tls = connect_alpn(&w, b"http/1.1").await;
    tls.write_all(b"POST /authorize HTTP/1.1\r\nHost: localhost\r\n")
        .await
        .unwrap();
    tls.flush().await.unwrap();
    let started = Instant::now();
    let mut buf = Vec::new();
    // The server must end the connection (with or without a 408) once the header timeout passes.
    let read = tokio::time::timeout(Duration::from_secs(5), tls.read_to_end(&mut buf)).await;
    assert!(read.is_ok(), "connection still open after 5s");
    let took = started.elapsed();
    assert!(
        took >= HEADER_READ_TIMEOUT - Duration::from_millis(50),
        "closed too early: {took:?}"
    );
    let text = String::from_utf8_lossy(&buf);
    assert!(
        text.is_empty() || text.starts_with("HTTP/1.1 408"),
        "{text}"
    );
    w.stop().await;
}

/// A client that finishes the handshake and then says nothing is closed after the header-read
/// timeout, whichever protocol it negotiated.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_connections_are_closed_after_the_header_timeout() {
    use tokio::io::AsyncReadExt;
    let w = Warrant::start(Options::default()).await;
    for alpn in [b"h2".to_vec(), b"http/1.1".to_vec()] {
        let mut tls = connect_alpn(&w, &alpn).await;
        let started = Instant::now();
        let mut buf = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(5), tls.read_to_end(&mut buf)).await;
        assert!(
            read.is_ok(),
            "{alpn:?}: silent connection still open after 5s"
        );
        let took = started.elapsed();
        assert!(
            took >= HEADER_READ_TIMEOUT - Duration::from_millis(50)
                && took < Duration::from_secs(3),
            "{alpn:?}: closed after {took:?}"
        );
    }
    // A partial HTTP/2 preface is no better than silence.
    let mut tls = connect_alpn(&w, b"h2").await;
    tokio::io::AsyncWriteExt::write_all(&mut tls, b"PRI * HTTP/2.0\r\n")
        .await
        .unwrap();
    let mut buf = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), tls.read_to_end(&mut buf)).await;
    assert!(read.is_ok(), "partial preface still open after 5s");
    w.stop().await;
}
