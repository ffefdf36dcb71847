//! The remote audit sinks of `warrant serve` (`--audit-kafka-*`), as flags in Kubernetes
//! style: each sink is off until its address is given, and each has its own queue, spool and
//! choice when full ([`crate::telemetry::audit::remote`]).

use super::duration_flag::{self, DurationFlagError};
use crate::telemetry::audit::kafka::{
    KafkaCompression, KafkaProducer, KafkaSettings, Sasl, SaslMechanism,
};
use crate::telemetry::audit::remote::{
    RemoteSink, SinkMetrics, SinkSettings, SpoolError, SpoolSettings, WhenFull,
};
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
    #[error("--audit-kafka-tls-*: {0}")]
    Tls(#[source] rustls::Error),
    /// The spool directory cannot be used.
    #[error("--audit-kafka-spool-dir: {0}")]
    Spool(#[source] SpoolError),
}

fn read(flag: &'static str, path: &Path) -> Result<Vec<u8>, AuditSinkError> {
    std::fs::read(path).map_err(|e| AuditSinkError::File {
        flag,
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// The TLS client configuration of the Kafka sink, if TLS is on.
fn kafka_tls(args: &AuditSinkArgs) -> Result<Option<Arc<rustls::ClientConfig>>, AuditSinkError> {
    let Some(ca) = &args.audit_kafka_tls_ca_file else {
        return Ok(None);
    };
    let flag = "audit-kafka-tls-ca-file";
    let pem = read(flag, ca)?;
    let mut roots = rustls::RootCertStore::empty();
    let bad = |message: String| AuditSinkError::File {
        flag,
        path: ca.clone(),
        message,
    };
    for cert in CertificateDer::pem_slice_iter(&pem) {
        let cert = cert.map_err(|e| bad(e.to_string()))?;
        roots.add(cert).map_err(|e| bad(e.to_string()))?;
    }
    if roots.is_empty() {
        return Err(bad("no certificate in it".into()));
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(AuditSinkError::Tls)?
        .with_root_certificates(roots);
    let config = match (
        &args.audit_kafka_tls_cert_file,
        &args.audit_kafka_tls_key_file,
    ) {
        (Some(cert), Some(key)) => {
            let cflag = "audit-kafka-tls-cert-file";
            let kflag = "audit-kafka-tls-key-file";
            let chain = CertificateDer::pem_slice_iter(&read(cflag, cert)?)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| AuditSinkError::File {
                    flag: cflag,
                    path: cert.clone(),
                    message: e.to_string(),
                })?;
            let key_der = PrivateKeyDer::from_pem_slice(&read(kflag, key)?).map_err(|e| {
                AuditSinkError::File {
                    flag: kflag,
                    path: key.clone(),
                    message: e.to_string(),
                }
            })?;
            builder
                .with_client_auth_cert(chain, key_der)
                .map_err(AuditSinkError::Tls)?
        }
        _ => builder.with_no_client_auth(),
    };
    Ok(Some(Arc::new(config)))
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
        tracing::info!(
            to = crate::telemetry::audit::remote::Deliver::describe(producer.as_ref()),
            "audit records also go to Kafka"
        );
        let sink = RemoteSink::start(settings, producer, metrics).map_err(AuditSinkError::Spool)?;
        sinks.push(Arc::new(sink));
    }
    Ok(sinks)
}
