//! The benchmark's floor: the least a SubjectAccessReview webhook server can do on warrant's
//! stack. It accepts TLS with rustls (ring, TLS 1.3 and 1.2, a client certificate verified
//! when one is presented), serves HTTP/2 and HTTP/1.1 with hyper on a multi-threaded tokio
//! runtime, with warrant's HTTP/2 settings (250 streams, 64 KiB stream and 1 MiB connection
//! windows), checks the caller (a verified client certificate or the one bearer token), reads
//! the whole body and answers one fixed SubjectAccessReview. No decoding, no policy, no
//! metrics, no audit: what warrant spends beyond this is warrant's own cost per review.
//! `bench/run.sh` builds it (`cargo build --release --example sar_floor`) and runs it beside
//! warrant; the ratio of their CPU per review is the `warrant/floor` line.
//!
//!     sar_floor --listen 127.0.0.1:8443 --tls-cert-file C --tls-private-key-file K \
//!               --client-ca-file CA [--token TOKEN]

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode, header};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use rustls::ServerConfig;
use rustls::server::WebPkiClientVerifier;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::convert::Infallible;
use std::error::Error;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

/// The one answer.
const ANSWER: &[u8] = br#"{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","status":{"allowed":true,"reason":"floor"}}"#;

/// The largest body read, as warrant's default request body limit.
const BODY_LIMIT: usize = 3 * 1024 * 1024;

/// Command-line arguments.
struct Args {
    listen: SocketAddr,
    cert: String,
    key: String,
    client_ca: String,
    token: Option<String>,
}

fn parse_args() -> Result<Args, Box<dyn Error>> {
    let mut listen = None;
    let (mut cert, mut key, mut client_ca, mut token) = (None, None, None, None);
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--listen" => listen = Some(value.parse()?),
            "--tls-cert-file" => cert = Some(value),
            "--tls-private-key-file" => key = Some(value),
            "--client-ca-file" => client_ca = Some(value),
            "--token" => token = Some(value),
            other => return Err(format!("unknown flag {other}").into()),
        }
    }
    let usage = "usage: sar_floor --listen ADDR --tls-cert-file C --tls-private-key-file K --client-ca-file CA [--token T]";
    Ok(Args {
        listen: listen.ok_or(usage)?,
        cert: cert.ok_or(usage)?,
        key: key.ok_or(usage)?,
        client_ca: client_ca.ok_or(usage)?,
        token,
    })
}

/// warrant's TLS settings: ring, TLS 1.3 and 1.2, an optional verified client certificate, ALPN
/// h2 then http/1.1.
fn tls_config(args: &Args) -> Result<ServerConfig, Box<dyn Error>> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let chain = CertificateDer::pem_file_iter(&args.cert)?.collect::<Result<Vec<_>, _>>()?;
    let key = PrivateKeyDer::from_pem_file(&args.key)?;
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(&args.client_ca)? {
        roots.add(cert?)?;
    }
    let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .allow_unauthenticated()
        .build()?;
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])?
        .with_client_cert_verifier(verifier)
        .with_single_cert(chain, key)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

/// warrant's HTTP/1.1 and HTTP/2 settings.
fn http_builder() -> auto::Builder<TokioExecutor> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(Duration::from_secs(10))
        .keep_alive(true);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(250)
        .initial_stream_window_size(64 * 1024)
        .initial_connection_window_size(1024 * 1024)
        .keep_alive_interval(Some(Duration::from_secs(30)));
    builder
}

fn reply(status: StatusCode, body: &'static [u8]) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    response
}

/// Checks the caller, reads the whole body and answers.
async fn answer(
    request: Request<Incoming>,
    certified: bool,
    token: Option<Arc<str>>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let bearer = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    let known = matches!((bearer, token.as_deref()), (Some(b), Some(t)) if b == t);
    if !certified && !known {
        return Ok(reply(StatusCode::UNAUTHORIZED, b"{}"));
    }
    let body = Limited::new(request.into_body(), BODY_LIMIT)
        .collect()
        .await;
    match body.map(|b| b.to_bytes()) {
        Ok(bytes) if !bytes.is_empty() => Ok(reply(StatusCode::OK, ANSWER)),
        _ => Ok(reply(StatusCode::BAD_REQUEST, b"{}")),
    }
}

async fn serve(args: Args) -> Result<(), Box<dyn Error>> {
    let acceptor = TlsAcceptor::from(Arc::new(tls_config(&args)?));
    let listener = TcpListener::bind(args.listen).await?;
    let builder = Arc::new(http_builder());
    let token: Option<Arc<str>> = args.token.map(Arc::from);
    loop {
        let (tcp, _) = listener.accept().await?;
        let _ = tcp.set_nodelay(true);
        let (acceptor, builder, token) = (acceptor.clone(), builder.clone(), token.clone());
        tokio::spawn(async move {
            let Ok(Ok(tls)) =
                tokio::time::timeout(Duration::from_secs(10), acceptor.accept(tcp)).await
            else {
                return;
            };
            let certified = tls.get_ref().1.peer_certificates().is_some();
            let service = hyper::service::service_fn(move |request| {
                answer(request, certified, token.clone())
            });
            let _ = builder.serve_connection(TokioIo::new(tls), service).await;
        });
    }
}

fn main() -> Result<(), Box<dyn Error>> {
    let args = parse_args()?;
    // A subscriber that wants nothing, as warrant installs one that wants no per-request span:
    // with none at all, tracing hands every span of h2 and hyper to the `log` crate instead,
    // a cost per request warrant does not pay.
    tracing::subscriber::set_global_default(tracing::subscriber::NoSubscriber::default())?;
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(serve(args))
}
