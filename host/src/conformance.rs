//! Checks a hook program against the protocol, the way `hookhost
//! conformance` reports it: the hook is spawned alone and driven over raw
//! lines, so that every byte it writes is seen, not just what the host's
//! forgiving reader would let through.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::time::{Duration, Instant};

use hookhost_protocol::envelope::Message;
use hookhost_protocol::stage::method;
use hookhost_protocol::{Chain, HelloResult, OnError, PROTOCOL_VERSION, Stage, error_code};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::process::ChildStdin;
use tokio::sync::mpsc;

use crate::config::ProcessConfig;
use crate::transport::spawn::{self as process, Running};
use hookhost_protocol::framing::{Line, LineReader};

/// One check's verdict.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Check {
    /// A stable name, e.g. `hello` or `before_tool: unicode`.
    pub name: String,
    /// Whether the hook passed.
    pub passed: bool,
    /// Why it failed (empty when it passed).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

/// Every check, in the order they ran.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Report {
    /// The checks.
    pub checks: Vec<Check>,
}

impl Report {
    fn pass(&mut self, name: impl Into<String>) {
        self.checks.push(Check {
            name: name.into(),
            passed: true,
            detail: String::new(),
        });
    }

    fn fail(&mut self, name: impl Into<String>, why: impl Into<String>) {
        self.checks.push(Check {
            name: name.into(),
            passed: false,
            detail: why.into(),
        });
    }

    fn record(&mut self, name: impl Into<String>, r: Result<(), String>) {
        match r {
            Ok(()) => self.pass(name),
            Err(why) => self.fail(name, why),
        }
    }

    /// How many passed.
    pub fn passed(&self) -> usize {
        self.checks.iter().filter(|c| c.passed).count()
    }

    /// How many failed.
    pub fn failed(&self) -> usize {
        self.checks.len() - self.passed()
    }
}

/// What to run and how patient to be.
#[derive(Debug, Clone)]
pub struct Options {
    /// argv of the hook.
    pub command: Vec<String>,
    /// Extra environment for the hook (besides `PATH`).
    pub env: Vec<(String, String)>,
    /// How long one answer may take.
    pub timeout: Duration,
}

enum Event {
    Line(Vec<u8>),
    TooLong(usize),
}

/// A raw session with the hook under test.
struct Session {
    running: Running,
    stdin: Option<ChildStdin>,
    lines: mpsc::UnboundedReceiver<Event>,
    timeout: Duration,
    /// Lines on stdout that were not JSON-RPC messages.
    garbage: Vec<String>,
    /// Messages that answered nothing we asked (no id, unknown id, ...).
    stray: Vec<String>,
    /// Set once the hook stopped answering, so later checks fail at once
    /// instead of each waiting out the timeout.
    unresponsive: Option<String>,
}

impl Session {
    async fn send(&mut self, line: &str) -> Result<(), String> {
        if let Some(why) = &self.unresponsive {
            return Err(format!("skipped: {why}"));
        }
        let stdin = self.stdin.as_mut().ok_or("stdin already closed")?;
        let mut buf = Vec::with_capacity(line.len() + 1);
        buf.extend_from_slice(line.as_bytes());
        buf.push(b'\n');
        tokio::time::timeout(self.timeout, stdin.write_all(&buf))
            .await
            .map_err(|_| {
                format!(
                    "the hook did not read its stdin within {} ms",
                    self.timeout.as_millis()
                )
            })?
            .map_err(|e| format!("writing to the hook failed: {e}"))
    }

    /// Reads until a response for each id in `ids` has arrived; everything
    /// else that arrives is recorded as stray or garbage.
    async fn collect(&mut self, ids: &[Value]) -> Result<HashMap<String, Value>, String> {
        if let Some(why) = &self.unresponsive {
            return Err(format!("skipped: {why}"));
        }
        let r = self.collect_inner(ids).await;
        if let Err(why) = &r {
            self.unresponsive = Some(format!("the hook stopped answering earlier ({why})"));
        }
        r
    }

    async fn collect_inner(&mut self, ids: &[Value]) -> Result<HashMap<String, Value>, String> {
        let deadline = Instant::now() + self.timeout;
        let want: BTreeSet<String> = ids.iter().map(Value::to_string).collect();
        let mut got: HashMap<String, Value> = HashMap::new();
        while got.len() < want.len() {
            let left = deadline.saturating_duration_since(Instant::now());
            let ev = match tokio::time::timeout(left, self.lines.recv()).await {
                Ok(Some(ev)) => ev,
                Ok(None) => {
                    return Err(format!(
                        "the hook closed stdout (or exited) with {} of {} answers missing",
                        want.len() - got.len(),
                        want.len()
                    ));
                }
                Err(_) => {
                    return Err(format!(
                        "{} of {} answers missing after {} ms",
                        want.len() - got.len(),
                        want.len(),
                        self.timeout.as_millis()
                    ));
                }
            };
            let line = match ev {
                Event::Line(l) => l,
                Event::TooLong(n) => {
                    self.garbage.push(format!("a {n}-byte line"));
                    continue;
                }
            };
            let value: Value = match serde_json::from_slice(&line) {
                Ok(v) => v,
                Err(_) => {
                    self.garbage.push(snippet(&line));
                    continue;
                }
            };
            match Message::from_value(value.clone()) {
                Ok(Message::Response(r)) => {
                    let key =
                        r.id.as_ref()
                            .map(|id| serde_json::to_value(id).unwrap_or(Value::Null));
                    match key.map(|k| k.to_string()) {
                        Some(k) if want.contains(&k) && !got.contains_key(&k) => {
                            got.insert(k, value);
                        }
                        _ => self.stray.push(snippet(&line)),
                    }
                }
                Ok(_) => self.stray.push(snippet(&line)),
                Err(_) => self.garbage.push(snippet(&line)),
            }
        }
        Ok(got)
    }

    async fn call(&mut self, id: Value, method: &str, params: &Value) -> Result<Value, String> {
        let line =
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        self.send(&line).await?;
        let mut got = self.collect(std::slice::from_ref(&id)).await?;
        got.remove(&id.to_string())
            .ok_or_else(|| "no answer".to_string())
    }

    /// Stray messages, less the ones the protocol allows, possibly late:
    /// error replies with a null id (the answer to a malformed line) and the
    /// cancelled request's own answer (a result or -32800).
    fn unsolicited(&self) -> Vec<String> {
        self.stray
            .iter()
            .filter(|line| {
                let compact = line.replace(' ', "");
                !compact.contains(r#""id":null"#) && !compact.contains(r#""id":"to-cancel""#)
            })
            .cloned()
            .collect()
    }

    /// Lets late output arrive, so that strays are seen.
    async fn settle(&mut self, within: Duration) {
        let until = Instant::now() + within;
        while let Ok(Some(ev)) = tokio::time::timeout(
            until.saturating_duration_since(Instant::now()),
            self.lines.recv(),
        )
        .await
        {
            match ev {
                Event::Line(l) => match serde_json::from_slice::<Value>(&l) {
                    Ok(_) => self.stray.push(snippet(&l)),
                    Err(_) => self.garbage.push(snippet(&l)),
                },
                Event::TooLong(n) => self.garbage.push(format!("a {n}-byte line")),
            }
        }
    }
}

fn snippet(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(&line[..line.len().min(120)]).into_owned();
    if line.len() > 120 {
        format!("{text}…")
    } else {
        text
    }
}

/// Sample params for each stage: plain, unicode, empty arguments and a
/// 1 MiB argument.
fn samples(stage: Stage) -> Vec<(&'static str, Value)> {
    let big = "a".repeat(1024 * 1024);
    let unicode = "echo 'héllo wörld — 你好 🎉 \u{202e}'";
    let meta =
        json!({"agent_id": "conformance", "session_key": "s-1", "turn_id": "t-1", "iteration": 1});
    match stage {
        Stage::BeforeTool | Stage::ApproveTool => vec![
            (
                "plain",
                json!({"meta": meta, "tool": "shell", "arguments": {"command": "echo hello"}}),
            ),
            (
                "unicode",
                json!({"tool": "shell", "arguments": {"command": unicode}}),
            ),
            (
                "empty arguments",
                json!({"tool": "list_dir", "arguments": {}}),
            ),
            (
                "1 MiB argument",
                json!({"tool": "write_file", "arguments": {"path": "big.txt", "content": big}}),
            ),
        ],
        Stage::AfterTool => vec![
            (
                "plain",
                json!({"meta": meta, "tool": "shell", "arguments": {"command": "echo hello"}, "result": {"for_llm": "hello"}, "duration_ms": 3}),
            ),
            (
                "unicode",
                json!({"tool": "shell", "arguments": {"command": unicode}, "result": {"for_llm": "héllo wörld — 你好 🎉"}}),
            ),
            (
                "empty arguments",
                json!({"tool": "list_dir", "arguments": {}, "result": {"for_llm": "", "is_error": true}}),
            ),
            (
                "1 MiB argument",
                json!({"tool": "read_file", "arguments": {"path": "big.txt"}, "result": {"for_llm": big}}),
            ),
        ],
        Stage::BeforeLlm => vec![
            (
                "plain",
                json!({"meta": meta, "model": "m", "messages": [{"role": "user", "content": "hi"}]}),
            ),
            (
                "unicode",
                json!({"model": "m", "messages": [{"role": "user", "content": "héllo — 你好 🎉"}]}),
            ),
            ("empty arguments", json!({"model": "m", "messages": []})),
            (
                "1 MiB argument",
                json!({"model": "m", "messages": [{"role": "user", "content": big}]}),
            ),
        ],
        Stage::Lifecycle => vec![
            (
                "plain",
                json!({"meta": meta, "event": "session_start", "payload": {"source": "startup"}}),
            ),
            (
                "unicode",
                json!({"event": "user_prompt_submit", "payload": {"prompt": unicode}}),
            ),
            (
                "empty arguments",
                json!({"event": "turn_start", "payload": {}}),
            ),
            (
                "1 MiB argument",
                json!({"event": "user_prompt_submit", "payload": {"prompt": big}}),
            ),
        ],
        Stage::AfterLlm => vec![
            (
                "plain",
                json!({"meta": meta, "model": "m", "response": {"content": "hello", "finish_reason": "stop"}}),
            ),
            (
                "unicode",
                json!({"model": "m", "response": {"content": "héllo — 你好 🎉"}}),
            ),
            (
                "empty arguments",
                json!({"model": "m", "response": {"content": ""}}),
            ),
            (
                "1 MiB argument",
                json!({"model": "m", "response": {"content": big}}),
            ),
        ],
    }
}

/// Whether `answer` is a valid result for `stage` with `params`: the shape,
/// the action's legality and, for modify, that the patched params still
/// have the stage's shape.
fn judge(stage: Stage, params: &Value, answer: &Value) -> Result<(), String> {
    if let Some(err) = answer.get("error") {
        return Err(format!("answered an error: {err}"));
    }
    let result = answer.get("result").ok_or("the response has no result")?;
    let mut chain = Chain::new(stage, params.clone()).map_err(|e| e.to_string())?;
    chain.step("hook", OnError::Deny, Ok(result));
    match chain.steps().last().map(|s| &s.outcome) {
        Some(hookhost_protocol::chain::StepOutcome::Failed { error, .. }) => Err(error.clone()),
        _ => Ok(()),
    }
}

/// Runs every check against the hook started from `opts.command`.
pub async fn run(opts: &Options) -> Report {
    let mut report = Report::default();
    let mut config = ProcessConfig::new(opts.command.clone(), Vec::new());
    config.env = opts.env.iter().cloned().collect();
    let dir = std::env::current_dir().unwrap_or_else(|_| Path::new(".").to_path_buf());
    let (running, pipes) =
        match process::spawn(&crate::supervise::process::spawn_spec(&config, &dir)) {
            Ok(x) => x,
            Err(e) => {
                report.fail("spawn", e.to_string());
                return report;
            }
        };
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut reader = LineReader::new(BufReader::new(pipes.stdout), 64 * 1024 * 1024);
        let mut buf = Vec::new();
        loop {
            let ev = match reader.next(&mut buf).await {
                Ok(Line::Complete) if buf.iter().all(u8::is_ascii_whitespace) => continue,
                Ok(Line::Complete) => Event::Line(std::mem::take(&mut buf)),
                Ok(Line::TooLong(n)) => Event::TooLong(n),
                Ok(Line::Eof) | Err(_) => return,
            };
            if tx.send(ev).is_err() {
                return;
            }
        }
    });
    let stderr_tail = process::StderrTail::default();
    tokio::spawn(process::drain_stderr(
        "conformance".into(),
        pipes.stderr,
        stderr_tail,
    ));
    let mut s = Session {
        running,
        stdin: Some(pipes.stdin),
        lines: rx,
        timeout: opts.timeout,
        garbage: Vec::new(),
        stray: Vec::new(),
        unresponsive: None,
    };
    run_checks(&mut s, &mut report).await;
    report
}

async fn run_checks(s: &mut Session, report: &mut Report) {
    // hello
    let hello_params = json!({"name": "conformance", "version": PROTOCOL_VERSION, "modes": ["observe", "llm", "tool", "approve"], "host": {"name": "hookhost-conformance", "version": env!("CARGO_PKG_VERSION")}});
    let started = Instant::now();
    let hello = s.call(json!(1), method::HELLO, &hello_params).await;
    let declared = match hello.and_then(|answer| {
        let result = answer.get("result").ok_or_else(|| {
            format!(
                "answered an error: {}",
                answer.get("error").cloned().unwrap_or_default()
            )
        })?;
        let hello =
            HelloResult::deserialize(result).map_err(|e| format!("invalid hello result: {e}"))?;
        hello
            .negotiate(PROTOCOL_VERSION)
            .map_err(|e| e.to_string())?;
        Ok(hello)
    }) {
        Ok(h) => {
            report.pass(format!("hello ({} ms)", started.elapsed().as_millis()));
            h
        }
        Err(why) => {
            report.fail("hello", why);
            finish(s, report).await;
            return;
        }
    };
    let stages: Vec<Stage> = declared
        .intercept
        .clone()
        .unwrap_or_else(|| Stage::ALL.to_vec());
    let undeclared = declared.intercept.is_none();

    // declared stages, with sample params
    let mut next_id = 100;
    let mut answered: Vec<Stage> = Vec::new();
    for stage in &stages {
        for (label, params) in samples(*stage) {
            next_id += 1;
            let name = format!("{stage}: {label}");
            match s.call(json!(next_id), stage.method(), &params).await {
                Ok(answer)
                    if undeclared
                        && answer["error"]["code"] == json!(error_code::METHOD_NOT_FOUND) =>
                {
                    break; // an undeclared (PicoClaw-style) hook that does not offer this stage
                }
                Ok(answer) => {
                    report.record(name, judge(*stage, &params, &answer));
                    if !answered.contains(stage) {
                        answered.push(*stage);
                    }
                }
                Err(why) => report.fail(name, why),
            }
        }
    }
    let probe = answered.first().copied();
    let probe_call = |id: Value| -> (Value, &'static str, Value) {
        match probe {
            Some(stage) => (id, stage.method(), samples(stage).remove(0).1),
            None => (id, "hook.no_such_method", json!({})),
        }
    };

    // unknown method
    let r = match s
        .call(json!("unknown-1"), "hook.no_such_method", &json!({}))
        .await
    {
        Ok(answer) if answer["error"]["code"] == json!(error_code::METHOD_NOT_FOUND) => {
            let (id, m, p) = probe_call(json!(2001));
            s.call(id, m, &p)
                .await
                .map(drop)
                .map_err(|e| format!("answered -32601 but then: {e}"))
        }
        Ok(answer) => Err(format!("expected error -32601, got {answer}")),
        Err(e) => Err(e),
    };
    report.record("unknown method answered -32601 and the hook lives on", r);

    // malformed lines
    let mut r = Ok(());
    for bad in [
        "this is not json",
        r#"{"jsonrpc":"2.0","id":"#,
        r#"[1,2,3]"#,
    ] {
        if let Err(e) = s.send(bad).await {
            r = Err(e);
        }
    }
    if r.is_ok() {
        let (id, m, p) = probe_call(json!(2002));
        r = s
            .call(id, m, &p)
            .await
            .map(drop)
            .map_err(|e| format!("after malformed lines: {e}"));
    }
    report.record("malformed lines do not kill it", r);

    // notifications get no response
    let before = s.unsolicited().len();
    let event = json!({"id": "evt-1", "kind": "agent.turn.start", "time": "2026-01-01T00:00:00Z", "payload": {}});
    let mut r = s
        .send(
            &json!({"jsonrpc": "2.0", "method": method::RUNTIME_EVENT, "params": event})
                .to_string(),
        )
        .await;
    if r.is_ok() {
        r = s
            .send(&json!({"jsonrpc": "2.0", "method": method::CANCEL_REQUEST, "params": {"id": 999_999}}).to_string())
            .await;
    }
    if r.is_ok() {
        let (id, m, p) = probe_call(json!(2003));
        r = s.call(id, m, &p).await.map(drop);
        s.settle(Duration::from_millis(100)).await;
        let unsolicited = s.unsolicited();
        if r.is_ok() && unsolicited.len() > before {
            r = Err(format!("answered a notification: {}", unsolicited[before]));
        }
    }
    report.record("notifications get no response", r);

    // 64 concurrent requests, integer and string ids
    let ids: Vec<Value> = (0..64)
        .map(|i| {
            if i % 2 == 0 {
                json!(3000 + i)
            } else {
                json!(format!("c-{i}"))
            }
        })
        .collect();
    let mut r = Ok(());
    for id in &ids {
        let (id, m, p) = probe_call(id.clone());
        if let Err(e) = s
            .send(&json!({"jsonrpc": "2.0", "id": id, "method": m, "params": p}).to_string())
            .await
        {
            r = Err(e);
            break;
        }
    }
    if r.is_ok() {
        r = s.collect(&ids).await.map(drop);
    }
    report.record("64 concurrent requests answered with matching ids", r);

    // cancel tolerated
    let (id, m, p) = probe_call(json!("to-cancel"));
    let mut r = s
        .send(&json!({"jsonrpc": "2.0", "id": id, "method": m, "params": p}).to_string())
        .await;
    if r.is_ok() {
        r = s
            .send(&json!({"jsonrpc": "2.0", "method": method::CANCEL_REQUEST, "params": {"id": "to-cancel"}}).to_string())
            .await;
    }
    if r.is_ok() {
        let (id, m, p) = probe_call(json!(2004));
        r = s
            .call(id, m, &p)
            .await
            .map(drop)
            .map_err(|e| format!("after $/cancel_request: {e}"));
    }
    report.record("$/cancel_request tolerated", r);

    finish(s, report).await;
}

async fn finish(s: &mut Session, report: &mut Report) {
    // stdin EOF → exit within 2 s
    s.stdin = None;
    let exited = tokio::time::timeout(Duration::from_secs(2), s.running.wait()).await;
    s.settle(Duration::from_millis(50)).await;
    match exited {
        Ok(status) => report.pass(format!("exits within 2 s of stdin EOF ({status})")),
        Err(_) => {
            report.fail(
                "exits within 2 s of stdin EOF",
                "still running 2 s after stdin closed",
            );
            s.running.kill().await;
        }
    }
    if s.garbage.is_empty() {
        report.pass("only JSON-RPC on stdout");
    } else {
        report.fail(
            "only JSON-RPC on stdout",
            format!(
                "{} other line(s), first: {:?}",
                s.garbage.len(),
                s.garbage[0]
            ),
        );
    }
    let stray = s.unsolicited();
    if stray.is_empty() {
        report.pass("no unsolicited messages");
    } else {
        report.fail(
            "no unsolicited messages",
            format!(
                "{} message(s) answering nothing, first: {}",
                stray.len(),
                stray[0]
            ),
        );
    }
    s.running.stop(Duration::from_millis(200)).await;
}
