use super::*;
use std::error::Error as _;

/// A directory holding a CA, a client certificate and key, and a token, next to which test
/// kubeconfigs are written.
struct Fixture {
    dir: tempfile::TempDir,
    ca_data: String,
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let ca = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
        let client = rcgen::generate_simple_self_signed(vec!["warrant".into()]).unwrap();
        std::fs::create_dir(dir.path().join("pki")).unwrap();
        std::fs::write(dir.path().join("pki/ca.crt"), ca.cert.pem()).unwrap();
        std::fs::write(dir.path().join("pki/client.crt"), client.cert.pem()).unwrap();
        std::fs::write(
            dir.path().join("pki/client.key"),
            client.signing_key.serialize_pem(),
        )
        .unwrap();
        std::fs::write(dir.path().join("pki/token"), "from-file\n").unwrap();
        Self {
            ca_data: b64(ca.cert.pem().as_bytes()),
            dir,
        }
    }

    /// A kubeconfig with one cluster `c` (lines `cluster`), one user `u` (lines `user`) and a
    /// current context selecting both.
    fn kubeconfig(&self, cluster: &str, user: &str) -> String {
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1/authorize\n{cluster}users:\n- name: u\n  user:\n{user}contexts:\n- name: x\n  context: {{cluster: c, user: u}}\ncurrent-context: x\n"
        )
    }

    fn with_ca(&self, user: &str) -> String {
        self.kubeconfig(
            &format!("    certificate-authority-data: {}\n", self.ca_data),
            user,
        )
    }

    fn write(&self, bytes: impl AsRef<[u8]>) -> PathBuf {
        let path = self.dir.path().join("kubeconfig.yaml");
        std::fs::write(&path, bytes).unwrap();
        path
    }

    #[track_caller]
    fn load(&self, bytes: impl AsRef<[u8]>) -> Result<Connection, KubeconfigError> {
        let path = self.write(bytes);
        load(&path, &Arc::new(rustls::crypto::ring::default_provider()))
    }

    #[track_caller]
    fn error(&self, bytes: impl AsRef<[u8]>) -> KubeconfigError {
        match self.load(bytes) {
            Ok(c) => panic!("expected an error, loaded {c:?}"),
            Err(e) => e,
        }
    }
}

#[test]
fn file_references_are_relative_to_the_kubeconfig() {
    let f = Fixture::new();
    let text = f.kubeconfig(
        "    certificate-authority: pki/ca.crt\n",
        "    client-certificate: pki/client.crt\n    client-key: ./pki/client.key\n    tokenFile: pki/token\n",
    );
    let connection = f.load(text).unwrap();
    let Credentials::Bearer(TokenSource::File { path, .. }) = &connection.credentials else {
        panic!("{:?}", connection.credentials);
    };
    assert_eq!(path, &f.dir.path().join("pki/token"));
    assert_eq!(connection.url.as_str(), "https://127.0.0.1:1/authorize");
    // A relative reference that does not exist is reported made absolute.
    let e = f.error(f.kubeconfig("    certificate-authority: missing.crt\n", "    {}\n"));
    let KubeconfigError::CaFile { file, .. } = &e else {
        panic!("{e:?}");
    };
    assert_eq!(file, &f.dir.path().join("missing.crt"));
}

#[test]
fn empty_references_are_unset_as_in_client_go() {
    let f = Fixture::new();
    // An empty CA file next to CA data is no conflict; an empty tokenFile leaves the token.
    let text = f.kubeconfig(
        &format!(
            "    certificate-authority: \"\"\n    certificate-authority-data: {}\n",
            f.ca_data
        ),
        "    token: inline\n    tokenFile: \"\"\n",
    );
    let connection = f.load(text).unwrap();
    assert!(matches!(
        connection.credentials,
        Credentials::Bearer(TokenSource::Static(_))
    ));
    // Empty CA data is no CA, so it may go with insecure-skip-tls-verify.
    let text = f.kubeconfig(
        "    certificate-authority-data: \"\"\n    insecure-skip-tls-verify: true\n",
        "    {}\n",
    );
    assert!(f.load(text).is_ok());
}

/// Whether an error is the variant a row expects.
type IsVariant = fn(&KubeconfigError) -> bool;

#[test]
fn each_failure_has_its_variant_and_text() {
    let f = Fixture::new();
    let path = f.dir.path().join("kubeconfig.yaml");
    let p = path.display();
    let none = "    {}\n";
    let good = f.with_ca(none);
    let rows: Vec<(&str, String, IsVariant, String)> = vec![
        (
            "no current-context",
            good.replace("current-context: x\n", ""),
            |e| matches!(e, KubeconfigError::NoCurrentContext { .. }),
            format!("kubeconfig {p}: failed to determine current context"),
        ),
        (
            "unknown context",
            good.replace("current-context: x\n", "current-context: y\n"),
            |e| matches!(e, KubeconfigError::ContextNotFound { context, .. } if context == "y"),
            format!("kubeconfig {p}: failed to load current context: y"),
        ),
        (
            "unknown cluster",
            good.replace("{cluster: c, user: u}", "{cluster: d, user: u}"),
            |e| matches!(e, KubeconfigError::ClusterNotFound { cluster, .. } if cluster == "d"),
            format!("kubeconfig {p}: failed to load the cluster of context: d"),
        ),
        (
            "no server",
            good.replace("    server: https://127.0.0.1:1/authorize\n", ""),
            |e| matches!(e, KubeconfigError::MissingServer { .. }),
            format!("kubeconfig {p}: cluster url is missing on selected cluster"),
        ),
        (
            "server not a URI",
            good.replace("https://127.0.0.1:1/authorize", "https://a b/"),
            |e| matches!(e, KubeconfigError::ServerUri { .. }),
            format!("kubeconfig {p}: failed to parse cluster url: invalid uri character"),
        ),
        (
            "server not a URL",
            good.replace("https://127.0.0.1:1/authorize", "foo"),
            |e| matches!(e, KubeconfigError::ServerUrl { server, .. } if server == "foo"),
            format!("kubeconfig {p}: server \"foo\": relative URL without a base"),
        ),
        (
            "unreadable CA",
            f.kubeconfig("    certificate-authority: /nonexistent/ca.crt\n", none),
            |e| matches!(e, KubeconfigError::CaFile { .. }),
            format!(
                "kubeconfig {p}: failed to load certificate authority: failed to read file '\"/nonexistent/ca.crt\"': No such file or directory (os error 2)"
            ),
        ),
        (
            "CA data not base64",
            f.kubeconfig("    certificate-authority-data: '!!'\n", none),
            |e| matches!(e, KubeconfigError::CaData { .. }),
            format!(
                "kubeconfig {p}: failed to load certificate authority: failed to decode base64 data: Invalid symbol 33, offset 0."
            ),
        ),
        (
            "bad proxy-url",
            f.with_ca(none).replace(
                "    server: https://127.0.0.1:1/authorize\n",
                "    server: https://127.0.0.1:1/authorize\n    proxy-url: http://a b\n",
            ),
            |e| matches!(e, KubeconfigError::ProxyUrl { .. }),
            format!("kubeconfig {p}: failed to parse proxy url: invalid uri character"),
        ),
        (
            "no CA",
            f.kubeconfig("", none),
            |e| matches!(e, KubeconfigError::NoCertificateAuthority { cluster, .. } if cluster == "c"),
            format!(
                "kubeconfig {p}: cluster \"c\" has no certificate-authority or certificate-authority-data; warrant does not use system roots for downstream webhooks"
            ),
        ),
        (
            "bad tls-server-name",
            f.kubeconfig(
                &format!(
                    "    certificate-authority-data: {}\n    tls-server-name: 'bad name!'\n",
                    f.ca_data
                ),
                none,
            ),
            |e| matches!(e, KubeconfigError::TlsServerName { .. }),
            format!("kubeconfig {p}: tls-server-name \"bad name!\": invalid dns name"),
        ),
        (
            "key without certificate",
            f.with_ca("    client-key: pki/client.key\n"),
            |e| matches!(e, KubeconfigError::MissingClientCert { user, .. } if user == "u"),
            format!(
                "kubeconfig {p}: client-cert-data or client-cert must be specified for user \"u\" to use the clientCert authentication method"
            ),
        ),
        (
            "unreadable client certificate",
            f.with_ca("    client-certificate: nope.crt\n    client-key: pki/client.key\n"),
            |e| matches!(e, KubeconfigError::ClientCertFile { .. }),
            format!(
                "kubeconfig {p}: client certificate: cannot read {}: No such file or directory (os error 2)",
                f.dir.path().join("nope.crt").display()
            ),
        ),
        (
            "client certificate data holds no certificate",
            f.with_ca(&format!(
                "    client-certificate-data: {}\n    client-key: pki/client.key\n",
                b64(b"hello")
            )),
            |e| matches!(e, KubeconfigError::NoClientCert { .. }),
            format!("kubeconfig {p}: client certificate: no PEM certificate found"),
        ),
        (
            "unreadable tokenFile without a token",
            f.with_ca("    tokenFile: /nonexistent/token\n"),
            |e| matches!(e, KubeconfigError::TokenFile { .. }),
            format!(
                "kubeconfig {p}: tokenFile /nonexistent/token: No such file or directory (os error 2)"
            ),
        ),
    ];
    for (what, text, is_variant, want) in rows {
        let e = f.error(text);
        assert!(is_variant(&e), "{what}: {e:?}");
        assert_eq!(e.to_string(), want, "{what}");
        assert_eq!(e.path(), path, "{what}");
    }
}

#[test]
fn sources_are_kept() {
    let f = Fixture::new();
    let e = f.error(f.kubeconfig(
        "    certificate-authority: /nonexistent/ca.crt\n",
        "    {}\n",
    ));
    let io = e
        .source()
        .and_then(|s| s.downcast_ref::<Arc<std::io::Error>>());
    assert_eq!(
        io.map(|e| e.kind()),
        Some(std::io::ErrorKind::NotFound),
        "{e:?}"
    );
    let e = f.error("clusters: [");
    assert!(
        e.source()
            .and_then(|s| s.downcast_ref::<Arc<kube::config::KubeconfigError>>())
            .is_some(),
        "{e:?}"
    );
    assert!(
        e.to_string().contains("failed to parse kubeconfig YAML"),
        "{e}"
    );
    // Equality is by variant and text.
    assert_eq!(e, f.error("clusters: ["));
    assert_ne!(e, f.error("clusters: 3\n"));
}

#[test]
fn byte_order_marks_and_bad_encodings() {
    let f = Fixture::new();
    let good = f.with_ca("    {}\n");
    let utf16 = |bom: [u8; 2], unit: fn(u16) -> [u8; 2]| {
        let mut bytes = bom.to_vec();
        good.encode_utf16().for_each(|u| bytes.extend(unit(u)));
        bytes
    };
    assert!(f.load(utf16([0xFF, 0xFE], u16::to_le_bytes)).is_ok());
    assert!(f.load(utf16([0xFE, 0xFF], u16::to_be_bytes)).is_ok());
    assert!(
        f.load([&[0xEF, 0xBB, 0xBF][..], good.as_bytes()].concat())
            .is_ok()
    );
    let path = f.dir.path().join("kubeconfig.yaml");
    let rows: [(&[u8], TextEncoding); 4] = [
        (b"\xff\xff\xffabc", TextEncoding::Utf8),
        (b"\xef\xbb\xbf\xff", TextEncoding::Utf8Bom),
        // A lone surrogate, then an odd trailing byte: errors, not panics.
        (b"\xff\xfe\x00\xd8\x41\x00", TextEncoding::Utf16Le),
        (b"\xfe\xff\x00\x41\x00", TextEncoding::Utf16Be),
    ];
    for (bytes, encoding) in rows {
        let e = f.error(bytes);
        assert_eq!(
            e,
            KubeconfigError::NotText {
                path: path.clone(),
                encoding
            }
        );
        assert_eq!(
            e.to_string(),
            format!(
                "kubeconfig {}: failed to read kubeconfig from '{path:?}': {encoding}",
                path.display()
            )
        );
    }
    assert_eq!(TextEncoding::Utf16Le.to_string(), "Invalid UTF-16 LE");
}

#[test]
fn unreadable_kubeconfig_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("absent.yaml");
    let e = load(&path, &Arc::new(rustls::crypto::ring::default_provider())).unwrap_err();
    assert!(matches!(e, KubeconfigError::Read { .. }), "{e:?}");
    assert_eq!(
        e.to_string(),
        format!(
            "kubeconfig {}: cannot read: No such file or directory (os error 2)",
            path.display()
        )
    );
}
