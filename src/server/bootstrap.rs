//! The embedded default's state directory: a private CA, a serving certificate for the loopback
//! names, a client certificate for kube-apiserver (or curl), and a ready-to-use kubeconfig that
//! calls warrant with mTLS. Files are generated once and reused on later starts, so a
//! kubeconfig handed to the API server keeps working across restarts.

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SanType,
};
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Why the state directory could not be prepared.
#[derive(Debug, Error)]
pub(crate) enum BootstrapError {
    /// A file or directory could not be written or read.
    #[error("state directory {path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// Certificate generation failed.
    #[error("cannot generate certificates: {0}")]
    Certificate(#[from] rcgen::Error),
}

/// The files of a prepared state directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StateFiles {
    /// The directory.
    pub dir: PathBuf,
    /// CA certificate (trust anchor for the serving cert, and the client CA).
    pub(crate) ca_cert: PathBuf,
    /// Serving certificate.
    pub(crate) serving_cert: PathBuf,
    /// Serving key.
    pub(crate) serving_key: PathBuf,
    /// Client certificate for callers.
    pub(crate) client_cert: PathBuf,
    /// Client key.
    pub(crate) client_key: PathBuf,
    /// A kubeconfig that reaches warrant with the client certificate.
    pub kubeconfig: PathBuf,
}

impl StateFiles {
    fn in_dir(dir: &Path) -> Self {
        Self {
            dir: dir.to_path_buf(),
            ca_cert: dir.join("ca.crt"),
            serving_cert: dir.join("tls.crt"),
            serving_key: dir.join("tls.key"),
            client_cert: dir.join("client.crt"),
            client_key: dir.join("client.key"),
            kubeconfig: dir.join("kubeconfig.yaml"),
        }
    }

    fn all_exist(&self) -> bool {
        [
            &self.ca_cert,
            &self.serving_cert,
            &self.serving_key,
            &self.client_cert,
            &self.client_key,
        ]
        .iter()
        .all(|p| p.is_file())
    }
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> BootstrapError + '_ {
    move |source| BootstrapError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn write_file(path: &Path, contents: &str, private: bool) -> Result<(), BootstrapError> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(if private { 0o600 } else { 0o644 });
    }
    let mut f = opts.open(path).map_err(io_err(path))?;
    f.write_all(contents.as_bytes()).map_err(io_err(path))
}

fn validity(params: &mut CertificateParams, days: i64) {
    let now = time::OffsetDateTime::now_utc();
    params.not_before = now - time::Duration::hours(1);
    params.not_after = now + time::Duration::days(days);
}

/// Prepares `dir`: reuses the certificates already there, or generates all of them. The
/// kubeconfig is (re)written each time so that it names the current listen address.
pub(crate) fn prepare(dir: &Path, listen: SocketAddr) -> Result<StateFiles, BootstrapError> {
    std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    let dir = std::fs::canonicalize(dir).map_err(io_err(dir))?;
    let files = StateFiles::in_dir(&dir);
    if !files.all_exist() {
        generate(&files)?;
    }
    write_file(&files.kubeconfig, &kubeconfig(&files, listen), false)?;
    Ok(files)
}

fn generate(files: &StateFiles) -> Result<(), BootstrapError> {
    let ca_key = KeyPair::generate()?;
    let mut ca = CertificateParams::default();
    ca.distinguished_name.push(DnType::CommonName, "warrant-ca");
    ca.distinguished_name
        .push(DnType::OrganizationName, "warrant");
    ca.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    ca.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    validity(&mut ca, 3650);
    let ca_cert = ca.self_signed(&ca_key)?;
    let issuer = Issuer::new(ca, ca_key);

    let sans = vec![
        SanType::DnsName("localhost".try_into()?),
        SanType::IpAddress(IpAddr::V4(Ipv4Addr::LOCALHOST)),
        SanType::IpAddress(IpAddr::V6(Ipv6Addr::LOCALHOST)),
    ];
    let (serving_cert, serving_key) = leaf(
        &issuer,
        "warrant",
        sans,
        ExtendedKeyUsagePurpose::ServerAuth,
    )?;
    let (client_cert, client_key) = leaf(
        &issuer,
        "kube-apiserver",
        Vec::new(),
        ExtendedKeyUsagePurpose::ClientAuth,
    )?;

    write_file(&files.ca_cert, &ca_cert.pem(), false)?;
    write_file(&files.serving_cert, &serving_cert.pem(), false)?;
    write_file(&files.serving_key, &serving_key.serialize_pem(), true)?;
    write_file(&files.client_cert, &client_cert.pem(), false)?;
    write_file(&files.client_key, &client_key.serialize_pem(), true)?;
    // The CA key is not kept: nothing else is ever signed with it, so a leaked state directory
    // cannot mint new client identities.
    Ok(())
}

/// A one-year leaf certificate for `cn`, signed by `issuer`.
fn leaf(
    issuer: &Issuer<'_, KeyPair>,
    cn: &str,
    sans: Vec<SanType>,
    usage: ExtendedKeyUsagePurpose,
) -> Result<(rcgen::Certificate, KeyPair), BootstrapError> {
    let key = KeyPair::generate()?;
    let mut params = CertificateParams::default();
    params.subject_alt_names = sans;
    params.distinguished_name.push(DnType::CommonName, cn);
    params.extended_key_usages = vec![usage];
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.use_authority_key_identifier_extension = true;
    validity(&mut params, 365);
    let cert = params.signed_by(&key, issuer)?;
    Ok((cert, key))
}

fn kubeconfig(files: &StateFiles, listen: SocketAddr) -> String {
    let host = match listen.ip() {
        ip if ip.is_unspecified() => "127.0.0.1".to_owned(),
        IpAddr::V6(ip) => format!("[{ip}]"),
        IpAddr::V4(ip) => ip.to_string(),
    };
    format!(
        "# Generated by `warrant serve`: the API server (or any client) reaches warrant with this.\n\
         apiVersion: v1\n\
         kind: Config\n\
         clusters:\n\
         - name: warrant\n  cluster:\n    server: https://{host}:{port}/authorize\n    certificate-authority: {ca}\n\
         users:\n\
         - name: kube-apiserver\n  user:\n    client-certificate: {cert}\n    client-key: {key}\n\
         contexts:\n\
         - name: webhook\n  context:\n    cluster: warrant\n    user: kube-apiserver\n\
         current-context: webhook\n",
        port = listen.port(),
        ca = files.ca_cert.display(),
        cert = files.client_cert.display(),
        key = files.client_key.display(),
    )
}
