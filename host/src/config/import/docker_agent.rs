//! docker-agent's agent YAML: `agents: NAME: hooks: EVENT: [...]`, read as
//! the agent reads it, into one [`HookSetConfig`] per agent and event.
//!
//! docker-agent runs the hooks of one event as a group (every matching hook
//! runs, verdicts aggregate, rewrites pipe), so they are not split into
//! separate command hooks: the chain gets one member per group, built by
//! `members::hook_set`. Keys outside `hooks:` are the agent's and are not
//! read; inside `hooks:` the keys are checked as strictly as docker-agent
//! checks them (its schema has `additionalProperties: false`), and an error
//! names the file, the agent and the event.
//!
//! The agent's hooks are not scoped to that agent: hookhost's `meta` has no
//! docker-agent agent name to compare with, so every agent's groups run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use super::{Bad, File, handler};
use crate::config::{CommandConfig, FailurePolicy};
use crate::dialect::Dialect;
use crate::dialect::matcher::Matcher;
use crate::dialect::spec::Matching;

/// The hooks docker-agent's `hooks:` lists for one agent and one event, in
/// file order, as one group member of the chain.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct HookSetConfig {
    /// From the `[hooks.import]` entry; lower runs first.
    pub priority: i64,
    /// The agent file.
    pub file: PathBuf,
    /// The agent, as named under `agents:`.
    pub agent: String,
    /// The docker-agent event (`pre_tool_use`, `session_start`, ...).
    pub event: String,
    /// Every hook of the event, in the order written (matcher entries
    /// flattened); identical definitions are kept, and run once per call.
    pub entries: Vec<SetEntry>,
}

/// One hook of a group, with the matcher of the entry that lists it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SetEntry {
    /// The tool-name regex of its matcher entry; `None` for every tool (and
    /// for the events that are not about a tool).
    pub matcher: Option<String>,
    /// What runs.
    pub hook: SetHook,
    /// The definition as written: two entries with equal definitions are
    /// one hook (docker-agent's `sameHook`: every field counts, an empty
    /// list or map equals an absent one).
    pub definition: Definition,
}

/// What a group's hook runs.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SetHook {
    /// `type: command`, as a docker-agent dialect command hook.
    Command(Box<CommandConfig>),
    /// `type: builtin`: hookhost's builtin of that name, with the entry's
    /// `args` (`{"args": [...]}` as its config; none when there are none).
    Builtin {
        /// The builtin's name (`add_date`, `redact_secrets`).
        name: String,
        /// The entry's `args`.
        args: Vec<String>,
    },
}

/// docker-agent's `HookDefinition`, every key its schema has.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Definition {
    /// A friendly name for logs.
    #[serde(default)]
    pub name: Option<String>,
    /// `command`, `builtin` or `model`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The shell command, or the builtin's name.
    #[serde(default)]
    pub command: Option<String>,
    /// Arguments for a builtin.
    #[serde(default)]
    pub args: Vec<String>,
    /// Seconds; 0 means the default (60).
    #[serde(default)]
    pub timeout: Option<i64>,
    /// Variables for this hook.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Where it runs, relative to the agent file's folder.
    #[serde(default)]
    pub working_dir: Option<String>,
    /// `warn` (default), `ignore` or `block`.
    #[serde(default)]
    pub on_error: Option<String>,
    /// Refuse output that is not exactly one known JSON object.
    #[serde(default)]
    pub strict_output: bool,
    /// A model hook's model.
    #[serde(default)]
    pub model: Option<String>,
    /// A model hook's prompt.
    #[serde(default)]
    pub prompt: Option<String>,
    /// A model hook's answer schema.
    #[serde(default)]
    pub schema: Option<String>,
}

/// A matcher entry of a tool event.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MatcherEntry {
    #[serde(default)]
    matcher: Option<String>,
    hooks: Vec<Value>,
    #[serde(default)]
    preempt_yolo: Option<bool>,
}

/// What one agent file yields: its groups and the hooks left out.
#[derive(Default)]
pub(super) struct Read {
    pub(super) sets: Vec<HookSetConfig>,
    /// (event, matcher, kind, why) of each hook not run.
    pub(super) skipped: Vec<(String, Option<String>, String, String)>,
}

/// Reads every agent's `hooks:` of an agent file.
pub(super) fn read(root: &Value, file: &File, priority: i64) -> Result<Read, Bad> {
    let mut out = Read::default();
    let Value::Object(top) = root else {
        return Err(Bad::new("top level", "expected a YAML mapping"));
    };
    let agents = match top.get("agents") {
        None | Some(Value::Null) => return Ok(out),
        Some(Value::Object(a)) => a,
        Some(_) => return Err(Bad::new("key `agents`", "expected a mapping of agents")),
    };
    for (agent, config) in agents {
        let hooks = match config.get("hooks") {
            None | Some(Value::Null) => continue,
            Some(Value::Object(h)) => h,
            Some(_) => {
                let at = format!("agent `{agent}`: key `hooks`");
                return Err(Bad::new(at, "expected a mapping of events"));
            }
        };
        for (event, list) in hooks {
            let at = format!("agent `{agent}`: key `hooks.{event}`");
            let set = event_set(list, event, file, &at, &mut out.skipped)?;
            if !set.is_empty() {
                out.sets.push(HookSetConfig {
                    priority,
                    file: file.path.clone(),
                    agent: agent.clone(),
                    event: event.clone(),
                    entries: set,
                });
            }
        }
    }
    Ok(out)
}

/// The hooks of one event, in file order.
fn event_set(
    list: &Value,
    event: &str,
    file: &File,
    at: &str,
    skipped: &mut Vec<(String, Option<String>, String, String)>,
) -> Result<Vec<SetEntry>, Bad> {
    // docker-agent's own events are the dialect's rows with its contract
    // (the others, such as subagent_start, are hookhost's).
    let row = Dialect::DockerAgent.spec().event(event);
    let Some((row, caps)) = row.and_then(|r| Some((r, r.caps?))) else {
        return Err(Bad::new(at, format!("docker-agent has no event `{event}`")));
    };
    let (tool_matched, can_block) = (row.is_about_a_tool(), caps.block);
    let Value::Array(list) = list else {
        return Err(Bad::new(at, "expected a list"));
    };
    let groups = matcher_groups(list, event, tool_matched, at)?;
    let mut entries = Vec::new();
    for (matcher, hooks, place) in groups {
        for (j, value) in hooks.iter().enumerate() {
            let at = format!("{place}[{j}]");
            let def: Definition = handler(value, &at)?;
            match convert(&def, event, can_block, file).map_err(|m| Bad::new(&at, m))? {
                Ok(hook) => entries.push(SetEntry {
                    matcher: matcher.clone(),
                    hook,
                    definition: def,
                }),
                Err((kind, why)) => skipped.push((event.to_string(), matcher.clone(), kind, why)),
            }
        }
    }
    Ok(entries)
}

/// A matcher entry: its matcher, its hooks and where they are written.
type Group = (Option<String>, Vec<Value>, String);

/// The matcher entries of a tool event, or the flat list of any other as
/// one entry matching everything; each with its place for errors.
fn matcher_groups(
    list: &[Value],
    event: &str,
    tool_matched: bool,
    at: &str,
) -> Result<Vec<Group>, Bad> {
    if !tool_matched {
        return Ok(vec![(None, list.to_vec(), at.to_string())]);
    }
    let mut out = Vec::new();
    for (i, value) in list.iter().enumerate() {
        let place = format!("{at}[{i}]");
        let entry: MatcherEntry = handler(value, &place)?;
        if entry.hooks.is_empty() {
            return Err(Bad::new(place, "at least one hook is required"));
        }
        if entry.preempt_yolo.is_some() && event != "pre_tool_use" {
            return Err(Bad::new(
                place,
                "`preempt_yolo` is only valid on pre_tool_use",
            ));
        }
        let matcher = entry.matcher.filter(|m| !m.is_empty() && m != "*");
        if let Some(m) = &matcher {
            Matcher::new(Some(m), Matching::Anchored, true)
                .map_err(|e| Bad::new(&place, e.to_string()))?;
        }
        out.push((matcher, entry.hooks, format!("{place}.hooks")));
    }
    Ok(out)
}

/// Why a docker-agent `type: model` hook is not run: its prompt is a Go
/// `text/template` over docker-agent's input and its answer is read by a
/// response shape the docker-agent runtime registers in code, neither of
/// which exists outside docker-agent.
const MODEL_SKIPPED: &str = "docker-agent model hooks render a Go text/template and read a response shape registered in docker-agent's code; write a `[hooks.prompts]` entry instead";

/// What a definition becomes: a hook of the group, or (kind, why) for one
/// hookhost does not run; the outer error is a bad definition.
type Converted = Result<SetHook, (String, String)>;

fn convert(
    def: &Definition,
    event: &str,
    can_block: bool,
    file: &File,
) -> Result<Converted, String> {
    let on_error = match def.on_error.as_deref() {
        None => None,
        Some("warn") => Some(FailurePolicy::Warn),
        Some("ignore") => Some(FailurePolicy::Ignore),
        Some("block") if can_block => Some(FailurePolicy::Block),
        Some("block") => return Err(format!("on_error block is not supported by {event}")),
        Some(other) => {
            return Err(format!(
                "on_error must be warn, ignore or block, not `{other}`"
            ));
        }
    };
    let timeout = match def.timeout {
        Some(t) if t < 0 => return Err(format!("timeout must not be negative, got {t}")),
        Some(0) | None => None,
        Some(t) => Some(t as u64),
    };
    let command = def.command.clone().filter(|c| !c.trim().is_empty());
    match def.kind.as_str() {
        "command" => {
            let command = command.ok_or("command is required for command hooks")?;
            let mut hook = CommandConfig {
                command: Some(command),
                events: vec![event.to_string()],
                timeout,
                env: def.env.clone(),
                working_dir: Some(working_dir(def.working_dir.as_deref(), &file.project)),
                strict_output: def.strict_output,
                dialect: Dialect::DockerAgent,
                ..CommandConfig::default()
            };
            hook.on_error = on_error;
            Ok(Ok(SetHook::Command(Box::new(hook))))
        }
        "builtin" => {
            let name =
                command.ok_or("command (the builtin's name) is required for builtin hooks")?;
            Ok(Ok(SetHook::Builtin {
                name,
                args: def.args.clone(),
            }))
        }
        "model" => Ok(Err(("model".into(), MODEL_SKIPPED.into()))),
        other => Err(format!(
            "unsupported hook type `{other}` (expected command, builtin or model)"
        )),
    }
}

/// A hook's `working_dir`: `~/` against `$HOME`, a relative one against
/// the agent file's folder (where the agent runs), that folder when absent.
fn working_dir(dir: Option<&str>, project: &Path) -> PathBuf {
    match dir {
        None => project.to_path_buf(),
        Some(d) => super::resolve(project, d),
    }
}

/// An agent file's text as a JSON value.
#[cfg(feature = "yaml")]
pub(super) fn parse(text: &str) -> Result<Value, String> {
    let value: Value = serde_norway::from_str(text).map_err(|e| format!("invalid YAML: {e}"))?;
    Ok(match value {
        Value::Null => Value::Object(serde_json::Map::new()),
        v => v,
    })
}
