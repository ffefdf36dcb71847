//! The real `warrant serve` process for lifecycle tests: its own CA, serving and client
//! certificates in a temporary directory, a loopback port chosen by the kernel, standard error
//! collected, and its CPU time and memory read from /proc.

use crate::support::{BIN, Ca, Leaf, client};
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A running `warrant serve`.
pub struct Served {
    child: Child,
    pub dir: tempfile::TempDir,
    pub ca: Ca,
    pub client: Leaf,
    pub addr: SocketAddr,
    log: Arc<Mutex<Vec<String>>>,
}

impl Drop for Served {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

impl Served {
    /// Starts `warrant serve` on `config` with the test PKI, audit off, and `args` more.
    pub fn start(config: &str, args: &[&str]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let ca = Ca::new("lifecycle-ca");
        let serving = ca.server("warrant");
        let client = ca.client("kube-apiserver");
        let path = |n: &str| dir.path().join(n);
        std::fs::write(path("config.yaml"), config).unwrap();
        std::fs::write(path("tls.crt"), &serving.cert_pem).unwrap();
        std::fs::write(path("tls.key"), &serving.key_pem).unwrap();
        std::fs::write(path("ca.crt"), &ca.cert_pem).unwrap();
        let s = |p: PathBuf| p.to_string_lossy().into_owned();
        let mut child = Command::new(BIN)
            .args(["serve", "--listen", "127.0.0.1:0", "--audit-log", "none"])
            .args(["--config", &s(path("config.yaml"))])
            .args(["--tls-cert-file", &s(path("tls.crt"))])
            .args(["--tls-private-key-file", &s(path("tls.key"))])
            .args(["--client-ca-file", &s(path("ca.crt"))])
            .args(["--state-dir", &s(path("state"))])
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let stderr = child.stderr.take().unwrap();
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                sink.lock().unwrap().push(line);
            }
        });
        let mut served = Self {
            child,
            dir,
            ca,
            client,
            addr: "127.0.0.1:0".parse().unwrap(),
            log,
        };
        served.addr = served.wait_for_banner();
        served
    }

    fn wait_for_banner(&mut self) -> SocketAddr {
        let started = Instant::now();
        loop {
            let found = self.log.lock().unwrap().iter().find_map(|l| {
                let rest = l.strip_prefix("warrant listening on https://")?;
                rest.strip_suffix("/authorize")?.parse().ok()
            });
            if let Some(addr) = found {
                return addr;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("warrant serve exited with {status}: {:#?}", self.log());
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "no banner: {:#?}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The lines written to standard error so far.
    pub fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }

    /// A path in the server's directory (`config.yaml`, `tls.crt`, `tls.key`, `ca.crt`).
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The URL of `path` on the HTTPS listener.
    pub fn url(&self, path: &str) -> String {
        format!("https://{}{path}", self.addr)
    }

    /// An mTLS client with the good client certificate (HTTP/2 by ALPN).
    pub fn client(&self) -> reqwest::Client {
        client(&self.ca.cert_pem, Some(&self.client))
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// CPU time used so far (user + system), from /proc/PID/stat.
    pub fn cpu(&self) -> Duration {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid())).unwrap();
        // Fields after the command name, which is in parentheses: utime and stime are the
        // 14th and 15th fields of the line, the 12th and 13th after ')'.
        let after = &stat[stat.rfind(')').unwrap() + 2..];
        let fields: Vec<u64> = after
            .split_whitespace()
            .skip(11)
            .take(2)
            .map(|f| f.parse().unwrap())
            .collect();
        let ticks = fields.iter().sum::<u64>();
        let hz = clock_ticks_per_second();
        Duration::from_millis(ticks * 1000 / hz)
    }

    /// A `/proc/PID/status` field in bytes (`VmRSS`, `VmHWM`).
    pub fn memory(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        let line = status
            .lines()
            .find(|l| l.starts_with(&format!("{field}:")))
            .unwrap_or_else(|| panic!("no {field} in /proc/PID/status"));
        let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
        kib * 1024
    }

    /// Sends `signal` (`-TERM`, `-HUP`) with kill(1).
    pub fn signal(&self, signal: &str) {
        let ok = Command::new("kill")
            .args([signal, &self.pid().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok, "kill {signal} failed");
    }

    /// Waits up to `limit` for the process to exit.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<ExitStatus> {
        let started = Instant::now();
        while started.elapsed() < limit {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        None
    }

    /// The value of one metric sample (`name{labels}`), 0 when absent.
    pub async fn sample(&self, c: &reqwest::Client, series: &str) -> f64 {
        let text = c
            .get(self.url("/metrics"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        text.lines()
            .find_map(|l| {
                let (k, v) = l.rsplit_once(' ')?;
                (k == series).then(|| v.parse().ok())?
            })
            .unwrap_or(0.0)
    }
}

/// `getconf CLK_TCK`: the unit of /proc/PID/stat times (100 on every Linux the tests run on).
fn clock_ticks_per_second() -> u64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100)
}
