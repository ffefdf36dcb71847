//! A remote sink loses nothing it accepted, keeps the order, bounds its memory and disk, and
//! says when it fails. The receiver here is a fault injector (it fails, stalls or takes
//! batches on command); the real receivers have tests of their own against real servers.

use super::*;
use futures_util::future::BoxFuture;
use prometheus_client::registry::Registry;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32};

/// A receiver that fails the next `fail` batches, stalls while `stall`, and keeps what it
/// takes.
#[derive(Debug, Default)]
struct Receiver {
    got: Mutex<Vec<SinkRecord>>,
    batches: AtomicU32,
    fail: AtomicU32,
    stall: AtomicBool,
}

impl Deliver for Receiver {
    fn deliver<'a>(&'a self, batch: &'a [SinkRecord]) -> BoxFuture<'a, Result<(), DeliverError>> {
        Box::pin(async move {
            while self.stall.load(Ordering::SeqCst) {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            if self
                .fail
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok()
            {
                return Err(DeliverError::Refused("injected failure".into()));
            }
            self.batches.fetch_add(1, Ordering::SeqCst);
            self.got.lock().unwrap().extend_from_slice(batch);
            Ok(())
        })
    }

    fn describe(&self) -> String {
        "the test receiver".into()
    }
}

impl Receiver {
    fn numbers(&self) -> Vec<u64> {
        self.got
            .lock()
            .unwrap()
            .iter()
            .map(|r| {
                let v: serde_json::Value = serde_json::from_slice(&r.json).unwrap();
                v["n"].as_u64().unwrap()
            })
            .collect()
    }
}

fn record(n: u64) -> SinkRecord {
    SinkRecord::now(
        Some(format!("key-{}", n % 3)),
        format!("{{\"n\":{n}}}").into_bytes(),
    )
}

struct Metrics {
    registry: Registry,
    sinks: SinkMetrics,
}

fn metrics() -> Metrics {
    let mut registry = Registry::default();
    let sinks = SinkMetrics::register(&mut registry);
    Metrics { registry, sinks }
}

impl Metrics {
    /// The value of the series `name{labels}` (0 when absent).
    fn value(&self, series: &str) -> f64 {
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.registry).unwrap();
        text.lines()
            .find(|l| l.starts_with(series) && l[series.len()..].starts_with(' '))
            .and_then(|l| l.rsplit(' ').next())
            .map_or(0.0, |v| v.parse().unwrap())
    }
}

fn settings() -> SinkSettings {
    SinkSettings {
        max_backoff: Duration::from_millis(200),
        batch_records: 64,
        ..SinkSettings::new("test")
    }
}

async fn until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < deadline, "not within 10 s: {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_record_arrives_once_in_order_in_bounded_batches() {
    let m = metrics();
    let rx = Arc::new(Receiver::default());
    let sink = RemoteSink::start(settings(), rx.clone(), &m.sinks).unwrap();
    for n in 0..1000 {
        sink.offer(record(n));
    }
    until("1000 records", || rx.numbers().len() == 1000).await;
    assert_eq!(rx.numbers(), (0..1000).collect::<Vec<_>>());
    assert!(rx.batches.load(Ordering::SeqCst) >= 1000 / 64);
    let keys: Vec<Option<String>> = rx
        .got
        .lock()
        .unwrap()
        .iter()
        .map(|r| r.key.clone())
        .collect();
    assert_eq!(keys[4], Some("key-1".into()));
    sink.close(Duration::from_secs(1)).await;
    assert_eq!(
        m.value("warrant_audit_sink_sent_records_total{sink=\"test\"}"),
        1000.0
    );
    assert_eq!(
        m.value("warrant_audit_sink_queued_records{sink=\"test\"}"),
        0.0
    );
    assert_eq!(m.value("warrant_audit_sink_up{sink=\"test\"}"), 1.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_batch_is_retried_first_until_taken_and_the_outage_is_reported() {
    let m = metrics();
    let rx = Arc::new(Receiver::default());
    rx.fail.store(3, Ordering::SeqCst);
    let sink = RemoteSink::start(settings(), rx.clone(), &m.sinks).unwrap();
    for n in 0..10 {
        sink.offer(record(n));
    }
    until("the first failure", || sink.status().problem.is_some()).await;
    let problem = sink.status().problem.unwrap();
    assert!(problem.contains("injected failure"), "{problem}");
    assert!(problem.contains("records waiting"), "{problem}");
    until("10 records", || rx.numbers().len() == 10).await;
    assert_eq!(rx.numbers(), (0..10).collect::<Vec<_>>());
    // The receiver has the records before the sender, back from delivering them, marks the
    // sink healthy: wait for that too.
    until("the recovery", || {
        sink.status().problem.is_none() && m.value("warrant_audit_sink_up{sink=\"test\"}") == 1.0
    })
    .await;
    assert_eq!(
        m.value("warrant_audit_sink_failed_batches_total{sink=\"test\"}"),
        3.0
    );
    sink.close(Duration::from_secs(1)).await;
}

/// A sink with a queue of 10 whose receiver stalls on record 0, taken by the sender: the queue
/// is empty and ten more records fill it.
async fn stalled_with_room_for_ten() -> (Metrics, Arc<Receiver>, RemoteSink) {
    let m = metrics();
    let rx = Arc::new(Receiver::default());
    rx.stall.store(true, Ordering::SeqCst);
    let s = SinkSettings {
        queue_records: 10,
        batch_records: 5,
        ..settings()
    };
    let sink = RemoteSink::start(s, rx.clone(), &m.sinks).unwrap();
    sink.offer(record(0));
    until("the sender to take the first record", || {
        sink.shared.queue.is_empty()
    })
    .await;
    (m, rx, sink)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_queue_drops_and_counts_with_drop() {
    let (m, rx, sink) = stalled_with_room_for_ten().await;
    let started = Instant::now();
    for n in 1..=15 {
        sink.offer(record(n));
    }
    assert!(
        started.elapsed() < Duration::from_millis(100),
        "Drop never waits"
    );
    assert_eq!(
        m.value("warrant_audit_sink_dropped_records_total{sink=\"test\",reason=\"queue-full\"}"),
        5.0
    );
    until(
        "the queued gauge to count the stalled one and the queue",
        || m.value("warrant_audit_sink_queued_records{sink=\"test\"}") == 11.0,
    )
    .await;
    rx.stall.store(false, Ordering::SeqCst);
    until("11 records", || rx.numbers().len() == 11).await;
    assert_eq!(rx.numbers(), (0..=10).collect::<Vec<_>>());
    sink.close(Duration::from_secs(1)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_of_drops_ends_only_once_the_queue_has_drained_to_half() {
    let (_m, rx, sink) = stalled_with_room_for_ten().await;
    for n in 1..=11 {
        sink.offer(record(n));
    }
    assert!(sink.dropping.load(Ordering::SeqCst), "the 11th was dropped");
    // Room for one: queued, but the run of drops goes on (9 + 1 of 10 wait).
    let _ = sink.shared.queue.take(1, usize::MAX);
    sink.offer(record(12));
    assert!(sink.dropping.load(Ordering::SeqCst));
    // Drained to half: the run ends with this record.
    let _ = sink.shared.queue.take(6, usize::MAX);
    sink.offer(record(13));
    assert_eq!(sink.shared.queue.len(), 5);
    assert!(!sink.dropping.load(Ordering::SeqCst));
    rx.stall.store(false, Ordering::SeqCst);
    sink.close(Duration::from_secs(1)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn block_waits_for_room_up_to_its_timeout_then_drops_and_counts() {
    let m = metrics();
    let rx = Arc::new(Receiver::default());
    rx.stall.store(true, Ordering::SeqCst);
    let s = SinkSettings {
        queue_records: 2,
        batch_records: 1,
        when_full: WhenFull::Block,
        block_timeout: Duration::from_millis(200),
        ..settings()
    };
    let sink = Arc::new(RemoteSink::start(s, rx.clone(), &m.sinks).unwrap());
    sink.offer(record(0));
    until("the sender to take the first record", || {
        sink.shared.queue.is_empty()
    })
    .await;
    sink.offer(record(1));
    sink.offer(record(2));
    // Full: the next offer waits its whole timeout, then drops.
    let started = Instant::now();
    let s2 = sink.clone();
    tokio::task::spawn_blocking(move || s2.offer(record(3)))
        .await
        .unwrap();
    let waited = started.elapsed();
    assert!(waited >= Duration::from_millis(200), "{waited:?}");
    assert!(waited < Duration::from_secs(2), "{waited:?}");
    assert_eq!(
        m.value("warrant_audit_sink_dropped_records_total{sink=\"test\",reason=\"block-timeout\"}"),
        1.0
    );
    // Room made while it waits: the record is queued, not dropped.
    let s3 = sink.clone();
    let waiting = tokio::task::spawn_blocking(move || s3.offer(record(4)));
    tokio::time::sleep(Duration::from_millis(50)).await;
    rx.stall.store(false, Ordering::SeqCst);
    waiting.await.unwrap();
    until("4 records", || rx.numbers().len() == 4).await;
    assert_eq!(rx.numbers(), vec![0, 1, 2, 4]);
    sink.close(Duration::from_secs(1)).await;
}

fn spooled(dir: &std::path::Path, max_bytes: u64) -> SinkSettings {
    SinkSettings {
        spool: Some(SpoolSettings {
            dir: dir.to_path_buf(),
            max_bytes,
        }),
        ..settings()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spooled_records_are_sent_after_a_restart_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let m = metrics();
    let down = Arc::new(Receiver::default());
    down.fail.store(u32::MAX, Ordering::SeqCst);
    let sink = RemoteSink::start(spooled(dir.path(), 64 << 20), down.clone(), &m.sinks).unwrap();
    for n in 0..500 {
        sink.offer(record(n));
    }
    // The gauges are set after each move onto the spool, so they may lag it: wait for the
    // spool to hold all 500 records, then for the gauges to show them and their bytes.
    until("500 records on the spool", || {
        sink.shared.spool().map_or(0, |s| s.records()) == 500
    })
    .await;
    until("500 records and their bytes in the gauges", || {
        m.value("warrant_audit_sink_queued_records{sink=\"test\"}") == 500.0
            && m.value("warrant_audit_sink_spool_bytes{sink=\"test\"}") > 500.0 * 8.0
    })
    .await;
    sink.close(Duration::from_millis(300)).await;
    drop(sink);
    assert!(down.numbers().is_empty());

    // Started again on the same spool: the records of the first run go first, then new ones.
    let m = metrics();
    let up = Arc::new(Receiver::default());
    let sink = RemoteSink::start(spooled(dir.path(), 64 << 20), up.clone(), &m.sinks).unwrap();
    for n in 500..600 {
        sink.offer(record(n));
    }
    until("600 records", || up.numbers().len() >= 600).await;
    assert_eq!(up.numbers(), (0..600).collect::<Vec<_>>());
    until("an empty spool", || {
        m.value("warrant_audit_sink_queued_records{sink=\"test\"}") == 0.0
    })
    .await;
    sink.close(Duration::from_secs(1)).await;
    drop(sink);
    // Delivered segments are removed (the one appends went to stays, empty of unsent lines).
    let reopened = spool::Spool::open(dir.path(), 64 << 20).unwrap();
    assert_eq!(reopened.records(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_spool_stays_within_its_bytes_and_the_queue_then_drops() {
    let dir = tempfile::tempdir().unwrap();
    let m = metrics();
    let down = Arc::new(Receiver::default());
    down.fail.store(u32::MAX, Ordering::SeqCst);
    let max = 256 << 10;
    let s = SinkSettings {
        queue_records: 100,
        ..spooled(dir.path(), max)
    };
    let sink = RemoteSink::start(s, down.clone(), &m.sinks).unwrap();
    let big = "x".repeat(1000);
    let mut n = 0;
    until("drops once the spool is full", || {
        for _ in 0..50 {
            sink.offer(SinkRecord::now(
                None,
                format!("{{\"n\":{n},\"pad\":\"{big}\"}}").into_bytes(),
            ));
            n += 1;
        }
        m.value("warrant_audit_sink_dropped_records_total{sink=\"test\",reason=\"queue-full\"}")
            > 0.0
    })
    .await;
    let on_disk: u64 = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    // The spooler stops once less than 64 KiB is left; one batch may pass the line.
    assert!(on_disk <= max + (4096 * 1100), "{on_disk} bytes on disk");
    assert!(on_disk >= max - (64 << 10), "{on_disk} bytes on disk");
    sink.close(Duration::from_millis(200)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_torn_by_a_crash_is_skipped_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join(format!("{:020}.spool", 7)),
        "1 k-1 {\"n\":1}\n2 - {\"n\":2}\n3 k-3 {\"n\":",
    )
    .unwrap();
    let m = metrics();
    let rx = Arc::new(Receiver::default());
    let sink = RemoteSink::start(spooled(dir.path(), 64 << 20), rx.clone(), &m.sinks).unwrap();
    sink.offer(record(4));
    until("3 records", || rx.numbers().len() == 3).await;
    assert_eq!(rx.numbers(), vec![1, 2, 4]);
    let got = rx.got.lock().unwrap().clone();
    assert_eq!((got[0].key.as_deref(), got[0].queued_ms), (Some("k-1"), 1));
    assert_eq!(got[1].key, None);
    assert_eq!(
        m.value("warrant_audit_sink_dropped_records_total{sink=\"test\",reason=\"unreadable\"}"),
        1.0
    );
    sink.close(Duration::from_secs(1)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_oldest_unsent_age_grows_during_an_outage() {
    let m = metrics();
    let rx = Arc::new(Receiver::default());
    rx.fail.store(u32::MAX, Ordering::SeqCst);
    let sink = RemoteSink::start(settings(), rx.clone(), &m.sinks).unwrap();
    sink.offer(record(0));
    until("an age of a second", || {
        m.value("warrant_audit_sink_oldest_unsent_age_seconds{sink=\"test\"}") >= 1.0
    })
    .await;
    assert_eq!(m.value("warrant_audit_sink_up{sink=\"test\"}"), 0.0);
    sink.close(Duration::from_millis(100)).await;
    assert_eq!(
        m.value("warrant_audit_sink_dropped_records_total{sink=\"test\",reason=\"closed\"}"),
        1.0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_trickling_in_linger_into_one_batch_and_without_linger_go_out_as_they_come() {
    // 10 records, one every 10 ms: a 2 s linger gathers them all into the first batch (with
    // room for a busy machine's delays); without one the sender takes them as they come, in
    // several batches. The default is Kafka's 5 ms.
    assert_eq!(SinkSettings::new("test").linger, Duration::from_millis(5));
    for (linger, fewest, most) in [(Duration::from_secs(2), 1, 1), (Duration::ZERO, 2, 10)] {
        let m = metrics();
        let rx = Arc::new(Receiver::default());
        let s = SinkSettings {
            linger,
            ..settings()
        };
        let sink = RemoteSink::start(s, rx.clone(), &m.sinks).unwrap();
        for n in 0..10 {
            sink.offer(record(n));
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        until("10 records", || rx.numbers().len() == 10).await;
        assert_eq!(rx.numbers(), (0..10).collect::<Vec<_>>());
        let batches = rx.batches.load(Ordering::SeqCst);
        assert!(
            (fewest..=most).contains(&batches),
            "linger {linger:?}: {batches} batches for 10 records"
        );
        sink.close(Duration::from_secs(1)).await;
    }
}
