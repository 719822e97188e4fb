//! Claude Code: `settings.json` at any level (user, project, local; they
//! add up) and a plugin's `hooks/hooks.json`, both
//! `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [handler...]}]}}`.
//! The walk over those matcher groups is shared with Codex and Gemini CLI,
//! which kept the shape.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::{Bad, File, Found, Run, handler, hooks_object, plugin_root, timeout_ms};
use crate::config::{CommandConfig, ModelConfig};

/// One matcher group: a matcher and its handlers.
#[derive(Deserialize)]
struct Group {
    #[serde(default)]
    matcher: Option<String>,
    hooks: Vec<Value>,
}

/// The keys of a Claude handler hookhost reads; the others (`statusMessage`,
/// `once`, `async`...) change nothing about what runs.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Handler {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    args: Option<Vec<String>>,
    /// Seconds.
    #[serde(default)]
    timeout: Option<f64>,
    #[serde(rename = "if", default)]
    rule: Option<String>,
    #[serde(default)]
    on_failure: Option<String>,
    #[serde(default)]
    shell: Option<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    allowed_env_vars: Vec<String>,
    /// A `prompt` handler's instruction, with `$ARGUMENTS`.
    #[serde(default)]
    prompt: Option<String>,
    /// A `prompt` handler's model.
    #[serde(default)]
    model: Option<String>,
}

/// The hooks of a Claude settings file or plugin `hooks.json`. A file with
/// `disableAllHooks: true` gives none, as Claude would run none of it.
pub(super) fn read(root: &Value, file: &File) -> Result<Vec<Found>, Bad> {
    if root.get("disableAllHooks") == Some(&Value::Bool(true)) {
        tracing::warn!(
            "{}: `disableAllHooks` is true, so none of its hooks are imported",
            file.path.display()
        );
        return Ok(Vec::new());
    }
    let Some(hooks) = hooks_object(root)? else {
        return Ok(Vec::new());
    };
    groups(hooks, &[], |event, value, at| {
        command(handler(value, at)?, event, file, at)
    })
}

/// Walks `{event: [{matcher, hooks: [handler]}]}` in the order written,
/// turning each handler into a [`Run`] with `each(event, handler, place)`.
/// Keys in `settings` are settings of the hooks object, not events.
pub(super) fn groups(
    hooks: &Map<String, Value>,
    settings: &[&str],
    mut each: impl FnMut(&str, &Value, &str) -> Result<Run, Bad>,
) -> Result<Vec<Found>, Bad> {
    let mut found = Vec::new();
    for (event, list) in hooks
        .iter()
        .filter(|(k, _)| !settings.contains(&k.as_str()))
    {
        let Value::Array(list) = list else {
            return Err(Bad::new(
                format!("key `hooks.{event}`"),
                "expected a list of matcher groups",
            ));
        };
        for (i, group) in list.iter().enumerate() {
            let at = format!("key `hooks.{event}[{i}]`");
            let group: Group = handler(group, &at)?;
            for (j, value) in group.hooks.iter().enumerate() {
                let at = format!("key `hooks.{event}[{i}].hooks[{j}]`");
                found.push(Found {
                    event: event.clone(),
                    matcher: group.matcher.clone(),
                    run: each(event, value, &at)?,
                });
            }
        }
    }
    Ok(found)
}

/// A Claude handler as a hook: `command` (shell string, or program with
/// `args`) or `http`; other types are not run.
fn command(h: Handler, event: &str, file: &File, at: &str) -> Result<Run, Bad> {
    let kind = h.kind.as_deref().unwrap_or("command");
    let mut hook = match kind {
        "command" if h.shell.as_deref() == Some("powershell") => {
            return Ok(Run::skip(kind, "a PowerShell hook; this host runs `sh`"));
        }
        "command" => program(h.command.clone(), h.args.clone(), at)?,
        "http" => CommandConfig {
            url: Some(nonblank(h.url.clone(), "url", at)?),
            headers: h.headers.clone(),
            allowed_env_vars: h.allowed_env_vars.clone(),
            ..CommandConfig::default()
        },
        "prompt" if cfg!(feature = "remote") => prompt(&h, at)?,
        "prompt" => {
            let why = "prompt hooks need hookhost built with the `remote` feature";
            return Ok(Run::skip(kind, why));
        }
        other => return Ok(Run::skip(other, skip_reason(other))),
    };
    hook.on_error = super::on_error(h.on_failure.as_deref() == Some("block"), event);
    hook.timeout_ms = timeout_ms(h.timeout, 1000.0).map_err(|m| Bad::new(at, m))?;
    if hook.model.is_some() && hook.timeout_ms.is_none() {
        hook.timeout_ms = Some(PROMPT_TIMEOUT_MS);
    }
    hook.rule = h.rule;
    if let Some(root) = plugin_root(&file.path) {
        let root = root.display().to_string();
        hook.env.insert("CLAUDE_PLUGIN_ROOT".into(), root);
    }
    Ok(Run::Hook(Box::new(hook)))
}

/// Claude Code's deadline for a `prompt` handler that sets none.
const PROMPT_TIMEOUT_MS: u64 = 30_000;

/// A `prompt` handler as a prompt hook: Claude Code's model at its
/// Anthropic endpoint (`ANTHROPIC_BASE_URL`, `ANTHROPIC_API_KEY`).
fn prompt(h: &Handler, at: &str) -> Result<CommandConfig, Bad> {
    let text = nonblank(h.prompt.clone(), "prompt", at)?;
    Ok(CommandConfig {
        model: Some(Box::new(ModelConfig::claude_code(
            &text,
            h.model.as_deref(),
        ))),
        ..CommandConfig::default()
    })
}

/// Why a handler type is not run.
pub(super) fn skip_reason(kind: &str) -> String {
    match kind {
        "prompt" => {
            "this agent's prompt hooks are not imported (Claude Code's are): write a `[hooks.prompts]` entry".into()
        }
        "agent" => {
            "agent hooks run a subagent with tools over many turns; hookhost asks a model once (prompt hooks)".into()
        }
        "mcp_tool" => "MCP-tool hooks call the agent's MCP servers, which hookhost has not".into(),
        _ => format!("unknown hook type `{kind}`"),
    }
}

/// `command`, run with `sh -c`, or, with `args`, the program `command` run
/// with those arguments and no shell (Claude's exec form).
fn program(
    command: Option<String>,
    args: Option<Vec<String>>,
    at: &str,
) -> Result<CommandConfig, Bad> {
    let command = nonblank(command, "command", at)?;
    Ok(match args {
        None => CommandConfig {
            command: Some(command),
            ..CommandConfig::default()
        },
        Some(args) => CommandConfig {
            args: Some(std::iter::once(command).chain(args).collect()),
            ..CommandConfig::default()
        },
    })
}

/// A required string key that must not be blank.
pub(super) fn nonblank(value: Option<String>, key: &str, at: &str) -> Result<String, Bad> {
    value
        .filter(|v| !v.trim().is_empty())
        .ok_or_else(|| Bad::new(at, format!("`{key}` is missing or empty")))
}
