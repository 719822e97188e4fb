//! Claude Code: `settings.json` at any level (user, project, local; they
//! add up) and a plugin's `hooks/hooks.json`, both
//! `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [handler...]}]}}`.
//! The walk over those matcher groups is shared with Codex and Gemini CLI,
//! which kept the shape.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Map, Value};

use super::{Bad, File, Found, Run, handler, hooks_object, plugin_root, timeout_ms};
use crate::config::{CommandConfig, ModelConfig};

/// One matcher group: a matcher and its handlers.
#[derive(Deserialize)]
struct Group {
    #[serde(default)]
    matcher: Option<String>,
    /// Gemini CLI's `sequential`, of any type (only `true` counts); the
    /// other agents have no such key.
    #[serde(default)]
    sequential: Option<Value>,
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
    Ok(groups(hooks, &[], |spot, value| {
        let h: Handler = handler(value, &spot.at)?;
        // Claude Code runs identical commands of one event once, whichever
        // of its settings files lists them.
        let key = format!("{:?}", (&h.command, &h.args, &h.url));
        Ok((command(h, spot.event, file, &spot.at)?, Some(key)))
    }))
}

/// Where a handler sits in a settings file: its event, the index of its
/// matcher group and its own, and the place messages name.
pub(super) struct Spot<'a> {
    pub(super) event: &'a str,
    pub(super) group: usize,
    pub(super) index: usize,
    pub(super) at: String,
    /// Its group says `sequential: true` (read by Gemini CLI only).
    pub(super) sequential: bool,
}

/// Walks `{event: [{matcher, hooks: [handler]}]}` in the order written,
/// turning each handler into a [`Run`] and the agent's key for telling
/// identical handlers apart with `each(spot, handler)`. Keys in `settings`
/// are settings of the hooks object, not events. A malformed event list,
/// group or handler becomes a [`Run::Invalid`] at its place, and the walk
/// goes on: what the file's agent makes of it is [`super::tolerate`]'s.
pub(super) fn groups(
    hooks: &Map<String, Value>,
    settings: &[&str],
    mut each: impl FnMut(&Spot<'_>, &Value) -> Result<(Run, Option<String>), Bad>,
) -> Vec<Found> {
    let mut found = Vec::new();
    for (event, list) in hooks
        .iter()
        .filter(|(k, _)| !settings.contains(&k.as_str()))
    {
        let Value::Array(list) = list else {
            let bad = Bad::new(
                format!("key `hooks.{event}`"),
                "expected a list of matcher groups",
            );
            found.push(Found::invalid(event, None, bad));
            continue;
        };
        for (i, group) in list.iter().enumerate() {
            let at = format!("key `hooks.{event}[{i}]`");
            let group: Group = match handler(group, &at) {
                Ok(group) => group,
                Err(bad) => {
                    found.push(Found::invalid(event, None, bad));
                    continue;
                }
            };
            for (j, value) in group.hooks.iter().enumerate() {
                let at = format!("key `hooks.{event}[{i}].hooks[{j}]`");
                let spot = Spot {
                    event,
                    group: i,
                    index: j,
                    at,
                    sequential: group.sequential == Some(Value::Bool(true)),
                };
                let (run, key) = each(&spot, value).unwrap_or_else(|bad| (Run::Invalid(bad), None));
                found.push(Found {
                    event: event.clone(),
                    matcher: group.matcher.clone(),
                    run,
                    key,
                });
            }
        }
    }
    found
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
    // Qwen Code counts a command's timeout in milliseconds, its HTTP
    // hooks' in seconds as Claude does.
    let unit = match (kind, file.family) {
        ("command", Some(f)) => f.timeout_unit_ms,
        _ => 1000.0,
    };
    hook.timeout_ms = timeout_ms(h.timeout, unit).map_err(|m| Bad::new(at, m))?;
    if hook.model.is_some() && hook.timeout_ms.is_none() {
        hook.timeout_ms = Some(PROMPT_TIMEOUT_MS);
    }
    hook.rule = h.rule;
    if let Some(root) = plugin_root(&file.path) {
        if let Some(data) = plugin_data(root) {
            hook.env.insert("CLAUDE_PLUGIN_DATA".into(), data);
        }
        let root = root.display().to_string();
        hook.env.insert("CLAUDE_PLUGIN_ROOT".into(), root);
    }
    Ok(Run::Hook(Box::new(hook)))
}

/// `CLAUDE_PLUGIN_DATA`, the folder Claude Code (2.1.330) gives a plugin
/// and creates: `<plugins>/data/<id with every character but
/// [A-Za-z0-9_-] made ->`. An installed plugin `NAME` of marketplace `MKT`
/// sits in `<plugins>/cache/MKT/NAME/VERSION` and its id is `NAME@MKT`;
/// any other (a `--plugin-dir`) is `NAME@inline`, `NAME` from its
/// `.claude-plugin/plugin.json` (else its folder's name), under the user's
/// `<plugins>`: `$CLAUDE_CODE_PLUGIN_CACHE_DIR`, else
/// `$CLAUDE_CONFIG_DIR/plugins`, else `~/.claude/plugins`.
fn plugin_data(root: &Path) -> Option<String> {
    let (plugins, id) = match installed(root) {
        Some((plugins, name, mkt)) => (plugins, format!("{name}@{mkt}")),
        None => (user_plugins()?, format!("{}@inline", plugin_name(root)?)),
    };
    let safe: String = id
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '_' | '-' => c,
            _ => '-',
        })
        .collect();
    let data = plugins.join("data").join(safe);
    if let Err(e) = std::fs::create_dir_all(&data) {
        tracing::warn!(
            "cannot create the plugin data folder {}: {e}",
            data.display()
        );
    }
    Some(data.display().to_string())
}

/// The plugins folder, name and marketplace of a plugin installed from a
/// marketplace: Claude Code and Codex both keep one in
/// `<plugins>/cache/MKT/NAME/VERSION`.
pub(super) fn installed(root: &Path) -> Option<(PathBuf, String, String)> {
    let name = root.parent()?;
    let mkt = name.parent()?;
    let cache = mkt.parent()?;
    let plugins = cache.parent()?;
    let named = |p: &Path, n: &str| p.file_name().is_some_and(|f| f == n);
    (named(cache, "cache") && named(plugins, "plugins")).then_some(())?;
    let text = |p: &Path| p.file_name().map(|f| f.to_string_lossy().into_owned());
    Some((plugins.to_path_buf(), text(name)?, text(mkt)?))
}

/// The user's Claude Code plugins folder.
fn user_plugins() -> Option<PathBuf> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var("CLAUDE_CODE_PLUGIN_CACHE_DIR")
        .or_else(|| var("CLAUDE_CONFIG_DIR").map(|c| c.join("plugins")))
        .or_else(|| var("HOME").map(|h| h.join(".claude/plugins")))
}

/// A plugin's name: its manifest's `name`, else its folder's.
fn plugin_name(root: &Path) -> Option<String> {
    let manifest = std::fs::read_to_string(root.join(".claude-plugin/plugin.json")).ok();
    let named = manifest
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| v.get("name")?.as_str().map(str::to_string));
    named.or_else(|| Some(root.file_name()?.to_string_lossy().into_owned()))
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
