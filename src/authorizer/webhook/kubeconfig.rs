//! A downstream's kubeconfig to a ready [`Connection`]: the exact server URL, a rustls client
//! configuration on ring, and the credentials to send.
//!
//! The file is read once (the same bytes feed the digest) and decoded into the `kube` crate's
//! file model (`Kubeconfig::from_yaml`). Everything after that happens here, synchronously, the
//! way client-go's `tools/clientcmd` resolves a file for a non-interactive loader without
//! overrides (`loader.go` `ResolveLocalPaths`, `client_config.go` `ClientConfig`,
//! `validation.go` `validateClusterInfo` and `validateAuthInfo`):
//!
//! - File references (`certificate-authority`, `client-certificate`, `client-key`, `tokenFile`)
//!   are relative to the kubeconfig's directory; an empty one counts as unset.
//! - `current-context` must be set and name a context, and that context's cluster must exist. Its
//!   user may be unnamed or missing: like client-go (and kube), that is an empty user.
//! - The CA is `certificate-authority-data` if set, else the `certificate-authority` file; both
//!   set, or a CA together with `insecure-skip-tls-verify`, is refused. A client certificate
//!   needs a key, and the data and file forms of either may not both be set.
//! - `tokenFile` wins over `token`: client-go hands both to its transport, whose file token
//!   source is asked first and falls back on the static token only when the file cannot be read
//!   (`transport/round_trippers.go`, `NewBearerAuthWithRefreshRoundTripper`). `username` and
//!   `password` are used when there is no token.
//! - `exec` and `auth-provider` users and impersonation are refused: warrant runs no plugins.
//!
//! The rustls configuration is assembled here and the webhook call goes through reqwest, never
//! `kube::Client` (which would append a path to the server URL).

mod error;
#[cfg(test)]
mod tests;
mod verify;

pub use error::{KubeconfigError, TextEncoding, UrlError};

use base64::Engine;
use kube::config::{AuthInfo, Cluster, Kubeconfig};
use rustls::RootCertStore;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::ServerCertVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use secrecy::ExposeSecret;
use sha2::{Digest, Sha256};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use verify::{NameOverride, NoVerification};

/// How often a `tokenFile` is re-read (client-go's `cachingTokenSource` period).
pub(crate) const TOKEN_FILE_REFRESH: Duration = Duration::from_secs(60);

/// A bearer token, from the kubeconfig or re-read from a file. Never printed.
pub(crate) enum TokenSource {
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
pub(crate) enum Credentials {
    /// Nothing beyond a client certificate, if any.
    None,
    /// `Authorization: Bearer <token>`.
    Bearer(TokenSource),
    /// `Authorization: Basic ...` from `username` / `password`.
    Basic(Redacted),
}

/// A header value that does not print.
pub(crate) struct Redacted(pub String);

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
    pub(crate) credentials: Credentials,
    /// `proxy-url` of the cluster, if set.
    pub proxy: Option<String>,
    /// sha256 of the kubeconfig and every file it pulled in: a change resets the cache.
    pub digest: [u8; 32],
}

fn nonempty(s: &Option<String>) -> Option<&str> {
    s.as_deref().filter(|s| !s.is_empty())
}

/// Loads a kubeconfig for a downstream webhook.
pub fn load(path: &Path, provider: &Arc<CryptoProvider>) -> Result<Connection, KubeconfigError> {
    let at = || path.to_owned();
    let raw = std::fs::read(path).map_err(|e| KubeconfigError::Read {
        path: at(),
        source: Arc::new(e),
    })?;
    let mut digest = Sha256::new();
    digest.update(&raw);
    let text = decode_text(raw).map_err(|encoding| KubeconfigError::NotText {
        path: at(),
        encoding,
    })?;
    let mut model = Kubeconfig::from_yaml(&text).map_err(|e| KubeconfigError::Parse {
        path: at(),
        source: Arc::new(e),
    })?;
    resolve_paths(&mut model, path.parent().unwrap_or(Path::new("")));
    let selected = select(path, model)?;
    let (server, roots) = check_cluster(path, &selected)?;
    check_user(path, &selected)?;
    // The server URL, used exactly.
    let url = reqwest::Url::parse(&server).map_err(|source| KubeconfigError::ServerUrl {
        path: at(),
        server: server.clone(),
        source,
    })?;
    let verifier = verifier(path, &selected, roots, provider, &mut digest)?;
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|source| KubeconfigError::TlsVersions { path: at(), source })?
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    let mut tls = client_identity(path, &selected, builder, &mut digest)?;
    tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let credentials = credentials(path, &selected.user, &mut digest)?;
    Ok(Connection {
        url,
        tls,
        credentials,
        proxy: nonempty(&selected.cluster.proxy_url).map(str::to_owned),
        digest: digest.finalize().into(),
    })
}

/// The cluster's server (a URI, as kube's loader checked before anything else), its certificate
/// authority, its proxy URL, and client-go's conflicts between them.
fn check_cluster(
    path: &Path,
    selected: &Selected,
) -> Result<(String, Option<Vec<CertificateDer<'static>>>), KubeconfigError> {
    let at = || path.to_owned();
    let cluster = &selected.cluster;
    let server = cluster
        .server
        .clone()
        .ok_or_else(|| KubeconfigError::MissingServer { path: at() })?;
    server
        .parse::<hyper::Uri>()
        .map_err(|e| KubeconfigError::ServerUri {
            path: at(),
            source: Arc::new(e),
        })?;
    let roots = certificate_authority(path, cluster)?;
    if let Some(proxy) = nonempty(&cluster.proxy_url) {
        proxy
            .parse::<hyper::Uri>()
            .map_err(|e| KubeconfigError::ProxyUrl {
                path: at(),
                source: Arc::new(e),
            })?;
    }
    if nonempty(&cluster.certificate_authority).is_some()
        && nonempty(&cluster.certificate_authority_data).is_some()
    {
        return Err(KubeconfigError::CaConflict {
            path: at(),
            cluster: selected.cluster_name.clone(),
        });
    }
    if cluster.insecure_skip_tls_verify.unwrap_or(false) && roots.is_some() {
        return Err(KubeconfigError::InsecureWithCa { path: at() });
    }
    Ok((server, roots))
}

/// The inline client key, when set and not empty.
fn key_data(user: &AuthInfo) -> Option<&str> {
    user.client_key_data
        .as_ref()
        .map(|s| s.expose_secret())
        .filter(|s| !s.is_empty())
}

/// client-go's conflicts in the user (file and data both set), then what warrant refuses
/// (exec plugins, auth providers, impersonation).
fn check_user(path: &Path, selected: &Selected) -> Result<(), KubeconfigError> {
    let (at, user, user_name) = (|| path.to_owned(), &selected.user, &selected.user_name);
    let refused = if nonempty(&user.client_certificate).is_some()
        && nonempty(&user.client_certificate_data).is_some()
    {
        Some(KubeconfigError::ClientCertConflict {
            path: at(),
            user: user_name.clone(),
        })
    } else if nonempty(&user.client_key).is_some() && key_data(user).is_some() {
        Some(KubeconfigError::ClientKeyConflict {
            path: at(),
            user: user_name.clone(),
        })
    } else if user.exec.is_some() {
        Some(KubeconfigError::ExecPlugin {
            path: at(),
            user: user_name.clone(),
        })
    } else if user.auth_provider.is_some() {
        Some(KubeconfigError::AuthProvider {
            path: at(),
            user: user_name.clone(),
        })
    } else if user.impersonate.is_some() || user.impersonate_groups.is_some() {
        Some(KubeconfigError::Impersonation {
            path: at(),
            user: user_name.clone(),
        })
    } else {
        None
    };
    refused.map_or(Ok(()), Err)
}

/// How the server's certificate is verified: not at all with `insecure-skip-tls-verify`, else
/// against the cluster's CA (required: system roots are not used), with `tls-server-name`.
fn verifier(
    path: &Path,
    selected: &Selected,
    roots: Option<Vec<CertificateDer<'static>>>,
    provider: &Arc<CryptoProvider>,
    digest: &mut Sha256,
) -> Result<Arc<dyn ServerCertVerifier>, KubeconfigError> {
    let at = || path.to_owned();
    let cluster = &selected.cluster;
    if cluster.insecure_skip_tls_verify.unwrap_or(false) {
        return Ok(Arc::new(NoVerification(provider.clone())));
    }
    let ders = roots.ok_or_else(|| KubeconfigError::NoCertificateAuthority {
        path: at(),
        cluster: selected.cluster_name.clone(),
    })?;
    let mut store = RootCertStore::empty();
    for der in ders {
        digest.update(&der);
        store
            .add(der)
            .map_err(|source| KubeconfigError::CaCertificate { path: at(), source })?;
    }
    let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(store), provider.clone())
        .build()
        .map_err(|source| KubeconfigError::CaVerifier { path: at(), source })?;
    let Some(name) = nonempty(&cluster.tls_server_name) else {
        return Ok(webpki);
    };
    let name =
        ServerName::try_from(name.to_owned()).map_err(|e| KubeconfigError::TlsServerName {
            path: at(),
            name: name.to_owned(),
            source: Arc::new(e),
        })?;
    Ok(Arc::new(NameOverride {
        inner: webpki,
        name,
    }))
}

/// The bytes of a client certificate or key: inline data, else the file (both set was refused
/// by [`check_user`]).
fn inline_or_file(
    data: Option<&str>,
    file: Option<&str>,
    bad_data: impl FnOnce(base64::DecodeError) -> KubeconfigError,
    bad_file: impl FnOnce(PathBuf, std::io::Error) -> KubeconfigError,
) -> Result<Option<Vec<u8>>, KubeconfigError> {
    match (data, file) {
        (Some(data), _) => decode_base64(data).map(Some).map_err(bad_data),
        (None, Some(file)) => std::fs::read(file)
            .map(Some)
            .map_err(|e| bad_file(PathBuf::from(file), e)),
        (None, None) => Ok(None),
    }
}

/// The TLS client configuration with the user's client certificate and key, if any.
fn client_identity(
    path: &Path,
    selected: &Selected,
    builder: rustls::ConfigBuilder<rustls::ClientConfig, rustls::client::WantsClientCert>,
    digest: &mut Sha256,
) -> Result<rustls::ClientConfig, KubeconfigError> {
    let (at, user) = (|| path.to_owned(), &selected.user);
    let cert = inline_or_file(
        nonempty(&user.client_certificate_data),
        nonempty(&user.client_certificate),
        |source| KubeconfigError::ClientCertData { path: at(), source },
        |file, e| KubeconfigError::ClientCertFile {
            path: at(),
            file,
            source: Arc::new(e),
        },
    )?;
    let key = inline_or_file(
        key_data(user),
        nonempty(&user.client_key),
        |source| KubeconfigError::ClientKeyData { path: at(), source },
        |file, e| KubeconfigError::ClientKeyFile {
            path: at(),
            file,
            source: Arc::new(e),
        },
    )?;
    let user_name = selected.user_name.clone();
    let (cert, key) = match (cert, key) {
        (None, None) => return Ok(builder.with_no_client_auth()),
        (Some(_), None) => {
            return Err(KubeconfigError::MissingClientKey {
                path: at(),
                user: user_name,
            });
        }
        (None, Some(_)) => {
            return Err(KubeconfigError::MissingClientCert {
                path: at(),
                user: user_name,
            });
        }
        (Some(cert), Some(key)) => (cert, key),
    };
    digest.update(&cert);
    digest.update(&key);
    let chain = CertificateDer::pem_slice_iter(&cert)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| KubeconfigError::ClientCertPem {
            path: at(),
            source: Arc::new(e),
        })?;
    if chain.is_empty() {
        return Err(KubeconfigError::NoClientCert { path: at() });
    }
    let key = PrivateKeyDer::from_pem_slice(&key).map_err(|e| KubeconfigError::ClientKeyPem {
        path: at(),
        source: Arc::new(e),
    })?;
    builder
        .with_client_auth_cert(chain, key)
        .map_err(|source| KubeconfigError::ClientIdentity { path: at(), source })
}

/// The user's credentials: a tokenFile first, the static token as its fallback (see the module
/// doc), else basic auth, else none.
fn credentials(
    path: &Path,
    user: &AuthInfo,
    digest: &mut Sha256,
) -> Result<Credentials, KubeconfigError> {
    let static_token = user
        .token
        .as_ref()
        .map(|t| t.expose_secret().trim().to_owned());
    if let Some(file) = nonempty(&user.token_file) {
        let file = PathBuf::from(file);
        let token = match (read_token(&file), &static_token) {
            (Ok(token), _) => token,
            (Err(_), Some(fallback)) => fallback.clone(),
            (Err(e), None) => {
                return Err(KubeconfigError::TokenFile {
                    path: path.to_owned(),
                    file,
                    source: Arc::new(e),
                });
            }
        };
        if let Some(t) = &static_token {
            digest.update(t.as_bytes());
        }
        return Ok(Credentials::Bearer(TokenSource::File {
            path: file,
            cached: Mutex::new((token, Instant::now())),
        }));
    }
    if let Some(t) = static_token {
        digest.update(t.as_bytes());
        return Ok(Credentials::Bearer(TokenSource::Static(t)));
    }
    let Some(name) = nonempty(&user.username) else {
        return Ok(Credentials::None);
    };
    let password = user
        .password
        .as_ref()
        .map(|p| p.expose_secret().to_owned())
        .unwrap_or_default();
    digest.update(name.as_bytes());
    digest.update(password.as_bytes());
    let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{name}:{password}"));
    Ok(Credentials::Basic(Redacted(format!("Basic {encoded}"))))
}

/// The kubeconfig's bytes as text: UTF-8, or UTF-8 or UTF-16 behind a byte order mark, as kube's
/// reader accepts.
fn decode_text(raw: Vec<u8>) -> Result<String, TextEncoding> {
    fn utf16(bytes: &[u8], unit: fn([u8; 2]) -> u16) -> Option<String> {
        let (units, odd) = bytes.as_chunks::<2>();
        if !odd.is_empty() {
            return None;
        }
        String::from_utf16(&units.iter().map(|u| unit(*u)).collect::<Vec<_>>()).ok()
    }
    match raw.as_slice() {
        [0xFF, 0xFE, rest @ ..] => utf16(rest, u16::from_le_bytes).ok_or(TextEncoding::Utf16Le),
        [0xFE, 0xFF, rest @ ..] => utf16(rest, u16::from_be_bytes).ok_or(TextEncoding::Utf16Be),
        [0xEF, 0xBB, 0xBF, rest @ ..] => {
            String::from_utf8(rest.to_vec()).map_err(|_| TextEncoding::Utf8Bom)
        }
        _ => String::from_utf8(raw).map_err(|_| TextEncoding::Utf8),
    }
}

/// Makes the file references of every cluster and user absolute against `dir`, the
/// kubeconfig's directory, as client-go's `ResolveLocalPaths` does: empty and absolute
/// references are left alone.
fn resolve_paths(model: &mut Kubeconfig, dir: &Path) {
    let resolve = |reference: &mut Option<String>| {
        if let Some(r) = reference.as_mut()
            && !r.is_empty()
            && Path::new(r.as_str()).is_relative()
        {
            *r = dir.join(r.as_str()).to_string_lossy().into_owned();
        }
    };
    for cluster in model.clusters.iter_mut().filter_map(|c| c.cluster.as_mut()) {
        resolve(&mut cluster.certificate_authority);
    }
    for user in model
        .auth_infos
        .iter_mut()
        .filter_map(|u| u.auth_info.as_mut())
    {
        resolve(&mut user.client_certificate);
        resolve(&mut user.client_key);
        resolve(&mut user.token_file);
    }
}

/// What client-go's `DirectClientConfig` selects without overrides: the current context's
/// cluster and user, with their names for messages.
struct Selected {
    cluster_name: String,
    cluster: Cluster,
    user_name: String,
    user: AuthInfo,
}

/// Selects the current context, its cluster and its user. The first entry of a name counts; a
/// named context or cluster without a body is as good as missing; a missing user is an empty
/// one.
fn select(path: &Path, model: Kubeconfig) -> Result<Selected, KubeconfigError> {
    let Some(context_name) = model.current_context else {
        return Err(KubeconfigError::NoCurrentContext {
            path: path.to_owned(),
        });
    };
    let Some(context) = model
        .contexts
        .into_iter()
        .find(|c| c.name == context_name)
        .and_then(|c| c.context)
    else {
        return Err(KubeconfigError::ContextNotFound {
            path: path.to_owned(),
            context: context_name,
        });
    };
    let Some(cluster) = model
        .clusters
        .into_iter()
        .find(|c| c.name == context.cluster)
        .and_then(|c| c.cluster)
    else {
        return Err(KubeconfigError::ClusterNotFound {
            path: path.to_owned(),
            cluster: context.cluster,
        });
    };
    let user = context
        .user
        .as_ref()
        .and_then(|name| model.auth_infos.into_iter().find(|u| &u.name == name))
        .and_then(|u| u.auth_info)
        .unwrap_or_default();
    Ok(Selected {
        cluster_name: context.cluster,
        cluster,
        user_name: context.user.unwrap_or_default(),
        user,
    })
}

/// The cluster's CA certificates: `certificate-authority-data` if set, else the file; `None`
/// when neither is set.
fn certificate_authority(
    path: &Path,
    cluster: &Cluster,
) -> Result<Option<Vec<CertificateDer<'static>>>, KubeconfigError> {
    let pem = if let Some(data) = nonempty(&cluster.certificate_authority_data) {
        // As kube's loader: the data is decoded as written, without trimming.
        base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|source| KubeconfigError::CaData {
                path: path.to_owned(),
                source,
            })?
    } else if let Some(file) = nonempty(&cluster.certificate_authority) {
        std::fs::read(file).map_err(|e| KubeconfigError::CaFile {
            path: path.to_owned(),
            file: PathBuf::from(file),
            source: Arc::new(e),
        })?
    } else {
        return Ok(None);
    };
    CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
        .map_err(|e| KubeconfigError::CaPem {
            path: path.to_owned(),
            source: Arc::new(e),
        })
}

/// Inline base64 material, trimmed first.
fn decode_base64(data: &str) -> Result<Vec<u8>, base64::DecodeError> {
    base64::engine::general_purpose::STANDARD.decode(data.trim())
}
