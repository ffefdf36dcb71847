//! Audit records never vanish silently.

use super::*;
use std::time::Duration;

fn dropped(metrics: &Metrics) -> u64 {
    let text = metrics.encode();
    let line = text
        .lines()
        .find(|l| l.starts_with("warrant_audit_records_dropped_total"))
        .unwrap_or("x 0");
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

/// A file moved away (log rotation) is reopened at its path: the records after the move land
/// in the new file, those before it in the moved one, none is lost.
#[test]
fn a_rotated_audit_file_is_reopened() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.log");
    let metrics = Arc::new(Metrics::new());
    let sink = AuditSink::open(&AuditTarget::File(path.clone()), metrics.clone()).unwrap();
    sink.send(b"{\"n\":1}".to_vec(), None);
    std::thread::sleep(Duration::from_millis(200));
    std::fs::rename(&path, dir.path().join("audit.log.1")).unwrap();
    // The writer notices within its rotation check (1 s) even with no records flowing.
    std::thread::sleep(Duration::from_millis(1500));
    sink.send(b"{\"n\":2}".to_vec(), None);
    drop(sink);
    let old = std::fs::read_to_string(dir.path().join("audit.log.1")).unwrap();
    let new = std::fs::read_to_string(&path).unwrap();
    assert_eq!((old.as_str(), new.as_str()), ("{\"n\":1}\n", "{\"n\":2}\n"));
    assert_eq!(dropped(&metrics), 0);
}

/// SIGHUP reopens the file at once (`AuditSink::reopen`), as log rotation tools expect: the
/// record sent right after the move and the reopen lands in the new file, well before the
/// writer's own once-a-second rotation check would have noticed.
#[test]
fn sighup_reopens_the_audit_file_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.log");
    let metrics = Arc::new(Metrics::new());
    let sink = AuditSink::open(&AuditTarget::File(path.clone()), metrics.clone()).unwrap();
    sink.send(b"{\"n\":1}".to_vec(), None);
    std::thread::sleep(Duration::from_millis(100));
    std::fs::rename(&path, dir.path().join("audit.log.1")).unwrap();
    sink.reopen();
    sink.send(b"{\"n\":2}".to_vec(), None);
    let deadline = std::time::Instant::now() + Duration::from_millis(500);
    while std::fs::read_to_string(&path)
        .unwrap_or_default()
        .is_empty()
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the record after SIGHUP's reopen did not reach the new file within 500 ms"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    drop(sink);
    let old = std::fs::read_to_string(dir.path().join("audit.log.1")).unwrap();
    let new = std::fs::read_to_string(&path).unwrap();
    assert_eq!((old.as_str(), new.as_str()), ("{\"n\":1}\n", "{\"n\":2}\n"));
    assert_eq!(dropped(&metrics), 0);
}

/// Records the target refuses (`/dev/full`: every write fails with ENOSPC) are counted, one by
/// one, instead of disappearing.
#[cfg(target_os = "linux")]
#[test]
fn records_that_cannot_be_written_are_counted() {
    let metrics = Arc::new(Metrics::new());
    let sink = AuditSink::open(
        &AuditTarget::File(std::path::PathBuf::from("/dev/full")),
        metrics.clone(),
    )
    .unwrap();
    for n in 0..5 {
        sink.send(format!("{{\"n\":{n}}}").into_bytes(), None);
    }
    drop(sink);
    assert_eq!(dropped(&metrics), 5);
}
