//! Memory during a broker outage: the `warrant` binary with the Kafka sink, its broker killed
//! while reviews arrive as fast as 64 concurrent callers can send them. The sink's queue keeps
//! to its bound (`warrant_audit_sink_queued_records` at most the queue size plus the batch in
//! flight, at every sample), every record is accounted for (sent before the outage, waiting,
//! or dropped and counted with `reason="queue-full"`), every review is answered, and the
//! process's resident memory (`VmRSS` in `/proc/<pid>/status`) stays under the ceiling
//! docs/audit.md gives: its level when the outage began plus [`RSS_HEADROOM`]. Bounded: about
//! 40 s in all, 20 s of them the outage.

use super::{PARTITIONS, Served, TOPIC, kafka_flags};
use crate::kafka::broker::Broker;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The sink's queue, in records (`--audit-kafka-queue-size`).
const QUEUE: u64 = 2_000;
/// Records per batch (`--audit-kafka-batch-max-size`): one batch may be in flight, out of the
/// queue but still counted as waiting.
const BATCH: u64 = 100;
/// How long the broker stays down.
const OUTAGE: Duration = Duration::from_secs(12);
/// Concurrent callers.
const CALLERS: usize = 64;
/// What the resident memory may grow by during the outage (docs/audit.md, "Memory during an
/// outage"): the queue's own bytes (here about 2 MB) and room for the allocator and the
/// connections' buffers under load.
const RSS_HEADROOM: u64 = 16 << 20;

/// The sum of the series of `family` (the name as exposed) whose labels contain `labels`.
fn metric(text: &str, family: &str, labels: &str) -> u64 {
    text.lines()
        .filter(|l| {
            l.starts_with(family) && l[family.len()..].starts_with('{') && l.contains(labels)
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>() as u64
}

/// The resident memory of process `pid`, in bytes.
fn rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kib * 1024
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broker_outage_under_load_keeps_the_queue_and_memory_within_bounds() {
    let mut broker = Broker::start("").await;
    broker.create_topic(TOPIC, PARTITIONS).await;
    // The test's own phases are timed, not the broker's start (a JVM on a busy machine).
    let started = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let queue = format!("--audit-kafka-queue-size={QUEUE}");
    let batch = format!("--audit-kafka-batch-max-size={BATCH}");
    let w = Arc::new(Served::start(dir.path(), &kafka_flags(&broker, &[&queue, &batch])).await);
    let pid = w.child.id();

    let stop = Arc::new(AtomicBool::new(false));
    let answered = Arc::new(AtomicU64::new(0));
    let callers: Vec<_> = (0..CALLERS)
        .map(|c| {
            let (w, stop, answered) = (w.clone(), stop.clone(), answered.clone());
            tokio::spawn(async move {
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    w.review(&format!("user-{}", n % 7), "shop", &format!("web-{c}-{n}"))
                        .await;
                    answered.fetch_add(1, Ordering::Relaxed);
                    n += 1;
                }
            })
        })
        .collect();
    // Records flow to the broker for a moment, then it dies.
    tokio::time::sleep(Duration::from_secs(2)).await;
    broker.kill();
    let outage = Instant::now();
    let (answered_at_kill, rss_at_kill) = (answered.load(Ordering::Relaxed), rss(pid));
    let (mut peak_queued, mut peak_rss, mut samples) = (0u64, rss_at_kill, 0u32);
    while outage.elapsed() < OUTAGE {
        let (code, text) = w.get("/metrics").await;
        assert_eq!(code, 200);
        let queued = metric(&text, "warrant_audit_sink_queued_records", "sink=\"kafka\"");
        assert!(
            queued <= QUEUE + BATCH,
            "{queued} records queued, over the bound of {QUEUE} + a batch of {BATCH}"
        );
        peak_queued = peak_queued.max(queued);
        peak_rss = peak_rss.max(rss(pid));
        samples += 1;
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let during = answered.load(Ordering::Relaxed) - answered_at_kill;
    stop.store(true, Ordering::Relaxed);
    for c in callers {
        c.await.unwrap();
    }
    let offered = answered.load(Ordering::Relaxed);
    // The counters are current; the queued gauge is brought up to date every second, so
    // scrape until the three add up (or 10 s have passed, and the assertion below says so).
    let deadline = Instant::now() + Duration::from_secs(10);
    let (queued, sent, full, dropped) = loop {
        let (_, text) = w.get("/metrics").await;
        let queued = metric(&text, "warrant_audit_sink_queued_records", "sink=\"kafka\"");
        let sent = metric(
            &text,
            "warrant_audit_sink_sent_records_total",
            "sink=\"kafka\"",
        );
        let full = metric(
            &text,
            "warrant_audit_sink_dropped_records_total",
            "reason=\"queue-full\"",
        );
        let dropped = metric(
            &text,
            "warrant_audit_sink_dropped_records_total",
            "sink=\"kafka\"",
        );
        if sent + queued + dropped == offered || Instant::now() >= deadline {
            break (queued, sent, full, dropped);
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    let rate = during as f64 / OUTAGE.as_secs_f64();
    eprintln!(
        "outage of {OUTAGE:?}: {during} reviews ({rate:.0}/s), {samples} samples, queued at most \
         {peak_queued} (bound {QUEUE} + {BATCH}), {sent} sent before, {queued} waiting, {dropped} \
         dropped ({full} queue-full); RSS {} KiB at the outage's start, at most {} KiB (+{} KiB)",
        rss_at_kill / 1024,
        peak_rss / 1024,
        (peak_rss - rss_at_kill) / 1024
    );
    assert!(queued <= QUEUE + BATCH, "{queued} waiting");
    assert!(
        full > 0,
        "the queue never filled: {during} reviews during the outage"
    );
    assert_eq!(
        sent + queued + dropped,
        offered,
        "every record sent, waiting or dropped and counted"
    );
    assert!(
        peak_rss <= rss_at_kill + RSS_HEADROOM,
        "RSS grew from {} KiB to {} KiB during the outage",
        rss_at_kill / 1024,
        peak_rss / 1024
    );
    // The outage is visible, and warrant stays ready.
    let (code, body) = w.get("/readyz?verbose").await;
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("[!]audit-sink-kafka failing"), "{body}");
    drop(broker);
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "took {:?}",
        started.elapsed()
    );
}
