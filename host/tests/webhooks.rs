//! `[hooks.webhooks]` end to end: a host POSTs Claude Code's (or
//! docker-agent's) hook JSON to a server these tests start on loopback,
//! through the SSRF guard, and reads the answer from the body. Every
//! failure (a refused address, a redirect, an oversized or late body, an
//! HTTP error, an unset header variable) is decided by `on_error`.

#![allow(clippy::unwrap_used)]

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hookhost::protocol::params::ToolCall;
use hookhost::{CommandOnError, Config, Dialect, HookKind, Host, ToolOutcome, WebhookConfig};
use serde_json::{Map, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// One answer of the test server.
#[derive(Clone)]
struct Reply {
    status: u16,
    headers: Vec<(&'static str, String)>,
    body: Vec<u8>,
    /// Send `content-length` (else the body ends when the connection does).
    length: bool,
    /// Never answer.
    hang: bool,
}

impl Reply {
    fn new(status: u16, body: impl Into<Vec<u8>>) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            body: body.into(),
            length: true,
            hang: false,
        }
    }
}

/// A loopback HTTP/1.1 server: answers request `n` (from 0) with
/// `answer(n)` and records each request's head and body.
struct Server {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Server {
    async fn start(answer: impl Fn(usize) -> Reply + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let answer = Arc::new(answer);
        let log = seen.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let (log, answer) = (log.clone(), answer.clone());
                tokio::spawn(async move {
                    let Some(request) = read_request(stream).await else {
                        return;
                    };
                    let (text, mut stream) = request;
                    let n = {
                        let mut log = log.lock().unwrap();
                        log.push(text);
                        log.len() - 1
                    };
                    write_reply(&mut stream, &answer(n)).await;
                });
            }
        });
        Server { addr, seen, task }
    }

    fn url(&self, host: &str) -> String {
        format!("http://{host}:{}/hook", self.addr.port())
    }

    fn requests(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// One request: its head and body as text.
async fn read_request(stream: TcpStream) -> Option<(String, TcpStream)> {
    let mut reader = BufReader::new(stream);
    let (mut head, mut len) = (String::new(), 0usize);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).await.ok()? == 0 {
            return None;
        }
        if line == "\r\n" {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            len = v.trim().parse().ok()?;
        }
        head.push_str(&line);
    }
    let mut body = vec![0; len];
    reader.read_exact(&mut body).await.ok()?;
    let text = format!("{head}\n{}", String::from_utf8_lossy(&body));
    Some((text, reader.into_inner()))
}

async fn write_reply(stream: &mut TcpStream, reply: &Reply) {
    if reply.hang {
        tokio::time::sleep(Duration::from_secs(3600)).await;
    }
    let mut head = format!("HTTP/1.1 {} X\r\nconnection: close\r\n", reply.status);
    if reply.length {
        head.push_str(&format!("content-length: {}\r\n", reply.body.len()));
    }
    for (k, v) in &reply.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes()).await;
    let _ = stream.write_all(&reply.body).await;
    let _ = stream.shutdown().await;
}

/// Claude Code's deny, with `reason`.
fn deny(reason: &str) -> String {
    json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "deny", "permissionDecisionReason": reason}})
    .to_string()
}

/// A PreToolUse webhook at `url` that fails closed (`on_error = block`).
fn webhook(url: &str) -> WebhookConfig {
    let mut w = WebhookConfig::new(url, &["PreToolUse"]);
    w.on_error = Some(CommandOnError::Block);
    w.timeout_ms = Some(5000);
    w
}

fn loopback_ok(mut w: WebhookConfig) -> WebhookConfig {
    w.allow_loopback = true;
    w
}

async fn host(w: WebhookConfig) -> Host {
    let mut config = Config::empty(".");
    config.webhooks.insert("gate".into(), w);
    let host = Host::start(config).await;
    assert!(
        host.start_failures().is_empty(),
        "{:?}",
        host.start_failures()
    );
    host
}

fn rm_rf() -> ToolCall {
    ToolCall {
        tool: "shell".into(),
        arguments: Map::from_iter([("command".into(), json!("rm -rf /"))]),
        ..Default::default()
    }
}

/// The reason of a denial; panics on anything else.
async fn denied(w: WebhookConfig) -> String {
    let host = host(w).await;
    let outcome = host.before_tool(rm_rf()).await;
    host.shutdown().await;
    match outcome {
        ToolOutcome::Deny { reason } => reason,
        other => panic!("expected a denial: {other:?}"),
    }
}

/// From GoClaw's agent hooks (seeds/goclaw-agent-hooks.txt, "HTTP hook
/// always returns error: SSRF block on loopback") and issue 20's
/// acceptance: a webhook at 127.0.0.1 is refused before any request, the
/// error names the address, and the gate refuses the tool; with
/// `allow_loopback` the server's deny comes through, read from Claude
/// Code's hook JSON it was posted.
#[tokio::test]
async fn loopback_is_refused_unless_allowed() {
    let server = Server::start(|_| Reply::new(200, deny("no rm -rf here"))).await;
    let reason = denied(webhook(&server.url("127.0.0.1"))).await;
    assert!(
        reason.contains("127.0.0.1") && reason.contains("allow_loopback"),
        "{reason}"
    );
    assert!(server.requests().is_empty(), "a request was sent");
    let reason = denied(loopback_ok(webhook(&server.url("127.0.0.1")))).await;
    assert!(reason.contains("no rm -rf here"), "{reason}");
    let request = server.requests().concat();
    assert!(
        request.contains("content-type: application/json"),
        "{request}"
    );
    for part in [
        r#""hook_event_name":"PreToolUse""#,
        r#""tool_name":"Bash""#,
        r#""command":"rm -rf /""#,
    ] {
        assert!(request.contains(part), "{part} not in {request}");
    }
}

/// From GoClaw's agent hooks ("validates URLs before request, pins
/// resolved IP"): a name is checked after it resolves, so `localhost` is
/// refused like 127.0.0.1.
#[tokio::test]
async fn a_name_resolving_to_loopback_is_refused_the_same_way() {
    let server = Server::start(|_| Reply::new(200, deny("no"))).await;
    let reason = denied(webhook(&server.url("localhost"))).await;
    assert!(reason.contains("localhost"), "{reason}");
    assert!(
        reason.contains("loopback") && reason.contains("allow_loopback"),
        "{reason}"
    );
    assert!(server.requests().is_empty());
}

/// Issue 20's acceptance ("a redirect is not followed"); remote.rs
/// a_redirect_is_not_followed_and_the_call_ends_by_policy for remotes.
#[tokio::test]
async fn a_redirect_is_not_followed() {
    let elsewhere = Server::start(|_| Reply::new(200, "")).await;
    let target = elsewhere.url("127.0.0.1");
    let moved = target.clone();
    let server = Server::start(move |_| {
        let mut r = Reply::new(302, "");
        r.headers.push(("location", moved.clone()));
        r
    })
    .await;
    let reason = denied(loopback_ok(webhook(&server.url("127.0.0.1")))).await;
    assert!(
        reason.contains("302") && reason.contains(&target),
        "{reason}"
    );
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(elsewhere.requests().is_empty(), "the redirect was followed");
}

/// A deny padded with spaces to `size` bytes.
fn padded_deny(size: usize) -> Vec<u8> {
    let mut body = deny("read whole").into_bytes();
    body.resize(size, b' ');
    body
}

/// From GoClaw's agent hooks ("1 MiB response cap") and issue 20's
/// acceptance ("a 5 MB response is refused"): over the cap the answer is a
/// failure (refused, with or without a content-length), never cut and
/// read; one byte under it is read whole.
#[tokio::test]
async fn a_body_over_the_cap_is_refused_and_one_under_it_is_read() {
    for length in [true, false] {
        let server = Server::start(move |_| {
            let mut r = Reply::new(200, padded_deny(5 * 1024 * 1024));
            r.length = length;
            r
        })
        .await;
        let reason = denied(loopback_ok(webhook(&server.url("127.0.0.1")))).await;
        assert!(reason.contains("cap"), "length {length}: {reason}");
        assert!(!reason.contains("read whole"), "length {length}: {reason}");
    }
    let server = Server::start(|_| Reply::new(200, padded_deny(1024 * 1024 - 1))).await;
    let reason = denied(loopback_ok(webhook(&server.url("127.0.0.1")))).await;
    assert!(reason.contains("read whole"), "{reason}");
}

/// The deadline covers the whole exchange: a server that never answers
/// ends the call at `timeout_ms`, by policy.
#[tokio::test]
async fn a_hanging_server_ends_at_the_timeout() {
    let server = Server::start(|_| Reply {
        hang: true,
        ..Reply::new(200, "")
    })
    .await;
    let mut w = loopback_ok(webhook(&server.url("127.0.0.1")));
    w.timeout_ms = Some(300);
    let started = Instant::now();
    let reason = denied(w).await;
    assert!(reason.contains("no answer within"), "{reason}");
    assert!(started.elapsed() < Duration::from_secs(3), "{reason}");
}

/// From GoClaw's agent hooks ("Retries once on 5xx with 1 s backoff; 4xx
/// fail-closed"): a 500 then a deny is a deny after one retry; a 503 twice
/// fails; a 403 fails at once, unretried.
#[tokio::test]
async fn a_5xx_is_retried_once_and_a_4xx_is_not() {
    let server = Server::start(|n| match n {
        0 => Reply::new(500, "busy"),
        _ => Reply::new(200, deny("second try")),
    })
    .await;
    let started = Instant::now();
    let reason = denied(loopback_ok(webhook(&server.url("127.0.0.1")))).await;
    assert!(reason.contains("second try"), "{reason}");
    assert!(started.elapsed() >= Duration::from_secs(1));
    assert_eq!(server.requests().len(), 2);

    let server = Server::start(|_| Reply::new(503, "down")).await;
    let reason = denied(loopback_ok(webhook(&server.url("127.0.0.1")))).await;
    assert!(reason.contains("503"), "{reason}");
    assert_eq!(server.requests().len(), 2, "one retry only");

    let server = Server::start(|_| Reply::new(403, "forbidden")).await;
    let reason = denied(loopback_ok(webhook(&server.url("127.0.0.1")))).await;
    assert!(reason.contains("403"), "{reason}");
    assert_eq!(server.requests().len(), 1, "a 4xx is not retried");
}

/// Issue 32: a webhook with `on_error = "block"` that got a 200 HTML page
/// (a captive portal, a proxy's error page) allowed. A 2xx body that is
/// neither empty nor a JSON object is a failure of the hook, as Claude
/// Code reads an http hook's answer: `block` refuses, `warn` (GoClaw's
/// "non-JSON 2xx = allow") lets the call through; an empty 2xx allows.
#[tokio::test]
async fn a_2xx_that_is_not_a_json_object_is_a_failure_decided_by_on_error() {
    let html = "<!doctype html><html><body>Sign in to the Wi-Fi</body></html>";
    let server = Server::start(move |_| Reply::new(200, html)).await;
    let reason = denied(loopback_ok(webhook(&server.url("127.0.0.1")))).await;
    assert!(
        reason.contains("neither empty nor a JSON object") && reason.contains("Sign in"),
        "{reason}"
    );
    for body in ["ok, logged", "[1, 2]", "\"allow\"", "{\"cut"] {
        let server = Server::start(move |_| Reply::new(200, body)).await;
        let reason = denied(loopback_ok(webhook(&server.url("127.0.0.1")))).await;
        assert!(reason.contains("JSON object"), "{body}: {reason}");
    }
    let mut warn = loopback_ok(webhook(&server.url("127.0.0.1")));
    warn.on_error = Some(CommandOnError::Warn);
    let h = host(warn).await;
    let outcome = h.before_tool(rm_rf()).await;
    h.shutdown().await;
    assert!(
        matches!(outcome, ToolOutcome::Continue { .. }),
        "{outcome:?}"
    );
    for body in ["", " \n", "{}"] {
        let server = Server::start(move |_| Reply::new(200, body)).await;
        let h = host(loopback_ok(webhook(&server.url("127.0.0.1")))).await;
        let outcome = h.before_tool(rm_rf()).await;
        h.shutdown().await;
        assert!(
            matches!(outcome, ToolOutcome::Continue { .. }),
            "{body:?}: {outcome:?}"
        );
    }
}

/// From docker-agent pkg/hooks (pre_tool_use fails closed): a webhook in
/// docker-agent's dialect at pre_tool_use refuses on a failure even with
/// `on_error = warn`, and is posted docker-agent's own JSON.
#[tokio::test]
async fn a_failure_at_a_fail_closed_event_refuses_whatever_on_error_says() {
    let server = Server::start(|_| Reply::new(500, "boom")).await;
    let mut w = WebhookConfig::new(server.url("127.0.0.1"), &["pre_tool_use"]);
    w.dialect = Dialect::DockerAgent;
    w.on_error = Some(CommandOnError::Warn);
    w.allow_loopback = true;
    w.timeout_ms = Some(500);
    let reason = denied(w).await;
    assert!(reason.contains("500"), "{reason}");
    let request = server.requests().concat();
    assert!(
        request.contains(r#""hook_event_name":"pre_tool_use""#),
        "{request}"
    );
}

/// Remote headers' `${env:NAME}` rule (remote.rs
/// a_websocket_hook_answers_observes_and_gets_its_headers), for webhooks:
/// the value is read at the request and arrives; an unset variable fails
/// the call with its name, and nothing is sent.
#[tokio::test]
async fn an_env_header_arrives_and_an_unset_one_fails_the_call() {
    // SAFETY: set before the host (the only reader) starts; no other test
    // in this binary reads these variables.
    unsafe {
        std::env::set_var("HOOKHOST_WEBHOOK_TEST_TOKEN", "s3cret");
        std::env::remove_var("HOOKHOST_WEBHOOK_TEST_UNSET");
    }
    let server = Server::start(|_| Reply::new(200, deny("with token"))).await;
    let mut w = loopback_ok(webhook(&server.url("127.0.0.1")));
    w.headers.insert(
        "Authorization".into(),
        "Bearer ${env:HOOKHOST_WEBHOOK_TEST_TOKEN}".into(),
    );
    assert!(denied(w.clone()).await.contains("with token"));
    let request = server.requests().concat();
    assert!(
        request.contains("authorization: Bearer s3cret"),
        "{request}"
    );

    let server = Server::start(|_| Reply::new(200, "")).await;
    w.url = server.url("127.0.0.1");
    w.headers.insert(
        "X-Other".into(),
        "${env:HOOKHOST_WEBHOOK_TEST_UNSET}".into(),
    );
    let reason = denied(w).await;
    assert!(reason.contains("HOOKHOST_WEBHOOK_TEST_UNSET"), "{reason}");
    assert!(!reason.contains("s3cret"), "{reason}");
    assert!(server.requests().is_empty(), "sent without its header");
}

/// `hookhost check`'s rows come from here: a webhook is listed as kind
/// `webhook` with its URL, credentials masked.
#[tokio::test]
async fn a_webhook_is_listed_with_its_masked_url() {
    let w = webhook("https://user:pw@hooks.example/gate");
    let host = host(w).await;
    let info = host.hooks();
    host.shutdown().await;
    let gate = info.iter().find(|h| h.name == "gate").expect("listed");
    assert_eq!(gate.kind, HookKind::Webhook);
    assert_eq!(gate.url.as_deref(), Some("https://hooks.example/gate"));
}

/// A webhook for an event nobody waits on (Claude Code's SessionEnd) is
/// posted the event too, as a command hook would be run for it; its answer
/// is only logged. (command_tests.rs notify tests, for the spawned form.)
#[tokio::test]
async fn an_event_nobody_waits_on_is_posted_too() {
    let server = Server::start(|_| Reply::new(200, "")).await;
    let mut w = loopback_ok(webhook(&server.url("127.0.0.1")));
    w.events = vec!["SessionEnd".into()];
    let host = host(w).await;
    let payload = Map::from_iter([("reason".into(), json!("logout"))]);
    host.lifecycle(hookhost::protocol::LifecycleEvent::SessionEnd, payload)
        .await;
    host.shutdown().await;
    let request = server.requests().concat();
    assert!(
        request.contains(r#""hook_event_name":"SessionEnd""#),
        "{request:?}"
    );
}

/// A webhook takes `scope` like every hook (GoClaw's agent scope): a call
/// from another agent never reaches the server.
#[tokio::test]
async fn a_scoped_webhook_is_posted_only_for_its_agent() {
    let server = Server::start(|_| Reply::new(200, deny("not for a1"))).await;
    let mut w = loopback_ok(webhook(&server.url("127.0.0.1")));
    w.scope = toml::from_str("agents = [\"a1\"]").unwrap();
    let host = host(w).await;
    let mut call = rm_rf();
    call.meta.agent_id = Some("a2".into());
    let out = host.before_tool(call.clone()).await;
    assert!(matches!(out, ToolOutcome::Continue { .. }), "{out:?}");
    assert!(
        server.requests().is_empty(),
        "another agent's call was posted"
    );
    call.meta.agent_id = Some("a1".into());
    match host.before_tool(call).await {
        ToolOutcome::Deny { reason } => assert_eq!(reason, "not for a1"),
        other => panic!("{other:?}"),
    }
    host.shutdown().await;
}
