//! A real Apache Kafka broker for the Kafka sink's tests: one KRaft node (broker and
//! controller) on loopback ports, started by `tests/kafka/broker.sh` (the jars of
//! `tests/kafka/install.sh`, from `$WARRANT_KAFKA_LIBS` when `.ci/run` already ran it), its data
//! in a temporary directory, killed (SIGKILL) and restarted on the same data and ports, and
//! killed when dropped.

use crate::support::repo;
use rskafka::client::partition::{OffsetAt, UnknownTopicHandling};
use rskafka::client::{Client, ClientBuilder};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use warrant::telemetry::audit::kafka::{KafkaCompression, KafkaProducer, KafkaSettings};

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `tests/kafka/broker.sh` with `args`.
fn broker_sh(args: &[&str]) -> Command {
    let mut c = Command::new("bash");
    c.arg(repo("tests/kafka/broker.sh")).args(args);
    c
}

/// A running (or killed) broker.
pub struct Broker {
    pub port: u16,
    dir: tempfile::TempDir,
    child: Option<Child>,
}

impl Broker {
    /// Formats a fresh data directory and starts the broker; `listeners`, when not empty,
    /// replaces the plaintext listener lines of its configuration (a SASL listener, for
    /// instance), with `{port}` and `{controller}` standing for the two ports.
    pub async fn start(listeners: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let (port, controller) = (free_port(), free_port());
        let (port_text, controller_text) = (port.to_string(), controller.to_string());
        let listeners = listeners
            .replace("{port}", &port_text)
            .replace("{controller}", &controller_text);
        let dir_text = dir.path().display().to_string();
        let mut init = vec!["init", &dir_text, &port_text, &controller_text];
        if !listeners.is_empty() {
            init.push(&listeners);
        }
        let status = broker_sh(&init).stdout(Stdio::null()).status().unwrap();
        assert!(status.success(), "tests/kafka/broker.sh init failed");
        let mut b = Self {
            port,
            dir,
            child: None,
        };
        b.restart().await;
        b
    }

    /// `host:port` of the client listener.
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// A producer for `topic` on this broker, plaintext, with the test client id.
    pub fn producer(&self, topic: &str, compression: KafkaCompression) -> KafkaProducer {
        KafkaProducer::new(KafkaSettings {
            brokers: vec![self.address()],
            topic: topic.into(),
            tls: None,
            sasl: None,
            compression,
            client_id: "warrant-test".into(),
            request_deadline: Duration::from_secs(5),
        })
    }

    /// The broker's own log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("broker.log")).unwrap_or_default()
    }

    /// Starts the broker on its data and ports, and waits (60 s at most) until it has
    /// started.
    pub async fn restart(&mut self) {
        assert!(self.child.is_none(), "the broker is running");
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.path().join("broker.log"))
            .unwrap();
        let started_before = self.log().matches("Kafka Server started").count();
        let dir = self.dir.path().display().to_string();
        let child = broker_sh(&["run", &dir, "-XX:TieredStopAtLevel=1"])
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(60);
        while self.log().matches("Kafka Server started").count() == started_before {
            if let Some(status) = self.child.as_mut().unwrap().try_wait().unwrap() {
                panic!("the broker exited with {status}:\n{}", self.log());
            }
            assert!(
                Instant::now() < deadline,
                "the broker did not start within 60 s:\n{}",
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Kills the broker (SIGKILL: no clean shutdown).
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// A plaintext client.
    pub async fn client(&self) -> Client {
        ClientBuilder::new(vec![self.address()])
            .build()
            .await
            .unwrap()
    }

    /// Creates `topic` with `partitions` partitions.
    pub async fn create_topic(&self, topic: &str, partitions: i32) {
        let client = self.client().await;
        client
            .controller_client()
            .unwrap()
            .create_topic(topic, partitions, 1, 10_000)
            .await
            .unwrap();
    }

    /// Every message of `topic` so far, by partition: (key, value), in offset order.
    pub async fn consume(&self, topic: &str, partitions: i32) -> Vec<Vec<(String, Vec<u8>)>> {
        let client = self.client().await;
        let mut out = Vec::new();
        for p in 0..partitions {
            let pc = client
                .partition_client(topic, p, UnknownTopicHandling::Retry)
                .await
                .unwrap();
            let end = pc.get_offset(OffsetAt::Latest).await.unwrap();
            let mut offset = pc.get_offset(OffsetAt::Earliest).await.unwrap();
            let mut messages = Vec::new();
            while offset < end {
                let (records, _) = pc.fetch_records(offset, 1..8_000_000, 1_000).await.unwrap();
                for r in records {
                    offset = r.offset + 1;
                    let key = String::from_utf8(r.record.key.unwrap_or_default()).unwrap();
                    messages.push((key, r.record.value.unwrap_or_default()));
                }
            }
            out.push(messages);
        }
        out
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        self.kill();
    }
}
