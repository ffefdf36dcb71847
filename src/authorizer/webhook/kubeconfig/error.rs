//! Why a kubeconfig cannot be used: one variant per thing that failed, each naming the
//! kubeconfig and keeping the error underneath. The texts are the ones warrant has always shown
//! (kube's loader wording for what it used to check, client-go's for the conflicts).

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use thiserror::Error;

/// The error `url` gives for a server URL it cannot parse (reqwest re-exports `Url`, not its
/// error type).
pub type UrlError = <reqwest::Url as std::str::FromStr>::Err;

/// A kubeconfig whose bytes are not text in the encoding they announce (kube's reader accepts
/// UTF-8, UTF-8 with a byte order mark, and UTF-16 with one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextEncoding {
    /// No byte order mark: UTF-8.
    Utf8,
    /// A UTF-8 byte order mark.
    Utf8Bom,
    /// A little-endian UTF-16 byte order mark.
    Utf16Le,
    /// A big-endian UTF-16 byte order mark.
    Utf16Be,
}

impl fmt::Display for TextEncoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TextEncoding::Utf8 => "Invalid UTF-8",
            TextEncoding::Utf8Bom => "Invalid UTF-8 BOM",
            TextEncoding::Utf16Le => "Invalid UTF-16 LE",
            TextEncoding::Utf16Be => "Invalid UTF-16 BE",
        })
    }
}

/// Why a kubeconfig cannot be used. Every variant names the kubeconfig (`path`) and renders as
/// one line, `kubeconfig <path>: <what failed>`.
///
/// Sources that are neither `Clone` nor comparable (I/O errors, kube's parse error, PEM and
/// DNS-name errors) are shared through an `Arc`, so `source()` yields the `Arc`; its `Display`
/// and own `source()` are the inner error's. Equality compares the variant and the rendered text
/// (see the `PartialEq` impl).
#[derive(Debug, Clone, Error)]
#[non_exhaustive]
pub enum KubeconfigError {
    /// The file cannot be read.
    #[error("kubeconfig {}: cannot read: {source}", path.display())]
    Read {
        /// The kubeconfig.
        path: PathBuf,
        /// The cause.
        source: Arc<io::Error>,
    },
    /// The file is not text in the encoding its byte order mark announces (kube's wording).
    #[error("kubeconfig {}: failed to read kubeconfig from '{path:?}': {encoding}", path.display())]
    NotText {
        /// The kubeconfig.
        path: PathBuf,
        /// The encoding it failed to decode as.
        encoding: TextEncoding,
    },
    /// The YAML does not decode into kube's kubeconfig model (or its documents do not merge).
    #[error("kubeconfig {}: {source}", path.display())]
    Parse {
        /// The kubeconfig.
        path: PathBuf,
        /// kube's decode error.
        source: Arc<kube::config::KubeconfigError>,
    },
    /// `current-context` is not set.
    #[error("kubeconfig {}: failed to determine current context", path.display())]
    NoCurrentContext {
        /// The kubeconfig.
        path: PathBuf,
    },
    /// `current-context` names no context (or one without a body).
    #[error("kubeconfig {}: failed to load current context: {context}", path.display())]
    ContextNotFound {
        /// The kubeconfig.
        path: PathBuf,
        /// The context named.
        context: String,
    },
    /// The context names no cluster (or one without a body).
    #[error("kubeconfig {}: failed to load the cluster of context: {cluster}", path.display())]
    ClusterNotFound {
        /// The kubeconfig.
        path: PathBuf,
        /// The cluster named.
        cluster: String,
    },
    /// The cluster has no `server`.
    #[error("kubeconfig {}: cluster url is missing on selected cluster", path.display())]
    MissingServer {
        /// The kubeconfig.
        path: PathBuf,
    },
    /// `server` is not a URI.
    #[error("kubeconfig {}: failed to parse cluster url: {source}", path.display())]
    ServerUri {
        /// The kubeconfig.
        path: PathBuf,
        /// The cause.
        source: Arc<hyper::http::uri::InvalidUri>,
    },
    /// `server` is a URI but not a URL a request can be sent to.
    #[error("kubeconfig {}: server {server:?}: {source}", path.display())]
    ServerUrl {
        /// The kubeconfig.
        path: PathBuf,
        /// The server as written.
        server: String,
        /// The cause.
        source: UrlError,
    },
    /// `certificate-authority` cannot be read.
    #[error(
        "kubeconfig {}: failed to load certificate authority: failed to read file '{file:?}': {source}",
        path.display()
    )]
    CaFile {
        /// The kubeconfig.
        path: PathBuf,
        /// The CA file (made absolute against the kubeconfig's directory).
        file: PathBuf,
        /// The cause.
        source: Arc<io::Error>,
    },
    /// `certificate-authority-data` is not base64.
    #[error(
        "kubeconfig {}: failed to load certificate authority: failed to decode base64 data: {source}",
        path.display()
    )]
    CaData {
        /// The kubeconfig.
        path: PathBuf,
        /// The cause.
        source: base64::DecodeError,
    },
    /// The CA is not PEM.
    #[error("kubeconfig {}: failed to parse PEM-encoded certificates: {source}", path.display())]
    CaPem {
        /// The kubeconfig.
        path: PathBuf,
        /// The cause.
        source: Arc<rustls::pki_types::pem::Error>,
    },
    /// `proxy-url` is not a URI.
    #[error("kubeconfig {}: failed to parse proxy url: {source}", path.display())]
    ProxyUrl {
        /// The kubeconfig.
        path: PathBuf,
        /// The cause.
        source: Arc<hyper::http::uri::InvalidUri>,
    },
    /// The cluster sets both forms of its CA (client-go's `validateClusterInfo`).
    #[error(
        "kubeconfig {}: certificate-authority-data and certificate-authority are both specified for cluster {cluster:?}",
        path.display()
    )]
    CaConflict {
        /// The kubeconfig.
        path: PathBuf,
        /// The cluster.
        cluster: String,
    },
    /// The cluster sets a CA and `insecure-skip-tls-verify` (client-go's transport check).
    #[error(
        "kubeconfig {}: specifying a root certificates file with the insecure flag is not allowed",
        path.display()
    )]
    InsecureWithCa {
        /// The kubeconfig.
        path: PathBuf,
    },
    /// The user sets both forms of its client certificate (client-go's `validateAuthInfo`).
    #[error(
        "kubeconfig {}: client-cert-data and client-cert are both specified for user {user:?}",
        path.display()
    )]
    ClientCertConflict {
        /// The kubeconfig.
        path: PathBuf,
        /// The user.
        user: String,
    },
    /// The user sets both forms of its client key (client-go's `validateAuthInfo`).
    #[error(
        "kubeconfig {}: client-key-data and client-key are both specified for user {user:?}",
        path.display()
    )]
    ClientKeyConflict {
        /// The kubeconfig.
        path: PathBuf,
        /// The user.
        user: String,
    },
    /// The user runs an exec credential plugin; warrant runs none.
    #[error(
        "kubeconfig {}: user {user:?} uses an exec credential plugin, which warrant does not run; use client-certificate, token or tokenFile",
        path.display()
    )]
    ExecPlugin {
        /// The kubeconfig.
        path: PathBuf,
        /// The user.
        user: String,
    },
    /// The user names an auth-provider; warrant supports none.
    #[error(
        "kubeconfig {}: user {user:?} uses an auth-provider, which warrant does not support; use client-certificate, token or tokenFile",
        path.display()
    )]
    AuthProvider {
        /// The kubeconfig.
        path: PathBuf,
        /// The user.
        user: String,
    },
    /// The user impersonates; warrant does not for downstream webhooks.
    #[error(
        "kubeconfig {}: user {user:?} sets impersonation, which warrant does not support for downstream webhooks",
        path.display()
    )]
    Impersonation {
        /// The kubeconfig.
        path: PathBuf,
        /// The user.
        user: String,
    },
    /// The cluster has no CA and is not insecure: warrant does not fall back to system roots.
    #[error(
        "kubeconfig {}: cluster {cluster:?} has no certificate-authority or certificate-authority-data; warrant does not use system roots for downstream webhooks",
        path.display()
    )]
    NoCertificateAuthority {
        /// The kubeconfig.
        path: PathBuf,
        /// The cluster.
        cluster: String,
    },
    /// rustls refused a CA certificate.
    #[error("kubeconfig {}: certificate authority: {source}", path.display())]
    CaCertificate {
        /// The kubeconfig.
        path: PathBuf,
        /// The cause.
        source: rustls::Error,
    },
    /// The server verifier could not be built from the CA (no usable root, typically).
    #[error("kubeconfig {}: certificate authority: {source}", path.display())]
    CaVerifier {
        /// The kubeconfig.
        path: PathBuf,
        /// The cause.
        source: rustls::client::VerifierBuilderError,
    },
    /// `tls-server-name` is not a DNS name or IP address.
    #[error("kubeconfig {}: tls-server-name {name:?}: {source}", path.display())]
    TlsServerName {
        /// The kubeconfig.
        path: PathBuf,
        /// The name as written.
        name: String,
        /// The cause.
        source: Arc<rustls::pki_types::InvalidDnsNameError>,
    },
    /// rustls offers none of the protocol versions asked for.
    #[error("kubeconfig {}: TLS: {source}", path.display())]
    TlsVersions {
        /// The kubeconfig.
        path: PathBuf,
        /// The cause.
        source: rustls::Error,
    },
    /// `client-certificate-data` is not base64.
    #[error("kubeconfig {}: client certificate: invalid base64 data: {source}", path.display())]
    ClientCertData {
        /// The kubeconfig.
        path: PathBuf,
        /// The cause.
        source: base64::DecodeError,
    },
    /// `client-certificate` cannot be read.
    #[error("kubeconfig {}: client certificate: cannot read {}: {source}", path.display(), file.display())]
    ClientCertFile {
        /// The kubeconfig.
        path: PathBuf,
        /// The certificate file.
        file: PathBuf,
        /// The cause.
        source: Arc<io::Error>,
    },
    /// `client-key-data` is not base64.
    #[error("kubeconfig {}: client key: invalid base64 data: {source}", path.display())]
    ClientKeyData {
        /// The kubeconfig.
        path: PathBuf,
        /// The cause.
        source: base64::DecodeError,
    },
    /// `client-key` cannot be read.
    #[error("kubeconfig {}: client key: cannot read {}: {source}", path.display(), file.display())]
    ClientKeyFile {
        /// The kubeconfig.
        path: PathBuf,
        /// The key file.
        file: PathBuf,
        /// The cause.
        source: Arc<io::Error>,
    },
    /// A client certificate without a key (client-go's `validateAuthInfo`).
    #[error(
        "kubeconfig {}: client-key-data or client-key must be specified for user {user:?} to use the clientCert authentication method",
        path.display()
    )]
    MissingClientKey {
        /// The kubeconfig.
        path: PathBuf,
        /// The user.
        user: String,
    },
    /// A client key without a certificate.
    #[error(
        "kubeconfig {}: client-cert-data or client-cert must be specified for user {user:?} to use the clientCert authentication method",
        path.display()
    )]
    MissingClientCert {
        /// The kubeconfig.
        path: PathBuf,
        /// The user.
        user: String,
    },
    /// The client certificate is not valid PEM.
    #[error("kubeconfig {}: client certificate: {source}", path.display())]
    ClientCertPem {
        /// The kubeconfig.
        path: PathBuf,
        /// The cause.
        source: Arc<rustls::pki_types::pem::Error>,
    },
    /// The client certificate material holds no certificate.
    #[error("kubeconfig {}: client certificate: no PEM certificate found", path.display())]
    NoClientCert {
        /// The kubeconfig.
        path: PathBuf,
    },
    /// The client key is not a PEM private key.
    #[error("kubeconfig {}: client key: {source}", path.display())]
    ClientKeyPem {
        /// The kubeconfig.
        path: PathBuf,
        /// The cause.
        source: Arc<rustls::pki_types::pem::Error>,
    },
    /// rustls refused the certificate and key as a client identity (a key that does not
    /// match, an unsupported key type).
    #[error("kubeconfig {}: client certificate: {source}", path.display())]
    ClientIdentity {
        /// The kubeconfig.
        path: PathBuf,
        /// The cause.
        source: rustls::Error,
    },
    /// `tokenFile` cannot be read and there is no `token` to fall back on.
    #[error("kubeconfig {}: tokenFile {}: {source}", path.display(), file.display())]
    TokenFile {
        /// The kubeconfig.
        path: PathBuf,
        /// The token file (made absolute against the kubeconfig's directory).
        file: PathBuf,
        /// The cause.
        source: Arc<io::Error>,
    },
}

impl KubeconfigError {
    /// The kubeconfig the error is about.
    pub fn path(&self) -> &Path {
        use KubeconfigError as E;
        match self {
            E::Read { path, .. }
            | E::NotText { path, .. }
            | E::Parse { path, .. }
            | E::NoCurrentContext { path }
            | E::ContextNotFound { path, .. }
            | E::ClusterNotFound { path, .. }
            | E::MissingServer { path }
            | E::ServerUri { path, .. }
            | E::ServerUrl { path, .. }
            | E::CaFile { path, .. }
            | E::CaData { path, .. }
            | E::CaPem { path, .. }
            | E::ProxyUrl { path, .. }
            | E::CaConflict { path, .. }
            | E::InsecureWithCa { path }
            | E::ClientCertConflict { path, .. }
            | E::ClientKeyConflict { path, .. }
            | E::ExecPlugin { path, .. }
            | E::AuthProvider { path, .. }
            | E::Impersonation { path, .. }
            | E::NoCertificateAuthority { path, .. }
            | E::CaCertificate { path, .. }
            | E::CaVerifier { path, .. }
            | E::TlsServerName { path, .. }
            | E::TlsVersions { path, .. }
            | E::ClientCertData { path, .. }
            | E::ClientCertFile { path, .. }
            | E::ClientKeyData { path, .. }
            | E::ClientKeyFile { path, .. }
            | E::MissingClientKey { path, .. }
            | E::MissingClientCert { path, .. }
            | E::ClientCertPem { path, .. }
            | E::NoClientCert { path }
            | E::ClientKeyPem { path, .. }
            | E::ClientIdentity { path, .. }
            | E::TokenFile { path, .. } => path,
        }
    }
}

/// Two errors are equal when they are the same variant and render the same line. I/O, parse
/// and PEM errors have no equality of their own; their text (kind and message) is what a
/// reader of the error can tell apart, and it is what build errors are compared by in tests.
impl PartialEq for KubeconfigError {
    fn eq(&self, other: &Self) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
            && self.to_string() == other.to_string()
    }
}

impl Eq for KubeconfigError {}
