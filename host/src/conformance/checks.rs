//! The checks, one function each, and the order they run in
//! ([`run_checks`]). Each check drives the [`Session`] and returns a
//! [`Verdict`]; the names and detail texts are what `hookhost conformance`
//! prints, so they are stable.

use std::time::{Duration, Instant};

use hookhost_protocol::chain::StepOutcome;
use hookhost_protocol::stage::method;
use hookhost_protocol::{Chain, HelloResult, OnError, PROTOCOL_VERSION, Stage, error_code};
use serde::Deserialize;
use serde_json::{Value, json};

use super::report::{Report, Verdict};
use super::samples::{plain, samples};
use super::session::Session;

/// Runs every check in order; a failed hello skips to the exit checks.
pub(super) async fn run_checks(s: &mut Session, report: &mut Report) {
    if let Some(declared) = hello(s, report).await {
        let probe = stage_samples(s, report, &declared).await;
        let verdict = unknown_method(s, &probe).await;
        report.record(
            "unknown method answered -32601 and the hook lives on",
            verdict,
        );
        let verdict = malformed_lines(s, &probe).await;
        report.record("malformed lines do not kill it", verdict);
        let verdict = notifications(s, &probe).await;
        report.record("notifications get no response", verdict);
        let verdict = concurrent(s, &probe).await;
        report.record("64 concurrent requests answered with matching ids", verdict);
        let verdict = cancel(s, &probe).await;
        report.record("$/cancel_request tolerated", verdict);
    }
    finish(s, report).await;
}

/// The call the liveness checks send: the plain sample of the first stage
/// the hook answered, or an unknown method (answered with an error, which
/// still shows the hook alive) when it answered none.
struct Probe(Option<(Stage, Value)>);

impl Probe {
    fn new(stage: Option<Stage>) -> Self {
        Probe(stage.map(|stage| (stage, plain(stage))))
    }

    fn method(&self) -> &'static str {
        match &self.0 {
            Some((stage, _)) => stage.method(),
            None => "hook.no_such_method",
        }
    }

    fn params(&self) -> Value {
        match &self.0 {
            Some((_, params)) => params.clone(),
            None => json!({}),
        }
    }

    /// Sends the probe under `id` and waits for the answer.
    async fn call(&self, s: &mut Session, id: Value) -> Result<Value, String> {
        s.call(id, self.method(), &self.params()).await
    }

    /// Sends the probe under `id` without waiting.
    async fn send(&self, s: &mut Session, id: &Value) -> Result<(), String> {
        s.send_request(id, self.method(), &self.params()).await
    }
}

/// `hook.hello`: answered with a result that parses and negotiates
/// protocol v1. Records itself, since its name carries the time taken.
async fn hello(s: &mut Session, report: &mut Report) -> Option<HelloResult> {
    let params = json!({"name": "conformance", "version": PROTOCOL_VERSION, "modes": ["observe", "llm", "tool", "approve"], "host": {"name": "hookhost-conformance", "version": env!("CARGO_PKG_VERSION")}});
    let started = Instant::now();
    match s
        .call(json!(1), method::HELLO, &params)
        .await
        .and_then(parse_hello)
    {
        Ok(h) => {
            report.pass(format!("hello ({} ms)", started.elapsed().as_millis()));
            Some(h)
        }
        Err(why) => {
            report.fail("hello", why);
            None
        }
    }
}

fn parse_hello(answer: Value) -> Result<HelloResult, String> {
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
}

/// Every declared stage (all of them for a hook that declares none) with
/// each sample; returns the probe, built from the first stage answered.
async fn stage_samples(s: &mut Session, report: &mut Report, declared: &HelloResult) -> Probe {
    let undeclared = declared.intercept.is_none();
    let stages = declared
        .intercept
        .clone()
        .unwrap_or_else(|| Stage::ALL.to_vec());
    let mut next_id = 100;
    let mut first_answered = None;
    for stage in stages {
        for (label, params) in samples(stage) {
            next_id += 1;
            let name = format!("{stage}: {label}");
            match s.call(json!(next_id), stage.method(), &params).await {
                // An undeclared (PicoClaw-style) hook that does not offer this stage.
                Ok(answer) if undeclared && not_found(&answer) => break,
                Ok(answer) => {
                    report.record(name, judge(stage, &params, &answer));
                    first_answered.get_or_insert(stage);
                }
                Err(why) => report.fail(name, why),
            }
        }
    }
    Probe::new(first_answered)
}

fn not_found(answer: &Value) -> bool {
    answer["error"]["code"] == json!(error_code::METHOD_NOT_FOUND)
}

/// Whether `answer` is a valid result for `stage` with `params`: the shape,
/// the action's legality and, for modify, that the patched params still
/// have the stage's shape.
fn judge(stage: Stage, params: &Value, answer: &Value) -> Verdict {
    if let Some(err) = answer.get("error") {
        return Err(format!("answered an error: {err}"));
    }
    let result = answer.get("result").ok_or("the response has no result")?;
    let mut chain = Chain::new(stage, params.clone()).map_err(|e| e.to_string())?;
    chain.step("hook", OnError::Deny, Ok(result));
    match chain.steps().last().map(|s| &s.outcome) {
        Some(StepOutcome::Failed { error, .. }) => Err(error.clone()),
        _ => Ok(()),
    }
}

/// An unknown method gets -32601 and the hook answers the probe after it.
async fn unknown_method(s: &mut Session, probe: &Probe) -> Verdict {
    let answer = s
        .call(json!("unknown-1"), "hook.no_such_method", &json!({}))
        .await?;
    if !not_found(&answer) {
        return Err(format!("expected error -32601, got {answer}"));
    }
    probe
        .call(s, json!(2001))
        .await
        .map(drop)
        .map_err(|e| format!("answered -32601 but then: {e}"))
}

/// Lines that are not JSON, cut off, or a batch leave the hook answering.
async fn malformed_lines(s: &mut Session, probe: &Probe) -> Verdict {
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
    r?;
    probe
        .call(s, json!(2002))
        .await
        .map(drop)
        .map_err(|e| format!("after malformed lines: {e}"))
}

/// A runtime event and a cancel for an unknown id draw no response.
async fn notifications(s: &mut Session, probe: &Probe) -> Verdict {
    let before = s.unsolicited().len();
    let event = json!({"id": "evt-1", "kind": "agent.turn.start", "time": "2026-01-01T00:00:00Z", "payload": {}});
    s.notify(method::RUNTIME_EVENT, &event).await?;
    s.notify(method::CANCEL_REQUEST, &json!({"id": 999_999}))
        .await?;
    let r = probe.call(s, json!(2003)).await.map(drop);
    s.settle(Duration::from_millis(100)).await;
    let unsolicited = s.unsolicited();
    if r.is_ok() && unsolicited.len() > before {
        return Err(format!("answered a notification: {}", unsolicited[before]));
    }
    r
}

/// 64 requests in flight at once, integer and string ids, each answered
/// under its own id.
async fn concurrent(s: &mut Session, probe: &Probe) -> Verdict {
    let ids: Vec<Value> = (0..64)
        .map(|i| {
            if i % 2 == 0 {
                json!(3000 + i)
            } else {
                json!(format!("c-{i}"))
            }
        })
        .collect();
    for id in &ids {
        probe.send(s, id).await?;
    }
    s.collect(&ids).await.map(drop)
}

/// `$/cancel_request` for a request in flight leaves the hook answering.
async fn cancel(s: &mut Session, probe: &Probe) -> Verdict {
    probe.send(s, &json!("to-cancel")).await?;
    s.notify(method::CANCEL_REQUEST, &json!({"id": "to-cancel"}))
        .await?;
    probe
        .call(s, json!(2004))
        .await
        .map(drop)
        .map_err(|e| format!("after $/cancel_request: {e}"))
}

/// The checks that end every run, hello or not: exit on stdin EOF, a
/// clean stdout, nothing unsolicited; then the hook is stopped.
pub(super) async fn finish(s: &mut Session, report: &mut Report) {
    exits_on_eof(s, report).await;
    report.record("only JSON-RPC on stdout", only_json_rpc(s));
    report.record("no unsolicited messages", no_unsolicited(s));
    s.stop(Duration::from_millis(200)).await;
}

/// The hook exits within 2 s of stdin EOF; its name carries the status.
async fn exits_on_eof(s: &mut Session, report: &mut Report) {
    let exited = s.close_and_wait(Duration::from_secs(2)).await;
    s.settle(Duration::from_millis(50)).await;
    match exited {
        Some(status) => report.pass(format!("exits within 2 s of stdin EOF ({status})")),
        None => {
            report.fail(
                "exits within 2 s of stdin EOF",
                "still running 2 s after stdin closed",
            );
            s.kill().await;
        }
    }
}

fn only_json_rpc(s: &Session) -> Verdict {
    match s.garbage() {
        [] => Ok(()),
        all @ [first, ..] => Err(format!("{} other line(s), first: {first:?}", all.len())),
    }
}

fn no_unsolicited(s: &Session) -> Verdict {
    match s.unsolicited().as_slice() {
        [] => Ok(()),
        all @ [first, ..] => Err(format!(
            "{} message(s) answering nothing, first: {first}",
            all.len()
        )),
    }
}
