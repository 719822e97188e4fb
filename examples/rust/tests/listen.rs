//! Every example serves as a network hook with `--listen ADDR` (through
//! `hookhost_sdk::run`): it prints its address, the host reaches it over
//! WebSocket and over HTTP on that one port, and SIGTERM or SIGINT stops it
//! with status 0.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use hookhost::RemoteConfig;
use hookhost::protocol::Stage;
use hookhost::protocol::event::RuntimeEvent;
use hookhost::protocol::params::ToolCall;
use hookhost::{Config, Host, ToolOutcome};
use serde_json::{Value, json};

const EXAMPLES: [&str; 6] = [
    env!("CARGO_BIN_EXE_guard"),
    env!("CARGO_BIN_EXE_ls_human"),
    env!("CARGO_BIN_EXE_cache"),
    env!("CARGO_BIN_EXE_audit_log"),
    env!("CARGO_BIN_EXE_approval"),
    env!("CARGO_BIN_EXE_redact"),
];

/// An example serving on a free loopback port.
struct Served {
    child: Child,
    /// `127.0.0.1:PORT`, from the line it printed.
    addr: String,
}

fn listen(bin: &str, env: &[(&str, &str)]) -> Served {
    let mut child = Command::new(bin)
        .args(["--listen", "127.0.0.1:0"])
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .strip_suffix('\n')
        .and_then(|l| l.strip_prefix("listening on ws://"))
        .unwrap_or_else(|| panic!("{bin}: unexpected first line {line:?}"))
        .to_string();
    Served { child, addr }
}

/// A test that fails midway must not leave its server running.
impl Drop for Served {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Sends `signal` and expects a clean exit, promptly.
fn stop(mut served: Served, signal: &str) {
    let pid = served.child.id().to_string();
    let sent = Command::new("kill")
        .args([signal, pid.as_str()])
        .status()
        .unwrap();
    assert!(sent.success());
    let started = Instant::now();
    let status = loop {
        if let Some(status) = served.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "still running 5 s after {signal}"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    assert!(status.success(), "exit after {signal}: {status:?}");
}

/// `hook.hello` as one HTTP POST, answered on the port WebSocket uses.
fn hello_over_http(addr: &str) -> Value {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"hook.hello","params":{"name":"hookhost","version":1}}"#;
    let mut socket = std::net::TcpStream::connect(addr).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        socket,
        "POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    socket.read_to_string(&mut response).unwrap();
    let (_, body) = response.split_once("\r\n\r\n").unwrap();
    serde_json::from_str(body).unwrap()
}

#[test]
fn every_example_prints_its_address_answers_and_stops_on_sigterm() {
    for bin in EXAMPLES {
        let served = listen(bin, &[]);
        let hello = hello_over_http(&served.addr);
        assert_eq!(hello["result"]["version"], 1, "{bin}: {hello}");
        stop(served, "-TERM");
    }
}

#[test]
fn sigint_stops_it_too() {
    let served = listen(EXAMPLES[0], &[]);
    stop(served, "-INT");
}

#[test]
fn an_unusable_token_file_stops_it_before_it_listens() {
    let empty = scratch_file("empty.token");
    std::fs::write(&empty, " \n").unwrap();
    let missing = scratch_file("missing.token");
    let spaces = scratch_file("spaces.token");
    std::fs::write(&spaces, "two words\n").unwrap();
    for (file, says) in [
        (&empty, "the file is empty"),
        (&missing, "cannot read it"),
        (&spaces, "printable ASCII"),
    ] {
        let out = Command::new(EXAMPLES[0])
            .args(["--listen", "127.0.0.1:0", "--token-file"])
            .arg(file)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{says}: {:?}", out.status);
        assert!(out.stdout.is_empty(), "{says}: it printed an address");
        assert!(
            stderr.contains("--token-file") && stderr.contains(says),
            "{says}: {stderr}"
        );
    }
    let _ = std::fs::remove_file(&empty);
    let _ = std::fs::remove_file(&spaces);
}

fn host_config(remotes: &[(&str, RemoteConfig)]) -> Config {
    let mut config = Config::empty(".");
    config.defaults.hello_timeout_ms = 5000;
    for (name, r) in remotes {
        config.remotes.insert(name.to_string(), r.clone());
    }
    config
}

fn sudo() -> ToolCall {
    ToolCall {
        tool: "shell".into(),
        arguments: json!({"command": "sudo rm -rf /"})
            .as_object()
            .cloned()
            .unwrap(),
        ..ToolCall::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_host_reaches_guard_over_websocket_and_http() {
    let guard = listen(EXAMPLES[0], &[]);
    for url in [
        format!("ws://{}", guard.addr),
        format!("http://{}", guard.addr),
    ] {
        let remote = RemoteConfig::new(url.clone(), vec![Stage::BeforeTool]);
        let host = Host::start(host_config(&[("guard", remote)])).await;
        assert!(
            host.start_failures().is_empty(),
            "{url}: {:?}",
            host.start_failures()
        );
        assert_eq!(
            host.before_tool(sudo()).await,
            ToolOutcome::Deny {
                reason: "guard: rule `sudo` denies this command: sudo rm -rf /".into()
            },
            "{url}"
        );
        host.shutdown().await;
    }
    stop(guard, "-TERM");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_log_records_events_sent_over_websocket_in_order() {
    let audit = scratch_file("listen-audit.jsonl");
    let served = listen(EXAMPLES[3], &[("AUDIT_LOG_FILE", audit.to_str().unwrap())]);
    let mut remote = RemoteConfig::new(format!("ws://{}", served.addr), Vec::new());
    remote.observe = vec!["agent.*".into()];
    let host = Host::start(host_config(&[("audit_log", remote)])).await;
    assert!(
        host.start_failures().is_empty(),
        "{:?}",
        host.start_failures()
    );
    let kinds: Vec<String> = (0..50).map(|i| format!("agent.step.{i}")).collect();
    for kind in &kinds {
        host.emit(RuntimeEvent {
            id: host.next_event_id(),
            kind: kind.clone(),
            time: "2026-05-02T09:14:03.120Z".into(),
            source: None,
            scope: None,
            severity: None,
            payload: json!({}),
            extra: Default::default(),
        });
    }
    let mut logged = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while logged.len() < kinds.len() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
        logged = std::fs::read_to_string(&audit)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["kind"].to_string())
            .collect();
    }
    host.shutdown().await;
    stop(served, "-TERM");
    let _ = std::fs::remove_file(&audit);
    let expected: Vec<String> = kinds.iter().map(|k| format!("{k:?}")).collect();
    assert_eq!(logged, expected);
}

fn scratch_file(name: &str) -> PathBuf {
    let path =
        std::env::temp_dir().join(format!("hookhost-examples-{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}
