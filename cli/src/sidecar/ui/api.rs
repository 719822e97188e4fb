//! What the console's page asks for, as JSON: the hooks and their state,
//! their latency over the last minutes, the hooks awaiting trust (and
//! their approval), an event tried through the chain, and the audit log.
//! Each answer is built from what `status`, `trust`, `relay` and `audit
//! query` already give, so the page shows what the commands show.

use hookhost::{AuditQuery, Config, Identity};
use serde_json::{Value, json};

use super::super::Sidecar;
use super::super::access::Access;
use super::super::http::Reply;
use super::approve as trust;

/// The most audit records one search returns (the newest).
const AUDIT_ROWS: usize = 500;

/// Every hook as `status` shows it, with where it comes from (the config,
/// a project's file, a signed bundle), its agent's dialect and whether it
/// awaits trust.
pub(crate) fn hooks(sidecar: &Sidecar) -> Reply {
    let config = Config::read(sidecar.config_path()).ok();
    let bundle = sidecar.policy_status.get().is_some();
    let rows: Vec<Value> = sidecar
        .host()
        .hooks()
        .into_iter()
        .map(|h| {
            let command = config.as_ref().and_then(|c| c.commands.get(&h.name));
            let source = command.and_then(|c| c.source.as_ref());
            let from = match (source, bundle) {
                (Some(s), _) => s.file.display().to_string(),
                (None, true) => "signed bundle".to_string(),
                (None, false) => sidecar.config_path().display().to_string(),
            };
            let state = match (&h.status, source.is_some_and(|s| s.trust.is_untrusted())) {
                (_, true) => "untrusted".to_string(),
                (hookhost::HookStatus::Ready, _) if h.stats.breaker == "open" => {
                    "breaker open".to_string()
                }
                (hookhost::HookStatus::Ready, _) => "running".to_string(),
                (hookhost::HookStatus::Starting, _) => "restarting".to_string(),
                (hookhost::HookStatus::Down(why), _) => format!("down: {why}"),
                (_, _) => "stopped".to_string(),
            };
            json!({
                "hook": h.name,
                "kind": h.kind.as_str(),
                "source": from,
                "dialect": command.map(|c| c.dialect.as_str()),
                "state": state,
                "stats": h.stats,
            })
        })
        .collect();
    Reply::json(
        json!({ "hooks": rows, "status": super::super::routes::status(sidecar) }).to_string(),
    )
}

/// Whether the console may change what the user trusts: only the daemon's
/// own user may, known by the daemon's one token or by reaching its
/// socket. A gateway's callers, and anyone on a port that asks no token
/// (any local user), may look but not approve.
fn may_trust(access: Option<&Access>) -> Result<(), Reply> {
    match access {
        None => Ok(()),
        Some(a) if a.is_owner_token() => Ok(()),
        Some(_) => Err(Reply::text(
            403,
            "trust is approved by the daemon's own user: serve with its token (--socket, or \
             --token-file), not to a gateway's callers or on a port that asks no token",
        )),
    }
}

/// The hooks of the config that come from a project's files.
pub(crate) fn trust_list(sidecar: &Sidecar, access: Option<&Access>) -> Reply {
    match trust::rows(sidecar.config_path()) {
        Ok(rows) => Reply::json(
            json!({"hooks": rows, "may_approve": may_trust(access).is_ok()}).to_string(),
        ),
        Err(e) => Reply::text(500, e),
    }
}

/// `{"approve"|"revoke": FINGERPRINT}`: the user's approval, as `hookhost
/// trust approve|revoke` gives it; a running daemon loads it within a
/// second.
pub(crate) fn trust_change(sidecar: &Sidecar, access: Option<&Access>, body: &[u8]) -> Reply {
    if let Err(refused) = may_trust(access) {
        return refused;
    }
    let asked: Value = serde_json::from_slice(body).unwrap_or_default();
    let done = match (asked["approve"].as_str(), asked["revoke"].as_str()) {
        (Some(hash), None) => trust::approve_fingerprint(sidecar.config_path(), hash),
        (None, Some(hash)) => trust::revoke_fingerprint(hash),
        _ => Err("give {\"approve\": FINGERPRINT} or {\"revoke\": FINGERPRINT}".to_string()),
    };
    match done {
        Ok(()) => Reply::json(json!({"done": true}).to_string()),
        Err(e) => Reply::text(400, e),
    }
}

/// `{"dialect": D, "event": {...}}`: the event through the chain, as
/// `relay` and the agent's HTTP hook would have it answered.
pub(crate) async fn try_event(sidecar: &Sidecar, body: &[u8], caller: Option<&Identity>) -> Reply {
    let asked: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => return Reply::text(400, format!("not JSON: {e}")),
    };
    let dialect = asked["dialect"].as_str().unwrap_or("claude-code");
    let event = match &asked["event"] {
        Value::String(text) => match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => return Reply::text(400, format!("the event is not JSON: {e}")),
        },
        other => other.clone(),
    };
    match super::super::routes::tried(sidecar, dialect, &event, caller).await {
        Ok(tried) => Reply::json(tried.to_string()),
        Err(reply) => reply,
    }
}

/// The audit log's records that match the query string (`session`,
/// `decision`, `hook`, `since`), newest last, from whichever store the
/// config names.
pub(crate) async fn audit(sidecar: &Sidecar, query: &str) -> Reply {
    let param = |name: &str| {
        query.split('&').find_map(|kv| {
            let (k, v) = kv.split_once('=')?;
            let v = super::login::form_value(format!("v={v}").as_bytes(), "v")?;
            (k == name && !v.is_empty()).then_some(v)
        })
    };
    let mut q = AuditQuery::new();
    (q.session, q.decision, q.hook) = (param("session"), param("decision"), param("hook"));
    q.since = match param("since")
        .map(|t| crate::shared::since::since_time(&t))
        .transpose()
    {
        Ok(since) => since,
        Err(e) => return Reply::text(400, e),
    };
    let path = sidecar.config_path().to_path_buf();
    let found = tokio::task::spawn_blocking(move || {
        let store = match Config::read(&path).map(|c| c.audit_store()) {
            Ok(Some(store)) => store?,
            Ok(None) => return Err("the config has no [hooks.audit]".to_string()),
            Err(e) => return Err(e.to_string()),
        };
        let mut rows = std::collections::VecDeque::new();
        store
            .query(&q, &mut |line| {
                if rows.len() == AUDIT_ROWS {
                    rows.pop_front();
                }
                rows.push_back(serde_json::from_str::<Value>(line).unwrap_or(Value::Null));
            })
            .map_err(|e| e.to_string())?;
        Ok(Vec::from(rows))
    })
    .await;
    match found {
        Ok(Ok(rows)) => Reply::json(json!({ "records": rows }).to_string()),
        Ok(Err(e)) => Reply::text(400, e),
        Err(_) => Reply::text(500, "the audit search stopped"),
    }
}
