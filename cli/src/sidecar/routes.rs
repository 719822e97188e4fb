//! What the plain HTTP routes do:
//! - `POST /hooks/<dialect>`: one event exactly as that agent's HTTP hook
//!   sends it; the answer is the body that agent reads (200, JSON).
//! - `POST /relay/<dialect>`: the same for `hookhost relay`, answered as
//!   the command hook's outcome `{code, stdout, stderr}`, so the relay
//!   prints and exits exactly as it would have in-process.
//! - `GET /status`: the daemon, its hooks and its agents.
//!
//! Events are counted per agent and session for `hookhost status`.

use std::collections::{BTreeMap, HashSet};
use std::sync::Mutex;

use hookhost::{Dialect, ForeignEvent, NativeAnswer};
use serde::Serialize;
use serde_json::{Value, json};

use super::Sidecar;
use super::http::{Head, Reply};

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

pub(super) async fn route(sidecar: &Sidecar, head: &Head, body: &[u8]) -> Reply {
    let parts: Vec<&str> = head.path.trim_start_matches('/').split('/').collect();
    match (head.method.as_str(), parts.as_slice()) {
        ("POST", ["hooks", dialect]) => match answer(sidecar, dialect, head, body).await {
            Ok((event, answer)) => Reply::json(event.http_body(answer)),
            Err(reply) => reply,
        },
        ("POST", ["relay", dialect]) => {
            let answer = match answer(sidecar, dialect, head, body).await {
                Ok((_, answer)) => answer,
                Err(reply) => NativeAnswer::block(String::from_utf8_lossy(&reply.body).trim()),
            };
            let outcome =
                json!({"code": answer.code, "stdout": answer.stdout, "stderr": answer.stderr});
            Reply::json(outcome.to_string())
        }
        ("GET", ["status"]) => Reply::json(status(sidecar).to_string()),
        (_, ["hooks" | "relay", _] | ["status"]) => Reply::text(405, "method not allowed"),
        _ => Reply::text(
            404,
            "no such route: POST /hooks/<dialect>, POST /relay/<dialect>, GET /status",
        ),
    }
}

/// Reads the event and runs it through the chain.
async fn answer(
    sidecar: &Sidecar,
    dialect: &str,
    head: &Head,
    body: &[u8],
) -> Result<(ForeignEvent, NativeAnswer), Reply> {
    let dialect: Dialect = dialect.parse().map_err(|e| Reply::text(404, e))?;
    let named = event_name(head);
    let input: Value = serde_json::from_slice(body)
        .map_err(|e| Reply::text(400, format!("the event is not JSON: {e}")))?;
    let env = agent_env(head);
    let event = ForeignEvent::read(dialect, &input, named.as_deref())
        .map_err(|e| Reply::text(400, e))?
        .with_agent_env(|k| env.get(k)?.as_str().map(str::to_string));
    sidecar.agents.count(dialect, &event);
    let answer = sidecar.host.answer_foreign(&event).await;
    Ok((event, answer))
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

fn status(sidecar: &Sidecar) -> Value {
    let uptime = sidecar.started.elapsed().map(|d| d.as_secs()).unwrap_or(0);
    json!({
        "pid": std::process::id(),
        "version": env!("CARGO_PKG_VERSION"),
        "config": sidecar.config_path(),
        "started": hookhost::protocol::time::rfc3339(sidecar.started),
        "uptime_s": uptime,
        "agents": sidecar.agents.lines(),
        "hooks": sidecar.host.stats(),
        "policy": crate::policy::status(),
    })
}
