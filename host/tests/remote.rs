//! Remote hooks over WebSocket, against a scripted hook server on loopback
//! that can be stopped, restarted, made to hang or to send garbage: the
//! handshake, verdicts, runtime events, headers from the environment, and
//! what the host does when the server goes away and comes back.

#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hookhost::RemoteConfig;
use hookhost::protocol::event::RuntimeEvent;
use hookhost::protocol::params::ToolCall;
use hookhost::{Config, FailurePolicy, Host, ToolOutcome};
use hookhost_protocol::{OnError, Stage};
use serde_json::{Map, Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;
use tokio_util::compat::TokioAsyncReadCompatExt;

/// How the scripted server answers stage requests.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// `modify`, adding `arguments.<name> = true`.
    Modify,
    /// Never answers a stage request.
    Hang,
    /// Answers each stage request with a frame that is not JSON.
    Garbage,
}

/// What the server saw, for the test to check.
#[derive(Default)]
struct Seen {
    hellos: usize,
    events: Vec<String>,
    authorization: Vec<String>,
}

/// A hook server on one port; dropping it (or `stop`) closes the listener
/// and every connection, as a killed process would.
struct Server {
    addr: String,
    seen: Arc<Mutex<Seen>>,
    tasks: JoinSet<()>,
}

impl Server {
    async fn start(name: &'static str, mode: Mode) -> Server {
        Server::on("127.0.0.1:0", name, mode, Arc::default()).await
    }

    async fn on(addr: &str, name: &'static str, mode: Mode, seen: Arc<Mutex<Seen>>) -> Server {
        let listener = TcpListener::bind(addr).await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let mut tasks = JoinSet::new();
        let conns = seen.clone();
        tasks.spawn(async move {
            let mut connections = JoinSet::new();
            loop {
                let (stream, _) = listener.accept().await.unwrap();
                connections.spawn(session(stream, name, mode, conns.clone()));
            }
        });
        Server { addr, seen, tasks }
    }

    fn url(&self) -> String {
        format!("ws://{}/hook", self.addr)
    }

    /// Closes the listener and every connection at once.
    async fn stop(mut self) -> (String, Arc<Mutex<Seen>>) {
        self.tasks.abort_all();
        while self.tasks.join_next().await.is_some() {}
        (self.addr, self.seen)
    }
}

async fn session(stream: TcpStream, name: &'static str, mode: Mode, seen: Arc<Mutex<Seen>>) {
    // soketto does not expose arbitrary request headers: read the upgrade
    // request's head without consuming it.
    let mut head = vec![0u8; 8192];
    loop {
        let n = match stream.peek(&mut head).await {
            Ok(n) => n,
            Err(_) => return,
        };
        let text = String::from_utf8_lossy(&head[..n]).to_string();
        if let Some(end) = text.find("\r\n\r\n") {
            for line in text[..end].lines() {
                if let Some((k, v)) = line.split_once(':')
                    && k.eq_ignore_ascii_case("authorization")
                {
                    seen.lock()
                        .unwrap()
                        .authorization
                        .push(v.trim().to_string());
                }
            }
            break;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let _ = stream.set_nodelay(true);
    let mut server = soketto::handshake::Server::new(stream.compat());
    let key = match server.receive_request().await {
        Ok(r) => r.key(),
        Err(_) => return,
    };
    let accept = soketto::handshake::server::Response::Accept {
        key,
        protocol: None,
    };
    if server.send_response(&accept).await.is_err() {
        return;
    }
    let (mut tx, mut rx) = server.into_builder().finish();
    loop {
        let mut buf = Vec::new();
        if rx.receive_data(&mut buf).await.is_err() {
            return;
        }
        let msg: Value = serde_json::from_slice(&buf).unwrap();
        let method = msg["method"].as_str().unwrap_or("");
        let answer = match method {
            "hook.hello" => {
                seen.lock().unwrap().hellos += 1;
                json!({"version": 1, "intercept": ["before_tool"], "observe": ["agent.*"]})
            }
            "hook.runtime_event" => {
                let kind = msg["params"]["kind"].as_str().unwrap_or("").to_string();
                seen.lock().unwrap().events.push(kind);
                continue;
            }
            _ => match mode {
                Mode::Hang => continue,
                Mode::Garbage => {
                    tx.send_text("this is not JSON").await.unwrap();
                    tx.flush().await.unwrap();
                    continue;
                }
                Mode::Modify => json!({"action": "modify", "call": {"arguments": {name: true}}}),
            },
        };
        let reply = json!({"jsonrpc": "2.0", "id": msg["id"], "result": answer});
        if tx.send_text(reply.to_string()).await.is_err() || tx.flush().await.is_err() {
            return;
        }
    }
}

fn config(remotes: &[(&str, RemoteConfig)]) -> Config {
    let mut config = Config::empty(".");
    config.defaults.restart_backoff_max_ms = 100;
    // Failures open the breaker; it must let a trial through soon after
    // the server is back.
    config.defaults.breaker_cooldown_ms = 100;
    config.defaults.hello_timeout_ms = 2000;
    for (name, r) in remotes {
        config.remotes.insert(name.to_string(), r.clone());
    }
    config
}

fn remote(url: &str, on_error: OnError) -> RemoteConfig {
    let mut r = RemoteConfig::new(url, vec![Stage::BeforeTool]);
    r.on_error = Some(on_error.into());
    r.timeout_ms = Some(1000);
    r.observe = vec!["*".into()];
    r
}

fn call() -> ToolCall {
    ToolCall {
        tool: "shell".into(),
        arguments: Map::from_iter([("command".into(), json!("ls"))]),
        ..Default::default()
    }
}

fn event(kind: &str) -> RuntimeEvent {
    RuntimeEvent {
        id: "e".into(),
        kind: kind.into(),
        time: "2026-11-22T00:00:00Z".into(),
        source: None,
        scope: None,
        severity: None,
        payload: json!({}),
        extra: Map::new(),
    }
}

#[tokio::test]
async fn a_websocket_hook_answers_observes_and_gets_its_headers() {
    let server = Server::start("remote", Mode::Modify).await;
    let mut r = remote(&server.url(), OnError::Deny);
    // SAFETY: set before the host (the only reader) starts; no other
    // test in this binary reads this variable.
    unsafe { std::env::set_var("HOOKHOST_TEST_REMOTE_TOKEN", "t0ken") };
    r.headers.insert(
        "Authorization".into(),
        "Bearer ${env:HOOKHOST_TEST_REMOTE_TOKEN}".into(),
    );
    let host = Host::start(config(&[("remote", r)])).await;
    assert!(
        host.start_failures().is_empty(),
        "{:?}",
        host.start_failures()
    );
    match host.before_tool(call()).await {
        ToolOutcome::Continue { call: c, .. } => assert_eq!(c.arguments["remote"], true, "{c:?}"),
        other => panic!("{other:?}"),
    }
    // Hello narrowed `observe = ["*"]` to what the hook declared.
    host.emit(event("agent.turn.start"));
    host.emit(event("tool.exec"));
    host.emit(event("agent.turn.end"));
    let until = tokio::time::Instant::now() + Duration::from_secs(5);
    while server.seen.lock().unwrap().events.len() < 2 && tokio::time::Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    {
        let seen = server.seen.lock().unwrap();
        assert_eq!(seen.events, ["agent.turn.start", "agent.turn.end"]);
        assert_eq!(seen.authorization, ["Bearer t0ken"]);
        assert_eq!(seen.hellos, 1);
    }
    let stats = host.stats();
    assert_eq!((stats[0].kind.as_str(), stats[0].calls), ("remote", 1));
    host.shutdown().await;
}

/// The server goes away mid-run: the call pending on it and the calls that
/// follow are answered by policy at once (not at their deadlines); when it
/// is back on the same port the host reconnects, handshakes again, and the
/// hook answers again.
#[tokio::test]
async fn a_websocket_hook_server_killed_and_restarted() {
    let server = Server::start("remote", Mode::Modify).await;
    let host = Host::start(config(&[("remote", remote(&server.url(), OnError::Deny))])).await;
    assert!(matches!(
        host.before_tool(call()).await,
        ToolOutcome::Continue { .. }
    ));

    let (addr, seen) = server.stop().await;
    let begun = std::time::Instant::now();
    for _ in 0..5 {
        match host.before_tool(call()).await {
            ToolOutcome::Deny { reason } => {
                assert!(
                    reason.contains("hook `remote` failed (on_error = deny)"),
                    "{reason}"
                );
            }
            other => panic!("expected the deny policy, got {other:?}"),
        }
    }
    assert!(
        begun.elapsed() < Duration::from_millis(900),
        "calls to a dead server waited for their deadlines: {:?}",
        begun.elapsed()
    );

    let server = Server::on(&addr, "remote", Mode::Modify, seen).await;
    let until = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        if let ToolOutcome::Continue { call: c, .. } = host.before_tool(call()).await {
            assert_eq!(c.arguments["remote"], true);
            break;
        }
        assert!(std::time::Instant::now() < until, "never reconnected");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        server.seen.lock().unwrap().hellos,
        2,
        "a handshake per connection"
    );
    assert!(host.stats()[0].restarts >= 1);
    host.shutdown().await;
}

/// A frame that is not JSON ends the connection (jsonrpsee's client treats
/// it as fatal): the pending call fails at once by policy, and the host
/// reconnects for the next one.
#[tokio::test]
async fn a_garbage_frame_fails_the_call_by_policy_and_the_host_reconnects() {
    let server = Server::start("remote", Mode::Garbage).await;
    let host = Host::start(config(&[("remote", remote(&server.url(), OnError::Allow))])).await;
    let begun = std::time::Instant::now();
    match host.before_tool(call()).await {
        ToolOutcome::Continue { call: c, .. } => assert!(c.arguments.get("remote").is_none()),
        other => panic!("expected the allow policy, got {other:?}"),
    }
    assert!(
        begun.elapsed() < Duration::from_millis(900),
        "{:?}",
        begun.elapsed()
    );
    let until = std::time::Instant::now() + Duration::from_secs(10);
    while server.seen.lock().unwrap().hellos < 2 {
        assert!(std::time::Instant::now() < until, "never reconnected");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    host.shutdown().await;
}

/// A hook that never answers is resolved by policy at its deadline.
#[tokio::test]
async fn a_hanging_websocket_hook_times_out_by_policy() {
    let server = Server::start("remote", Mode::Hang).await;
    let mut r = remote(&server.url(), OnError::Deny);
    r.timeout_ms = Some(150);
    let host = Host::start(config(&[("remote", r)])).await;
    match host.before_tool(call()).await {
        ToolOutcome::Deny { reason } => {
            assert!(reason.contains("no answer within 150 ms"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(host.stats()[0].timeouts, 1);
    host.shutdown().await;
}

/// Nothing listens at start: a start failure naming the URL, calls
/// answered by policy at once; once a server appears, the hook is used.
#[tokio::test]
async fn a_remote_down_at_start_is_reported_and_joins_when_it_comes_up() {
    let spare = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = spare.local_addr().unwrap().to_string();
    drop(spare);
    let url = format!("ws://{addr}/hook");
    let host = Host::start(config(&[("remote", remote(&url, OnError::Deny))])).await;
    let failures = host.start_failures();
    assert_eq!(failures.len(), 1);
    assert!(
        failures[0].error.to_string().contains(&url),
        "{:?}",
        failures[0]
    );
    let begun = std::time::Instant::now();
    assert!(matches!(
        host.before_tool(call()).await,
        ToolOutcome::Deny { .. }
    ));
    assert!(begun.elapsed() < Duration::from_millis(500));

    let _server = Server::on(&addr, "remote", Mode::Modify, Arc::default()).await;
    let until = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        if let ToolOutcome::Continue { call: c, .. } = host.before_tool(call()).await {
            assert_eq!(c.arguments["remote"], true);
            break;
        }
        assert!(std::time::Instant::now() < until, "never connected");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    host.shutdown().await;
}

/// A round-robin TCP balancer on loopback: each connection goes to the
/// next backend that accepts it, as a load balancer's health check would
/// arrange.
async fn balancer(backends: Vec<String>) -> (String, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let task = tokio::spawn(async move {
        let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        loop {
            let (mut client, _) = listener.accept().await.unwrap();
            let (backends, next) = (backends.clone(), next.clone());
            tokio::spawn(async move {
                for _ in 0..backends.len() {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if let Ok(mut up) = TcpStream::connect(&backends[i % backends.len()]).await {
                        // Without these, Nagle's algorithm meets delayed
                        // ACKs at the proxy and each call waits ~40 ms.
                        let _ = (client.set_nodelay(true), up.set_nodelay(true));
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut up).await;
                        return;
                    }
                }
            });
        }
    });
    (addr, task)
}

/// Which instance answered a call, from the key it added.
fn served_by(outcome: ToolOutcome<ToolCall>) -> Option<&'static str> {
    let ToolOutcome::Continue { call, .. } = outcome else {
        panic!("{outcome:?}");
    };
    ["a", "b", "c"]
        .into_iter()
        .find(|k| call.arguments.get(*k).is_some())
}

/// The fleet pattern of the README: several agents (hosts) share three
/// instances of one hook service behind a balancer, one WebSocket each.
/// An instance going away moves its agents to the others on reconnect.
#[tokio::test]
async fn a_fleet_of_agents_shares_hook_instances_behind_a_balancer() {
    let a = Server::start("a", Mode::Modify).await;
    let b = Server::start("b", Mode::Modify).await;
    let c = Server::start("c", Mode::Modify).await;
    let (lb, _lb) = balancer(vec![a.addr.clone(), b.addr.clone(), c.addr.clone()]).await;
    let mut agents = Vec::new();
    for _ in 0..6 {
        let r = remote(&format!("ws://{lb}/hook"), OnError::Allow);
        agents.push(Host::start(config(&[("policy", r)])).await);
    }
    let mut by_instance = std::collections::BTreeMap::<&str, usize>::new();
    for agent in &agents {
        let first = served_by(agent.before_tool(call()).await).expect("served");
        for _ in 0..10 {
            let again = served_by(agent.before_tool(call()).await);
            assert_eq!(
                again,
                Some(first),
                "one agent, one connection, one instance"
            );
        }
        *by_instance.entry(first).or_default() += 1;
    }
    assert_eq!(
        by_instance,
        [("a", 2), ("b", 2), ("c", 2)].into_iter().collect(),
        "round robin over connections"
    );

    // Instance b goes away: its two agents reconnect through the balancer
    // to a or c; calls meanwhile are allowed by policy, none is lost.
    let _ = b.stop().await;
    let until = std::time::Instant::now() + Duration::from_secs(10);
    for agent in &agents {
        loop {
            match served_by(agent.before_tool(call()).await) {
                Some("a" | "c") => break,
                Some(other) => panic!("served by the stopped instance {other}"),
                None => {
                    assert!(
                        std::time::Instant::now() < until,
                        "an agent never came back"
                    );
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            }
        }
    }
    let reconnects: u64 = agents.iter().map(|h| h.stats()[0].restarts).sum();
    assert_eq!(reconnects, 2, "only b's agents reconnect");
    for agent in agents {
        agent.shutdown().await;
    }
    drop((a, c));
}

/// A reload keeps an unchanged remote's connection (no second hello),
/// reconnects a changed one, and closes a removed one.
#[tokio::test]
async fn reload_keeps_unchanged_remotes_and_replaces_changed_ones() {
    let one = Server::start("one", Mode::Modify).await;
    let two = Server::start("two", Mode::Modify).await;
    let r1 = remote(&one.url(), OnError::Allow);
    let r2 = remote(&two.url(), OnError::Allow);
    let host = Host::start(config(&[("one", r1.clone()), ("two", r2.clone())])).await;
    assert!(host.start_failures().is_empty());

    let mut r2_changed = r2.clone();
    r2_changed.timeout_ms = Some(900);
    let report = host
        .reload(config(&[("one", r1.clone()), ("two", r2_changed)]))
        .await;
    assert_eq!(report.unchanged, ["one"]);
    assert_eq!(report.changed, ["two"]);
    assert_eq!(one.seen.lock().unwrap().hellos, 1, "kept, not reconnected");
    assert_eq!(
        two.seen.lock().unwrap().hellos,
        2,
        "a new connection, a new hello"
    );

    let report = host.reload(config(&[("one", r1)])).await;
    assert_eq!(report.removed, ["two"]);
    match host.before_tool(call()).await {
        ToolOutcome::Continue { call: c, .. } => {
            assert_eq!(c.arguments.get("one"), Some(&json!(true)));
            assert_eq!(c.arguments.get("two"), None);
        }
        other => panic!("{other:?}"),
    }
    host.shutdown().await;
}

/// A Rust SDK hook that appends its tag to `arguments.trail`, so the
/// merged call shows which hooks ran and in which order.
struct Trail(&'static str);

impl hookhost_sdk::Hook for Trail {
    fn intercepts(&self) -> Vec<Stage> {
        vec![Stage::BeforeTool]
    }

    async fn before_tool(&self, call: ToolCall) -> hookhost_sdk::ToolVerdict {
        let before = call
            .arguments
            .get("trail")
            .and_then(Value::as_str)
            .unwrap_or("");
        let trail = format!("{before},{}", self.0);
        hookhost_sdk::ToolVerdict::modify(
            hookhost_sdk::Patch::new().set(&["arguments", "trail"], trail),
        )
    }
}

fn trail(outcome: ToolOutcome<ToolCall>) -> String {
    match outcome {
        ToolOutcome::Continue { call: c, .. } => c.arguments["trail"].as_str().unwrap().to_string(),
        other => panic!("{other:?}"),
    }
}

/// One chain of a stdio process, a WebSocket hook and an HTTP hook (the
/// last two served by the Rust SDK): run in priority order, each seeing
/// the patches before it. The WebSocket server is then stopped and started
/// again on its port: its calls resolve by policy, then it is back.
#[tokio::test]
async fn a_chain_mixes_stdio_websocket_and_http_hooks() {
    let ws = hookhost_sdk::serve_ws(Trail("ws"), "127.0.0.1:0")
        .await
        .unwrap();
    let http = hookhost_sdk::serve_ws(Trail("http"), "127.0.0.1:0")
        .await
        .unwrap();
    let ws_addr = ws.local_addr();
    let mut config = config(&[]);
    let mut stdio = hookhost::ProcessConfig::new(
        vec![
            hookhost_testkit::TEST_HOOK.into(),
            "--answer".into(),
            r#"{"action":"modify","call":{"arguments":{"trail":"stdio"}}}"#.into(),
        ],
        vec![Stage::BeforeTool],
    );
    stdio.priority = 1;
    config.processes.insert("stdio".into(), stdio);
    let mut r = remote(&format!("ws://{ws_addr}"), OnError::Allow);
    r.priority = 2;
    config.remotes.insert("ws".into(), r);
    let mut r = RemoteConfig::new(
        format!("http://{}", http.local_addr()),
        vec![Stage::BeforeTool],
    );
    r.priority = 3;
    config.remotes.insert("http".into(), r);
    let host = Host::start(config).await;
    assert!(
        host.start_failures().is_empty(),
        "{:?}",
        host.start_failures()
    );
    for _ in 0..20 {
        assert_eq!(trail(host.before_tool(call()).await), "stdio,ws,http");
    }

    ws.stop();
    ws.stopped().await;
    assert_eq!(
        trail(host.before_tool(call()).await),
        "stdio,http",
        "ws allowed by policy"
    );
    let ws = hookhost_sdk::serve_ws(Trail("ws"), ws_addr).await.unwrap();
    let until = std::time::Instant::now() + Duration::from_secs(10);
    while trail(host.before_tool(call()).await) != "stdio,ws,http" {
        assert!(
            std::time::Instant::now() < until,
            "the WebSocket hook never came back"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let kinds: Vec<String> = host.stats().iter().map(|s| s.kind.clone()).collect();
    assert_eq!(kinds, ["process", "remote", "remote"]);
    host.shutdown().await;
    ws.stop();
    http.stop();
}

/// A password in a remote's URL is sent to the server (as basic auth) and
/// shown nowhere: not in the start failure, the deny reason the model
/// reads, the audit log or the host's log. The URL is shown without it.
#[tokio::test]
async fn credentials_in_a_remote_url_are_shown_nowhere() {
    let log = hookhost_testkit::LogSink::start();
    let spare = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = spare.local_addr().unwrap().to_string();
    drop(spare);
    let dir = std::env::temp_dir().join(format!("hookhost-remote-creds-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let audit = dir.join("audit.jsonl");
    let mut config = config(&[(
        "remote",
        remote(&format!("ws://alice:s3cr3t@{addr}/hook"), OnError::Deny),
    )]);
    config.audit = Some(hookhost::AuditConfig::file(audit.clone()));
    let host = Host::start(config).await;
    let failure = host.start_failures()[0].error.to_string();
    assert!(failure.contains(&format!("ws://{addr}/hook")), "{failure}");
    let reason = match host.before_tool(call()).await {
        ToolOutcome::Deny { reason } => reason,
        other => panic!("{other:?}"),
    };
    assert!(reason.contains(&format!("ws://{addr}/hook")), "{reason}");
    host.shutdown().await;
    let written = std::fs::read_to_string(&audit).unwrap();
    let logged = log.text();
    for (place, text) in [
        ("start failure", &failure),
        ("deny reason", &reason),
        ("audit", &written),
        ("log", &logged),
    ] {
        assert!(!text.contains("s3cr3t"), "{place}: {text}");
        assert!(!text.contains("alice"), "{place}: {text}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// A listener that counts connections and keeps what each sent first.
async fn recording_listener() -> (String, Arc<Mutex<Vec<String>>>, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let record = seen.clone();
    let task = tokio::spawn(async move {
        loop {
            let (mut stream, _) = listener.accept().await.unwrap();
            let record = record.clone();
            tokio::spawn(async move {
                use tokio::io::AsyncReadExt;
                let mut head = vec![0u8; 4096];
                let read = tokio::time::timeout(Duration::from_secs(1), stream.read(&mut head));
                let n = read.await.map_or(0, |r| r.unwrap_or(0));
                let text = String::from_utf8_lossy(&head[..n]).into_owned();
                record
                    .lock()
                    .unwrap()
                    .push(format!("a connection: {text:?}"));
            });
        }
    });
    (addr, seen, task)
}

/// A server that answers every request with `302 Found` to `location`.
async fn redirecting_server(location: String) -> (String, tokio::task::JoinHandle<()>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let task = tokio::spawn(async move {
        loop {
            let (mut stream, _) = listener.accept().await.unwrap();
            let location = location.clone();
            tokio::spawn(async move {
                let mut head = vec![0u8; 8192];
                let _ = stream.read(&mut head).await;
                let answer = format!(
                    "HTTP/1.1 302 Found\r\nLocation: {location}\r\nContent-Length: 0\r\n\r\n"
                );
                let _ = stream.write_all(answer.as_bytes()).await;
                let _ = stream.flush().await;
                tokio::time::sleep(Duration::from_millis(200)).await;
            });
        }
    });
    (addr, task)
}

/// A redirect is not followed, over WebSocket or HTTP: the second host
/// sees no connection and no token, and the call is answered by policy.
#[tokio::test]
async fn a_redirect_is_not_followed_and_the_call_ends_by_policy() {
    for scheme in ["ws", "http"] {
        let (elsewhere, seen, listener) = recording_listener().await;
        let (addr, server) = redirecting_server(format!("{scheme}://{elsewhere}/stolen")).await;
        let mut r = RemoteConfig::new(format!("{scheme}://{addr}/hook"), vec![Stage::BeforeTool]);
        r.on_error = Some(FailurePolicy::Block);
        r.timeout_ms = Some(1000);
        r.headers
            .insert("Authorization".into(), "Bearer t0ken".into());
        let host = Host::start(config(&[("remote", r)])).await;
        match host.before_tool(call()).await {
            ToolOutcome::Deny { reason } => {
                assert!(reason.contains("on_error = deny"), "{scheme}: {reason}");
                let why = if scheme == "ws" { "redirect" } else { "302" };
                assert!(reason.contains(why), "{scheme}: {reason}");
            }
            other => panic!("{scheme}: {other:?}"),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        host.shutdown().await;
        let seen = seen.lock().unwrap().clone();
        assert!(
            seen.is_empty(),
            "{scheme}: the redirect was followed: {seen:?}"
        );
        listener.abort();
        server.abort();
    }
}

/// Spec section 11 for a WebSocket remote: an event emitted just before
/// `shutdown` is sent before the connection closes. Twenty runs.
#[tokio::test]
async fn an_event_emitted_just_before_shutdown_reaches_a_websocket_hook() {
    let mut lost = Vec::new();
    for run in 0..20 {
        let server = Server::start("remote", Mode::Modify).await;
        let host = Host::start(config(&[("remote", remote(&server.url(), OnError::Allow))])).await;
        let kind = format!("agent.run.{run}");
        host.emit(event(&kind));
        host.shutdown().await;
        let until = std::time::Instant::now() + Duration::from_secs(1);
        while server.seen.lock().unwrap().events.is_empty() && std::time::Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let (_, seen) = server.stop().await;
        if seen.lock().unwrap().events != [kind.clone()] {
            lost.push(run);
        }
    }
    assert!(lost.is_empty(), "events lost at shutdown in runs {lost:?}");
}

/// A hook that rewrites `arguments.text` into a text 2.5 times as long,
/// as a redactor that masks many short secrets with longer markers does.
struct Lengthen;

impl hookhost_sdk::Hook for Lengthen {
    fn intercepts(&self) -> Vec<Stage> {
        vec![Stage::BeforeTool]
    }

    async fn before_tool(&self, call: ToolCall) -> hookhost_sdk::ToolVerdict {
        let n = call
            .arguments
            .get("text")
            .and_then(Value::as_str)
            .map_or(0, str::len);
        hookhost_sdk::ToolVerdict::modify(
            hookhost_sdk::Patch::new().set(&["arguments", "text"], "y".repeat(n * 5 / 2)),
        )
    }
}

/// An answer longer than `max_line_bytes` but about as long as the request
/// it answers is read over WebSocket and HTTP, as from a process: a remote
/// redactor is not failed (and failed open) by the size of its own answer.
#[tokio::test]
async fn a_remote_answer_as_large_as_its_request_is_accepted() {
    let server = hookhost_sdk::serve_ws(Lengthen, "127.0.0.1:0")
        .await
        .unwrap();
    for scheme in ["ws", "http"] {
        let mut config = config(&[]);
        config.defaults.max_line_bytes = 100_000;
        let url = format!("{scheme}://{}", server.local_addr());
        config
            .remotes
            .insert("lengthen".into(), remote(&url, OnError::Allow));
        let host = Host::start(config).await;
        let mut call = call();
        call.arguments
            .insert("text".into(), json!("x".repeat(60_000)));
        match host.before_tool(call).await {
            ToolOutcome::Continue { call: c, .. } => {
                assert_eq!(
                    c.arguments["text"].as_str().map(str::len),
                    Some(150_000),
                    "{scheme}"
                )
            }
            other => panic!("{scheme}: {other:?}"),
        }
        host.shutdown().await;
    }
    server.stop();
}
