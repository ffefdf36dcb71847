//! TLS for the listener: rustls on the ring provider, TLS 1.2 and 1.3, ALPN `h2` and
//! `http/1.1`, optional client-certificate verification against a CA bundle, and reloading of the
//! serving certificate, key and client CA when their files change (cert-manager rotation).
//!
//! The whole `ServerConfig` is rebuilt on a change and swapped in; each accepted connection
//! takes the current one, so new handshakes present the new certificate at once while open
//! connections keep theirs and are never dropped. A half-written rotation (cert and key that do
//! not match yet) is refused and the previous config keeps serving until the files agree.

mod expiry;

pub use expiry::CertificateExpiry;

use crate::file_watch::{FileWatch, WatchTiming};
use arc_swap::ArcSwap;
use rustls::ServerConfig;
use rustls::server::WebPkiClientVerifier;
use rustls_pki_types::pem::{self, PemObject};
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use thiserror::Error;

/// Why a TLS configuration could not be built.
#[derive(Debug, Error)]
pub enum TlsError {
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The certificate file is not valid PEM.
    #[error("{path}: {source}")]
    Pem {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: pem::Error,
    },
    /// The certificate file holds no certificate.
    #[error("{path}: no CERTIFICATE block found")]
    NoCertificate {
        /// The file.
        path: PathBuf,
    },
    /// The key file holds no usable private key.
    #[error("{path}: no usable private key: {source}")]
    PrivateKey {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: pem::Error,
    },
    /// rustls refused the material (e.g. key does not match certificate).
    #[error("invalid TLS material ({cert} / {key}): {source}")]
    Rustls {
        /// The certificate file.
        cert: PathBuf,
        /// The key file.
        key: PathBuf,
        /// The cause.
        source: rustls::Error,
    },
    /// The client CA bundle is not valid PEM.
    #[error("client CA {path}: {source}")]
    ClientCaPem {
        /// The CA file.
        path: PathBuf,
        /// The cause.
        source: pem::Error,
    },
    /// rustls refused a certificate of the client CA bundle.
    #[error("client CA {path}: {source}")]
    ClientCaCertificate {
        /// The CA file.
        path: PathBuf,
        /// The cause.
        source: rustls::Error,
    },
    /// The client CA bundle holds no certificate.
    #[error("client CA {path}: no CERTIFICATE block found")]
    ClientCaEmpty {
        /// The CA file.
        path: PathBuf,
    },
    /// The client-certificate verifier could not be built from the bundle.
    #[error("client CA {path}: {source}")]
    ClientCaVerifier {
        /// The CA file.
        path: PathBuf,
        /// The cause.
        source: rustls::server::VerifierBuilderError,
    },
}

/// The files the listener's TLS is made of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// Serving certificate chain (PEM).
    pub cert: PathBuf,
    /// Serving private key (PEM).
    pub key: PathBuf,
    /// CA bundle that client certificates must chain to; `None` for no client certificates.
    pub client_ca: Option<PathBuf>,
}

impl TlsFiles {
    fn paths(&self) -> Vec<&Path> {
        let mut v = vec![self.cert.as_path(), self.key.as_path()];
        if let Some(ca) = &self.client_ca {
            v.push(ca.as_path());
        }
        v
    }
}

fn read(path: &Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|source| TlsError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// The ring crypto provider, passed explicitly everywhere so no other provider can be picked.
pub fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Reads the files and builds a server config.
pub fn build(files: &TlsFiles) -> Result<(ServerConfig, Vec<Vec<u8>>), TlsError> {
    let cert_pem = read(&files.cert)?;
    let key_pem = read(&files.key)?;
    let ca_pem = files.client_ca.as_deref().map(read).transpose()?;
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<_, _>>()
        .map_err(|source| TlsError::Pem {
            path: files.cert.clone(),
            source,
        })?;
    if chain.is_empty() {
        return Err(TlsError::NoCertificate {
            path: files.cert.clone(),
        });
    }
    let key = PrivateKeyDer::from_pem_slice(&key_pem).map_err(|source| TlsError::PrivateKey {
        path: files.key.clone(),
        source,
    })?;
    let provider = provider();
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .map_err(|source| TlsError::Rustls {
            cert: files.cert.clone(),
            key: files.key.clone(),
            source,
        })?;
    let verifier = match (&files.client_ca, &ca_pem) {
        (Some(path), Some(pem)) => {
            let mut roots = rustls::RootCertStore::empty();
            for cert in CertificateDer::pem_slice_iter(pem) {
                let cert = cert.map_err(|source| TlsError::ClientCaPem {
                    path: path.clone(),
                    source,
                })?;
                roots
                    .add(cert)
                    .map_err(|source| TlsError::ClientCaCertificate {
                        path: path.clone(),
                        source,
                    })?;
            }
            if roots.is_empty() {
                return Err(TlsError::ClientCaEmpty { path: path.clone() });
            }
            // Unauthenticated clients may finish the handshake: the HTTP layer answers them
            // with a 401 that says why. A certificate that is presented must verify, or the
            // handshake fails.
            WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .allow_unauthenticated()
                .build()
                .map_err(|source| TlsError::ClientCaVerifier {
                    path: path.clone(),
                    source,
                })?
        }
        _ => WebPkiClientVerifier::no_client_auth(),
    };
    let mut config = builder
        .with_client_cert_verifier(verifier)
        .with_single_cert(chain, key)
        .map_err(|source| TlsError::Rustls {
            cert: files.cert.clone(),
            key: files.key.clone(),
            source,
        })?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let mut raw = vec![cert_pem, key_pem];
    raw.extend(ca_pem);
    Ok((config, raw))
}

/// Records the expiry of the first certificate of a PEM chain (the leaf).
fn observe_leaf(expiry: &CertificateExpiry, cert_pem: &[u8]) {
    if let Some(Ok(leaf)) = CertificateDer::pem_slice_iter(cert_pem).next() {
        expiry.observe(&leaf);
    }
}

/// The listener's current TLS config, rebuilt when its files change.
#[derive(Debug)]
pub struct ReloadingTls {
    files: TlsFiles,
    current: ArcSwap<ServerConfig>,
    last_raw: std::sync::Mutex<Vec<Vec<u8>>>,
    expiry: CertificateExpiry,
}

impl ReloadingTls {
    /// Builds the first config; fails if the files are unusable now.
    pub fn new(files: TlsFiles) -> Result<Self, TlsError> {
        let (config, raw) = build(&files)?;
        Ok(Self {
            files,
            current: ArcSwap::from_pointee(config),
            last_raw: std::sync::Mutex::new(raw),
            expiry: CertificateExpiry::default(),
        })
    }

    /// Exports the presented certificate's expiry through `expiry` (now and after every
    /// reload).
    pub(crate) fn with_expiry(mut self, expiry: CertificateExpiry) -> Self {
        let raw = self.last_raw.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(cert_pem) = raw.first() {
            observe_leaf(&expiry, cert_pem);
        }
        drop(raw);
        self.expiry = expiry;
        self
    }

    /// The config for the next handshake.
    pub fn current(&self) -> Arc<ServerConfig> {
        self.current.load_full()
    }

    /// Re-reads the files; swaps in a new config when they changed and are valid. Returns
    /// whether a new config was installed.
    pub fn reload(&self) -> bool {
        match build(&self.files) {
            Ok((config, raw)) => {
                let mut last = self.last_raw.lock().unwrap_or_else(|p| p.into_inner());
                if *last == raw {
                    return false;
                }
                if let Some(cert_pem) = raw.first() {
                    observe_leaf(&self.expiry, cert_pem);
                }
                *last = raw;
                self.current.store(Arc::new(config));
                tracing::info!(cert = %self.files.cert.display(), "serving certificate reloaded");
                true
            }
            Err(e) => {
                tracing::warn!(error = %e, "TLS files changed but cannot be used yet; keeping the current certificate");
                false
            }
        }
    }

    /// Watches the files and reloads on change, until the task is dropped.
    pub async fn watch(self: Arc<Self>, timing: WatchTiming) {
        let mut watch = FileWatch::new(&self.files.paths(), timing);
        loop {
            watch.changed().await;
            self.reload();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The serving files of a fresh self-signed certificate, and a client CA file of `ca`.
    fn files(dir: &Path, ca: &[u8]) -> TlsFiles {
        let leaf = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
        std::fs::write(dir.join("tls.crt"), leaf.cert.pem()).unwrap();
        std::fs::write(dir.join("tls.key"), leaf.signing_key.serialize_pem()).unwrap();
        std::fs::write(dir.join("ca.crt"), ca).unwrap();
        TlsFiles {
            cert: dir.join("tls.crt"),
            key: dir.join("tls.key"),
            client_ca: Some(dir.join("ca.crt")),
        }
    }

    #[test]
    fn unusable_material_is_named_with_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let ca = rcgen::generate_simple_self_signed(vec!["ca".into()]).unwrap();
        let good = files(dir.path(), ca.cert.pem().as_bytes());
        assert!(build(&good).is_ok());
        let d = dir.path().display();

        std::fs::write(dir.path().join("ca.crt"), "no pem here\n").unwrap();
        let e = build(&good).unwrap_err();
        assert!(matches!(e, TlsError::ClientCaEmpty { .. }), "{e:?}");
        assert_eq!(
            e.to_string(),
            format!("client CA {d}/ca.crt: no CERTIFICATE block found")
        );

        std::fs::write(dir.path().join("tls.key"), "no key here\n").unwrap();
        let e = build(&good).unwrap_err();
        assert!(matches!(e, TlsError::PrivateKey { .. }), "{e:?}");
        assert_eq!(
            e.to_string(),
            format!("{d}/tls.key: no usable private key: no items found")
        );

        std::fs::write(dir.path().join("tls.crt"), "").unwrap();
        let e = build(&good).unwrap_err();
        assert!(matches!(e, TlsError::NoCertificate { .. }), "{e:?}");
        assert_eq!(
            e.to_string(),
            format!("{d}/tls.crt: no CERTIFICATE block found")
        );
    }
}
