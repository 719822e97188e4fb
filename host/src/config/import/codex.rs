//! Codex: `.codex/hooks.json` (Claude's shape) and the same structure
//! inline in `config.toml` (`[[hooks.PreToolUse]]` with `matcher`, then
//! `[[hooks.PreToolUse.hooks]]`). Only `command` handlers run, as in Codex;
//! Codex parses `prompt` and `agent` handlers and skips them, and so do we.

use std::borrow::Cow;
use std::path::{Component, Path, PathBuf};

use serde::Deserialize;
use serde_json::{Map, Value};

use super::claude::{Spot, groups, installed, nonblank, skip_reason};
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

/// The hooks of a Codex `hooks.json` or `config.toml`, each handler a
/// user switched off in `[hooks.state]` (`off`: the keys whose `enabled`
/// is false) skipped. A matcher is kept at every event Codex matches; at
/// UserPromptSubmit and Stop Codex ignores it, even one that is no valid
/// regex (`select_handlers_for_matcher_inputs`,
/// `codex-rs/hooks/src/engine/dispatcher.rs`, openai/codex 0082977).
pub(super) fn read(root: &Value, file: &File) -> Result<Vec<Found>, Bad> {
    let Some(hooks) = hooks_object(root)? else {
        return Ok(Vec::new());
    };
    let hooks = single_handlers_grouped(hooks);
    let mut found = groups(&hooks, &SETTINGS, |spot, value| {
        if switched_off(file, spot) {
            let why = "switched off by `enabled = false` in [hooks.state]";
            return Ok((Run::skip("command", why), None));
        }
        Ok((
            command(handler(value, &spot.at)?, spot.event, file, &spot.at)?,
            None,
        ))
    });
    for f in &mut found {
        if matches!(f.event.as_str(), "UserPromptSubmit" | "Stop") {
            f.matcher = None;
        }
    }
    Ok(found)
}

/// `hooks` with a UserInstructions handler written alone, not in a
/// matcher group (`"UserInstructions": {"type": "command", ...}`, as
/// Codex's own tests of the event write it), read as the one group that
/// holds it: such a file is Codex's, not a malformed one whose every hook
/// would be dropped.
fn single_handlers_grouped(hooks: &Map<String, Value>) -> Cow<'_, Map<String, Value>> {
    match hooks.get("UserInstructions") {
        Some(Value::Object(h)) if !h.contains_key("hooks") => {
            let mut grouped = hooks.clone();
            let group = serde_json::json!([{ "hooks": [h] }]);
            grouped.insert("UserInstructions".into(), group);
            Cow::Owned(grouped)
        }
        _ => Cow::Borrowed(hooks),
    }
}

/// The `[hooks.state]` keys of a Codex `config.toml` whose `enabled` is
/// false. Codex names a handler `<file>:<event_snake_case>:<group>:<index>`
/// (newer releases prefix `file:`) and reads the state only from the
/// user's own config (`config_rules.rs`, openai/codex 9a5113ad).
pub(super) fn switched_off_keys(root: &Value) -> Vec<String> {
    let Some(Value::Object(state)) = root.pointer("/hooks/state") else {
        return Vec::new();
    };
    state
        .iter()
        .filter(|(_, s)| s.get("enabled") == Some(&Value::Bool(false)))
        .map(|(k, _)| k.trim().to_string())
        .collect()
}

/// Whether the handler at `spot` of `file` is switched off. Codex names
/// the file by its absolute path with `.` and `..` resolved (as text, not
/// following links), so a file imported as `../../.codex/hooks.json` is
/// named as Codex names it.
fn switched_off(file: &File, spot: &Spot<'_>) -> bool {
    let key = format!(
        "{}:{}:{}:{}",
        lexical(&file.path).display(),
        snake(spot.event),
        spot.group,
        spot.index
    );
    file.off
        .iter()
        .any(|k| k == &key || k.strip_prefix("file:") == Some(key.as_str()))
}

/// `path` with its `.` and `..` parts resolved as text.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir if out.file_name().is_some() => {
                out.pop();
            }
            // Above the root is the root.
            Component::ParentDir if out.has_root() => {}
            other => out.push(other),
        }
    }
    out
}

/// `PreToolUse` as Codex spells it in a state key: `pre_tool_use`.
fn snake(event: &str) -> String {
    let mut out = String::new();
    for (i, c) in event.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
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
        if let Some(data) = plugin_data(root) {
            hook.env.insert("PLUGIN_DATA".into(), data.clone());
            hook.env.insert("CLAUDE_PLUGIN_DATA".into(), data);
        }
        let root = root.display().to_string();
        hook.env.insert("PLUGIN_ROOT".into(), root.clone());
        hook.env.insert("CLAUDE_PLUGIN_ROOT".into(), root);
    }
    Ok(Run::Hook(Box::new(hook)))
}

/// `PLUGIN_DATA`, the folder Codex gives a plugin it installed in
/// `<CODEX_HOME>/plugins/cache/MKT/NAME/VERSION`:
/// `<CODEX_HOME>/plugins/data/NAME-MKT` (`PluginStore::plugin_data_root`,
/// `codex-rs/core-plugins/src/store.rs`; Codex 0.169.0 has no other
/// layout). Codex names it without creating it, and so does hookhost. A
/// hooks file elsewhere is no plugin Codex loads: no folder is made up.
fn plugin_data(root: &Path) -> Option<String> {
    let (plugins, name, mkt) = installed(root)?;
    let data = plugins.join("data").join(format!("{name}-{mkt}"));
    Some(data.display().to_string())
}
