//! The Kafka sink: every audit record a message of one topic, keyed by its decision id so
//! that the records of one decision land in one partition, in order. A [`KafkaProducer`] is the
//! [`super::remote::Deliver`] of a [`super::remote::RemoteSink`], which queues, spools and
//! retries.
//!
//! The client is `rskafka` (pure Rust, rustls on ring): acks=all on every produce (the
//! client sends no other), gzip compression or none, TLS with an optional client certificate,
//! SASL PLAIN and SCRAM-SHA-256/512. It has no idempotent producer: a batch retried after a
//! lost acknowledgement is written twice, which the record's `id` lets a consumer drop.

mod murmur2;
mod producer;
mod settings;

pub use murmur2::partition_for;
pub use producer::KafkaProducer;
pub use settings::{KafkaCompression, KafkaSettings, Sasl, SaslMechanism};
