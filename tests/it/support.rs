//! Test PKI, an in-process warrant on a loopback port, and HTTPS clients.

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SanType,
};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use warrant::clock::SystemClock;
use warrant::file_watch::WatchTiming;
use warrant::reload::LiveChain;
use warrant::server::caller::{CallerAuth, TokenAuth};
use warrant::server::tls::{ReloadingTls, TlsFiles};
use warrant::server::{AppState, Server, ServerOptions};
use warrant::telemetry::audit::{AuditSink, AuditTarget};
use warrant::telemetry::metrics::Metrics;

pub const ALLOW_ALL: &str = "apiVersion: warrant.dev/v1alpha1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: AlwaysAllow\n  name: allow-all\n";
pub const DENY_ALL: &str = "apiVersion: warrant.dev/v1alpha1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: AlwaysDeny\n  name: deny-all\n";

pub const V1_REVIEW: &str = r#"{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","metadata":{},
 "spec":{"user":"jane","groups":["dev"],"resourceAttributes":{"namespace":"team-a","verb":"get","resource":"pods"}},"status":{"allowed":false}}"#;
pub const V1BETA1_REVIEW: &str = r#"{"apiVersion":"authorization.k8s.io/v1beta1","kind":"SubjectAccessReview",
 "spec":{"user":"bob","group":["ops"],"nonResourceAttributes":{"path":"/healthz","verb":"get"}}}"#;

/// A CA that can issue server and client certificates.
pub struct Ca {
    pub cert_pem: String,
    issuer: Issuer<'static, KeyPair>,
}

/// A certificate and its key, in PEM.
#[derive(Clone)]
pub struct Leaf {
    pub cert_pem: String,
    pub key_pem: String,
}

impl Ca {
    pub fn new(name: &str) -> Self {
        let key = KeyPair::generate().unwrap();
        let mut p = CertificateParams::default();
        p.distinguished_name.push(DnType::CommonName, name);
        p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        p.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let cert = p.self_signed(&key).unwrap();
        Self {
            cert_pem: cert.pem(),
            issuer: Issuer::new(p, key),
        }
    }

    pub fn server(&self, cn: &str) -> Leaf {
        let key = KeyPair::generate().unwrap();
        let mut p = CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
        p.subject_alt_names
            .push(SanType::IpAddress("127.0.0.1".parse().unwrap()));
        p.distinguished_name.push(DnType::CommonName, cn);
        p.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let cert = p.signed_by(&key, &self.issuer).unwrap();
        Leaf {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        }
    }

    pub fn client(&self, cn: &str) -> Leaf {
        let key = KeyPair::generate().unwrap();
        let mut p = CertificateParams::default();
        p.distinguished_name.push(DnType::CommonName, cn);
        p.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        let cert = p.signed_by(&key, &self.issuer).unwrap();
        Leaf {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        }
    }
}

/// How to start a test server.
pub struct Options {
    pub config: Option<String>,
    pub client_ca: bool,
    pub tokens: Option<&'static str>,
    pub audit: bool,
    /// `--audit-redact-extra`: extra keys left out of audit records.
    pub audit_redact_extra: Vec<String>,
    /// The first backoff delay of downstream webhook retries (upstream's 500 ms when `None`).
    pub webhook_backoff: Option<Duration>,
    /// The review deadline (5 s when `None`).
    pub review_timeout: Option<Duration>,
    /// The connection cap and idle timeout (the server's defaults when `None`).
    pub max_connections: Option<usize>,
    /// The request-body budget in bytes (the server's default when `None`).
    pub body_budget: Option<usize>,
    pub idle_timeout: Option<Duration>,
    /// How long a connection may stay unauthenticated (the server's default when `None`).
    pub unauthenticated_timeout: Option<Duration>,
    /// The validation ring's cluster view (`NoCluster` when `None`).
    pub cluster: Option<Arc<dyn warrant::object::ClusterView>>,
    /// Who may do what (`NoAccessReview` when `None`).
    pub access_review: Option<Arc<dyn warrant::object::AccessReview>>,
    /// `--authorization-details`: answers carry `status.authorizationDetails`.
    pub authorization_details: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            config: Some(ALLOW_ALL.to_owned()),
            client_ca: true,
            tokens: None,
            audit: false,
            audit_redact_extra: Vec::new(),
            webhook_backoff: None,
            review_timeout: None,
            cluster: None,
            access_review: None,
            max_connections: None,
            body_budget: None,
            idle_timeout: None,
            unauthenticated_timeout: None,
            authorization_details: false,
        }
    }
}

/// A running in-process warrant.
pub struct Warrant {
    pub addr: SocketAddr,
    pub plain_addr: SocketAddr,
    pub dir: tempfile::TempDir,
    pub ca: Ca,
    pub client: Leaf,
    pub live: Arc<LiveChain>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

/// The header-read timeout of test servers.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_millis(500);

pub fn fast_timing() -> WatchTiming {
    WatchTiming {
        debounce: Duration::from_millis(50),
        poll: Duration::from_secs(30),
    }
}

impl Warrant {
    pub async fn start(opts: Options) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let ca = Ca::new("test-ca");
        let server = ca.server("warrant");
        let client = ca.client("kube-apiserver");
        std::fs::write(dir.path().join("tls.crt"), &server.cert_pem).unwrap();
        std::fs::write(dir.path().join("tls.key"), &server.key_pem).unwrap();
        std::fs::write(dir.path().join("ca.crt"), &ca.cert_pem).unwrap();
        let config_path = dir.path().join("config.yaml");
        if let Some(c) = &opts.config {
            std::fs::write(&config_path, c).unwrap();
        }
        let metrics = Arc::new(Metrics::new());
        let live = Arc::new(match opts.webhook_backoff {
            Some(base) => LiveChain::with_webhook_backoff_base(base),
            None => LiveChain::default(),
        });
        tokio::spawn(
            live.clone()
                .watch(config_path.clone(), fast_timing(), metrics.clone()),
        );
        let files = TlsFiles {
            cert: dir.path().join("tls.crt"),
            key: dir.path().join("tls.key"),
            client_ca: opts.client_ca.then(|| dir.path().join("ca.crt")),
        };
        let tls = Arc::new(ReloadingTls::new(files).unwrap());
        tokio::spawn(tls.clone().watch(fast_timing()));
        let tokens = opts
            .tokens
            .map(|t| TokenAuth::parse("tokens.csv", t).unwrap());
        let audit_target = if opts.audit {
            AuditTarget::File(dir.path().join("audit.log"))
        } else {
            AuditTarget::Disabled
        };
        let state = Arc::new(AppState {
            live: live.clone(),
            metrics: metrics.clone(),
            audit: Arc::new(
                AuditSink::open(&audit_target, metrics.clone())
                    .unwrap()
                    .with_redacted_extra(opts.audit_redact_extra.clone()),
            ),
            clock: Arc::new(SystemClock),
            caller_auth: CallerAuth {
                client_certificates: opts.client_ca,
                tokens,
            },
            review_timeout: opts.review_timeout.unwrap_or(Duration::from_secs(5)),
            cluster: opts
                .cluster
                .clone()
                .unwrap_or_else(|| Arc::new(warrant::object::NoCluster)),
            follow_ups: Default::default(),
            access_review: opts
                .access_review
                .clone()
                .unwrap_or_else(|| Arc::new(warrant::object::NoAccessReview)),
            pod_security: None,
            authorization_details: opts.authorization_details,
            body_budget: opts
                .body_budget
                .map(warrant::server::body::BodyBudget::new)
                .unwrap_or_default(),
        });
        let mut options = ServerOptions::new("127.0.0.1:0".parse().unwrap());
        options.shutdown_grace = Duration::from_secs(5);
        options.header_read_timeout = HEADER_READ_TIMEOUT;
        options.insecure_listen = Some("127.0.0.1:0".parse().unwrap());
        if let Some(n) = opts.max_connections {
            options.max_connections = n;
        }
        if let Some(d) = opts.idle_timeout {
            options.idle_timeout = d;
        }
        if let Some(d) = opts.unauthenticated_timeout {
            options.unauthenticated_timeout = d;
        }
        let server = Server::bind(options, tls, state).await.unwrap();
        let addr = server.local_addr();
        let plain_addr = server.insecure_addr().unwrap();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(server.run(async {
            let _ = rx.await;
        }));
        let w = Self {
            addr,
            plain_addr,
            dir,
            ca,
            client,
            live,
            shutdown: Some(tx),
            task: Some(task),
        };
        if opts.config.is_some() {
            w.wait_ready().await;
        }
        w
    }

    pub fn config_path(&self) -> PathBuf {
        self.dir.path().join("config.yaml")
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}{path}", self.addr.port())
    }

    pub async fn wait_ready(&self) {
        for _ in 0..200 {
            if self.live.is_ready() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("warrant did not become ready");
    }

    /// A client that trusts the test CA and presents the good client certificate.
    pub fn client(&self) -> reqwest::Client {
        client(&self.ca.cert_pem, Some(&self.client))
    }

    /// A client that trusts the test CA and presents no certificate.
    pub fn anonymous_client(&self) -> reqwest::Client {
        client(&self.ca.cert_pem, None)
    }

    /// Signals shutdown without waiting for the drain.
    pub fn begin_shutdown(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }

    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.task.take() {
            tokio::time::timeout(Duration::from_secs(10), t)
                .await
                .unwrap()
                .unwrap();
        }
    }
}

pub fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

pub fn client_config(ca_pem: &str, leaf: Option<&Leaf>) -> rustls::ClientConfig {
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(c.unwrap()).unwrap();
    }
    let b = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots);
    let mut cfg = match leaf {
        Some(l) => {
            let chain: Vec<CertificateDer<'static>> =
                CertificateDer::pem_slice_iter(l.cert_pem.as_bytes())
                    .collect::<Result<_, _>>()
                    .unwrap();
            let key = PrivateKeyDer::from_pem_slice(l.key_pem.as_bytes()).unwrap();
            b.with_client_auth_cert(chain, key).unwrap()
        }
        None => b.with_no_client_auth(),
    };
    cfg.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    cfg
}

pub fn client(ca_pem: &str, leaf: Option<&Leaf>) -> reqwest::Client {
    reqwest::Client::builder()
        .tls_backend_preconfigured(client_config(ca_pem, leaf))
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

pub async fn post_review(
    client: &reqwest::Client,
    url: &str,
    body: &str,
) -> (u16, serde_json::Value) {
    let r = client
        .post(url)
        .header("Content-Type", "application/json")
        .body(body.to_owned())
        .send()
        .await
        .unwrap();
    let code = r.status().as_u16();
    let v = r.json().await.unwrap_or(serde_json::Value::Null);
    (code, v)
}

/// Writes a file by rename, as editors and kubectl cp do.
pub fn replace_file(path: &Path, contents: &str) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, contents).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// The `/metrics` text, fetched with `c`.
pub async fn metrics_text(c: &reqwest::Client, w: &Warrant) -> String {
    c.get(w.url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

/// The warrant binary cargo built for these tests.
pub const BIN: &str = env!("CARGO_BIN_EXE_warrant");

/// A path inside the repository.
pub fn repo(path: &str) -> String {
    format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))
}

/// Runs the warrant binary to completion: exit code, stdout, stderr.
pub fn run_bin(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(BIN).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
