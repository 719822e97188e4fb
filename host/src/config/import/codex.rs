//! Codex: `.codex/hooks.json` (Claude's shape) and the same structure
//! inline in `config.toml` (`[[hooks.PreToolUse]]` with `matcher`, then
//! `[[hooks.PreToolUse.hooks]]`). Only `command` handlers run, as in Codex;
//! Codex parses `prompt` and `agent` handlers and skips them, and so do we.

use serde::Deserialize;
use serde_json::Value;

use super::claude::{groups, nonblank, skip_reason};
use super::{Bad, File, Found, Run, handler, hooks_object, plugin_root, shell_hook, timeout_ms};

/// The keys of `[hooks]` that are Codex's bookkeeping, not events: trust
/// state per hook (`[hooks.state."<file>:<event>:0:0"]`).
const SETTINGS: [&str; 1] = ["state"];

#[derive(Deserialize)]
struct Handler {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    command: Option<String>,
    /// Seconds.
    #[serde(default, alias = "timeoutSec")]
    timeout: Option<f64>,
    #[serde(rename = "async", default)]
    background: bool,
}

/// The hooks of a Codex `hooks.json` or `config.toml`.
pub(super) fn read(root: &Value, file: &File) -> Result<Vec<Found>, Bad> {
    let Some(hooks) = hooks_object(root)? else {
        return Ok(Vec::new());
    };
    groups(hooks, &SETTINGS, |event, value, at| {
        command(handler(value, at)?, event, file, at)
    })
}

fn command(h: Handler, event: &str, file: &File, at: &str) -> Result<Run, Bad> {
    let kind = h.kind.as_deref().unwrap_or("command");
    if kind != "command" {
        return Ok(Run::skip(kind, skip_reason(kind)));
    }
    if h.background {
        return Ok(Run::skip(kind, "an `async` hook, which Codex skips"));
    }
    let mut hook = shell_hook(nonblank(h.command, "command", at)?, false, event);
    hook.timeout_ms = timeout_ms(h.timeout, 1000.0).map_err(|m| Bad::new(at, m))?;
    if let Some(root) = plugin_root(&file.path) {
        // Codex gives plugins both names, the second "for compatibility".
        let root = root.display().to_string();
        hook.env.insert("PLUGIN_ROOT".into(), root.clone());
        hook.env.insert("CLAUDE_PLUGIN_ROOT".into(), root);
    }
    Ok(Run::Hook(Box::new(hook)))
}
