//! Gemini CLI: `.gemini/settings.json`, Claude's group shape with
//! millisecond timeouts, handler names and per-handler `env`:
//! `{"hooks": {"BeforeTool": [{"matcher": "write_file|replace",
//! "sequential": true, "hooks": [{"name": "x", "type": "command",
//! "command": "...", "timeout": 5000, "env": {}}]}]}}`. Whether hooks are
//! switched on (`hooksConfig`, `tools.enableHooks`) is the agent's matter;
//! a handler named in a `disabled` list is not run.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::claude::{groups, nonblank, skip_reason};
use super::{Bad, File, Found, Run, handler, hooks_object, shell_hook, timeout_ms};

/// Keys of the `hooks` object that are settings, not events (older
/// releases kept the switches there before `hooksConfig`).
const SETTINGS: [&str; 3] = ["enabled", "disabled", "notifications"];

#[derive(Deserialize)]
struct Handler {
    #[serde(default)]
    name: Option<String>,
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    command: Option<String>,
    /// Milliseconds.
    #[serde(default)]
    timeout: Option<f64>,
    #[serde(default)]
    env: BTreeMap<String, String>,
}

/// The hooks of a Gemini CLI settings file. Gemini runs identical hooks
/// of an event once, by `getHookKey`: `name:command` (`types.ts`,
/// gemini-cli 5411f113).
pub(super) fn read(root: &Value, _file: &File) -> Result<Vec<Found>, Bad> {
    let Some(hooks) = hooks_object(root)? else {
        return Ok(Vec::new());
    };
    let disabled = disabled(root);
    Ok(groups(hooks, &SETTINGS, |spot, value| {
        let h: Handler = handler(value, &spot.at)?;
        let key = format!(
            "{}:{}",
            h.name.as_deref().unwrap_or_default(),
            h.command.as_deref().unwrap_or_default()
        );
        let mut run = command(h, spot.event, &disabled, &spot.at)?;
        if let Run::Hook(hook) = &mut run {
            hook.sequential = spot.sequential;
        }
        Ok((run, Some(key)))
    }))
}

/// The names listed in `hooksConfig.disabled` or the older `hooks.disabled`.
fn disabled(root: &Value) -> Vec<&str> {
    ["/hooksConfig/disabled", "/hooks/disabled"]
        .iter()
        .filter_map(|p| root.pointer(p).and_then(Value::as_array))
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// A handler as a hook, unless `disabled` names it: Gemini names a
/// command hook by its `name`, else by its command (`getHookName`,
/// `hookRegistry.ts`, gemini-cli 5411f113).
fn command(h: Handler, event: &str, disabled: &[&str], at: &str) -> Result<Run, Bad> {
    let kind = h.kind.as_deref().unwrap_or("command");
    if kind != "command" {
        return Ok(Run::skip(kind, skip_reason(kind)));
    }
    let name = h.name.as_deref().or(h.command.as_deref());
    if let Some(name) = name.filter(|n| disabled.contains(n)) {
        return Ok(Run::skip(
            kind,
            format!("`{name}` is in the `disabled` list"),
        ));
    }
    let mut hook = shell_hook(nonblank(h.command, "command", at)?, false, event);
    hook.timeout_ms = timeout_ms(h.timeout, 1.0).map_err(|m| Bad::new(at, m))?;
    hook.env = h.env;
    Ok(Run::Hook(Box::new(hook)))
}
