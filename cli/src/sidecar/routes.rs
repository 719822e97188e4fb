//! What the plain HTTP routes do:
//! - `POST /hooks/<dialect>`: one event exactly as that agent's HTTP hook
//!   sends it; the answer is the body that agent reads (200, JSON).
//! - `POST /relay/<dialect>`: the same for `hookhost relay`, answered as
//!   the command hook's outcome `{code, stdout, stderr}`, so the relay
//!   prints and exits exactly as it would have in-process.
//! - `GET /status`: the daemon, its hooks and its agents.
//! - `GET /metrics`: the same figures and more for Prometheus
//!   (`metrics.rs`), behind the same access check.
//!
//! Events are counted per agent and session for `hookhost status`.

use std::collections::{BTreeMap, HashSet};
use std::sync::Mutex;

use hookhost::{Dialect, ForeignEvent, Identity, NativeAnswer};
use serde::Serialize;
use serde_json::{Value, json};
use tracing::Instrument;

use super::Sidecar;
use super::http::{Head, Reply};
use crate::gateway::otel;
use crate::shared::header::ascii_json;

/// Distinct sessions remembered per agent; past it only calls are counted.
const MAX_SESSIONS: usize = 4096;

/// Events answered per agent since the daemon started.
#[derive(Default)]
pub(super) struct AgentCounts(Mutex<BTreeMap<Dialect, Seen>>);

#[derive(Default)]
struct Seen {
    calls: u64,
    sessions: HashSet<String>,
}

/// One agent's line in `GET /status`.
#[derive(Serialize)]
struct AgentLine {
    calls: u64,
    sessions: usize,
}

impl AgentCounts {
    fn count(&self, dialect: Dialect, event: &ForeignEvent) {
        let session = event.params()["meta"]["session_key"].as_str();
        let mut all = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let seen = all.entry(dialect).or_default();
        seen.calls += 1;
        let room = seen.sessions.len() < MAX_SESSIONS;
        if let Some(s) = session.filter(|s| room && !seen.sessions.contains(*s)) {
            seen.sessions.insert(s.to_string());
        }
    }

    fn lines(&self) -> BTreeMap<String, AgentLine> {
        let all = self.0.lock().unwrap_or_else(|p| p.into_inner());
        all.iter()
            .map(|(d, s)| {
                let line = AgentLine {
                    calls: s.calls,
                    sessions: s.sessions.len(),
                };
                (d.to_string(), line)
            })
            .collect()
    }
}

/// Answers one request; `caller` is who the gateway's credential says
/// sent it, stamped on every event over what the event claims.
pub(super) async fn route(
    sidecar: &Sidecar,
    head: &Head,
    body: &[u8],
    caller: Option<&Identity>,
) -> Reply {
    let parts: Vec<&str> = head.path.trim_start_matches('/').split('/').collect();
    match (head.method.as_str(), parts.as_slice()) {
        ("POST", ["hooks", dialect]) => match answer(sidecar, dialect, head, body, caller).await {
            Ok((event, answer, record)) => {
                Reply::json(event.http_body(answer)).with_header(DECISION, &record)
            }
            Err(reply) => reply,
        },
        ("POST", ["relay", dialect]) => {
            let (answer, record) = match answer(sidecar, dialect, head, body, caller).await {
                Ok((_, answer, record)) => (answer, Some(record)),
                Err(reply) => {
                    let why = String::from_utf8_lossy(&reply.body);
                    (NativeAnswer::block(why.trim()), None)
                }
            };
            let outcome =
                json!({"code": answer.code, "stdout": answer.stdout, "stderr": answer.stderr});
            let reply = Reply::json(outcome.to_string());
            match record {
                Some(record) => reply.with_header(DECISION, &record),
                None => reply,
            }
        }
        ("GET", ["status"]) => Reply::json(status(sidecar).to_string()),
        ("GET", ["metrics"]) => match sidecar.metrics.render() {
            Ok(body) => Reply::body(super::metrics::CONTENT_TYPE, body),
            Err(_) => Reply::text(500, "the metrics did not encode"),
        },
        (_, ["hooks" | "relay", _] | ["status" | "metrics"]) => {
            Reply::text(405, "method not allowed")
        }
        _ => Reply::text(
            404,
            "no such route: POST /hooks/<dialect>, POST /relay/<dialect>, GET /status, \
             GET /metrics",
        ),
    }
}

/// The response header that carries an answer's decision record: one
/// line of JSON (`DecisionRecord` plus the caller's `tenant`, `user` and
/// `agent` when a gateway's credential named them).
const DECISION: &str = "X-Hookhost-Decision";

/// Reads the event and runs it through the chain; the answer, and its
/// decision record as [`DECISION`]'s value.
async fn answer(
    sidecar: &Sidecar,
    dialect: &str,
    head: &Head,
    body: &[u8],
    caller: Option<&Identity>,
) -> Result<(ForeignEvent, NativeAnswer, String), Reply> {
    let _busy = sidecar.metrics.busy();
    let dialect: Dialect = dialect.parse().map_err(|e| Reply::text(404, e))?;
    let named = event_name(head);
    let input: Value = serde_json::from_slice(body)
        .map_err(|e| Reply::text(400, format!("the event is not JSON: {e}")))?;
    let env = agent_env(head);
    let mut event = ForeignEvent::read(dialect, &input, named.as_deref())
        .map_err(|e| Reply::text(400, e))?
        .with_agent_env(|k| env.get(k)?.as_str().map(str::to_string));
    if let Some(caller) = caller {
        event = event.with_identity(caller);
    }
    sidecar.agents.count(dialect, &event);
    let trace = otel::request_span(head.header("traceparent"), head.header("tracestate"));
    let run = sidecar
        .host
        .answer_foreign_recorded(&event)
        .instrument(trace);
    #[cfg(feature = "ui")]
    let ((answer, record), steps) = super::ui::with_steps(run).await;
    #[cfg(not(feature = "ui"))]
    let (answer, record) = run.await;
    #[cfg(feature = "ui")]
    sidecar
        .ui
        .publish(super::ui::item(&event, &record, caller, steps, false));
    let mut record = serde_json::to_value(&record).unwrap_or_default();
    if let (Some(caller), Value::Object(fields)) = (caller, &mut record) {
        fields.insert("tenant".into(), caller.tenant.clone().into());
        fields.insert("user".into(), caller.user.clone().into());
        if let Some(agent) = &caller.agent {
            fields.insert("agent".into(), agent.clone().into());
        }
    }
    Ok((event, answer, ascii_json(&record)))
}

/// An event tried from the console: answered by the chain as `relay`
/// and the agent's HTTP hook would have it, with each hook's step.
#[cfg(feature = "ui")]
pub(super) async fn tried(
    sidecar: &Sidecar,
    dialect: &str,
    input: &Value,
    caller: Option<&Identity>,
) -> Result<Value, Reply> {
    let dialect: Dialect = dialect.parse().map_err(|e| Reply::text(400, e))?;
    let mut event = ForeignEvent::read(dialect, input, None).map_err(|e| Reply::text(400, e))?;
    if let Some(caller) = caller {
        event = event.with_identity(caller);
    }
    let run = sidecar.host.answer_foreign_recorded(&event);
    let ((answer, record), steps) = super::ui::with_steps(run).await;
    let item = super::ui::item(&event, &record, caller, steps.clone(), true);
    sidecar.ui.publish(item);
    let relay = json!({"code": answer.code, "stdout": answer.stdout, "stderr": answer.stderr});
    let http: Value = serde_json::from_str(&event.http_body(answer)).unwrap_or(Value::Null);
    Ok(json!({"relay": relay, "http": http, "record": record, "steps": steps}))
}

/// The native event name for payloads that carry none: `?event=NAME` or
/// the `X-Hookhost-Event` header.
fn event_name(head: &Head) -> Option<String> {
    let from_query = head
        .query
        .split('&')
        .find_map(|kv| kv.strip_prefix("event="))
        .map(str::to_string);
    from_query.or_else(|| {
        head.header("x-hookhost-event")
            .map(|v| String::from_utf8_lossy(v).trim().to_string())
    })
}

/// The variables the agent set for the hook run a relay stands in for
/// (the `X-Hookhost-Agent-Env` header, a JSON object). Only the names the
/// dialect's agent sets are taken from it ([`ForeignEvent::with_agent_env`]);
/// an unreadable header gives none.
fn agent_env(head: &Head) -> serde_json::Map<String, Value> {
    head.header("x-hookhost-agent-env")
        .and_then(|v| serde_json::from_slice(v).ok())
        .unwrap_or_default()
}

/// `GET /status`'s body (the console shows it too).
pub(super) fn status(sidecar: &Sidecar) -> Value {
    let uptime = sidecar.started.elapsed().map(|d| d.as_secs()).unwrap_or(0);
    json!({
        "pid": std::process::id(),
        "version": env!("CARGO_PKG_VERSION"),
        "config": sidecar.config_path(),
        "started": hookhost::protocol::time::rfc3339(sidecar.started),
        "uptime_s": uptime,
        "agents": sidecar.agents.lines(),
        "hooks": sidecar.host.stats(),
        "policy": sidecar.policy_status.get().map_or(Value::Null, |status| status()),
        "audit": sidecar.host.audit_figures().map_or(Value::Null, |f| json!({
            "written": f.written,
            "queued": f.queued,
            "capacity": f.capacity,
            "dropped": f.dropped,
            "lost": f.lost,
        })),
    })
}
