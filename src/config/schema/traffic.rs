//! The `liveTraffic:` block of a `DeletionGuard` as written: where the validation ring asks for a
//! target's real request rate (a Prometheus server) and with which query per kind. Validation
//! into [`crate::config::model::traffic::LiveTraffic`] is `config::validate::guard::traffic`.

use serde::Deserialize;
use serde_saphyr::Spanned;

/// The `liveTraffic:` block: the Prometheus server, the queries and their timing.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LiveTrafficFile {
    /// The server asked.
    #[serde(default)]
    pub prometheus: Option<Spanned<PrometheusFile>>,
    /// One PromQL template per kind.
    #[serde(default)]
    pub queries: Vec<Spanned<TrafficQueryFile>>,
    /// How long an answer is reused, a Go duration (default `30s`).
    #[serde(default, rename = "cacheTTL")]
    pub cache_ttl: Option<Spanned<String>>,
    /// How long one query may take, a Go duration (default `500ms`, at most `5s`).
    #[serde(default)]
    pub timeout: Option<Spanned<String>>,
}

/// A Prometheus server's HTTP API and how warrant authenticates to it.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PrometheusFile {
    /// The server's base URL (`https://prometheus.monitoring:9090`); `/api/v1/query` is appended.
    #[serde(default)]
    pub url: Option<Spanned<String>>,
    /// PEM CA bundle verifying the server, relative to the configuration file.
    #[serde(default)]
    pub ca_file: Option<Spanned<String>>,
    /// PEM client certificate, relative to the configuration file.
    #[serde(default)]
    pub client_cert_file: Option<Spanned<String>>,
    /// PEM key of the client certificate, relative to the configuration file.
    #[serde(default)]
    pub client_key_file: Option<Spanned<String>>,
    /// A file holding a bearer token, read at each query (a rotated token is picked up).
    #[serde(default)]
    pub bearer_token_file: Option<Spanned<String>>,
}

/// The query of one kind.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TrafficQueryFile {
    /// API group (default core `""`; `*` any).
    #[serde(default)]
    pub group: String,
    /// Plural resource (`*` any).
    #[serde(default)]
    pub resource: String,
    /// A PromQL instant query with `${namespace}`, `${name}` and `${label:KEY}` placeholders; its
    /// result (summed over the series) is the target's requests per second.
    #[serde(default)]
    pub query: Option<Spanned<String>>,
}
