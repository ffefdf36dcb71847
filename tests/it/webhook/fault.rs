//! A fault-injecting downstream webhook over real TLS: a minimal HTTP/1.1 server whose answer to
//! each request is scripted (status, headers, body, delay), or that hangs or resets the
//! connection. It counts requests and keeps their bodies and heads, so tests assert attempts.

use crate::support::{Ca, Leaf, provider};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// What the server does with one request.
#[derive(Clone, Debug)]
pub enum Behaviour {
    /// Answer, after `delay`.
    Respond {
        status: u16,
        headers: Vec<(&'static str, String)>,
        body: String,
        delay: Duration,
    },
    /// Read the request and never answer (for at most 30 s).
    Hang,
    /// Read the request and reset the connection (RST).
    Reset,
}

impl Behaviour {
    /// A JSON answer.
    pub fn json(status: u16, body: &str) -> Self {
        Behaviour::Respond {
            status,
            headers: vec![("Content-Type", "application/json".into())],
            body: body.into(),
            delay: Duration::ZERO,
        }
    }

    /// A v1 review status answer.
    pub fn status(allowed: bool, denied: bool, reason: &str) -> Self {
        Self::json(
            200,
            &review_answer("authorization.k8s.io/v1", allowed, denied, reason),
        )
    }

    /// A plain-text error answer.
    pub fn text(status: u16, body: &str) -> Self {
        Behaviour::Respond {
            status,
            headers: vec![("Content-Type", "text/plain".into())],
            body: body.into(),
            delay: Duration::ZERO,
        }
    }

    /// The same, with one more header.
    pub fn with_header(mut self, name: &'static str, value: &str) -> Self {
        if let Behaviour::Respond { headers, .. } = &mut self {
            headers.push((name, value.into()));
        }
        self
    }

    /// The same, after `d`.
    pub fn after(mut self, d: Duration) -> Self {
        if let Behaviour::Respond { delay, .. } = &mut self {
            *delay = d;
        }
        self
    }
}

/// A review answer body.
pub fn review_answer(api_version: &str, allowed: bool, denied: bool, reason: &str) -> String {
    serde_json::json!({
        "apiVersion": api_version,
        "kind": "SubjectAccessReview",
        "status": {"allowed": allowed, "denied": denied, "reason": reason}
    })
    .to_string()
}

/// One request as received.
#[derive(Clone, Debug)]
pub struct Received {
    pub head: String,
    pub body: String,
    /// The body's bytes as sent (a gzip body is not text).
    pub bytes: Vec<u8>,
}

#[derive(Default)]
struct Script {
    queue: VecDeque<Behaviour>,
    default: Option<Behaviour>,
}

/// A running fault server.
pub struct FaultServer {
    pub addr: SocketAddr,
    pub ca: Ca,
    calls: Arc<AtomicUsize>,
    script: Arc<Mutex<Script>>,
    received: Arc<Mutex<Vec<Received>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FaultServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FaultServer {
    /// Starts a server with a certificate from its own CA; `client_ca` requires client
    /// certificates issued by that CA.
    pub async fn start(client_ca: Option<&Ca>) -> Self {
        let ca = Ca::new("fault-ca");
        let leaf = ca.server("fault");
        let config = Arc::new(server_config(&leaf, client_ca));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let calls = Arc::new(AtomicUsize::new(0));
        let script = Arc::new(Mutex::new(Script {
            queue: VecDeque::new(),
            default: Some(Behaviour::status(true, false, "fault server allows")),
        }));
        let received = Arc::new(Mutex::new(Vec::new()));
        let (c, s, r) = (calls.clone(), script.clone(), received.clone());
        let task = tokio::spawn(async move {
            let acceptor = tokio_rustls::TlsAcceptor::from(config);
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    return;
                };
                let (acceptor, c, s, r) = (acceptor.clone(), c.clone(), s.clone(), r.clone());
                tokio::spawn(async move {
                    let _ = tokio::time::timeout(
                        Duration::from_secs(40),
                        serve_connection(acceptor, tcp, c, s, r),
                    )
                    .await;
                });
            }
        });
        Self {
            addr,
            ca,
            calls,
            script,
            received,
            task,
        }
    }

    /// The URL to call.
    pub fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}{path}", self.addr.port())
    }

    /// Every later request gets `b`.
    pub fn always(&self, b: Behaviour) {
        let mut s = self.script.lock().unwrap();
        s.queue.clear();
        s.default = Some(b);
    }

    /// The next requests get `bs`, in order, then the default.
    pub fn then(&self, bs: Vec<Behaviour>) {
        self.script.lock().unwrap().queue.extend(bs);
    }

    /// Requests received so far.
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    /// Resets the request count and log; returns the count before.
    pub fn take_calls(&self) -> usize {
        self.received.lock().unwrap().clear();
        self.calls.swap(0, Ordering::SeqCst)
    }

    /// The requests received so far.
    pub fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }
}

fn server_config(leaf: &Leaf, client_ca: Option<&Ca>) -> rustls::ServerConfig {
    let chain: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(leaf.cert_pem.as_bytes())
            .collect::<Result<_, _>>()
            .unwrap();
    let key = PrivateKeyDer::from_pem_slice(leaf.key_pem.as_bytes()).unwrap();
    let b = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .unwrap();
    let b = match client_ca {
        Some(ca) => {
            let mut roots = rustls::RootCertStore::empty();
            for c in CertificateDer::pem_slice_iter(ca.cert_pem.as_bytes()) {
                roots.add(c.unwrap()).unwrap();
            }
            let v = rustls::server::WebPkiClientVerifier::builder_with_provider(
                Arc::new(roots),
                provider(),
            )
            .build()
            .unwrap();
            b.with_client_cert_verifier(v)
        }
        None => b.with_no_client_auth(),
    };
    let mut cfg = b.with_single_cert(chain, key).unwrap();
    cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
    cfg
}

async fn serve_connection(
    acceptor: tokio_rustls::TlsAcceptor,
    tcp: tokio::net::TcpStream,
    calls: Arc<AtomicUsize>,
    script: Arc<Mutex<Script>>,
    received: Arc<Mutex<Vec<Received>>>,
) {
    let Ok(mut tls) = acceptor.accept(tcp).await else {
        return;
    };
    let mut buf = Vec::new();
    loop {
        // Read one request head and body.
        let head_end = loop {
            if let Some(i) = find(&buf, b"\r\n\r\n") {
                break i + 4;
            }
            let mut chunk = [0u8; 4096];
            match tls.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
        let len: usize = head
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("content-length")
                    .then(|| v.trim().parse().ok())?
            })
            .unwrap_or(0);
        while buf.len() < head_end + len {
            let mut chunk = [0u8; 4096];
            match tls.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        let bytes = buf[head_end..head_end + len].to_vec();
        let body = String::from_utf8_lossy(&bytes).to_string();
        buf.drain(..head_end + len);
        received
            .lock()
            .unwrap()
            .push(Received { head, body, bytes });
        calls.fetch_add(1, Ordering::SeqCst);
        let behaviour = {
            let mut s = script.lock().unwrap();
            s.queue.pop_front().or_else(|| s.default.clone())
        };
        match behaviour {
            None | Some(Behaviour::Hang) => {
                tokio::time::sleep(Duration::from_secs(30)).await;
                return;
            }
            Some(Behaviour::Reset) => {
                let _ = tls.get_ref().0.set_zero_linger();
                return;
            }
            Some(Behaviour::Respond {
                status,
                headers,
                body,
                delay,
            }) => {
                tokio::time::sleep(delay).await;
                let mut out = format!(
                    "HTTP/1.1 {status} Scripted\r\nContent-Length: {}\r\n",
                    body.len()
                );
                for (k, v) in headers {
                    out.push_str(&format!("{k}: {v}\r\n"));
                }
                out.push_str("\r\n");
                out.push_str(&body);
                if tls.write_all(out.as_bytes()).await.is_err() || tls.flush().await.is_err() {
                    return;
                }
            }
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}
