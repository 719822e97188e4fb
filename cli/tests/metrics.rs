//! The gateway's `GET /metrics` as a team's monitoring reads it: a real
//! Prometheus (Debian's package, /usr/bin/prometheus) scrapes a TLS
//! gateway with a caller's token, and its HTTP API answers queries over
//! what it scraped: each hook's latency, the decisions by outcome, the
//! breakers. Without the token the scrape fails and `/metrics` says 401
//! and nothing else.

#![allow(clippy::unwrap_used)]

mod common;
#[path = "common/gateway.rs"]
mod gw;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use gw::{EVENT, Gateway};

/// Two guards: ops's allow-hook allows every PreToolUse, bob's
/// deny-hook denies it; each caller's events meet only their own.
const CONFIG: &str = r#"
[hooks.commands.allow-hook]
command = "echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"allow\",\"permissionDecisionReason\":\"fine\"}}'"
dialect = "claude-code"
events = ["PreToolUse"]
scope = { users = ["ann"] }

[hooks.commands.deny-hook]
command = "echo bob may not >&2; exit 2"
dialect = "claude-code"
events = ["PreToolUse"]
scope = { users = ["bob"] }
"#;

const ALLOWED: usize = 2;
const DENIED: usize = 3;

/// A Prometheus server this test started; killed when dropped, so a
/// failing assert leaves none behind.
struct Prometheus {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Prometheus {
    /// Starts Debian's Prometheus on a free loopback port with `config`,
    /// its data in `dir`.
    fn start(dir: &Path, config: &str) -> Prometheus {
        let bin = Path::new("/usr/bin/prometheus");
        assert!(
            bin.exists(),
            "Prometheus is needed: `apt-get install -y prometheus` (scripts/test installs it)"
        );
        std::fs::write(dir.join("prometheus.yml"), config).unwrap();
        let port = free_port();
        let log = dir.join("prometheus.log");
        let child = Command::new(bin)
            .arg(format!(
                "--config.file={}",
                dir.join("prometheus.yml").display()
            ))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        Prometheus { child, port, log }
    }

    /// `query` through the HTTP API: the vector's samples (labels, value)
    /// once it has `want` of them, polled for at most 20 s.
    fn poll(&mut self, query: &str, want: usize) -> Vec<(Value, f64)> {
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut last = String::new();
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("prometheus exited ({status}):\n{}", self.log_tail());
            }
            if let Some((samples, body)) = self.query(query) {
                if samples.len() >= want {
                    return samples;
                }
                last = body;
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        panic!("no answer to {query} in 20 s: {last}\n{}", self.log_tail());
    }

    fn query(&self, query: &str) -> Option<(Vec<(Value, f64)>, String)> {
        let path = format!("/api/v1/query?query={}", encode(query));
        let (status, body) = http_get(self.port, &path)?;
        let answer: Value = serde_json::from_str(&body).ok()?;
        if status != 200 || answer["status"] != "success" {
            return Some((vec![], body));
        }
        let samples = answer["data"]["result"].as_array()?.iter().map(|s| {
            let value = s["value"][1].as_str().unwrap().parse().unwrap();
            (s["metric"].clone(), value)
        });
        Some((samples.collect(), body))
    }

    /// The one sample of `query`, once there is one.
    fn value(&mut self, query: &str) -> f64 {
        let samples = self.poll(query, 1);
        assert_eq!(samples.len(), 1, "{query}: {samples:?}");
        samples[0].1
    }

    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// A query string's value, percent-encoded.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// One plain HTTP GET on loopback: the status and body, `None` while
/// nothing listens yet.
fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let req = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).ok()?;
    let mut raw = String::new();
    s.read_to_string(&mut raw).ok()?;
    let status = raw.split(' ').nth(1)?.parse().ok()?;
    let (_, body) = raw.split_once("\r\n\r\n")?;
    Some((status, body.to_string()))
}

/// The scrape config: one job with the gateway's CA and a caller's token,
/// one without the token.
fn scrape_config(gw: &Gateway, token_file: &Path) -> String {
    let ca = gw.dir.join("ca.pem");
    let target = format!("127.0.0.1:{}", gw.port);
    let job = |name: &str, auth: &str| {
        format!(
            "  - job_name: {name}\n    scheme: https\n    tls_config:\n      ca_file: {}\n      \
             server_name: localhost\n{auth}    static_configs:\n      - targets: ['{target}']\n",
            ca.display()
        )
    };
    let auth = format!(
        "    authorization:\n      type: Bearer\n      credentials_file: {}\n",
        token_file.display()
    );
    format!(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n{}{}",
        job("gateway", &auth),
        job("no-token", "")
    )
}

#[test]
fn prometheus_scrapes_the_gateway_and_answers_for_the_deciding_hook() {
    let gw = Gateway::start("metrics", CONFIG);
    let (ann, bob) = (gw.token("acme", "ann"), gw.token("acme", "bob"));
    for (token, times, verdict) in [(&ann, ALLOWED, "allow"), (&bob, DENIED, "deny")] {
        for _ in 0..times {
            let (status, _, body) = gw.send("POST", "/hooks/claude-code", Some(token), EVENT);
            assert_eq!(status, 200, "{body}");
            assert!(
                body.contains(&format!(r#""permissionDecision":"{verdict}""#)),
                "{body}"
            );
        }
    }
    let (status, body) = gw.get("/metrics", None);
    assert_eq!(status, 401, "/metrics is behind the gateway's credential");
    assert!(
        !body.contains("hookhost_"),
        "a refusal shows no metric: {body}"
    );

    let dir = gw::scratch("metrics-prometheus");
    let token_file = dir.join("token");
    std::fs::write(&token_file, gw.token("ops", "prometheus")).unwrap();
    let mut prom = Prometheus::start(&dir, &scrape_config(&gw, &token_file));

    let count = |hook: &str| format!(r#"hookhost_hook_duration_seconds_count{{hook="{hook}"}}"#);
    assert_eq!(prom.value(&count("deny-hook")), DENIED as f64);
    assert_eq!(prom.value(&count("allow-hook")), ALLOWED as f64);
    let p99 = prom.value(
        r#"histogram_quantile(0.99, sum by (le) (hookhost_hook_duration_seconds_bucket{hook="deny-hook"}))"#,
    );
    assert!(p99 > 0.0 && p99 <= 30.0, "the deciding hook's p99: {p99} s");
    let decisions =
        |d: &str| format!(r#"hookhost_decisions_total{{dialect="claude-code",decision="{d}"}}"#);
    assert_eq!(prom.value(&decisions("deny")), DENIED as f64);
    assert_eq!(prom.value(&decisions("allow")), ALLOWED as f64);
    let outcome = r#"hookhost_hook_calls_total{hook="deny-hook",outcome="deny_tool"}"#;
    assert_eq!(prom.value(outcome), DENIED as f64);
    assert_eq!(
        prom.value(r#"hookhost_hook_errors_total{hook="deny-hook"}"#),
        0.0
    );
    let states = prom.poll("sum by (hook) (hookhost_hook_breaker_state)", 2);
    assert!(
        states.iter().all(|(_, v)| *v == 1.0),
        "one state a hook: {states:?}"
    );
    assert_eq!(prom.value("hookhost_in_flight_requests"), 0.0);
    assert_eq!(prom.value(r#"up{job="gateway"}"#), 1.0);
    assert_eq!(
        prom.value(r#"up{job="no-token"}"#),
        0.0,
        "a scrape without the token fails"
    );
}
