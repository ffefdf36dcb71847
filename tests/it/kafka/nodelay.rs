//! The Kafka sink's connections to its brokers have Nagle's algorithm off (`TCP_NODELAY`). The
//! client writes a request as its 4-byte length, then its body; with Nagle on, the body's last
//! partial segment waits for the broker's delayed ACK of the length (about 40 ms on Linux), once
//! per produce request, which held the sink to about 10,500 records/s on loopback
//! (vendor/rskafka/PATCHED.md). Checked on the sockets themselves, not by timing: every socket
//! of this process connected to the broker's port after a delivery.

use super::{PARTITIONS, TOPIC};
use crate::kafka::broker::Broker;
use warrant::telemetry::audit::kafka::KafkaCompression;
use warrant::telemetry::audit::remote::{Deliver, SinkRecord};

/// This process's TCP sockets whose peer is 127.0.0.1:`port`.
fn sockets_connected_to(port: u16) -> Vec<i32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc/self/fd").unwrap() {
        let Ok(fd) = entry.unwrap().file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        // SAFETY: getpeername writes at most `len` bytes into `addr`, which is that large; an fd
        // closed meanwhile (or not a socket) only makes it fail.
        let mut addr: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
        let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
        let rc = unsafe { libc::getpeername(fd, (&raw mut addr).cast(), &mut len) };
        if rc != 0 || i32::from(addr.ss_family) != libc::AF_INET {
            continue;
        }
        // SAFETY: an AF_INET address is a sockaddr_in, which sockaddr_storage is large enough
        // and aligned enough to hold.
        let v4 = unsafe { &*(&raw const addr).cast::<libc::sockaddr_in>() };
        if u16::from_be(v4.sin_port) == port && u32::from_be(v4.sin_addr.s_addr) == 0x7f00_0001 {
            found.push(fd);
        }
    }
    found
}

/// Whether `fd` has TCP_NODELAY set.
fn nodelay(fd: i32) -> bool {
    let mut value: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `value`, which is that large.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_NODELAY,
            (&raw mut value).cast(),
            &mut len,
        )
    };
    assert_eq!(rc, 0, "getsockopt(TCP_NODELAY) on fd {fd}");
    value != 0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_kafka_sinks_broker_connections_have_nagle_off() {
    let broker = Broker::start("").await;
    broker.create_topic(TOPIC, PARTITIONS).await;
    let producer = broker.producer(TOPIC, KafkaCompression::None);
    let batch: Vec<SinkRecord> = (0..50)
        .map(|i| SinkRecord::now(Some(format!("key-{i}")), vec![b'x'; 4096]))
        .collect();
    producer.deliver(&batch).await.unwrap();
    let port: u16 = broker
        .address()
        .rsplit(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let sockets = sockets_connected_to(port);
    assert!(
        !sockets.is_empty(),
        "no socket of this process is connected to the broker"
    );
    for fd in sockets {
        assert!(
            nodelay(fd),
            "fd {fd} to the broker has Nagle's algorithm on"
        );
    }
}
