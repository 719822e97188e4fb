//! `hookhost serve --otlp URL`: a team's gateway exports a trace per hook
//! point, with a span per hook call, to an OpenTelemetry collector over
//! OTLP/HTTP. The collector here is the test's own: a loopback HTTP
//! server that decodes each export with the official protobuf types
//! (opentelemetry-proto), as a collector's OTLP receiver does. And a
//! collector that is down or stuck costs no decision its time.

#![allow(clippy::unwrap_used)]

mod common;
#[path = "common/gateway.rs"]
mod gw;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;

use gw::Gateway;

/// One guard that lets the call through, one that refuses with a reason
/// that carries a secret.
const TWO_HOOKS: &str = r#"
[hooks.commands.lets_by]
command = "exit 0"
dialect = "claude-code"
events = ["PreToolUse"]

[hooks.commands.says_no]
command = "echo 'no: token sk-abcdefghijklmnopqrstuvwxyz' >&2; exit 2"
dialect = "claude-code"
events = ["PreToolUse"]
"#;

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID: &str = "00f067aa0ba902b7";

/// The spans a loopback OTLP/HTTP receiver was sent, and its port.
struct Receiver {
    spans: Arc<Mutex<Vec<Span>>>,
    port: u16,
}

impl Receiver {
    fn start() -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let spans = Arc::new(Mutex::new(Vec::new()));
        let sink = spans.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let sink = sink.clone();
                std::thread::spawn(move || serve_exports(conn, &sink));
            }
        });
        Receiver { spans, port }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn spans(&self) -> Vec<Span> {
        self.spans.lock().unwrap().clone()
    }
}

/// Reads `POST /v1/traces` requests (protobuf bodies) off one keep-alive
/// connection, answering each 200 as a collector does.
fn serve_exports(conn: TcpStream, sink: &Mutex<Vec<Span>>) {
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut conn = conn;
    loop {
        let mut head = Vec::new();
        let mut line = String::new();
        while reader.read_line(&mut line).unwrap_or(0) > 0 && line != "\r\n" {
            head.push(std::mem::take(&mut line).to_ascii_lowercase());
        }
        if head.is_empty() {
            return;
        }
        assert!(head[0].starts_with("post /v1/traces "), "{head:?}");
        assert!(
            head.iter()
                .any(|h| h.trim() == "content-type: application/x-protobuf"),
            "{head:?}"
        );
        let len: usize = head
            .iter()
            .find_map(|h| h.strip_prefix("content-length:"))
            .map(|v| v.trim().parse().unwrap())
            .unwrap();
        let mut body = vec![0; len];
        reader.read_exact(&mut body).unwrap();
        let export = ExportTraceServiceRequest::decode(body.as_slice()).unwrap();
        let spans = export
            .resource_spans
            .into_iter()
            .flat_map(|r| r.scope_spans.into_iter().flat_map(|s| s.spans));
        sink.lock().unwrap().extend(spans);
        let ok =
            "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
        conn.write_all(ok.as_bytes()).unwrap();
    }
}

/// A span attribute's value, as text.
fn attr(span: &Span, key: &str) -> Option<String> {
    let kv = span.attributes.iter().find(|kv| kv.key == key)?;
    match kv.value.as_ref()?.value.as_ref()? {
        Any::StringValue(s) => Some(s.clone()),
        Any::BoolValue(b) => Some(b.to_string()),
        Any::IntValue(i) => Some(i.to_string()),
        other => Some(format!("{other:?}")),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn named<'a>(spans: &'a [Span], name: &str) -> Vec<&'a Span> {
    spans.iter().filter(|s| s.name == name).collect()
}

fn gateway_exporting_to(name: &str, url: &str) -> Gateway {
    Gateway::start_with(name, TWO_HOOKS, |dir| {
        std::fs::write(dir.join("tokens"), "# the team\n").unwrap();
        let auth = format!("tokens:{}", dir.join("tokens").display());
        let flags = vec!["--auth".into(), auth, "--otlp".into(), url.to_string()];
        (vec![], flags)
    })
}

#[test]
fn a_pre_tool_use_through_two_hooks_arrives_as_one_trace_under_the_agents() {
    let receiver = Receiver::start();
    let mut gw = gateway_exporting_to("otel-trace", &receiver.url());
    let ann = gw.token("acme", "ann");
    let traceparent = format!("00-{TRACE_ID}-{PARENT_ID}-01");
    let headers = [
        ("traceparent", traceparent.as_str()),
        ("tracestate", "vendor=1"),
    ];
    let (status, _, body) = gw.send_with(
        "POST",
        "/hooks/claude-code",
        Some(&ann),
        &headers,
        gw::EVENT,
    );
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"deny\""), "{body}");
    // A malformed traceparent is untrusted input: a new trace, no error.
    let bad = [("traceparent", "00-zz-not-a-trace-01")];
    let (status, _, body) = gw.send_with("POST", "/hooks/claude-code", Some(&ann), &bad, gw::EVENT);
    assert_eq!(status, 200, "{body}");
    // Exit sends what is queued.
    gw.stop();
    let spans = receiver.spans();

    let requests = named(&spans, "hookhost.request");
    assert_eq!(requests.len(), 2, "{spans:#?}");
    let ours = requests
        .iter()
        .find(|s| hex(&s.trace_id) == TRACE_ID)
        .expect("the agent's trace id is the request's");
    assert_eq!(
        hex(&ours.parent_span_id),
        PARENT_ID,
        "under the agent's span"
    );
    let other = requests.iter().find(|s| s.span_id != ours.span_id).unwrap();
    assert!(other.parent_span_id.is_empty(), "a new trace: {other:?}");
    assert_ne!(hex(&other.trace_id), TRACE_ID);

    let point = named(&spans, "execute_hook PreToolUse")
        .into_iter()
        .find(|s| s.parent_span_id == ours.span_id)
        .expect("the hook point's span is the request's child");
    assert_eq!(point.trace_id, ours.trace_id);
    let expect = [
        ("gen_ai.operation.name", "execute_hook"),
        ("hookhost.event", "PreToolUse"),
        ("hookhost.dialect", "claude-code"),
        ("hookhost.stage", "before_tool"),
        ("hookhost.tenant", "acme"),
        ("hookhost.decision", "deny"),
    ];
    for (key, value) in expect {
        assert_eq!(attr(point, key).as_deref(), Some(value), "{key}: {point:?}");
    }
    let session = attr(point, "gen_ai.conversation.id").unwrap();
    assert!(session.contains("s1"), "{session}");

    let calls: Vec<&Span> = spans
        .iter()
        .filter(|s| s.parent_span_id == point.span_id)
        .collect();
    assert_eq!(calls.len(), 2, "one child per hook call: {calls:#?}");
    let call = |hook: &str| {
        let name = format!("apply_guardrail {hook}");
        *calls.iter().find(|s| s.name == name).unwrap()
    };
    let (lets_by, says_no) = (call("lets_by"), call("says_no"));
    for (span, hook, value) in [
        (lets_by, "lets_by", "continue"),
        (says_no, "says_no", "deny_tool"),
    ] {
        assert_eq!(span.trace_id, ours.trace_id);
        let expect = [
            ("gen_ai.operation.name", "apply_guardrail"),
            ("gen_ai.guardrail.component.name", hook),
            ("gen_ai.guardrail.source", "before_tool"),
            ("gen_ai.guardrail.result.type", "decision"),
            ("gen_ai.guardrail.result.value", value),
        ];
        for (key, want) in expect {
            assert_eq!(attr(span, key).as_deref(), Some(want), "{key}: {span:?}");
        }
        let us: u64 = attr(span, "hookhost.duration_us").unwrap().parse().unwrap();
        assert!(us > 0, "{span:?}");
    }
    assert_eq!(
        attr(says_no, "gen_ai.guardrail.result.reason").as_deref(),
        Some("no: token [REDACTED]"),
        "the reason, redacted as the audit log redacts it"
    );
    assert_eq!(attr(lets_by, "gen_ai.guardrail.result.reason"), None);
}

/// Sends `n` events and returns the slowest answer's time.
fn slowest_of(gw: &Gateway, n: usize) -> Duration {
    let ann = gw.token("acme", "ann");
    let mut slowest = Duration::ZERO;
    for _ in 0..n {
        let begun = Instant::now();
        let (status, _, body) = gw.send("POST", "/hooks/claude-code", Some(&ann), gw::EVENT);
        slowest = slowest.max(begun.elapsed());
        assert_eq!(status, 200, "{body}");
        assert!(body.contains("\"deny\""), "{body}");
    }
    slowest
}

#[test]
fn a_collector_that_is_down_or_stuck_slows_no_decision() {
    // Down: nothing listens on the port.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let down = format!("http://127.0.0.1:{}", closed.local_addr().unwrap().port());
    drop(closed);
    // Stuck: takes the connection, never answers.
    let stuck = TcpListener::bind("127.0.0.1:0").unwrap();
    let stuck_url = format!("http://127.0.0.1:{}", stuck.local_addr().unwrap().port());
    let held = Arc::new(Mutex::new(Vec::new()));
    let holder = held.clone();
    std::thread::spawn(move || {
        for conn in stuck.incoming().flatten() {
            holder.lock().unwrap().push(conn);
        }
    });
    for (name, url) in [("otel-down", down), ("otel-stuck", stuck_url)] {
        let mut gw = gateway_exporting_to(name, &url);
        // Past the batch delay (2 s), so exports are attempted meanwhile.
        let mut slowest = slowest_of(&gw, 10);
        std::thread::sleep(Duration::from_millis(2500));
        slowest = slowest.max(slowest_of(&gw, 10));
        assert!(slowest < Duration::from_secs(1), "{name}: {slowest:?}");
        let begun = Instant::now();
        let stderr = gw.stop();
        let stopping = begun.elapsed();
        assert!(
            stopping < Duration::from_secs(8),
            "{name}: exit took {stopping:?}"
        );
        // Said once, not per batch (a stuck one may still be waiting).
        let warned = stderr
            .matches("OpenTelemetry: spans not delivered to http://127.0.0.1:")
            .count();
        let expected = if name == "otel-down" { 1..=1 } else { 0..=1 };
        assert!(expected.contains(&warned), "{name}: {stderr}");
    }
}
