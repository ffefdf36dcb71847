//! [`KafkaProducer`]: delivers a batch of records to the topic, each to the partition of its
//! decision id ([`super::partition_for`]), one produce request per partition, all in flight at
//! once, acks=all. The connection and the topic's partitions are looked up on first use and
//! again after any failure, so a broker restarted, moved or replaced is found again.

use super::murmur2::partition_for;
use super::settings::{KafkaCompression, KafkaSettings, SaslMechanism};
use crate::telemetry::audit::remote::{Deliver, DeliverError, SinkRecord};
use chrono::{TimeZone, Utc};
use futures_util::future::BoxFuture;
use rskafka::client::partition::{Compression, PartitionClient, UnknownTopicHandling};
use rskafka::client::{ClientBuilder, Credentials, SaslConfig};
use rskafka::record::Record;
use secrecy::ExposeSecret;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;

/// The topic's partition clients (each holds the connections it needs).
struct Connected {
    partitions: Vec<Arc<PartitionClient>>,
}

/// The Kafka sink's receiver.
pub struct KafkaProducer {
    settings: KafkaSettings,
    connected: Mutex<Option<Connected>>,
    /// Round robin for records without a key (a batch goes to one partition).
    next_unkeyed: std::sync::atomic::AtomicU32,
}

impl std::fmt::Debug for KafkaProducer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KafkaProducer")
            .field("brokers", &self.settings.brokers)
            .field("topic", &self.settings.topic)
            .finish_non_exhaustive()
    }
}

fn failed(what: impl Into<String>, e: rskafka::client::error::Error) -> DeliverError {
    DeliverError::Receiver {
        what: what.into(),
        source: Box::new(e),
    }
}

impl KafkaProducer {
    /// A producer for `settings`; it connects on its first batch.
    pub fn new(settings: KafkaSettings) -> Self {
        Self {
            settings,
            connected: Mutex::new(None),
            next_unkeyed: Default::default(),
        }
    }

    async fn connect(&self) -> Result<Connected, DeliverError> {
        let s = &self.settings;
        let mut builder = ClientBuilder::new(s.brokers.clone())
            .client_id(s.client_id.clone())
            .backoff_config(rskafka::BackoffConfig {
                init_backoff: Duration::from_millis(100),
                max_backoff: Duration::from_secs(1),
                base: 2.0,
                deadline: Some(s.request_deadline),
            });
        if let Some(tls) = &s.tls {
            builder = builder.tls_config(tls.clone());
        }
        if let Some(sasl) = &s.sasl {
            let credentials = Credentials::new(
                sasl.username.clone(),
                sasl.password.expose_secret().to_owned(),
            );
            builder = builder.sasl_config(match sasl.mechanism {
                SaslMechanism::Plain => SaslConfig::Plain(credentials),
                SaslMechanism::ScramSha256 => SaslConfig::ScramSha256(credentials),
                SaslMechanism::ScramSha512 => SaslConfig::ScramSha512(credentials),
            });
        }
        let brokers = s.brokers.join(",");
        let client = builder
            .build()
            .await
            .map_err(|e| failed(format!("connect to {brokers}"), e))?;
        let topics = client
            .list_topics()
            .await
            .map_err(|e| failed(format!("list the topics of {brokers}"), e))?;
        let count = topics
            .iter()
            .find(|t| t.name == s.topic)
            .map_or(0, |t| t.partitions.len());
        if count == 0 {
            return Err(DeliverError::Refused(format!(
                "topic {} does not exist at {brokers}",
                s.topic
            )));
        }
        let mut partitions = Vec::with_capacity(count);
        for p in 0..count {
            let index = i32::try_from(p).unwrap_or(i32::MAX);
            let pc = client
                .partition_client(s.topic.clone(), index, UnknownTopicHandling::Error)
                .await
                .map_err(|e| failed(format!("open partition {p} of topic {}", s.topic), e))?;
            partitions.push(Arc::new(pc));
        }
        Ok(Connected { partitions })
    }

    async fn send(&self, batch: &[SinkRecord]) -> Result<(), DeliverError> {
        let mut guard = self.connected.lock().await;
        if guard.is_none() {
            *guard = Some(self.connect().await?);
        }
        let Some(connected) = guard.as_ref() else {
            return Err(DeliverError::Refused("not connected".into()));
        };
        let n = u32::try_from(connected.partitions.len()).unwrap_or(u32::MAX);
        let unkeyed = self
            .next_unkeyed
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            % n.max(1);
        // Each partition's records in the order of the batch (so per key, in order).
        let mut by_partition: BTreeMap<u32, Vec<Record>> = BTreeMap::new();
        for r in batch {
            let partition = match &r.key {
                Some(k) => partition_for(k.as_bytes(), n),
                None => unkeyed,
            };
            by_partition.entry(partition).or_default().push(Record {
                key: r.key.as_ref().map(|k| k.as_bytes().to_vec()),
                value: Some(r.json.clone()),
                headers: BTreeMap::new(),
                timestamp: Utc
                    .timestamp_millis_opt(r.queued_ms)
                    .single()
                    .unwrap_or_else(Utc::now),
            });
        }
        let compression = match self.settings.compression {
            KafkaCompression::None => Compression::NoCompression,
            KafkaCompression::Gzip => Compression::Gzip,
        };
        // The partitions' requests go out together (the client multiplexes them on its
        // connections): a batch costs one round trip, not one per partition.
        let produced = by_partition.into_iter().filter_map(|(partition, records)| {
            let pc = connected.partitions.get(partition as usize)?;
            Some(async move { (partition, pc.produce(records, compression).await) })
        });
        for (partition, result) in futures_util::future::join_all(produced).await {
            if let Err(e) = result {
                // Look everything up again on the next attempt.
                *guard = None;
                return Err(failed(
                    format!(
                        "produce to partition {partition} of topic {}",
                        self.settings.topic
                    ),
                    e,
                ));
            }
        }
        Ok(())
    }
}

impl Deliver for KafkaProducer {
    fn deliver<'a>(&'a self, batch: &'a [SinkRecord]) -> BoxFuture<'a, Result<(), DeliverError>> {
        Box::pin(async move {
            let result = self.send(batch).await;
            if result.is_err() {
                // A timeout of the caller drops this future mid-way; a failure here drops the
                // connection so that the next attempt starts afresh.
                *self.connected.lock().await = None;
            }
            result
        })
    }

    fn describe(&self) -> String {
        format!(
            "kafka topic {} at {}",
            self.settings.topic,
            self.settings.brokers.join(",")
        )
    }
}
