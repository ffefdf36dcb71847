//! The cluster connection: a `kube::Client` from `--kubeconfig FILE`, or from the pod's
//! service account when warrant runs in a cluster; and a user's own connection, for the
//! commands people run (`--kubeconfig`, else `KUBECONFIG`, else `~/.kube/config`, with
//! `--context`), as kubectl reads it. TLS is rustls on ring (kube's `ring` feature); nothing
//! here touches the network, so a client is built while the API server is still unreachable.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The environment variable the kubelet sets in every pod (what client-go's
/// `rest.InClusterConfig` looks for, with `KUBERNETES_SERVICE_PORT`).
pub(crate) const SERVICE_HOST_ENV: &str = "KUBERNETES_SERVICE_HOST";

/// Where the client's configuration comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A kubeconfig file (its current context).
    Kubeconfig(PathBuf),
    /// The pod's service account (token, CA and `KUBERNETES_SERVICE_HOST`/`_PORT`).
    InCluster,
}

/// Why the client could not be built.
#[derive(Debug, Error)]
pub enum ConnectError {
    /// The kubeconfig file is unreadable or invalid.
    #[error("--kubeconfig {}: {source}", path.display())]
    Kubeconfig {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: kube::config::KubeconfigError,
    },
    /// The user's default kubeconfig (`KUBECONFIG`, else `~/.kube/config`) is unreadable or
    /// invalid, or has no such context.
    #[error("kubeconfig (KUBECONFIG, else ~/.kube/config): {0}")]
    DefaultKubeconfig(#[source] kube::config::KubeconfigError),
    /// The in-cluster service account configuration is incomplete.
    #[error("in-cluster configuration: {0}")]
    InCluster(#[source] kube::config::InClusterError),
    /// The client could not be built from the configuration.
    #[error("cluster client: {0}")]
    Client(#[source] kube::Error),
}

impl Source {
    /// `--kubeconfig` when given; else in-cluster when `service_host` (the value of
    /// [`SERVICE_HOST_ENV`]) is set and not empty; else none.
    pub(crate) fn resolve(
        kubeconfig: Option<&Path>,
        service_host: Option<&OsStr>,
    ) -> Option<Source> {
        match (kubeconfig, service_host) {
            (Some(path), _) => Some(Source::Kubeconfig(path.to_path_buf())),
            (None, Some(host)) if !host.is_empty() => Some(Source::InCluster),
            _ => None,
        }
    }

    /// [`Source::resolve`] with this process's environment.
    pub(crate) fn from_env(kubeconfig: Option<&Path>) -> Option<Source> {
        Source::resolve(kubeconfig, std::env::var_os(SERVICE_HOST_ENV).as_deref())
    }

    /// Reads the configuration (files only, no network).
    pub async fn config(&self) -> Result<kube::Config, ConnectError> {
        match self {
            Source::Kubeconfig(path) => user_config(Some(path), None).await,
            Source::InCluster => kube::Config::incluster().map_err(ConnectError::InCluster),
        }
    }

    /// Builds the client.
    pub async fn client(&self) -> Result<kube::Client, ConnectError> {
        client(self.config().await?)
    }
}

/// A user's configuration as kubectl reads it: the kubeconfig file `kubeconfig` when given, else
/// `KUBECONFIG` (its files merged), else `~/.kube/config`; the context `context` when given,
/// else the file's current context. The namespace of the context is the configuration's
/// `default_namespace`.
pub async fn user_config(
    kubeconfig: Option<&Path>,
    context: Option<&str>,
) -> Result<kube::Config, ConnectError> {
    let options = kube::config::KubeConfigOptions {
        context: context.map(str::to_owned),
        ..Default::default()
    };
    match kubeconfig {
        Some(path) => {
            let err = |source| ConnectError::Kubeconfig {
                path: path.to_path_buf(),
                source,
            };
            let file = kube::config::Kubeconfig::read_from(path).map_err(err)?;
            kube::Config::from_custom_kubeconfig(file, &options)
                .await
                .map_err(err)
        }
        None => kube::Config::from_kubeconfig(&options)
            .await
            .map_err(ConnectError::DefaultKubeconfig),
    }
}

/// A user's client and the namespace of their context ([`user_config`]).
pub async fn user_client(
    kubeconfig: Option<&Path>,
    context: Option<&str>,
) -> Result<(kube::Client, String), ConnectError> {
    let config = user_config(kubeconfig, context).await?;
    let namespace = config.default_namespace.clone();
    Ok((client(config)?, namespace))
}

/// A client from a configuration, TLS by rustls on ring.
pub fn client(config: kube::Config) -> Result<kube::Client, ConnectError> {
    // kube builds its rustls config from the process default; ring is the only provider
    // compiled in, installed explicitly so no other can be chosen.
    let _ = rustls::crypto::ring::default_provider().install_default();
    kube::Client::try_from(config).map_err(ConnectError::Client)
}

#[cfg(test)]
mod tests {
    use super::{ConnectError, Source};
    use std::ffi::OsStr;
    use std::path::Path;

    #[test]
    fn flag_wins_then_the_service_host() {
        let p = Path::new("/k");
        assert_eq!(
            Source::resolve(Some(p), Some(OsStr::new("10.0.0.1"))),
            Some(Source::Kubeconfig(p.into()))
        );
        assert_eq!(
            Source::resolve(None, Some(OsStr::new("10.0.0.1"))),
            Some(Source::InCluster)
        );
        assert_eq!(Source::resolve(None, Some(OsStr::new(""))), None);
        assert_eq!(Source::resolve(None, None), None);
    }

    #[tokio::test]
    async fn a_kubeconfig_becomes_a_client_and_a_bad_one_names_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("kubeconfig");
        std::fs::write(
            &good,
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    token: t\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: u\ncurrent-context: x\n",
        )
        .unwrap();
        let client = Source::Kubeconfig(good).client().await.unwrap();
        assert_eq!(client.default_namespace(), "default");
        let missing = dir.path().join("nope");
        let Err(e) = Source::Kubeconfig(missing.clone()).client().await else {
            panic!("a missing kubeconfig gave a client");
        };
        assert!(matches!(e, ConnectError::Kubeconfig { .. }));
        assert!(
            e.to_string().contains(&missing.display().to_string()),
            "{e}"
        );
    }

    #[tokio::test]
    async fn a_user_context_picks_its_namespace_and_an_unknown_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("kubeconfig");
        std::fs::write(
            &file,
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    token: t\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: u\n- name: shop\n  context:\n    cluster: c\n    user: u\n    namespace: shop\ncurrent-context: x\n",
        )
        .unwrap();
        let (_, ns) = super::user_client(Some(&file), None).await.unwrap();
        assert_eq!(ns, "default");
        let (_, ns) = super::user_client(Some(&file), Some("shop")).await.unwrap();
        assert_eq!(ns, "shop");
        let Err(e) = super::user_client(Some(&file), Some("nope")).await else {
            panic!("an unknown context gave a client");
        };
        assert!(e.to_string().contains("nope"), "{e}");
    }
}
