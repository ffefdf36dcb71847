//! One instant query against a Prometheus server's HTTP API (`GET /api/v1/query`, as
//! Prometheus documents it: a JSON envelope with `status`, and for a success `data.resultType`
//! and `data.result`): the answer is the sum of the instant vector's samples (or the scalar),
//! which must be finite and non-negative. The client trusts the configured CA bundle alone
//! (rustls on ring), presents the client certificate when configured and reads the bearer token
//! file at each query, so a rotated token is picked up.

use crate::config::model::traffic::PrometheusServer;
use reqwest::header::{ACCEPT, AUTHORIZATION};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The largest answer read: a rate is a few hundred bytes, a query matching thousands of
/// series is a mistake and must not cost memory.
const MAX_ANSWER_BYTES: usize = 1 << 20;
/// The most characters of an error answer kept in a message.
const MAX_MESSAGE: usize = 256;

/// A Prometheus server's query endpoint and the client that asks it.
#[derive(Debug)]
pub(crate) struct PrometheusClient {
    http: reqwest::Client,
    endpoint: reqwest::Url,
    bearer_token_file: Option<PathBuf>,
}

/// Why the client cannot be built (a file unreadable or not PEM).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ClientError {
    /// A file cannot be read.
    #[error("{field} {path}: {source}")]
    File {
        /// The setting naming it.
        field: &'static str,
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A file's content is not what it should be.
    #[error("{field} {path}: {message}")]
    Content {
        /// The setting naming it.
        field: &'static str,
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The URL does not parse (validation refuses it first).
    #[error("url {url:?}: {message}")]
    Url {
        /// The URL.
        url: String,
        /// What is wrong.
        message: String,
    },
    /// The HTTP client cannot be built.
    #[error("http client: {0}")]
    Build(#[source] reqwest::Error),
}

/// Why one query has no answer.
#[derive(Debug, thiserror::Error)]
pub(crate) enum QueryError {
    /// No answer within the time allowed.
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    /// The server could not be reached or the exchange broke.
    #[error("unreachable: {0}")]
    Unreachable(#[source] reqwest::Error),
    /// The server answered with an error.
    #[error("HTTP {status}: {message}")]
    Status {
        /// The HTTP status.
        status: u16,
        /// Prometheus' `errorType: error`, or the start of the body.
        message: String,
    },
    /// The answer is not a Prometheus query result warrant can read as a rate.
    #[error("answer not understood: {0}")]
    Decode(String),
    /// The query matched no series.
    #[error("the query returned no series")]
    Empty,
    /// The bearer token file cannot be read.
    #[error("bearerTokenFile {path}: {source}")]
    Token {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

impl QueryError {
    /// The metric label of the failure.
    pub(crate) fn reason(&self) -> &'static str {
        match self {
            QueryError::Timeout(_) => "timeout",
            QueryError::Unreachable(_) => "unreachable",
            QueryError::Status { .. } => "status",
            QueryError::Decode(_) => "decode",
            QueryError::Empty => "empty",
            QueryError::Token { .. } => "client",
        }
    }
}

impl PrometheusClient {
    /// A client for `server`: its CA bundle alone when given (else the platform's roots), its
    /// client certificate when given.
    pub(crate) fn new(server: &PrometheusServer) -> Result<Self, ClientError> {
        let endpoint =
            reqwest::Url::parse(&format!("{}/api/v1/query", server.url)).map_err(|e| {
                ClientError::Url {
                    url: server.url.clone(),
                    message: e.to_string(),
                }
            })?;
        let mut b = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy();
        if let Some(ca) = &server.ca_file {
            b = b.tls_backend_preconfigured(tls(ca, server.client_identity.as_ref())?);
        } else {
            // The platform's roots need a process-wide provider; installing it twice is harmless.
            let _ = rustls::crypto::ring::default_provider().install_default();
        }
        Ok(Self {
            http: b.build().map_err(ClientError::Build)?,
            endpoint,
            bearer_token_file: server.bearer_token_file.clone(),
        })
    }

    /// The requests per second `query` answers, within `timeout`.
    pub(crate) async fn rate(&self, query: &str, timeout: Duration) -> Result<f64, QueryError> {
        match tokio::time::timeout(timeout, self.ask(query)).await {
            Ok(answer) => answer,
            Err(_) => Err(QueryError::Timeout(timeout)),
        }
    }

    async fn ask(&self, query: &str) -> Result<f64, QueryError> {
        let mut url = self.endpoint.clone();
        url.query_pairs_mut().append_pair("query", query);
        let mut req = self.http.get(url).header(ACCEPT, "application/json");
        if let Some(path) = &self.bearer_token_file {
            let token =
                tokio::fs::read_to_string(path)
                    .await
                    .map_err(|source| QueryError::Token {
                        path: path.clone(),
                        source,
                    })?;
            req = req.header(AUTHORIZATION, format!("Bearer {}", token.trim()));
        }
        let mut resp = req.send().await.map_err(QueryError::Unreachable)?;
        let status = resp.status().as_u16();
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(QueryError::Unreachable)? {
            if body.len() + chunk.len() > MAX_ANSWER_BYTES {
                return Err(QueryError::Decode(format!(
                    "answer larger than {MAX_ANSWER_BYTES} bytes"
                )));
            }
            body.extend_from_slice(&chunk);
        }
        if !(200..300).contains(&status) {
            return Err(QueryError::Status {
                status,
                message: error_message(&body),
            });
        }
        parse(&body)
    }
}

/// A TLS client configuration (rustls on ring) trusting `ca` alone, with the client
/// certificate when given.
fn tls(
    ca: &Path,
    identity: Option<&(PathBuf, PathBuf)>,
) -> Result<rustls::ClientConfig, ClientError> {
    let read = |field, path: &Path| {
        std::fs::read(path).map_err(|source| ClientError::File {
            field,
            path: path.to_path_buf(),
            source,
        })
    };
    let content = |field, path: &Path, message: String| ClientError::Content {
        field,
        path: path.to_path_buf(),
        message,
    };
    let pem = read("caFile", ca)?;
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&pem) {
        let cert = cert.map_err(|e| content("caFile", ca, e.to_string()))?;
        roots
            .add(cert)
            .map_err(|e| content("caFile", ca, e.to_string()))?;
    }
    if roots.is_empty() {
        return Err(content("caFile", ca, "no certificate in it".into()));
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| content("caFile", ca, e.to_string()))?
        .with_root_certificates(roots);
    Ok(match identity {
        None => builder.with_no_client_auth(),
        Some((cert, key)) => {
            let chain = CertificateDer::pem_slice_iter(&read("clientCertFile", cert)?)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| content("clientCertFile", cert, e.to_string()))?;
            let key_der = PrivateKeyDer::from_pem_slice(&read("clientKeyFile", key)?)
                .map_err(|e| content("clientKeyFile", key, e.to_string()))?;
            builder
                .with_client_auth_cert(chain, key_der)
                .map_err(|e| content("clientKeyFile", key, e.to_string()))?
        }
    })
}

/// Prometheus' answer envelope.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Envelope {
    status: String,
    #[serde(default)]
    data: Option<Data>,
    #[serde(default)]
    error_type: Option<String>,
    #[serde(default)]
    error: Option<String>,
}

/// `data` of a query answer.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Data {
    result_type: String,
    result: serde_json::Value,
}

/// One sample of an instant vector: `{"metric": {...}, "value": [time, "value"]}`.
#[derive(Debug, Deserialize)]
struct Sample {
    #[serde(default)]
    value: Option<(serde_json::Value, String)>,
}

/// The rate an answer gives: the sum of an instant vector's samples, or a scalar.
pub(crate) fn parse(body: &[u8]) -> Result<f64, QueryError> {
    let decode = |m: String| QueryError::Decode(m);
    let e: Envelope = serde_json::from_slice(body).map_err(|e| decode(e.to_string()))?;
    if e.status != "success" {
        return Err(decode(format!(
            "status {:?}: {}",
            e.status,
            e.error.unwrap_or_default()
        )));
    }
    let data = e.data.ok_or_else(|| decode("no data".into()))?;
    let values: Vec<String> = match data.result_type.as_str() {
        "vector" => {
            let samples: Vec<Sample> =
                serde_json::from_value(data.result).map_err(|e| decode(e.to_string()))?;
            samples
                .into_iter()
                .map(|s| {
                    s.value.map(|(_, v)| v).ok_or_else(|| {
                        decode("a sample without a float value (a histogram?)".into())
                    })
                })
                .collect::<Result<_, _>>()?
        }
        "scalar" => {
            let (_, v): (serde_json::Value, String) =
                serde_json::from_value(data.result).map_err(|e| decode(e.to_string()))?;
            vec![v]
        }
        other => {
            return Err(decode(format!(
                "result type {other:?}, expected a vector or a scalar"
            )));
        }
    };
    if values.is_empty() {
        return Err(QueryError::Empty);
    }
    let mut sum = 0.0;
    for v in values {
        let x: f64 = v
            .parse()
            .map_err(|_| decode(format!("sample value {v:?} is not a number")))?;
        if !x.is_finite() || x < 0.0 {
            return Err(decode(format!(
                "sample value {v:?} is not a finite non-negative rate"
            )));
        }
        sum += x;
    }
    Ok(sum)
}

/// The message of an error answer: Prometheus' `errorType: error`, else the start of the body.
fn error_message(body: &[u8]) -> String {
    if let Ok(e) = serde_json::from_slice::<Envelope>(body)
        && let Some(error) = e.error
    {
        let kind = e.error_type.unwrap_or_default();
        return cut(&format!("{kind}: {error}"));
    }
    cut(&String::from_utf8_lossy(body))
}

fn cut(s: &str) -> String {
    let s = s.trim();
    match s.char_indices().nth(MAX_MESSAGE) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_instant_vector_is_summed_and_a_scalar_read() {
        let vector = br#"{"status":"success","data":{"resultType":"vector","result":[
            {"metric":{"service":"a"},"value":[1435781451.781,"1.5"]},
            {"metric":{"service":"b"},"value":[1435781451.781,"2"]}]}}"#;
        assert_eq!(parse(vector).unwrap(), 3.5);
        let scalar =
            br#"{"status":"success","data":{"resultType":"scalar","result":[1435781451.781,"7"]}}"#;
        assert_eq!(parse(scalar).unwrap(), 7.0);
    }

    #[test]
    fn empty_odd_or_broken_answers_are_errors_with_their_reason() {
        let cases: [(&[u8], &str); 7] = [
            (
                br#"{"status":"success","data":{"resultType":"vector","result":[]}}"#,
                "empty",
            ),
            (
                br#"{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"NaN"]}]}}"#,
                "decode",
            ),
            (
                br#"{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"+Inf"]}]}}"#,
                "decode",
            ),
            (
                br#"{"status":"success","data":{"resultType":"matrix","result":[]}}"#,
                "decode",
            ),
            (
                br#"{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"histogram":[1,{}]}]}}"#,
                "decode",
            ),
            (
                br#"{"status":"error","errorType":"bad_data","error":"parse error"}"#,
                "decode",
            ),
            (b"<html>", "decode"),
        ];
        for (body, reason) in cases {
            let e = parse(body).unwrap_err();
            assert_eq!(e.reason(), reason, "{}: {e}", String::from_utf8_lossy(body));
        }
    }

    #[test]
    fn an_error_answer_says_prometheus_error() {
        let m = error_message(
            br#"{"status":"error","errorType":"bad_data","error":"1:5: parse error"}"#,
        );
        assert_eq!(m, "bad_data: 1:5: parse error");
        assert_eq!(error_message(&[b'x'; 1000]).len(), MAX_MESSAGE + 3);
    }
}
