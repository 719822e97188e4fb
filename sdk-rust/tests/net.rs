//! `serve_ws`: a hook over WebSocket and HTTP on one port, through
//! jsonrpsee's clients (what the host uses) and through a raw WebSocket
//! (soketto) where a test must choose the request ids itself: cancelling,
//! answers out of order, notifications in order.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hookhost_sdk::params::{AfterToolParams, BeforeLlmParams, LifecycleParams, ToolCall};
use hookhost_sdk::{
    Approval, Hook, LifecycleVerdict, NetConfig, NetServer, RuntimeEvent, Stage, ToolVerdict,
    Verdict, serve_ws, serve_ws_with,
};
use jsonrpsee::core::ClientError;
use jsonrpsee::core::client::ClientT;
use jsonrpsee::core::params::ObjectParams;
use jsonrpsee::http_client::HttpClientBuilder;
use jsonrpsee::ws_client::WsClientBuilder;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::compat::{Compat, TokioAsyncReadCompatExt};

#[derive(Default, Clone)]
struct TestHook {
    events: Arc<Mutex<Vec<String>>>,
    dropped: Arc<AtomicBool>,
}

/// Sets its flag when dropped: tells whether a cancelled handler's future
/// was really dropped.
struct DropFlag(Arc<AtomicBool>);
impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

impl Hook for TestHook {
    fn intercepts(&self) -> Vec<Stage> {
        Stage::ALL.to_vec()
    }
    fn observes(&self) -> Vec<String> {
        vec!["agent.*".into()]
    }
    fn name(&self) -> Option<String> {
        Some("test".into())
    }
    async fn before_llm(&self, request: BeforeLlmParams) -> Verdict {
        Verdict::abort(format!("llm {}", request.model))
    }
    /// Denies with the call's `text` argument (or the tool's name) as the
    /// reason, after `delay_ms`; the tool `panic` panics.
    async fn before_tool(&self, call: ToolCall) -> ToolVerdict {
        let delay = call
            .arguments
            .get("delay_ms")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        if delay > 0 {
            let _flag = DropFlag(self.dropped.clone());
            tokio::time::sleep(Duration::from_millis(delay)).await;
        }
        if call.tool == "panic" {
            panic!("boom");
        }
        match call.arguments.get("text").and_then(Value::as_str) {
            Some(text) => ToolVerdict::deny(text),
            None => ToolVerdict::deny(call.tool),
        }
    }
    async fn after_tool(&self, result: AfterToolParams) -> Verdict {
        Verdict::hard_abort(result.result.for_llm)
    }
    async fn approve_tool(&self, call: ToolCall) -> Approval {
        Approval::refuse(call.tool)
    }
    async fn lifecycle(&self, params: LifecycleParams) -> LifecycleVerdict {
        match params.payload.get("answer").and_then(Value::as_str) {
            Some("block") => LifecycleVerdict::block("no prompts today"),
            _ => LifecycleVerdict::context(params.event.to_string()),
        }
    }
    async fn on_event(&self, event: RuntimeEvent) {
        self.events.lock().unwrap().push(event.kind);
    }
}

async fn start(hook: TestHook) -> NetServer {
    serve_ws(hook, "127.0.0.1:0").await.unwrap()
}

fn params(v: Value) -> ObjectParams {
    let mut p = ObjectParams::new();
    for (k, v) in v.as_object().unwrap() {
        p.insert(k, v).unwrap();
    }
    p
}

fn hello() -> ObjectParams {
    params(json!({"name": "hookhost", "version": 1}))
}

fn expected_hello() -> Value {
    json!({"name": "test", "version": 1,
        "intercept": ["before_llm", "after_llm", "before_tool", "after_tool", "approve_tool", "lifecycle"],
        "observe": ["agent.*"]})
}

fn event(kind: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": "hook.runtime_event",
        "params": {"id": kind, "kind": kind, "time": "2026-01-01T00:00:00Z", "payload": null}})
}

type WsSender = soketto::connection::Sender<Compat<tokio::net::TcpStream>>;
type WsReceiver = soketto::connection::Receiver<Compat<tokio::net::TcpStream>>;

/// A raw WebSocket connection, for messages jsonrpsee's client cannot
/// send: our own ids, cancels of them, malformed requests.
struct Raw {
    tx: WsSender,
    rx: WsReceiver,
}

impl Raw {
    async fn connect(addr: SocketAddr) -> Raw {
        Raw::upgrade(addr, &[]).await.unwrap()
    }
    /// An upgrade request with `headers` added: the connection, or the
    /// status it was refused with.
    async fn upgrade(addr: SocketAddr, headers: &[(&str, &str)]) -> Result<Raw, u16> {
        let socket = tokio::net::TcpStream::connect(addr).await.unwrap();
        let headers: Vec<soketto::handshake::client::Header> = headers
            .iter()
            .map(|(name, value)| soketto::handshake::client::Header {
                name,
                value: value.as_bytes(),
            })
            .collect();
        let mut client = soketto::handshake::Client::new(socket.compat(), "127.0.0.1", "/");
        client.set_headers(&headers);
        match client.handshake().await.unwrap() {
            soketto::handshake::ServerResponse::Accepted { .. } => {}
            soketto::handshake::ServerResponse::Rejected { status_code } => {
                return Err(status_code);
            }
            other => panic!("unexpected upgrade answer: {other:?}"),
        }
        let (tx, rx) = client.into_builder().finish();
        Ok(Raw { tx, rx })
    }
    async fn send(&mut self, message: &Value) {
        self.send_text(&message.to_string()).await;
    }
    async fn send_text(&mut self, text: &str) {
        self.tx.send_text(text).await.unwrap();
        self.tx.flush().await.unwrap();
    }
    async fn call(&mut self, id: Value, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
    }
    /// The next message, within 10 s.
    async fn recv(&mut self) -> Value {
        let mut buf = Vec::new();
        tokio::time::timeout(Duration::from_secs(10), self.rx.receive_data(&mut buf))
            .await
            .expect("an answer within 10 s")
            .unwrap();
        serde_json::from_slice(&buf).unwrap()
    }
}

/// One HTTP/1.1 POST on a connection of its own: the status line and body.
async fn post(addr: SocketAddr, body: &str) -> (String, String) {
    let (head, body) = post_with(addr, "Content-Type: application/json\r\n", body).await;
    (head.lines().next().unwrap().to_string(), body)
}

/// One HTTP/1.1 POST with the header lines `headers` (each ended by CRLF):
/// the whole response head and the body.
async fn post_with(addr: SocketAddr, headers: &str, body: &str) -> (String, String) {
    let mut socket = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "POST / HTTP/1.1\r\nHost: {addr}\r\n{headers}\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    socket.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    tokio::time::timeout(
        Duration::from_secs(10),
        socket.read_to_string(&mut response),
    )
    .await
    .unwrap()
    .unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    (head.to_string(), body.to_string())
}

/// Waits (up to 10 s) until `events` holds `n` kinds.
async fn wait_for_events(events: &Mutex<Vec<String>>, n: usize) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let got = events.lock().unwrap().clone();
        if got.len() >= n || Instant::now() > deadline {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The code of an error answer, and its message and data as text.
fn call_error(e: ClientError) -> (i32, String) {
    match e {
        ClientError::Call(e) => {
            let data = e.data().map(|d| d.get().to_string()).unwrap_or_default();
            (e.code(), format!("{} {data}", e.message()))
        }
        other => panic!("expected an error answer, got {other:?}"),
    }
}

#[tokio::test]
async fn hello_over_websocket_and_http_on_one_port() {
    let server = start(TestHook::default()).await;
    let addr = server.local_addr();
    let ws = WsClientBuilder::default()
        .build(format!("ws://{addr}"))
        .await
        .unwrap();
    let http = HttpClientBuilder::default()
        .build(format!("http://{addr}"))
        .unwrap();
    let over_ws: Value = ws.request("hook.hello", hello()).await.unwrap();
    let over_http: Value = http.request("hook.hello", hello()).await.unwrap();
    assert_eq!(over_ws, expected_hello());
    assert_eq!(over_http, expected_hello());
}

#[tokio::test]
async fn stages_answer_typed_verdicts_and_errors() {
    let server = start(TestHook::default()).await;
    let addr = server.local_addr();
    let ws = WsClientBuilder::default()
        .build(format!("ws://{addr}"))
        .await
        .unwrap();
    let http = HttpClientBuilder::default()
        .build(format!("http://{addr}"))
        .unwrap();
    let deny = json!({"action": "deny_tool", "reason": "rm"});
    let tool = || params(json!({"tool": "rm", "arguments": {}}));
    let r: Value = ws.request("hook.before_tool", tool()).await.unwrap();
    assert_eq!(r, deny);
    let r: Value = http.request("hook.before_tool", tool()).await.unwrap();
    assert_eq!(r, deny);
    let r: Value = ws
        .request("hook.before_llm", params(json!({"model": "m"})))
        .await
        .unwrap();
    assert_eq!(r, json!({"action": "abort_turn", "reason": "llm m"}));
    let r: Value = ws
        .request("hook.approve_tool", params(json!({"tool": "curl"})))
        .await
        .unwrap();
    assert_eq!(r, json!({"approved": false, "reason": "curl"}));

    // The lifecycle verdict is checked against the event: blocking
    // turn_start is not allowed, and goes out as -32603 naming it.
    let lifecycle =
        |event: &str, answer: &str| params(json!({"event": event, "payload": {"answer": answer}}));
    let r: Value = ws
        .request("hook.lifecycle", lifecycle("user_prompt_submit", "block"))
        .await
        .unwrap();
    assert_eq!(r, json!({"action": "block", "reason": "no prompts today"}));
    let e = ws
        .request::<Value, _>("hook.lifecycle", lifecycle("turn_start", "block"))
        .await
        .unwrap_err();
    let (code, message) = call_error(e);
    assert_eq!(code, -32603);
    assert!(message.contains("`block` is not allowed"), "{message}");

    // Typed params: a missing field is -32602 naming it (in `data`).
    let e = ws
        .request::<Value, _>("hook.before_tool", params(json!({"arguments": {}})))
        .await
        .unwrap_err();
    let (code, message) = call_error(e);
    assert_eq!(code, -32602);
    assert!(message.contains("missing field `tool`"), "{message}");
    let e = http
        .request::<Value, _>("hook.frobnicate", params(json!({})))
        .await
        .unwrap_err();
    assert_eq!(call_error(e).0, -32601);
}

#[tokio::test]
async fn requests_on_one_connection_are_answered_as_they_finish() {
    let server = start(TestHook::default()).await;
    let mut c = Raw::connect(server.local_addr()).await;
    c.call(
        json!(1),
        "hook.before_tool",
        json!({"tool": "slow", "arguments": {"delay_ms": 300}}),
    )
    .await;
    c.call(json!("two"), "hook.before_tool", json!({"tool": "fast"}))
        .await;
    let first = c.recv().await;
    assert_eq!(
        first,
        json!({"jsonrpc": "2.0", "id": "two", "result": {"action": "deny_tool", "reason": "fast"}}),
        "the fast answer must not wait for the slow one"
    );
    assert_eq!(c.recv().await["id"], 1);
}

#[tokio::test]
async fn runtime_events_reach_on_event_in_arrival_order() {
    let hook = TestHook::default();
    let events = hook.events.clone();
    let server = start(hook).await;
    let mut c = Raw::connect(server.local_addr()).await;
    let mut expected = Vec::new();
    for i in 0..300 {
        let kind = format!("agent.e{i}");
        c.send(&event(&kind)).await;
        expected.push(kind);
        if i == 100 {
            // Skipped and logged, not fatal; unknown notifications are
            // ignored; a stage method sent as a notification is not run.
            c.send(
                &json!({"jsonrpc": "2.0", "method": "hook.runtime_event", "params": {"kind": 7}}),
            )
            .await;
            c.send(&json!({"jsonrpc": "2.0", "method": "hook.unknown", "params": {}}))
                .await;
            c.send(
                &json!({"jsonrpc": "2.0", "method": "hook.before_tool", "params": {"tool": "t"}}),
            )
            .await;
        }
    }
    c.call(json!(1), "hook.approve_tool", json!({"tool": "x"}))
        .await;
    assert_eq!(
        c.recv().await["id"],
        1,
        "no notification was answered before it"
    );
    assert_eq!(wait_for_events(&events, 300).await, expected);
}

/// On a multi-threaded runtime the server runs on a current-thread runtime
/// of its own, which is what keeps jsonrpsee's task per message in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_keep_their_order_when_served_from_a_multi_threaded_runtime() {
    let hook = TestHook::default();
    let events = hook.events.clone();
    let server = start(hook).await;
    let addr = server.local_addr();
    let mut c = Raw::connect(addr).await;
    let mut expected = Vec::new();
    for i in 0..500 {
        let kind = format!("agent.e{i}");
        c.send(&event(&kind)).await;
        expected.push(kind);
    }
    // Through jsonrpsee's client too, on a second connection, after the
    // first connection's events.
    let ws = WsClientBuilder::default()
        .build(format!("ws://{addr}"))
        .await
        .unwrap();
    let kinds_before = wait_for_events(&events, 500).await;
    assert_eq!(kinds_before, expected);
    for i in 0..50 {
        let kind = format!("agent.j{i}");
        let p = params(
            json!({"id": kind, "kind": kind, "time": "2026-01-01T00:00:00Z", "payload": null}),
        );
        ws.notification("hook.runtime_event", p).await.unwrap();
        expected.push(kind);
    }
    assert_eq!(wait_for_events(&events, 550).await, expected);
    // Served from the other runtime, stopping works the same.
    server.stop();
    tokio::time::timeout(Duration::from_secs(3), server.stopped())
        .await
        .unwrap();
}

#[tokio::test]
async fn cancel_request_cancels_on_its_own_connection() {
    let hook = TestHook::default();
    let dropped = hook.dropped.clone();
    let server = start(hook).await;
    let addr = server.local_addr();
    let mut a = Raw::connect(addr).await;
    let mut b = Raw::connect(addr).await;
    a.call(
        json!(7),
        "hook.before_tool",
        json!({"tool": "slow", "arguments": {"delay_ms": 30_000}}),
    )
    .await;
    // A cancel for id 7 on another connection is not this request's.
    b.send(&json!({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"id": 7}}))
        .await;
    b.call(json!(1), "hook.approve_tool", json!({"tool": "b"}))
        .await;
    assert_eq!(b.recv().await["id"], 1);
    assert!(!dropped.load(Ordering::SeqCst));

    a.send(&json!({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"id": 7}}))
        .await;
    assert_eq!(
        a.recv().await,
        json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32800, "message": "request cancelled"}})
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    while !dropped.load(Ordering::SeqCst) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        dropped.load(Ordering::SeqCst),
        "the handler's future must be dropped"
    );

    // String ids too; a cancel for an unknown or answered id is ignored.
    a.call(
        json!("s-1"),
        "hook.before_tool",
        json!({"tool": "slow", "arguments": {"delay_ms": 30_000}}),
    )
    .await;
    a.send(&json!({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"id": "s-1"}}))
        .await;
    assert_eq!(a.recv().await["error"]["code"], -32800);
    for id in [json!(99), json!(7), json!("s-1"), json!(-1)] {
        a.send(&json!({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"id": id}}))
            .await;
    }
    a.send(&json!({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {}}))
        .await;
    a.call(json!(8), "hook.approve_tool", json!({"tool": "x"}))
        .await;
    assert_eq!(a.recv().await["id"], 8);
}

#[tokio::test]
async fn a_panic_is_answered_32603_and_serving_goes_on() {
    let server = start(TestHook::default()).await;
    let addr = server.local_addr();
    let mut c = Raw::connect(addr).await;
    c.call(json!(1), "hook.before_tool", json!({"tool": "panic"}))
        .await;
    let r = c.recv().await;
    assert_eq!(r["id"], 1);
    assert_eq!(r["error"]["code"], -32603);
    assert!(
        r["error"]["message"].as_str().unwrap().contains("boom"),
        "{r}"
    );
    c.call(json!(2), "hook.before_tool", json!({"tool": "after"}))
        .await;
    assert_eq!(c.recv().await["result"]["reason"], "after");

    let http = HttpClientBuilder::default()
        .build(format!("http://{addr}"))
        .unwrap();
    let e = http
        .request::<Value, _>("hook.before_tool", params(json!({"tool": "panic"})))
        .await
        .unwrap_err();
    assert_eq!(call_error(e).0, -32603);
    let r: Value = http
        .request("hook.before_tool", params(json!({"tool": "ok"})))
        .await
        .unwrap();
    assert_eq!(r["reason"], "ok");
}

#[tokio::test]
async fn each_connection_is_its_own_session() {
    let server = start(TestHook::default()).await;
    let addr = server.local_addr();
    let first = WsClientBuilder::default()
        .build(format!("ws://{addr}"))
        .await
        .unwrap();
    let second = WsClientBuilder::default()
        .build(format!("ws://{addr}"))
        .await
        .unwrap();
    let a: Value = first.request("hook.hello", hello()).await.unwrap();
    let b: Value = second.request("hook.hello", hello()).await.unwrap();
    assert_eq!((a, b), (expected_hello(), expected_hello()));
    // One going away leaves the other serving; a new one starts afresh.
    drop(first);
    let r: Value = second
        .request("hook.approve_tool", params(json!({"tool": "t"})))
        .await
        .unwrap();
    assert_eq!(r["reason"], "t");
    let mut third = Raw::connect(addr).await;
    third
        .call(
            json!(1),
            "hook.hello",
            json!({"name": "hookhost", "version": 1}),
        )
        .await;
    assert_eq!(third.recv().await["result"], expected_hello());
}

#[tokio::test]
async fn a_notification_post_gets_an_empty_answer() {
    let hook = TestHook::default();
    let events = hook.events.clone();
    let server = start(hook).await;
    let (status, body) = post(server.local_addr(), &event("agent.http").to_string()).await;
    assert!(status.contains(" 200 "), "{status}");
    assert_eq!(body, "", "a notification is never answered");
    assert_eq!(wait_for_events(&events, 1).await, vec!["agent.http"]);
    // A request on the same port still gets its answer.
    let call =
        json!({"jsonrpc": "2.0", "id": 3, "method": "hook.approve_tool", "params": {"tool": "x"}});
    let (status, body) = post(server.local_addr(), &call.to_string()).await;
    assert!(status.contains(" 200 "), "{status}");
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["id"], 3);
}

#[tokio::test]
async fn malformed_requests_are_rejected_as_over_stdio() {
    let server = start(TestHook::default()).await;
    let mut c = Raw::connect(server.local_addr()).await;
    c.send_text(r#"{"jsonrpc":"2.0","id":null,"method":"hook.before_tool","params":{"tool":"t"}}"#)
        .await;
    let r = c.recv().await;
    assert_eq!(
        (r["id"].clone(), r["error"]["code"].clone()),
        (Value::Null, json!(-32600))
    );
    c.send_text(r#"{"jsonrpc":"2.0","id":5,"method":"hook.before_tool","params":["t"]}"#)
        .await;
    let r = c.recv().await;
    assert_eq!(
        (r["id"].clone(), r["error"]["code"].clone()),
        (json!(5), json!(-32600))
    );
    // The protocol has no batches.
    c.send_text(r#"[{"jsonrpc":"2.0","id":6,"method":"hook.approve_tool","params":{"tool":"t"}}]"#)
        .await;
    let r = c.recv().await;
    assert!(r["error"]["code"].is_i64(), "{r}");
    c.send_text("not json").await;
    assert_eq!(c.recv().await["error"]["code"], -32700);
    c.call(json!(7), "hook.approve_tool", json!({"tool": "ok"}))
        .await;
    assert_eq!(c.recv().await["result"]["reason"], "ok");
}

#[tokio::test]
async fn messages_far_over_jsonrpsees_default_limit_pass() {
    let server = start(TestHook::default()).await;
    let addr = server.local_addr();
    // 20 MiB each way; jsonrpsee's default limit is 10 MB.
    let text = "x".repeat(20 << 20);
    let big = json!({"tool": "t", "arguments": {"text": text}});
    let mut c = Raw::connect(addr).await;
    c.call(json!(1), "hook.before_tool", big.clone()).await;
    let r = c.recv().await;
    assert_eq!(r["result"]["reason"].as_str().map(str::len), Some(20 << 20));
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "hook.before_tool", "params": big});
    let (status, body) = post(addr, &call.to_string()).await;
    assert!(status.contains(" 200 "), "{status}");
    let r: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(r["result"]["reason"].as_str().map(str::len), Some(20 << 20));
}

#[tokio::test]
async fn stop_lets_running_requests_answer_then_stops() {
    let server = start(TestHook::default()).await;
    let addr = server.local_addr();
    let mut c = Raw::connect(addr).await;
    c.call(
        json!(1),
        "hook.before_tool",
        json!({"tool": "slow", "arguments": {"delay_ms": 200}}),
    )
    .await;
    // Let the request start before stopping.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let started = Instant::now();
    server.stop();
    assert_eq!(c.recv().await["result"]["reason"], "slow");
    tokio::time::timeout(Duration::from_secs(3), server.stopped())
        .await
        .expect("stopped within 3 s");
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "no longer accepting"
    );
}

#[tokio::test]
async fn stop_abandons_requests_that_outlast_the_grace_period() {
    let hook = TestHook::default();
    let dropped = hook.dropped.clone();
    let server = start(hook).await;
    let mut c = Raw::connect(server.local_addr()).await;
    c.call(
        json!(1),
        "hook.before_tool",
        json!({"tool": "slow", "arguments": {"delay_ms": 60_000}}),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    let started = Instant::now();
    server.stop();
    tokio::time::timeout(Duration::from_secs(3), server.stopped())
        .await
        .expect("stopped within 3 s, not after the request's 60 s");
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(c.recv().await["error"]["code"], -32800);
    assert!(dropped.load(Ordering::SeqCst));
}

#[tokio::test]
async fn dropping_the_handle_stops_the_server() {
    let server = start(TestHook::default()).await;
    let addr = server.local_addr();
    drop(server);
    let deadline = Instant::now() + Duration::from_secs(3);
    while tokio::net::TcpStream::connect(addr).await.is_ok() {
        assert!(Instant::now() < deadline, "still accepting after 3 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

// --- who may connect: Origin, Content-Type, the token ----------------------

const HELLO_CALL: &str =
    r#"{"jsonrpc":"2.0","id":1,"method":"hook.hello","params":{"name":"hookhost","version":1}}"#;

/// The status code of a response head.
fn status(head: &str) -> u16 {
    head.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap()
}

/// Whether a response head has the header line `line` (name in any case).
fn has_header(head: &str, line: &str) -> bool {
    head.lines().any(|l| l.eq_ignore_ascii_case(line))
}

async fn start_with_token(token: &str) -> NetServer {
    serve_ws_with(
        TestHook::default(),
        "127.0.0.1:0",
        NetConfig::new().token(token),
    )
    .await
    .unwrap()
}

#[tokio::test]
async fn an_upgrade_with_an_origin_is_refused_403() {
    let server = start(TestHook::default()).await;
    let addr = server.local_addr();
    for origin in ["https://evil.example", "null", "http://127.0.0.1:1234"] {
        let refused = Raw::upgrade(addr, &[("Origin", origin)]).await;
        assert_eq!(refused.err(), Some(403), "{origin}");
    }
    // Without one, as the host connects, the session is served.
    let mut c = Raw::upgrade(addr, &[]).await.unwrap();
    c.call(json!(1), "hook.hello", json!({"name": "h", "version": 1}))
        .await;
    assert_eq!(c.recv().await["result"], expected_hello());
}

#[tokio::test]
async fn a_post_with_an_origin_is_refused_403() {
    let server = start(TestHook::default()).await;
    let addr = server.local_addr();
    let (head, body) = post_with(
        addr,
        "Origin: https://evil.example\r\nContent-Type: application/json\r\n",
        HELLO_CALL,
    )
    .await;
    assert_eq!(status(&head), 403, "{head}");
    assert!(body.contains("Origin"), "{body}");
    // Even one a browser could send without a preflight.
    let (head, _) = post_with(
        addr,
        "Origin: https://evil.example\r\nContent-Type: text/plain\r\n",
        HELLO_CALL,
    )
    .await;
    assert_eq!(status(&head), 403, "{head}");
}

#[tokio::test]
async fn a_post_that_is_not_application_json_is_refused_415() {
    let server = start(TestHook::default()).await;
    let addr = server.local_addr();
    for headers in [
        "",
        "Content-Type: text/plain\r\n",
        "Content-Type: application/x-www-form-urlencoded\r\n",
        "Content-Type: multipart/form-data; boundary=x\r\n",
        "Content-Type: application/json-rpc\r\n",
    ] {
        let (head, body) = post_with(addr, headers, HELLO_CALL).await;
        assert_eq!(status(&head), 415, "{headers:?}: {head}");
        assert!(body.contains("application/json"), "{body}");
    }
    // application/json with parameters, in any case, is served.
    for headers in [
        "Content-Type: application/json; charset=utf-8\r\n",
        "Content-Type: Application/JSON ; charset=\"UTF-8\"\r\n",
    ] {
        let (head, body) = post_with(addr, headers, HELLO_CALL).await;
        assert_eq!(status(&head), 200, "{headers:?}: {head}");
        let body: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(body["result"], expected_hello());
    }
}

#[tokio::test]
async fn with_a_token_a_post_without_it_or_with_a_wrong_one_is_refused_401() {
    let server = start_with_token("s3cret-token").await;
    let addr = server.local_addr();
    for auth in [
        "",
        "Authorization: Bearer wrong\r\n",
        "Authorization: Bearer s3cret-toke\r\n",
        "Authorization: Bearer s3cret-token2\r\n",
        "Authorization: Basic s3cret-token\r\n",
        "Authorization: s3cret-token\r\n",
    ] {
        let headers = format!("{auth}Content-Type: application/json\r\n");
        let (head, _) = post_with(addr, &headers, HELLO_CALL).await;
        assert_eq!(status(&head), 401, "{auth:?}: {head}");
        assert!(has_header(&head, "www-authenticate: Bearer"), "{head}");
    }
}

#[tokio::test]
async fn with_a_token_an_upgrade_without_it_or_with_a_wrong_one_is_refused_401() {
    let server = start_with_token("s3cret-token").await;
    let addr = server.local_addr();
    assert_eq!(Raw::upgrade(addr, &[]).await.err(), Some(401));
    let wrong = [("Authorization", "Bearer nope")];
    assert_eq!(Raw::upgrade(addr, &wrong).await.err(), Some(401));
    // jsonrpsee's client, the host's, fails to connect as well.
    assert!(
        WsClientBuilder::default()
            .build(format!("ws://{addr}"))
            .await
            .is_err()
    );
}

#[tokio::test]
async fn with_a_token_the_right_one_is_served_over_both_transports() {
    let server = start_with_token("  s3cret-token\n").await; // trimmed
    let addr = server.local_addr();
    // The scheme in any case.
    let headers = "Authorization: bearer s3cret-token\r\nContent-Type: application/json\r\n";
    let (head, body) = post_with(addr, headers, HELLO_CALL).await;
    assert_eq!(status(&head), 200, "{head}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["result"],
        expected_hello()
    );
    let mut c = Raw::upgrade(addr, &[("Authorization", "Bearer s3cret-token")])
        .await
        .unwrap();
    c.call(json!(1), "hook.hello", json!({"name": "h", "version": 1}))
        .await;
    assert_eq!(c.recv().await["result"], expected_hello());
    // As the host sends it: its configured headers on jsonrpsee's clients.
    let mut auth = jsonrpsee::http_client::HeaderMap::new();
    auth.insert("authorization", "Bearer s3cret-token".parse().unwrap());
    let ws = WsClientBuilder::default()
        .set_headers(auth.clone())
        .build(format!("ws://{addr}"))
        .await
        .unwrap();
    let http = HttpClientBuilder::default()
        .set_headers(auth)
        .build(format!("http://{addr}"))
        .unwrap();
    let over_ws: Value = ws.request("hook.hello", hello()).await.unwrap();
    let over_http: Value = http.request("hook.hello", hello()).await.unwrap();
    assert_eq!((over_ws, over_http), (expected_hello(), expected_hello()));
    // The Origin check comes first: even the right token does not let a
    // web page in.
    let origin = [
        ("Authorization", "Bearer s3cret-token"),
        ("Origin", "https://evil.example"),
    ];
    assert_eq!(Raw::upgrade(addr, &origin).await.err(), Some(403));
}

#[tokio::test]
async fn an_empty_or_unprintable_token_is_an_error_at_start() {
    for token in ["", " \n\t", "two words"] {
        let err = serve_ws_with(
            TestHook::default(),
            "127.0.0.1:0",
            NetConfig::new().token(token),
        )
        .await
        .unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput, "{token:?}");
    }
}

#[tokio::test]
async fn token_file_trims_and_refuses_an_empty_or_missing_file() {
    let dir = std::env::temp_dir().join(format!("hookhost-sdk-net-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("token");
    std::fs::write(&file, "\n  from-a-file \n").unwrap();
    let server = serve_ws_with(
        TestHook::default(),
        "127.0.0.1:0",
        NetConfig::new().token_file(&file).unwrap(),
    )
    .await
    .unwrap();
    let headers = "Authorization: Bearer from-a-file\r\nContent-Type: application/json\r\n";
    let (head, _) = post_with(server.local_addr(), headers, HELLO_CALL).await;
    assert_eq!(status(&head), 200, "{head}");
    std::fs::write(&file, " \n").unwrap();
    let err = NetConfig::new().token_file(&file).unwrap_err();
    assert!(err.to_string().contains("is empty"), "{err}");
    let err = NetConfig::new()
        .token_file(dir.join("missing"))
        .unwrap_err();
    assert!(err.to_string().contains("cannot read"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
