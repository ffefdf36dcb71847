//! The remote audit sinks of `warrant serve` (`--audit-kafka-*`, `--audit-webhook-*`), as
//! flags in Kubernetes style: each sink is off until its address is given, and each has its
//! own queue, spool and choice when full ([`crate::telemetry::audit::remote`]).

use super::duration_flag::{self, DurationFlagError};
use crate::telemetry::audit::kafka::{
    KafkaCompression, KafkaProducer, KafkaSettings, Sasl, SaslMechanism,
};
use crate::telemetry::audit::remote::{
    Deliver, RemoteSink, SinkMetrics, SinkSettings, SpoolError, SpoolSettings, WhenFull,
};
use crate::telemetry::audit::webhook::{WebhookFormat, WebhookSender, WebhookSettings};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use thiserror::Error;

/// The remote audit sinks' flags.
#[derive(Debug, Clone, clap::Args)]
pub struct AuditSinkArgs {
    /// Send every audit record to Kafka through these bootstrap brokers (`host:port`,
    /// repeatable or comma-separated); off when empty.
    #[arg(long, value_name = "HOST:PORT", num_args = 1.., value_delimiter = ',')]
    pub audit_kafka_brokers: Vec<String>,
    /// The Kafka topic (it must exist, or the brokers must create topics on first use).
    #[arg(long, default_value = "warrant-audit", value_name = "TOPIC")]
    pub audit_kafka_topic: String,
    /// Connect to the brokers over TLS, trusting this CA bundle (PEM).
    #[arg(long, value_name = "FILE")]
    pub audit_kafka_tls_ca_file: Option<PathBuf>,
    /// A client certificate (PEM) for mutual TLS with the brokers.
    #[arg(long, value_name = "FILE", requires_all = ["audit_kafka_tls_key_file", "audit_kafka_tls_ca_file"])]
    pub audit_kafka_tls_cert_file: Option<PathBuf>,
    /// The client certificate's private key (PEM).
    #[arg(long, value_name = "FILE", requires = "audit_kafka_tls_cert_file")]
    pub audit_kafka_tls_key_file: Option<PathBuf>,
    /// Authenticate with SASL: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512.
    #[arg(long, value_enum, value_name = "MECHANISM", requires_all = ["audit_kafka_sasl_username", "audit_kafka_sasl_password_file"])]
    pub audit_kafka_sasl_mechanism: Option<SaslMechanism>,
    /// The SASL user name.
    #[arg(long, value_name = "NAME")]
    pub audit_kafka_sasl_username: Option<String>,
    /// A file holding the SASL password (one line; the trailing newline is ignored).
    #[arg(long, value_name = "FILE")]
    pub audit_kafka_sasl_password_file: Option<PathBuf>,
    /// The compression of produced batches.
    #[arg(long, value_enum, default_value_t = KafkaCompression::Gzip, value_name = "CODEC")]
    pub audit_kafka_compression: KafkaCompression,
    /// The most records in one produce request per partition.
    #[arg(long, default_value_t = 500, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub audit_kafka_batch_max_size: u32,
    /// The most records the Kafka sink holds in memory.
    #[arg(long, default_value_t = 65_536, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub audit_kafka_queue_size: u32,
    /// What a full Kafka sink queue does: Drop (counted) or Block (the review waits up to
    /// --audit-kafka-block-timeout, then the record is dropped and counted).
    #[arg(long, value_enum, default_value_t = WhenFull::Drop, value_name = "MODE")]
    pub audit_kafka_when_full: WhenFull,
    /// With --audit-kafka-when-full=Block, the longest a review waits for room (Go duration;
    /// keep it well inside --review-timeout).
    #[arg(long, default_value = "100ms", value_name = "DURATION")]
    pub audit_kafka_block_timeout: String,
    /// Spool every record to this directory before it is sent, so that a broker outage or
    /// a restart loses nothing (one directory per sink and replica).
    #[arg(long, value_name = "DIR")]
    pub audit_kafka_spool_dir: Option<PathBuf>,
    /// The most bytes the spool holds on disk; then the queue in memory fills, then
    /// --audit-kafka-when-full applies.
    #[arg(long, default_value_t = 1 << 30, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1 << 20..))]
    pub audit_kafka_spool_max_bytes: u64,
    /// The longest one produce may take before it counts as failed and is retried (Go
    /// duration).
    #[arg(long, default_value = "10s", value_name = "DURATION")]
    pub audit_kafka_timeout: String,
    /// POST batches of audit records to this HTTPS URL; off when empty.
    #[arg(long, value_name = "URL")]
    pub audit_webhook_url: Option<String>,
    /// The CA bundle (PEM) the webhook's serving certificate must chain to (required with
    /// --audit-webhook-url).
    #[arg(long, value_name = "FILE", requires = "audit_webhook_url")]
    pub audit_webhook_ca_file: Option<PathBuf>,
    /// A client certificate (PEM) for mutual TLS with the webhook.
    #[arg(long, value_name = "FILE", requires = "audit_webhook_client_key_file")]
    pub audit_webhook_client_cert_file: Option<PathBuf>,
    /// The client certificate's private key (PEM).
    #[arg(long, value_name = "FILE", requires = "audit_webhook_client_cert_file")]
    pub audit_webhook_client_key_file: Option<PathBuf>,
    /// The body of a POST: jsonl (warrant's records, one per line) or eventlist (an
    /// audit.k8s.io/v1 EventList).
    #[arg(long, value_enum, default_value_t = WebhookFormat::JsonLines, value_name = "FORMAT")]
    pub audit_webhook_format: WebhookFormat,
    /// gzip-compress every POST (`Content-Encoding: gzip`).
    #[arg(long, default_value_t = true, value_name = "BOOL", action = clap::ArgAction::Set)]
    pub audit_webhook_gzip: bool,
    /// The most records in one POST.
    #[arg(long, default_value_t = 400, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub audit_webhook_batch_max_size: u32,
    /// The most records the webhook sink holds in memory.
    #[arg(long, default_value_t = 65_536, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub audit_webhook_queue_size: u32,
    /// What a full webhook sink queue does: Drop (counted) or Block (the review waits up to
    /// --audit-webhook-block-timeout, then the record is dropped and counted).
    #[arg(long, value_enum, default_value_t = WhenFull::Drop, value_name = "MODE")]
    pub audit_webhook_when_full: WhenFull,
    /// With --audit-webhook-when-full=Block, the longest a review waits for room (Go
    /// duration).
    #[arg(long, default_value = "100ms", value_name = "DURATION")]
    pub audit_webhook_block_timeout: String,
    /// Spool every record to this directory before it is sent (one directory per sink and
    /// replica).
    #[arg(long, value_name = "DIR")]
    pub audit_webhook_spool_dir: Option<PathBuf>,
    /// The most bytes the webhook spool holds on disk.
    #[arg(long, default_value_t = 1 << 30, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1 << 20..))]
    pub audit_webhook_spool_max_bytes: u64,
    /// The longest one POST may take before it counts as failed and is retried (Go
    /// duration).
    #[arg(long, default_value = "10s", value_name = "DURATION")]
    pub audit_webhook_timeout: String,
}

/// Why a remote sink cannot start.
#[derive(Debug, Error)]
pub(crate) enum AuditSinkError {
    /// A duration flag is not a positive duration.
    #[error(transparent)]
    Flag(#[from] DurationFlagError),
    /// A file named by a flag cannot be read or used.
    #[error("--{flag} {path}: {message}")]
    File {
        /// The flag, without its dashes.
        flag: &'static str,
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The TLS settings do not make a client configuration.
    #[error("--audit-{sink}-*: {source}")]
    Tls {
        /// The sink (`kafka`, `webhook`).
        sink: &'static str,
        /// The cause.
        #[source]
        source: rustls::Error,
    },
    /// The spool directory cannot be used.
    #[error("--audit-{sink}-spool-dir: {source}")]
    Spool {
        /// The sink.
        sink: &'static str,
        /// The cause.
        #[source]
        source: SpoolError,
    },
    /// The webhook URL is not an `https://` URL.
    #[error("--audit-webhook-url {url:?}: {message}")]
    WebhookUrl {
        /// The flag's value.
        url: String,
        /// What is wrong.
        message: String,
    },
    /// The webhook's HTTP client cannot be built.
    #[error("--audit-webhook-url: {0}")]
    WebhookClient(#[source] reqwest::Error),
}

fn read(flag: &'static str, path: &Path) -> Result<Vec<u8>, AuditSinkError> {
    std::fs::read(path).map_err(|e| AuditSinkError::File {
        flag,
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// A file and the flag (without its dashes) that names it.
type FileFlag<'a> = (&'static str, &'a Path);

/// The files of a TLS client configuration and the flags that name them.
struct TlsFiles<'a> {
    sink: &'static str,
    ca: FileFlag<'a>,
    /// The client certificate and its key.
    identity: Option<(FileFlag<'a>, FileFlag<'a>)>,
}

/// A TLS client configuration (rustls on ring) trusting the CA bundle alone, with the client
/// certificate when given.
fn tls_config(files: TlsFiles<'_>) -> Result<Arc<rustls::ClientConfig>, AuditSinkError> {
    let (flag, ca) = files.ca;
    let pem = read(flag, ca)?;
    let mut roots = rustls::RootCertStore::empty();
    let bad = |message: String| AuditSinkError::File {
        flag,
        path: ca.to_path_buf(),
        message,
    };
    for cert in CertificateDer::pem_slice_iter(&pem) {
        let cert = cert.map_err(|e| bad(e.to_string()))?;
        roots.add(cert).map_err(|e| bad(e.to_string()))?;
    }
    if roots.is_empty() {
        return Err(bad("no certificate in it".into()));
    }
    let tls = |source| AuditSinkError::Tls {
        sink: files.sink,
        source,
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(tls)?
        .with_root_certificates(roots);
    let config = match files.identity {
        Some(((cflag, cert), (kflag, key))) => {
            let chain = CertificateDer::pem_slice_iter(&read(cflag, cert)?)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| AuditSinkError::File {
                    flag: cflag,
                    path: cert.to_path_buf(),
                    message: e.to_string(),
                })?;
            let key_der = PrivateKeyDer::from_pem_slice(&read(kflag, key)?).map_err(|e| {
                AuditSinkError::File {
                    flag: kflag,
                    path: key.to_path_buf(),
                    message: e.to_string(),
                }
            })?;
            builder.with_client_auth_cert(chain, key_der).map_err(tls)?
        }
        None => builder.with_no_client_auth(),
    };
    Ok(Arc::new(config))
}

/// The TLS client configuration of the Kafka sink, if TLS is on.
fn kafka_tls(args: &AuditSinkArgs) -> Result<Option<Arc<rustls::ClientConfig>>, AuditSinkError> {
    let Some(ca) = &args.audit_kafka_tls_ca_file else {
        return Ok(None);
    };
    let identity = match (
        &args.audit_kafka_tls_cert_file,
        &args.audit_kafka_tls_key_file,
    ) {
        (Some(c), Some(k)) => Some((
            ("audit-kafka-tls-cert-file", c.as_path()),
            ("audit-kafka-tls-key-file", k.as_path()),
        )),
        _ => None,
    };
    tls_config(TlsFiles {
        sink: "kafka",
        ca: ("audit-kafka-tls-ca-file", ca),
        identity,
    })
    .map(Some)
}

/// The Kafka sink's SASL credentials, if any.
fn kafka_sasl(args: &AuditSinkArgs) -> Result<Option<Sasl>, AuditSinkError> {
    let (Some(mechanism), Some(username), Some(file)) = (
        args.audit_kafka_sasl_mechanism,
        &args.audit_kafka_sasl_username,
        &args.audit_kafka_sasl_password_file,
    ) else {
        return Ok(None);
    };
    let flag = "audit-kafka-sasl-password-file";
    let text = String::from_utf8(read(flag, file)?).map_err(|_| AuditSinkError::File {
        flag,
        path: file.clone(),
        message: "not UTF-8".into(),
    })?;
    let password = text.trim_end_matches(['\n', '\r']).to_owned();
    Ok(Some(Sasl {
        mechanism,
        username: username.clone(),
        password: password.into(),
    }))
}

/// Starts the remote sinks the flags ask for (on the current Tokio runtime).
pub(crate) fn start(
    args: &AuditSinkArgs,
    metrics: &SinkMetrics,
) -> Result<Vec<Arc<RemoteSink>>, AuditSinkError> {
    let mut sinks = Vec::new();
    if !args.audit_kafka_brokers.is_empty() {
        let timeout =
            duration_flag::positive("audit-kafka-timeout", &args.audit_kafka_timeout, "10s")?;
        let kafka = KafkaSettings {
            brokers: args.audit_kafka_brokers.clone(),
            topic: args.audit_kafka_topic.clone(),
            tls: kafka_tls(args)?,
            sasl: kafka_sasl(args)?,
            compression: args.audit_kafka_compression,
            client_id: "warrant".into(),
            request_deadline: timeout / 2,
        };
        let settings = SinkSettings {
            queue_records: args.audit_kafka_queue_size as usize,
            when_full: args.audit_kafka_when_full,
            block_timeout: duration_flag::positive(
                "audit-kafka-block-timeout",
                &args.audit_kafka_block_timeout,
                "100ms",
            )?,
            spool: args
                .audit_kafka_spool_dir
                .as_ref()
                .map(|dir| SpoolSettings {
                    dir: dir.clone(),
                    max_bytes: args.audit_kafka_spool_max_bytes,
                }),
            batch_records: args.audit_kafka_batch_max_size as usize,
            timeout,
            ..SinkSettings::new("kafka")
        };
        let producer = Arc::new(KafkaProducer::new(kafka));
        tracing::info!(to = producer.describe(), "audit records also go to Kafka");
        let sink = RemoteSink::start(settings, producer, metrics).map_err(|source| {
            AuditSinkError::Spool {
                sink: "kafka",
                source,
            }
        })?;
        sinks.push(Arc::new(sink));
    }
    if let Some(url) = &args.audit_webhook_url {
        sinks.push(Arc::new(webhook(args, url, metrics)?));
    }
    Ok(sinks)
}

/// The webhook sink the flags ask for.
fn webhook(
    args: &AuditSinkArgs,
    url: &str,
    metrics: &SinkMetrics,
) -> Result<RemoteSink, AuditSinkError> {
    let bad_url = |message: &str| AuditSinkError::WebhookUrl {
        url: url.to_owned(),
        message: message.to_owned(),
    };
    let parsed = reqwest::Url::parse(url).map_err(|e| bad_url(&e.to_string()))?;
    if parsed.scheme() != "https" {
        return Err(bad_url("the webhook must be https://"));
    }
    let Some(ca) = &args.audit_webhook_ca_file else {
        return Err(bad_url("--audit-webhook-ca-file is required"));
    };
    let identity = match (
        &args.audit_webhook_client_cert_file,
        &args.audit_webhook_client_key_file,
    ) {
        (Some(c), Some(k)) => Some((
            ("audit-webhook-client-cert-file", c.as_path()),
            ("audit-webhook-client-key-file", k.as_path()),
        )),
        _ => None,
    };
    let tls = tls_config(TlsFiles {
        sink: "webhook",
        ca: ("audit-webhook-ca-file", ca),
        identity,
    })?;
    let sender = WebhookSender::new(WebhookSettings {
        url: parsed,
        tls,
        format: args.audit_webhook_format,
        gzip: args.audit_webhook_gzip,
    })
    .map_err(AuditSinkError::WebhookClient)?;
    let settings = SinkSettings {
        queue_records: args.audit_webhook_queue_size as usize,
        when_full: args.audit_webhook_when_full,
        block_timeout: duration_flag::positive(
            "audit-webhook-block-timeout",
            &args.audit_webhook_block_timeout,
            "100ms",
        )?,
        spool: args
            .audit_webhook_spool_dir
            .as_ref()
            .map(|dir| SpoolSettings {
                dir: dir.clone(),
                max_bytes: args.audit_webhook_spool_max_bytes,
            }),
        batch_records: args.audit_webhook_batch_max_size as usize,
        timeout: duration_flag::positive(
            "audit-webhook-timeout",
            &args.audit_webhook_timeout,
            "10s",
        )?,
        ..SinkSettings::new("webhook")
    };
    tracing::info!(to = sender.describe(), "audit records also go to a webhook");
    RemoteSink::start(settings, Arc::new(sender), metrics).map_err(|source| AuditSinkError::Spool {
        sink: "webhook",
        source,
    })
}
