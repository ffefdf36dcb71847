//! A downstream's kubeconfig to a ready [`Connection`]: the exact server URL, a rustls client
//! configuration on ring, and the credentials to send.
//!
//! The file is read with the `kube` crate's config model (`Kubeconfig::read_from`, which resolves
//! relative paths against the file's directory, and `Config::from_custom_kubeconfig`, which
//! selects `current-context`, its cluster and user, and loads the CA the way client-go's
//! `LoadKubeconfig` does: no current context, an unknown context or cluster, or an unreadable CA
//! are load errors). client-go's conflicts are checked here (`tools/clientcmd/validation.go`):
//! a file and inline form of the CA, client certificate or key together, or a CA with
//! `insecure-skip-tls-verify`. `exec` and `auth-provider` users and impersonation are refused:
//! warrant runs no plugins. The rustls configuration is assembled here and the webhook call goes
//! through reqwest, never `kube::Client` (which would append a path to the server URL).

use base64::Engine;
use kube::config::{Config as KubeConfig, KubeConfigOptions, Kubeconfig};
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, RootCertStore, SignatureScheme};
use secrecy::ExposeSecret;
use sha2::{Digest, Sha256};
use std::fmt;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};
use thiserror::Error;

/// How often a `tokenFile` is re-read (client-go's `cachingTokenSource` period).
pub const TOKEN_FILE_REFRESH: Duration = Duration::from_secs(60);

/// Why a kubeconfig cannot be used. Names the file.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("kubeconfig {}: {message}", path.display())]
pub struct KubeconfigError {
    /// The kubeconfig.
    pub path: PathBuf,
    /// What is wrong.
    pub message: String,
}

/// A bearer token, from the kubeconfig or re-read from a file. Never printed.
pub enum TokenSource {
    /// `token:` in the kubeconfig.
    Static(String),
    /// `tokenFile:`, re-read every [`TOKEN_FILE_REFRESH`]; a failed re-read keeps the last token.
    File {
        /// The token file.
        path: PathBuf,
        /// The last token read and when.
        cached: Mutex<(String, Instant)>,
    },
}

impl fmt::Debug for TokenSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenSource::Static(_) => f.write_str("Static(<redacted>)"),
            TokenSource::File { path, .. } => write!(f, "File({}, <redacted>)", path.display()),
        }
    }
}

fn read_token(path: &Path) -> std::io::Result<String> {
    Ok(std::fs::read_to_string(path)?.trim().to_owned())
}

impl TokenSource {
    /// The token to send now.
    pub fn token(&self) -> String {
        match self {
            TokenSource::Static(t) => t.clone(),
            TokenSource::File { path, cached } => {
                let mut c = cached.lock().unwrap_or_else(|p| p.into_inner());
                if c.1.elapsed() >= TOKEN_FILE_REFRESH {
                    match read_token(path) {
                        Ok(t) => *c = (t, Instant::now()),
                        Err(e) => {
                            tracing::warn!(file = %path.display(), error = %e, "cannot re-read the webhook token file; keeping the last token");
                            c.1 = Instant::now();
                        }
                    }
                }
                c.0.clone()
            }
        }
    }
}

/// The credentials sent with every call.
#[derive(Debug)]
pub enum Credentials {
    /// Nothing beyond a client certificate, if any.
    None,
    /// `Authorization: Bearer <token>`.
    Bearer(TokenSource),
    /// `Authorization: Basic ...` from `username` / `password`.
    Basic(Redacted),
}

/// A header value that does not print.
pub struct Redacted(pub String);

impl fmt::Debug for Redacted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// Everything needed to call one downstream.
#[derive(Debug)]
pub struct Connection {
    /// The server URL, used exactly as written.
    pub url: reqwest::Url,
    /// TLS: roots, client certificate, server name override, ALPN h2 + http/1.1.
    pub tls: rustls::ClientConfig,
    /// Credentials.
    pub credentials: Credentials,
    /// `proxy-url` of the cluster, if set.
    pub proxy: Option<String>,
    /// sha256 of the kubeconfig and every file it pulled in: a change resets the cache.
    pub digest: [u8; 32],
}

/// Polls a future that never waits. kube's loader is `async` in signature only: it reads files
/// with blocking calls and awaits nothing.
fn ready_now<F: Future>(f: F) -> Option<F::Output> {
    let mut f = std::pin::pin!(f);
    match f.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(v) => Some(v),
        Poll::Pending => None,
    }
}

fn nonempty(s: &Option<String>) -> Option<&str> {
    s.as_deref().filter(|s| !s.is_empty())
}

/// Loads a kubeconfig for a downstream webhook.
pub fn load(path: &Path, provider: &Arc<CryptoProvider>) -> Result<Connection, KubeconfigError> {
    let err = |message: String| KubeconfigError {
        path: path.to_owned(),
        message,
    };
    let mut digest = Sha256::new();
    let raw = std::fs::read(path).map_err(|e| err(format!("cannot read: {e}")))?;
    digest.update(&raw);
    let model = Kubeconfig::read_from(path).map_err(|e| err(e.to_string()))?;
    let resolved = ready_now(KubeConfig::from_custom_kubeconfig(
        model.clone(),
        &KubeConfigOptions::default(),
    ))
    .ok_or_else(|| err("kubeconfig loading did not complete".into()))?
    .map_err(|e| err(e.to_string()))?;

    // The same selection kube made, for the fields its resolved Config does not carry.
    let context_name = model.current_context.clone().unwrap_or_default();
    let context = model
        .contexts
        .iter()
        .find(|c| c.name == context_name)
        .and_then(|c| c.context.clone())
        .ok_or_else(|| err(format!("context {context_name:?} not found")))?;
    let cluster = model
        .clusters
        .iter()
        .find(|c| c.name == context.cluster)
        .and_then(|c| c.cluster.clone())
        .ok_or_else(|| err(format!("cluster {:?} not found", context.cluster)))?;
    let user_name = context.user.clone().unwrap_or_default();
    let user = &resolved.auth_info;

    // client-go's conflicts.
    if nonempty(&cluster.certificate_authority).is_some()
        && nonempty(&cluster.certificate_authority_data).is_some()
    {
        return Err(err(format!(
            "certificate-authority-data and certificate-authority are both specified for cluster {:?}",
            context.cluster
        )));
    }
    let insecure = cluster.insecure_skip_tls_verify.unwrap_or(false);
    if insecure && resolved.root_cert.is_some() {
        return Err(err(
            "specifying a root certificates file with the insecure flag is not allowed".into(),
        ));
    }
    if nonempty(&user.client_certificate).is_some()
        && nonempty(&user.client_certificate_data).is_some()
    {
        return Err(err(format!(
            "client-cert-data and client-cert are both specified for user {user_name:?}"
        )));
    }
    if nonempty(&user.client_key).is_some() && user.client_key_data.is_some() {
        return Err(err(format!(
            "client-key-data and client-key are both specified for user {user_name:?}"
        )));
    }
    if user.exec.is_some() {
        return Err(err(format!(
            "user {user_name:?} uses an exec credential plugin, which warrant does not run; use client-certificate, token or tokenFile"
        )));
    }
    if user.auth_provider.is_some() {
        return Err(err(format!(
            "user {user_name:?} uses an auth-provider, which warrant does not support; use client-certificate, token or tokenFile"
        )));
    }
    if user.impersonate.is_some() || user.impersonate_groups.is_some() {
        return Err(err(format!(
            "user {user_name:?} sets impersonation, which warrant does not support for downstream webhooks"
        )));
    }

    // Server URL, exactly.
    let server = cluster
        .server
        .clone()
        .ok_or_else(|| err("cluster url is missing on selected cluster".into()))?;
    let url = reqwest::Url::parse(&server).map_err(|e| err(format!("server {server:?}: {e}")))?;

    // Trust.
    let verifier: Arc<dyn ServerCertVerifier> = if insecure {
        Arc::new(NoVerification(provider.clone()))
    } else {
        let ders = resolved.root_cert.clone().ok_or_else(|| {
            err(format!(
                "cluster {:?} has no certificate-authority or certificate-authority-data; warrant does not use system roots for downstream webhooks",
                context.cluster
            ))
        })?;
        let mut roots = RootCertStore::empty();
        for der in ders {
            digest.update(&der);
            roots
                .add(CertificateDer::from(der))
                .map_err(|e| err(format!("certificate authority: {e}")))?;
        }
        let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
            .build()
            .map_err(|e| err(format!("certificate authority: {e}")))?;
        match nonempty(&cluster.tls_server_name) {
            Some(name) => {
                let name = ServerName::try_from(name.to_owned())
                    .map_err(|e| err(format!("tls-server-name {name:?}: {e}")))?;
                Arc::new(NameOverride {
                    inner: webpki,
                    name,
                })
            }
            None => webpki,
        }
    };
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| err(format!("TLS: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(verifier);

    // Client certificate.
    let cert = pem_material(
        user.client_certificate_data.as_deref(),
        nonempty(&user.client_certificate),
    )
    .map_err(|e| err(format!("client certificate: {e}")))?;
    let key = pem_material(
        user.client_key_data.as_ref().map(|s| s.expose_secret()),
        nonempty(&user.client_key),
    )
    .map_err(|e| err(format!("client key: {e}")))?;
    let mut tls = match (cert, key) {
        (None, None) => builder.with_no_client_auth(),
        (Some(_), None) => {
            return Err(err(format!(
                "client-key-data or client-key must be specified for user {user_name:?} to use the clientCert authentication method"
            )));
        }
        (None, Some(_)) => {
            return Err(err(format!(
                "client-cert-data or client-cert must be specified for user {user_name:?} to use the clientCert authentication method"
            )));
        }
        (Some(cert), Some(key)) => {
            digest.update(&cert);
            digest.update(&key);
            let chain = CertificateDer::pem_slice_iter(&cert)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| err(format!("client certificate: {e}")))?;
            if chain.is_empty() {
                return Err(err("client certificate: no PEM certificate found".into()));
            }
            let key =
                PrivateKeyDer::from_pem_slice(&key).map_err(|e| err(format!("client key: {e}")))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| err(format!("client certificate: {e}")))?
        }
    };
    tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];

    // Credentials.
    // As client-go: a tokenFile wins over a static token, which is only the fallback when the
    // file cannot be read (`transport/round_trippers.go`, bearer auth with refresh).
    let static_token = user
        .token
        .as_ref()
        .map(|t| t.expose_secret().trim().to_owned());
    let credentials = if let Some(file) = nonempty(&user.token_file) {
        let file = PathBuf::from(file);
        let token = match (read_token(&file), &static_token) {
            (Ok(token), _) => token,
            (Err(_), Some(fallback)) => fallback.clone(),
            (Err(e), None) => return Err(err(format!("tokenFile {}: {e}", file.display()))),
        };
        if let Some(t) = &static_token {
            digest.update(t.as_bytes());
        }
        Credentials::Bearer(TokenSource::File {
            path: file,
            cached: Mutex::new((token, Instant::now())),
        })
    } else if let Some(t) = static_token {
        digest.update(t.as_bytes());
        Credentials::Bearer(TokenSource::Static(t))
    } else if let Some(name) = nonempty(&user.username) {
        let password = user
            .password
            .as_ref()
            .map(|p| p.expose_secret().to_owned())
            .unwrap_or_default();
        digest.update(name.as_bytes());
        digest.update(password.as_bytes());
        let encoded =
            base64::engine::general_purpose::STANDARD.encode(format!("{name}:{password}"));
        Credentials::Basic(Redacted(format!("Basic {encoded}")))
    } else {
        Credentials::None
    };

    Ok(Connection {
        url,
        tls,
        credentials,
        proxy: nonempty(&cluster.proxy_url).map(str::to_owned),
        digest: digest.finalize().into(),
    })
}

/// Inline base64 data, else a file; both set was refused before.
fn pem_material(data: Option<&str>, file: Option<&str>) -> Result<Option<Vec<u8>>, String> {
    if let Some(d) = data.filter(|d| !d.is_empty()) {
        return base64::engine::general_purpose::STANDARD
            .decode(d.trim())
            .map(Some)
            .map_err(|e| format!("invalid base64 data: {e}"));
    }
    match file {
        Some(f) => std::fs::read(f)
            .map(Some)
            .map_err(|e| format!("cannot read {f}: {e}")),
        None => Ok(None),
    }
}

/// Verifies against the CA but checks the name given by `tls-server-name`.
#[derive(Debug)]
struct NameOverride {
    inner: Arc<WebPkiServerVerifier>,
    name: ServerName<'static>,
}

impl ServerCertVerifier for NameOverride {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.inner
            .verify_server_cert(end_entity, intermediates, &self.name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// `insecure-skip-tls-verify: true`: any certificate is accepted, but handshake signatures are
/// still checked so the session keys belong to the presented certificate.
#[derive(Debug)]
struct NoVerification(Arc<CryptoProvider>);

impl ServerCertVerifier for NoVerification {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
