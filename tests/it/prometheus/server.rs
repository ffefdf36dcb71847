//! A real Prometheus server for the live-traffic tests (Debian's `prometheus` binary, or
//! `$PROMETHEUS_BIN`), scraping every second a small exporter the test runs: both on loopback
//! ports, Prometheus' data in a temporary directory, killed when dropped. The exporter serves
//! `http_requests_total{namespace,service}` counters that grow at fixed rates (from a large
//! start, so that `rate()` never extrapolates towards zero).

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Where the binary is: `$PROMETHEUS_BIN`, else Debian's path.
fn binary() -> PathBuf {
    std::env::var_os("PROMETHEUS_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/prometheus"))
}

/// The binary when it is installed. Missing, the test is skipped, except under `CI=true`, where
/// it fails: CI installs it.
pub fn installed() -> Option<PathBuf> {
    let bin = binary();
    if bin.is_file() {
        return Some(bin);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{} is missing (apt-get install prometheus, or set PROMETHEUS_BIN)",
        bin.display()
    );
    eprintln!("{} is missing: skipped", bin.display());
    None
}

/// A plain HTTP client (a provider for rustls is installed first, as warrant does).
pub fn http() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The exporter: `(namespace, service) -> requests per second`, served as counters.
pub struct Exporter {
    pub port: u16,
    task: tokio::task::JoinHandle<()>,
}

impl Exporter {
    /// Serves `/metrics` on a loopback port until dropped.
    pub async fn start(rates: BTreeMap<(&'static str, &'static str), f64>) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let started = epoch_ms();
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let rates = rates.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |_req| {
                        let body = exposition(&rates, started, epoch_ms());
                        async move {
                            Ok::<_, Infallible>(
                                hyper::Response::builder()
                                    .header("Content-Type", "text/plain; version=0.0.4")
                                    .body(http_body_util::Full::new(bytes::Bytes::from(body)))
                                    .unwrap(),
                            )
                        }
                    });
                    let io = hyper_util::rt::TokioIo::new(stream);
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(io, service)
                        .await;
                });
            }
        });
        Self { port, task }
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Milliseconds since the Unix epoch.
fn epoch_ms() -> i64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    i64::try_from(since.as_millis()).unwrap()
}

/// The counters at `now_ms` (started at `started_ms`), in the text exposition format, each
/// with that instant as its timestamp: Prometheus then divides by the time between the
/// counters' own instants, not between the scrapes' starts, so a slow answer from this
/// (busy) test process cannot bend the rate.
fn exposition(rates: &BTreeMap<(&str, &str), f64>, started_ms: i64, now_ms: i64) -> String {
    let mut out = String::from(
        "# HELP http_requests_total Requests served.\n# TYPE http_requests_total counter\n",
    );
    let elapsed = (now_ms - started_ms) as f64 / 1000.0;
    for ((namespace, service), rate) in rates {
        let value = 1_000_000.0 + rate * elapsed;
        out.push_str(&format!(
            "http_requests_total{{namespace=\"{namespace}\",service=\"{service}\"}} {value} {now_ms}\n"
        ));
    }
    out
}

/// A running Prometheus.
pub struct Prometheus {
    pub port: u16,
    child: Child,
    _dir: tempfile::TempDir,
}

impl Prometheus {
    /// Starts `bin` scraping `127.0.0.1:<target>` every second; returns once it is ready.
    pub async fn start(bin: &std::path::Path, target: u16) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let config = dir.path().join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global: {{scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}}
scrape_configs:
- job_name: app
  static_configs: [{{targets: ['127.0.0.1:{target}']}}]
"
            ),
        )
        .unwrap();
        let child = Command::new(bin)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .arg("--log.level=warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut p = Self {
            port,
            child,
            _dir: dir,
        };
        let http = http();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let ready = http
                .get(format!("{}/-/ready", p.url()))
                .send()
                .await
                .is_ok_and(|r| r.status().is_success());
            if ready {
                return p;
            }
            if let Some(status) = p.child.try_wait().unwrap() {
                panic!("prometheus exited with {status}");
            }
            assert!(Instant::now() < deadline, "prometheus not ready within 30s");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Its base URL.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Waits (up to 30 s) until an instant query answers at least `min` series.
    pub async fn wait_for_series(&self, query: &str, min: usize) {
        let http = http();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let mut url = reqwest::Url::parse(&format!("{}/api/v1/query", self.url())).unwrap();
            url.query_pairs_mut().append_pair("query", query);
            let v: serde_json::Value = http.get(url).send().await.unwrap().json().await.unwrap();
            if v["data"]["result"]
                .as_array()
                .is_some_and(|r| r.len() >= min)
            {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "no {min} series for {query}: {v}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Pauses (SIGSTOP) or resumes (SIGCONT) the process: a paused server accepts connections
    /// (the kernel's backlog) and answers nothing.
    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.child.id().to_string())
            .status()
            .unwrap();
        assert!(status.success(), "kill -{signal}");
    }

    /// Kills it and waits for it to be gone.
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        self.stop();
    }
}
