//! [`KafkaSettings`]: where the Kafka sink sends and how it authenticates.

use secrecy::SecretString;
use std::sync::Arc;
use std::time::Duration;

/// The SASL mechanisms the sink speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SaslMechanism {
    /// PLAIN (RFC 4616): the password in the clear, so only over TLS.
    #[value(name = "PLAIN")]
    Plain,
    /// SCRAM-SHA-256 (RFC 7677).
    #[value(name = "SCRAM-SHA-256")]
    ScramSha256,
    /// SCRAM-SHA-512.
    #[value(name = "SCRAM-SHA-512")]
    ScramSha512,
}

/// SASL credentials.
#[derive(Debug, Clone)]
pub struct Sasl {
    /// The mechanism.
    pub mechanism: SaslMechanism,
    /// The user name.
    pub username: String,
    /// The password (never printed).
    pub password: SecretString,
}

/// The compression of produced batches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum KafkaCompression {
    /// None.
    None,
    /// gzip.
    Gzip,
}

/// Where and how the Kafka sink produces.
#[derive(Debug, Clone)]
pub struct KafkaSettings {
    /// Bootstrap brokers, `host:port`.
    pub brokers: Vec<String>,
    /// The topic (it must exist, or the brokers must create topics on first use).
    pub topic: String,
    /// TLS (the CA to trust, a client certificate for mTLS), or plaintext.
    pub tls: Option<Arc<rustls::ClientConfig>>,
    /// SASL credentials, if any.
    pub sasl: Option<Sasl>,
    /// The compression of produced batches.
    pub compression: KafkaCompression,
    /// The client id brokers see.
    pub client_id: String,
    /// How long the client's own retries of one request (connecting, authenticating,
    /// producing) may last before it reports the last error; kept below the sink's timeout
    /// so that the cause (a refused password, an unreachable broker) is what the sink reports.
    pub request_deadline: Duration,
}
