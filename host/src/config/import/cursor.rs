//! Cursor: `.cursor/hooks.json`, flat entries per event:
//! `{"version": 1, "hooks": {"beforeShellExecution": [{"command":
//! "./hooks/x.sh", "timeout": 30, "matcher": "...", "failClosed": true,
//! "loop_limit": 5}]}}`. Entries are commands unless `type` says
//! otherwise (`prompt` asks a model and is not run).

use serde::Deserialize;
use serde_json::Value;

use super::claude::{nonblank, skip_reason};
use super::{Bad, File, Found, Run, flat, hooks_object, shell_hook, timeout_ms};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    command: Option<String>,
    /// Seconds.
    #[serde(default)]
    timeout: Option<f64>,
    #[serde(default)]
    matcher: Option<String>,
    #[serde(default)]
    fail_closed: bool,
    #[serde(rename = "loop_limit", alias = "loopLimit", default)]
    loop_limit: Option<u32>,
}

/// The hooks of a Cursor `hooks.json`.
pub(super) fn read(root: &Value, _file: &File) -> Result<Vec<Found>, Bad> {
    let Some(hooks) = hooks_object(root)? else {
        return Ok(Vec::new());
    };
    Ok(flat(hooks, |entry: Entry, event, at| {
        let matcher = entry.matcher.clone();
        Ok((matcher, command(entry, event, at)?))
    }))
}

fn command(e: Entry, event: &str, at: &str) -> Result<Run, Bad> {
    let kind = e.kind.as_deref().unwrap_or("command");
    if kind != "command" {
        return Ok(Run::skip(kind, skip_reason(kind)));
    }
    let mut hook = shell_hook(nonblank(e.command, "command", at)?, e.fail_closed, event);
    hook.timeout_ms = timeout_ms(e.timeout, 1000.0).map_err(|m| Bad::new(at, m))?;
    hook.loop_limit = e.loop_limit;
    Ok(Run::Hook(Box::new(hook)))
}
