//! Command hooks: the one-shot scripts of Claude Code and docker-agent,
//! run unchanged as members of hookhost's chain.
//!
//! Such a script is spawned once per event, reads the event as JSON on
//! stdin, and answers with its exit code and output: exit 2 blocks with
//! stderr as the reason, exit 0 with a JSON object on stdout decides in
//! detail, exit 0 with plain text adds context. This module translates in
//! both directions, so the chain sees the same result shapes a process hook
//! would answer:
//!
//! - the stage's params become docker-agent's snake_case input
//!   (`session_id`, `cwd`, `hook_event_name`, `tool_name`, `tool_input`,
//!   ...);
//! - the script's answer, in docker-agent's snake_case or Claude Code's
//!   camelCase, becomes the protocol result of that stage.
//!
//! Each run gets the isolation of a process hook: a clean environment
//! (`PATH`, `inherit_env`, `env`), its own process group, and a deadline
//! after which the whole group is killed. The host waits for the script
//! itself, never for its pipes, so a backgrounded grandchild that keeps
//! them open cannot hold up the chain.

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hookhost_protocol::lifecycle::LifecycleEvent;
use hookhost_protocol::{OnError, Stage};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::error::CallError;
use crate::policy::filter::{Filter, FilterVerdict};

/// The most output kept per stream; the rest is read and thrown away, so a
/// chatty script never blocks on a full pipe and never fills the host's
/// memory.
pub const OUTPUT_CAP: usize = 1024 * 1024;

/// docker-agent's default timeout, in seconds.
/// The longest `timeout` a command hook may set: a day.
const MAX_TIMEOUT_SECS: u64 = 86_400;
const DEFAULT_TIMEOUT_SECS: u64 = 60;

/// How long, once the script has exited, its pipes may still deliver what
/// it wrote. Only a grandchild that inherited them keeps them open longer,
/// and the host does not wait for that.
const DRAIN_GRACE: Duration = Duration::from_millis(100);

/// The longest tail of output quoted in an error or a log line.
const LOG_TAIL: usize = 500;

/// The docker-agent events that map onto the tool and LLM stages.
const STAGE_EVENTS: [(&str, Stage); 5] = [
    ("pre_tool_use", Stage::BeforeTool),
    ("post_tool_use", Stage::AfterTool),
    ("permission_request", Stage::ApproveTool),
    ("before_llm_call", Stage::BeforeLlm),
    ("after_llm_call", Stage::AfterLlm),
];

/// What a failure of a command hook (a non-0/2 exit, a timeout, a spawn
/// failure) decides. When none is configured, approve_tool refuses (an
/// approver that could not answer has not approved, as for every kind of
/// hook) and the other stages warn, docker-agent's behaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CommandOnError {
    /// Go on as if the hook had allowed, and log a warning; docker-agent's
    /// behaviour, so it is the default outside approve_tool.
    Warn,
    /// Go on as if the hook had allowed, logging only at debug level.
    Ignore,
    /// Refuse: deny the tool, refuse approval, abort the turn or block the
    /// lifecycle event, as the stage allows.
    Block,
}

impl CommandOnError {
    /// The chain policy: `block` denies, `warn` and `ignore` allow.
    pub fn policy(self) -> OnError {
        match self {
            CommandOnError::Block => OnError::Deny,
            CommandOnError::Warn | CommandOnError::Ignore => OnError::Allow,
        }
    }

    /// Whether a failure the chain skips is logged only at debug level.
    pub fn is_quiet(self) -> bool {
        self == CommandOnError::Ignore
    }
}

/// `[hooks.commands.NAME]`: one command hook as configured.
///
/// The keys follow docker-agent's hook entries, so an existing entry can be
/// moved over by renaming little more than its event list.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CommandConfig {
    /// Off switch for one hook.
    pub enabled: bool,
    /// Lower runs first; ties break by name, across all kinds of hooks.
    pub priority: i64,
    /// A shell string, run with `sh -c` (as docker-agent and Claude Code
    /// do). Exclusive with `args`.
    pub command: Option<String>,
    /// argv, run without a shell. Exclusive with `command`.
    pub args: Option<Vec<String>>,
    /// docker-agent event names: `pre_tool_use`, `post_tool_use`,
    /// `permission_request`, `before_llm_call`, `after_llm_call`, or a
    /// lifecycle event (`session_start`, `stop`, ...).
    pub events: Vec<String>,
    /// Regex on the tool name, anchored; `*` or empty matches every tool.
    /// Applies to the tool events only.
    pub matcher: Option<String>,
    /// Seconds before the run is killed; 60 when absent.
    pub timeout: Option<u64>,
    /// Variables set for the command.
    pub env: BTreeMap<String, String>,
    /// Host variables passed through (besides `PATH`, which always is).
    pub inherit_env: Vec<String>,
    /// Where the command runs, relative to the config file's folder; that
    /// folder when absent.
    pub working_dir: Option<PathBuf>,
    /// What a failure decides; `None`: refuse at approve_tool, `warn`
    /// elsewhere.
    pub on_error: Option<CommandOnError>,
    /// A CEL condition, as for process hooks; evaluated by the chain.
    #[serde(rename = "if")]
    pub r#if: Option<String>,
}

impl Default for CommandConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            priority: 0,
            command: None,
            args: None,
            events: Vec::new(),
            matcher: None,
            timeout: None,
            env: BTreeMap::new(),
            inherit_env: Vec::new(),
            working_dir: None,
            on_error: None,
            r#if: None,
        }
    }
}

/// The stage a docker-agent event name maps onto. Non-request lifecycle
/// events have none: they only inform ([`CommandHook::notify`]).
fn event_stage(event: &str) -> Option<Stage> {
    if let Some((_, stage)) = STAGE_EVENTS.iter().find(|(name, _)| *name == event) {
        return Some(*stage);
    }
    lifecycle_event(event)
        .filter(|e| e.is_request())
        .map(|_| Stage::Lifecycle)
}

/// The lifecycle event of that name.
fn lifecycle_event(name: &str) -> Option<LifecycleEvent> {
    LifecycleEvent::ALL.into_iter().find(|e| e.as_str() == name)
}

/// Whether `name` is an event a command hook can be configured for.
fn known_event(name: &str) -> bool {
    STAGE_EVENTS.iter().any(|(n, _)| *n == name) || lifecycle_event(name).is_some()
}

/// Every event name, for error messages.
fn event_names() -> String {
    STAGE_EVENTS
        .iter()
        .map(|(n, _)| *n)
        .chain(LifecycleEvent::ALL.iter().map(|e| e.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
}

impl CommandConfig {
    /// A hook running the shell string `command` for `events`, with every
    /// other setting at its default; handy for embedding and tests.
    pub fn shell(command: &str, events: &[&str]) -> Self {
        Self {
            command: Some(command.to_string()),
            events: events.iter().map(|e| e.to_string()).collect(),
            ..Self::default()
        }
    }

    /// Checks what serde cannot: exactly one of `command` and `args`, known
    /// event names, a positive timeout, and filters that compile. The error
    /// names the key, because a typo in a security gate must not silently
    /// disable it.
    pub fn validate(&self) -> Result<(), String> {
        match (&self.command, &self.args) {
            (Some(_), Some(_)) => {
                return Err("`command` and `args` exclude each other: set only one".into());
            }
            (None, None) => {
                return Err("set `command` (a shell string) or `args` (argv)".into());
            }
            (Some(c), None) if c.trim().is_empty() => {
                return Err("`command` is empty".into());
            }
            (None, Some(a)) if a.first().is_none_or(|p| p.is_empty()) => {
                return Err("`args` must start with the program to run".into());
            }
            _ => {}
        }
        if self.events.is_empty() {
            return Err(format!(
                "`events` is empty; name at least one of {}",
                event_names()
            ));
        }
        if let Some(bad) = self.events.iter().find(|e| !known_event(e)) {
            return Err(format!(
                "`events`: unknown event {bad:?} (expected one of {})",
                event_names()
            ));
        }
        if self.timeout == Some(0) {
            return Err("`timeout` must be a positive number of seconds".into());
        }
        // A deadline past what the clock can hold would panic on the first
        // call (found by the config_parse fuzz target); a day is already far
        // longer than any agent waits for a tool.
        if self.timeout.is_some_and(|t| t > MAX_TIMEOUT_SECS) {
            return Err(format!(
                "`timeout` is in seconds and at most {MAX_TIMEOUT_SECS} (a day)"
            ));
        }
        Filter::new(self.matcher.as_deref(), self.r#if.as_deref())?;
        Ok(())
    }

    /// The chain policy for a failure at `stage`: `block` refuses (deny),
    /// `warn` and `ignore` go on (allow; they differ only in how loudly it
    /// is logged), and an unset `on_error` takes the stage's default, so a
    /// `permission_request` hook that times out or cannot start refuses.
    pub fn policy(&self, stage: Stage) -> OnError {
        match self.on_error {
            Some(o) => o.policy(),
            None => OnError::default_for(stage),
        }
    }

    /// The stages its events map onto, in [`Stage::ALL`] order. Only
    /// request lifecycle events give [`Stage::Lifecycle`]; the others reach
    /// the hook through [`CommandHook::notify`].
    pub fn stages(&self) -> Vec<Stage> {
        let wanted: Vec<Stage> = self.events.iter().filter_map(|e| event_stage(e)).collect();
        Stage::ALL
            .into_iter()
            .filter(|s| wanted.contains(s))
            .collect()
    }

    /// The run's time limit.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout.unwrap_or(DEFAULT_TIMEOUT_SECS))
    }
}

/// A command hook ready to run: its config resolved once (program, folder,
/// matcher), so each call only spawns.
#[derive(Debug)]
pub struct CommandHook {
    name: Arc<str>,
    program: PathBuf,
    args: Vec<String>,
    events: Vec<String>,
    matcher: Filter,
    timeout: Duration,
    env: BTreeMap<String, String>,
    inherit_env: Vec<String>,
    dir: PathBuf,
    on_error: Option<CommandOnError>,
}

/// What one run produced.
#[derive(Debug)]
struct Finished {
    status: ExitStatus,
    stdout: Captured,
    stderr: Captured,
}

/// One stream's output, up to [`OUTPUT_CAP`].
#[derive(Debug, Default)]
struct Captured {
    bytes: Vec<u8>,
    dropped: usize,
}

impl Captured {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }
}

/// Kills the run's process group unless disarmed: on a timeout, and when
/// the call is dropped (cancelled by the chain) while the script runs. It
/// is disarmed once the script has been reaped, because after that the
/// group id could in principle be reused.
struct GroupGuard {
    pgid: i32,
    armed: bool,
}

impl GroupGuard {
    fn kill(&self) {
        if self.armed && self.pgid > 0 {
            // SAFETY: a plain syscall on the group whose leader we spawned
            // and have not reaped yet, so the id is still ours.
            unsafe {
                libc::killpg(self.pgid, libc::SIGKILL);
            }
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The run's helper tasks (stdin writer, pipe readers), aborted when the
/// run ends or its call is dropped, so none outlives the call even when a
/// process that escaped the group keeps a pipe open.
#[derive(Default)]
struct Tasks(Vec<JoinHandle<()>>);

impl Drop for Tasks {
    fn drop(&mut self) {
        self.0.iter().for_each(JoinHandle::abort);
    }
}

/// A script's permission decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Permission {
    Allow,
    Ask,
    Deny,
}

/// A script's answer, whatever the spelling it used.
#[derive(Debug, Default, PartialEq)]
struct Reply {
    /// `continue: false`, with its `stop_reason`.
    halt: Option<Option<String>>,
    /// `decision: "block"` (with `reason`) or exit 2 (with stderr).
    block: Option<Option<String>>,
    permission: Option<Permission>,
    permission_reason: Option<String>,
    updated_input: Option<Map<String, Value>>,
    /// `additional_context`, or plain text on stdout.
    additional_context: Option<String>,
    system_message: Option<String>,
    summary: Option<String>,
}

/// `obj[snake]`, else `obj[camel]`; null counts as absent.
fn field<'a>(obj: &'a Map<String, Value>, snake: &str, camel: &str) -> Option<&'a Value> {
    obj.get(snake)
        .filter(|v| !v.is_null())
        .or_else(|| obj.get(camel).filter(|v| !v.is_null()))
}

fn string_field(
    obj: &Map<String, Value>,
    snake: &str,
    camel: &str,
) -> Result<Option<String>, String> {
    match field(obj, snake, camel) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(format!(
            "`{snake}` must be a string, got {}",
            hookhost_protocol::action::type_name(other)
        )),
    }
}

fn object_field<'a>(
    obj: &'a Map<String, Value>,
    snake: &str,
    camel: &str,
) -> Result<Option<&'a Map<String, Value>>, String> {
    match field(obj, snake, camel) {
        None => Ok(None),
        Some(Value::Object(o)) => Ok(Some(o)),
        Some(other) => Err(format!(
            "`{snake}` must be an object, got {}",
            hookhost_protocol::action::type_name(other)
        )),
    }
}

/// The first of the two places a key may be in: `hook_specific_output`
/// first, then the top level.
fn either_string(
    specific: Option<&Map<String, Value>>,
    top: &Map<String, Value>,
    snake: &str,
    camel: &str,
) -> Result<Option<String>, String> {
    if let Some(s) = specific {
        if let Some(v) = string_field(s, snake, camel)? {
            return Ok(Some(v));
        }
    }
    string_field(top, snake, camel)
}

fn parse_permission(value: &str, key: &str) -> Result<Option<Permission>, String> {
    match value {
        "" => Ok(None),
        "allow" => Ok(Some(Permission::Allow)),
        "ask" => Ok(Some(Permission::Ask)),
        "deny" => Ok(Some(Permission::Deny)),
        other => Err(format!(
            "`{key}`: unknown value {other:?} (expected allow, ask or deny)"
        )),
    }
}

/// Non-empty text, or nothing.
fn non_empty(s: Option<String>) -> Option<String> {
    s.filter(|s| !s.trim().is_empty())
}

impl Reply {
    /// Reads a JSON answer in docker-agent's snake_case or Claude Code's
    /// camelCase (snake_case wins when both are given). A wrong type or an
    /// unknown decision is an error: a gate whose answer cannot be read
    /// must not count as an allow.
    fn from_json(value: &Value) -> Result<Reply, String> {
        let top = value
            .as_object()
            .ok_or("the JSON answer must be an object")?;
        let specific = object_field(top, "hook_specific_output", "hookSpecificOutput")?;
        let mut reply = Reply::default();

        match field(top, "continue", "continue") {
            None | Some(Value::Bool(true)) => {}
            Some(Value::Bool(false)) => {
                reply.halt = Some(non_empty(string_field(top, "stop_reason", "stopReason")?));
            }
            Some(other) => {
                return Err(format!(
                    "`continue` must be a boolean, got {}",
                    hookhost_protocol::action::type_name(other)
                ));
            }
        }
        let reason = non_empty(string_field(top, "reason", "reason")?);
        match string_field(top, "decision", "decision")?.as_deref() {
            None | Some("") => {}
            Some("block") | Some("deny") => reply.block = Some(reason.clone()),
            // Claude Code's older PreToolUse spelling of "allow".
            Some("approve") | Some("allow") => reply.permission = Some(Permission::Allow),
            Some(other) => {
                return Err(format!(
                    "`decision`: unknown value {other:?} (expected block or approve)"
                ));
            }
        }

        if let Some(p) = either_string(specific, top, "permission_decision", "permissionDecision")?
        {
            if let Some(p) = parse_permission(&p, "permission_decision")? {
                reply.permission = Some(p);
            }
        }
        reply.permission_reason = non_empty(either_string(
            specific,
            top,
            "permission_decision_reason",
            "permissionDecisionReason",
        )?)
        .or_else(|| reason.clone());

        let mut updated = None;
        if let Some(s) = specific {
            updated = object_field(s, "updated_input", "updatedInput")?;
        }
        if updated.is_none() {
            updated = object_field(top, "updated_input", "updatedInput")?;
        }
        reply.updated_input = updated.cloned();

        // Claude Code's PermissionRequest answer:
        // hookSpecificOutput.decision = {behavior, message, updatedInput}.
        if let Some(d) = specific
            .and_then(|s| s.get("decision"))
            .filter(|d| !d.is_null())
        {
            let d = d
                .as_object()
                .ok_or("`hook_specific_output.decision` must be an object")?;
            if let Some(b) = string_field(d, "behavior", "behavior")? {
                if let Some(p) = parse_permission(&b, "decision.behavior")? {
                    reply.permission = Some(p);
                }
            }
            if let Some(m) = non_empty(string_field(d, "message", "message")?) {
                reply.permission_reason = Some(m);
            }
            if let Some(u) = object_field(d, "updated_input", "updatedInput")? {
                reply.updated_input = Some(u.clone());
            }
        }

        reply.additional_context = non_empty(either_string(
            specific,
            top,
            "additional_context",
            "additionalContext",
        )?);
        reply.system_message = non_empty(string_field(top, "system_message", "systemMessage")?);
        reply.summary = non_empty(either_string(specific, top, "summary", "summary")?);
        Ok(reply)
    }

    /// Reads stdout after exit 0: a JSON object when it starts with `{`,
    /// otherwise plain text, which is context.
    fn from_stdout(stdout: &Captured) -> Result<Reply, String> {
        let text = stdout.text();
        let trimmed = text.trim();
        if trimmed.starts_with('{') {
            let value: Value = serde_json::from_str(trimmed).map_err(|e| {
                if stdout.dropped > 0 {
                    format!(
                        "stdout starts with `{{` but is not JSON: it was cut at {OUTPUT_CAP} bytes"
                    )
                } else {
                    format!("stdout starts with `{{` but is not JSON: {e}")
                }
            })?;
            return Reply::from_json(&value);
        }
        Ok(Reply {
            additional_context: non_empty(Some(trimmed.to_string())),
            ..Reply::default()
        })
    }

    /// Exit 2: a block, with stderr as the reason.
    fn blocked(stderr: &Captured) -> Reply {
        Reply {
            block: Some(non_empty(Some(stderr.text().trim().to_string()))),
            ..Reply::default()
        }
    }

    /// The refusal this answer carries, if any: a block or a deny.
    fn refusal(&self) -> Option<Option<String>> {
        if let Some(r) = &self.block {
            return Some(r.clone());
        }
        if self.permission == Some(Permission::Deny) {
            return Some(self.permission_reason.clone());
        }
        None
    }
}

/// The answer of a hook that has nothing to say at `stage`.
fn neutral(stage: Stage) -> Value {
    match stage {
        Stage::ApproveTool => json!({"approved": true}),
        _ => json!({"action": "continue"}),
    }
}

/// The docker-agent name of a tool or LLM stage.
fn stage_event_name(stage: Stage) -> Option<&'static str> {
    STAGE_EVENTS
        .iter()
        .find(|(_, s)| *s == stage)
        .map(|(name, _)| *name)
}

/// `meta.session_key` of a params object, else a top-level `session_id`.
fn session_id(params: &Value) -> String {
    params
        .get("meta")
        .and_then(|m| m.get("session_key"))
        .or_else(|| params.get("session_id"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// The last `max` bytes of a text, on a char boundary, for error reports.
fn tail(text: &str, max: usize) -> &str {
    let text = text.trim();
    if text.len() <= max {
        return text;
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

/// How the script ended, for error reports.
fn describe_status(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        (None, None) => "an unknown exit status".to_string(),
    }
}

/// Reads a stream into `buf`, keeping up to [`OUTPUT_CAP`] bytes and
/// discarding the rest, until EOF or an error.
async fn capture<R: AsyncRead + Unpin>(mut stream: R, buf: Arc<Mutex<Captured>>) {
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let mut c = buf.lock().unwrap_or_else(|p| p.into_inner());
                let keep = n.min(OUTPUT_CAP - c.bytes.len());
                c.bytes.extend_from_slice(&chunk[..keep]);
                c.dropped += n - keep;
            }
        }
    }
}

fn take(buf: &Arc<Mutex<Captured>>) -> Captured {
    std::mem::take(&mut *buf.lock().unwrap_or_else(|p| p.into_inner()))
}

impl CommandHook {
    /// Resolves a validated config. `base_dir` (the config file's folder)
    /// resolves a relative `working_dir`, and is the working directory when
    /// none is set. A relative program path in `args` that contains a slash
    /// is resolved against the working directory; a bare name is looked up
    /// on `PATH`.
    pub fn new(name: &str, config: &CommandConfig, base_dir: &Path) -> Result<CommandHook, String> {
        config.validate()?;
        let matcher = Filter::new(config.matcher.as_deref(), None)?;
        let dir = match &config.working_dir {
            Some(d) => base_dir.join(d),
            None => base_dir.to_path_buf(),
        };
        let (program, args) = match (&config.command, &config.args) {
            (Some(command), _) => (
                PathBuf::from("/bin/sh"),
                vec!["-c".to_string(), command.clone()],
            ),
            (None, Some(argv)) => {
                let first = argv.first().cloned().unwrap_or_default();
                let p = Path::new(&first);
                let program = if p.is_relative() && first.contains('/') {
                    dir.join(p)
                } else {
                    p.to_path_buf()
                };
                (program, argv[1..].to_vec())
            }
            (None, None) => return Err("set `command` (a shell string) or `args` (argv)".into()),
        };
        Ok(CommandHook {
            name: name.into(),
            program,
            args,
            events: config.events.clone(),
            matcher,
            timeout: config.timeout(),
            env: config.env.clone(),
            inherit_env: config.inherit_env.clone(),
            dir,
            on_error: config.on_error,
        })
    }

    /// Whether this hook runs for that lifecycle event (request or not), so
    /// the host can skip building an input nobody reads.
    pub fn handles(&self, event: &str) -> bool {
        self.events.iter().any(|e| e == event)
    }

    /// The docker-agent event name this call is for, when the hook runs for
    /// it; `None` means answer neutrally without spawning.
    fn event_for(&self, stage: Stage, params: &Value) -> Option<String> {
        let name = match stage {
            Stage::Lifecycle => params.get("event").and_then(Value::as_str)?,
            other => stage_event_name(other)?,
        };
        self.handles(name).then(|| name.to_string())
    }

    /// Runs the command for one chain call and answers in the stage's
    /// protocol shape, as a process hook would, so the chain treats both
    /// kinds alike. The `matcher` is applied here at the tool stages: a
    /// tool it does not match gets the neutral answer without a spawn.
    ///
    /// The run ends at `deadline` or after the configured `timeout`,
    /// whichever is first. A spawn failure, a timeout, an exit other than 0
    /// or 2, or an answer that cannot be read is a [`CallError`], which the
    /// chain resolves with [`CommandConfig::policy`]: never a silent allow.
    pub async fn call(
        &self,
        stage: Stage,
        params: &Value,
        deadline: Instant,
    ) -> Result<Value, CallError> {
        let Some(event) = self.event_for(stage, params) else {
            return Ok(neutral(stage));
        };
        if self.matcher.evaluate(stage, params) == FilterVerdict::Skip {
            return Ok(neutral(stage));
        }
        let input = self.input(stage, &event, params);
        let result = self.run(&input, deadline).await.and_then(|done| {
            let reply = match done.status.code() {
                Some(0) => Reply::from_stdout(&done.stdout).map_err(|e| {
                    CallError::Protocol(format!("command hook `{}`: {e}", self.name))
                })?,
                Some(2) => Reply::blocked(&done.stderr),
                _ => return Err(self.exit_error(&done)),
            };
            Ok(self.answer(stage, &event, reply))
        });
        if let Err(e) = &result {
            self.log_failure(&event, e);
        }
        result
    }

    /// Runs the command for a lifecycle event nobody waits on (session_end,
    /// stop, ...). Its output is read and logged, never used: the event has
    /// already happened. A failure is logged as `on_error` says.
    pub async fn notify(&self, event: &str, payload: &Value) {
        if !self.handles(event) {
            return;
        }
        let mut input = Map::new();
        input.insert("session_id".into(), Value::from(session_id(payload)));
        input.insert("cwd".into(), Value::from(self.dir.display().to_string()));
        input.insert("hook_event_name".into(), Value::from(event));
        if let Some(fields) = payload.as_object() {
            for (k, v) in fields {
                if k != "meta" {
                    input.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
        }
        let input = Value::Object(input);
        match self.run(&input, Instant::now() + self.timeout).await {
            Ok(done) => match done.status.code() {
                Some(0) | Some(2) => tracing::debug!(
                    hook = %self.name,
                    event,
                    status = %describe_status(done.status),
                    stdout = %tail(&done.stdout.text(), LOG_TAIL),
                    stderr = %tail(&done.stderr.text(), LOG_TAIL),
                    "command hook ran for an event that takes no answer; its output is not used"
                ),
                _ => self.log_failure(event, &self.exit_error(&done)),
            },
            Err(e) => self.log_failure(event, &e),
        }
    }

    fn exit_error(&self, done: &Finished) -> CallError {
        let stderr = done.stderr.text();
        let stderr = tail(&stderr, LOG_TAIL);
        let mut text = describe_status(done.status);
        if !stderr.is_empty() {
            text.push_str("; stderr: ");
            text.push_str(stderr);
        }
        CallError::Crashed(text)
    }

    /// Logs a failure: at debug level under `ignore`, except a spawn
    /// failure, which is always a warning (the gate never ran, which is
    /// never a silent allow); at warn level otherwise.
    fn log_failure(&self, event: &str, error: &CallError) {
        let quiet = self.on_error.is_some_and(CommandOnError::is_quiet)
            && !matches!(error, CallError::Unavailable(_));
        if quiet {
            tracing::debug!(hook = %self.name, event, "command hook failed: {error}");
        } else {
            tracing::warn!(hook = %self.name, event, "command hook failed: {error}");
        }
    }

    /// docker-agent's snake_case input for this call.
    fn input(&self, stage: Stage, event: &str, params: &Value) -> Value {
        let mut m = Map::new();
        let mut session = session_id(params);
        let payload = params.get("payload").and_then(Value::as_object);
        if session.is_empty() {
            if let Some(s) = payload
                .and_then(|p| p.get("session_id"))
                .and_then(Value::as_str)
            {
                session = s.to_string();
            }
        }
        m.insert("session_id".into(), Value::from(session));
        m.insert("cwd".into(), Value::from(self.dir.display().to_string()));
        m.insert("hook_event_name".into(), Value::from(event));
        let get = |key: &str| params.get(key).filter(|v| !v.is_null());
        match stage {
            Stage::BeforeTool | Stage::ApproveTool | Stage::AfterTool => {
                m.insert(
                    "tool_name".into(),
                    get("tool").cloned().unwrap_or_else(|| Value::from("")),
                );
                if let Some(id) = get("tool_call_id") {
                    m.insert("tool_use_id".into(), id.clone());
                }
                m.insert(
                    "tool_input".into(),
                    get("arguments").cloned().unwrap_or_else(|| json!({})),
                );
                if stage == Stage::AfterTool {
                    if let Some(result) = get("result") {
                        m.insert("tool_response".into(), result.clone());
                        let is_error = result
                            .get("is_error")
                            .and_then(Value::as_bool)
                            .unwrap_or(false);
                        m.insert("tool_error".into(), Value::from(is_error));
                    }
                }
            }
            Stage::BeforeLlm => {
                if let Some(model) = get("model") {
                    m.insert("model".into(), model.clone());
                }
            }
            Stage::AfterLlm => {
                if let Some(model) = get("model") {
                    m.insert("model".into(), model.clone());
                }
                let content = params
                    .get("response")
                    .and_then(|r| r.get("content"))
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                m.insert("stop_response".into(), Value::from(content));
            }
            Stage::Lifecycle => {
                if let Some(payload) = payload {
                    for (k, v) in payload {
                        m.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                }
                // docker-agent's names for the compaction trigger.
                let trigger = payload.and_then(|p| p.get("trigger")).cloned();
                if let Some(t) = trigger {
                    match event {
                        "pre_compact" => {
                            m.entry("source").or_insert(t);
                        }
                        "before_compaction" => {
                            m.entry("compaction_reason").or_insert(t);
                        }
                        _ => {}
                    }
                }
                if let Some(turn) = params.get("meta").and_then(|m| m.get("turn_id")) {
                    m.entry("turn_id").or_insert_with(|| turn.clone());
                }
            }
        }
        Value::Object(m)
    }

    /// Maps a script's answer to the stage's protocol result.
    ///
    /// `ask` is refused: the host has no one to ask, and a script that
    /// wants a human in the loop has not approved.
    fn answer(&self, stage: Stage, event: &str, reply: Reply) -> Value {
        let name = &self.name;
        let halt_reason = |r: &Option<String>| {
            r.clone()
                .unwrap_or_else(|| format!("stopped by command hook `{name}` (continue: false)"))
        };
        let refusal_reason = |r: &Option<String>| {
            r.clone()
                .unwrap_or_else(|| format!("blocked by command hook `{name}`"))
        };
        let ask_reason = || {
            let why = reply
                .permission_reason
                .as_deref()
                .map(|r| format!(": {r}"))
                .unwrap_or_default();
            format!(
                "command hook `{name}` asked for the user's approval, which hookhost cannot ask for{why}"
            )
        };
        let unused = |what: &str| {
            tracing::debug!(hook = %name, event, "command hook answered {what}, which {stage} does not take; ignored");
        };
        if reply.additional_context.is_some() && stage != Stage::Lifecycle {
            unused("additional context");
        }
        if let Some(msg) = reply
            .system_message
            .as_deref()
            .filter(|_| stage != Stage::Lifecycle)
        {
            tracing::info!(hook = %name, event, "command hook system message: {msg}");
        }
        match stage {
            Stage::BeforeTool => {
                if let Some(r) = &reply.halt {
                    json!({"action": "abort_turn", "reason": halt_reason(r)})
                } else if let Some(r) = reply.refusal() {
                    json!({"action": "deny_tool", "reason": refusal_reason(&r)})
                } else if reply.permission == Some(Permission::Ask) {
                    json!({"action": "deny_tool", "reason": ask_reason()})
                } else if let Some(input) = &reply.updated_input {
                    json!({"action": "modify", "call": {"arguments": input}})
                } else {
                    neutral(stage)
                }
            }
            Stage::ApproveTool => {
                if reply.updated_input.is_some() {
                    unused("an updated input");
                }
                if let Some(r) = &reply.halt {
                    json!({"approved": false, "reason": halt_reason(r)})
                } else if let Some(r) = reply.refusal() {
                    json!({"approved": false, "reason": refusal_reason(&r)})
                } else if reply.permission == Some(Permission::Ask) {
                    json!({"approved": false, "reason": ask_reason()})
                } else {
                    neutral(stage)
                }
            }
            Stage::AfterTool | Stage::BeforeLlm | Stage::AfterLlm => {
                if reply.updated_input.is_some() {
                    unused("an updated input");
                }
                if let Some(r) = &reply.halt {
                    json!({"action": "abort_turn", "reason": halt_reason(r)})
                } else if let Some(r) = reply.refusal() {
                    json!({"action": "abort_turn", "reason": refusal_reason(&r)})
                } else {
                    neutral(stage)
                }
            }
            Stage::Lifecycle => self.lifecycle_answer(event, reply),
        }
    }

    fn lifecycle_answer(&self, event: &str, reply: Reply) -> Value {
        let name = &self.name;
        let Some(ev) = lifecycle_event(event) else {
            return neutral(Stage::Lifecycle);
        };
        let stop = reply
            .halt
            .clone()
            .map(|r| {
                r.unwrap_or_else(|| format!("stopped by command hook `{name}` (continue: false)"))
            })
            .or_else(|| {
                reply
                    .refusal()
                    .map(|r| r.unwrap_or_else(|| format!("blocked by command hook `{name}`")))
            });
        let mut out = Map::new();
        match stop {
            Some(reason) if ev.can_block() => {
                out.insert("action".into(), Value::from("block"));
                out.insert("reason".into(), Value::from(reason));
            }
            Some(reason) => {
                tracing::info!(hook = %name, event, "command hook asked to block {event}, which cannot be blocked; going on ({reason})");
                out.insert("action".into(), Value::from("continue"));
            }
            None => {
                out.insert("action".into(), Value::from("continue"));
            }
        }
        let blocking = out.get("action") == Some(&Value::from("block"));
        if let Some(ctx) = reply.additional_context {
            if ev.takes_context() && !blocking {
                out.insert("additional_context".into(), Value::from(ctx));
            } else {
                tracing::debug!(hook = %name, event, "command hook output is not context at {event}; ignored: {}", tail(&ctx, LOG_TAIL));
            }
        }
        if let Some(msg) = reply.system_message {
            out.insert("system_message".into(), Value::from(msg));
        }
        if let Some(summary) = reply.summary {
            if ev.takes_summary() && !blocking {
                out.insert("summary".into(), Value::from(summary));
            } else {
                tracing::debug!(hook = %name, event, "command hook answered a summary, which {event} does not take; ignored");
            }
        }
        if reply.permission == Some(Permission::Ask) {
            tracing::debug!(hook = %name, event, "command hook answered `ask` at a lifecycle event; ignored");
        }
        Value::Object(out)
    }

    /// Spawns the command, feeds it `input`, and waits for it (not for its
    /// pipes) until `deadline` or the timeout. On time out the whole process
    /// group is killed.
    async fn run(&self, input: &Value, deadline: Instant) -> Result<Finished, CallError> {
        let started = Instant::now();
        let limit = deadline.min(started + self.timeout);
        let budget = limit.saturating_duration_since(started);
        if budget.is_zero() {
            return Err(CallError::Timeout(budget));
        }
        let cannot_start = |why: String| {
            CallError::Unavailable(format!(
                "cannot start {} in {}: {why}",
                self.program.display(),
                self.dir.display()
            ))
        };
        if !self.dir.is_dir() {
            return Err(cannot_start(
                "the working directory does not exist".to_string(),
            ));
        }
        let mut bytes = serde_json::to_vec(input).unwrap_or_default();
        bytes.push(b'\n');

        let mut cmd = tokio::process::Command::new(&self.program);
        cmd.args(&self.args)
            .current_dir(&self.dir)
            .process_group(0)
            .kill_on_drop(true);
        crate::transport::spawn::isolate(&mut cmd, &self.inherit_env, &self.env);
        let mut child = cmd.spawn().map_err(|e| cannot_start(e.to_string()))?;
        let mut guard = GroupGuard {
            pgid: child.id().map_or(0, |p| p as i32),
            armed: true,
        };

        let mut tasks = Tasks::default();
        if let Some(mut stdin) = child.stdin.take() {
            tasks.0.push(tokio::spawn(async move {
                // A script that exits without reading makes this fail
                // (EPIPE); that is its right.
                let _ = stdin.write_all(&bytes).await;
                let _ = stdin.shutdown().await;
            }));
        }
        let out_buf = Arc::new(Mutex::new(Captured::default()));
        let err_buf = Arc::new(Mutex::new(Captured::default()));
        let mut readers = Tasks::default();
        if let Some(s) = child.stdout.take() {
            readers.0.push(tokio::spawn(capture(s, out_buf.clone())));
        }
        if let Some(s) = child.stderr.take() {
            readers.0.push(tokio::spawn(capture(s, err_buf.clone())));
        }

        let status = match tokio::time::timeout_at(limit, child.wait()).await {
            Ok(Ok(status)) => status,
            Ok(Err(e)) => {
                guard.kill();
                let _ = child.wait().await;
                guard.armed = false;
                return Err(CallError::Crashed(format!(
                    "waiting for the command failed: {e}"
                )));
            }
            Err(_) => {
                guard.kill();
                let _ = child.wait().await;
                guard.armed = false;
                return Err(CallError::Timeout(budget));
            }
        };
        // Reaped: the group is no longer ours to signal. Anything the script
        // left running in the background is left alone, as docker-agent and
        // Claude Code do.
        guard.armed = false;
        drop(tasks);
        // What the script wrote is in the pipes already; only a grandchild
        // holding them open keeps them from EOF, and it is not waited for.
        let _ = tokio::time::timeout(DRAIN_GRACE, async {
            for r in readers.0.iter_mut() {
                let _ = r.await;
            }
        })
        .await;
        drop(readers);
        Ok(Finished {
            status,
            stdout: take(&out_buf),
            stderr: take(&err_buf),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook(events: &[&str]) -> CommandHook {
        CommandHook::new(
            "h",
            &CommandConfig::shell("true", events),
            Path::new("/tmp"),
        )
        .expect("valid config")
    }

    fn parse(v: Value) -> Reply {
        Reply::from_json(&v).expect("readable answer")
    }

    #[test]
    fn validate_names_the_key() {
        let mut c = CommandConfig::shell("true", &["pre_tool_use"]);
        assert_eq!(c.validate(), Ok(()));
        c.args = Some(vec!["x".into()]);
        assert!(c.validate().unwrap_err().contains("`command` and `args`"));
        c.command = None;
        assert_eq!(c.validate(), Ok(()));
        c.args = Some(vec![]);
        assert!(c.validate().unwrap_err().contains("`args`"));
        c.args = None;
        assert!(c.validate().unwrap_err().contains("`command`"));

        let mut c = CommandConfig::shell("true", &["pre_tool_use", "PreToolUse"]);
        let e = c.validate().unwrap_err();
        assert!(e.contains("`events`") && e.contains("PreToolUse"), "{e}");
        c.events.clear();
        assert!(c.validate().unwrap_err().contains("`events`"));

        let mut c = CommandConfig::shell("true", &["session_end"]);
        c.timeout = Some(0);
        assert!(c.validate().unwrap_err().contains("`timeout`"));
        c.timeout = Some(i64::MAX as u64);
        assert!(c.validate().unwrap_err().contains("at most 86400"));
        c.timeout = Some(86_400);
        assert_eq!(c.validate(), Ok(()));
        c.timeout = Some(1);
        c.matcher = Some("a)|(b".into());
        assert!(c.validate().unwrap_err().contains("`matcher`"));
    }

    #[test]
    fn config_deserializes_strictly() {
        let c: CommandConfig = toml::from_str(
            "command = \"x\"\nevents = [\"stop\"]\non_error = \"block\"\nif = \"true\"\ntimeout = 5",
        )
        .expect("valid toml");
        assert!(c.enabled);
        assert_eq!(c.on_error, Some(CommandOnError::Block));
        assert_eq!(c.policy(Stage::BeforeTool), OnError::Deny);
        assert_eq!(c.r#if.as_deref(), Some("true"));
        assert_eq!(c.timeout(), Duration::from_secs(5));
        assert!(toml::from_str::<CommandConfig>("command = \"x\"\nmatchr = \"y\"").is_err());
        assert!(toml::from_str::<CommandConfig>("on_error = \"deny\"").is_err());
        assert_eq!(CommandConfig::default().timeout(), Duration::from_secs(60));
        let unset = CommandConfig::default();
        assert_eq!(unset.policy(Stage::BeforeTool), OnError::Allow);
        assert_eq!(unset.policy(Stage::ApproveTool), OnError::Deny);
    }

    #[test]
    fn stages_follow_the_events() {
        let c = CommandConfig::shell(
            "true",
            &[
                "session_end",
                "permission_request",
                "pre_tool_use",
                "after_llm_call",
                "stop",
            ],
        );
        assert_eq!(
            c.stages(),
            vec![Stage::AfterLlm, Stage::BeforeTool, Stage::ApproveTool]
        );
        let c = CommandConfig::shell("true", &["turn_start", "pre_compact"]);
        assert_eq!(c.stages(), vec![Stage::Lifecycle]);
        let c = CommandConfig::shell("true", &["session_end"]);
        assert!(c.stages().is_empty());
    }

    #[test]
    fn snake_and_camel_case_read_the_same() {
        let snake = parse(json!({
            "continue": false, "stop_reason": "s", "system_message": "m",
            "hook_specific_output": {"permission_decision": "deny",
                "permission_decision_reason": "r", "updated_input": {"a": 1},
                "additional_context": "c"}
        }));
        let camel = parse(json!({
            "continue": false, "stopReason": "s", "systemMessage": "m",
            "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                "permissionDecisionReason": "r", "updatedInput": {"a": 1},
                "additionalContext": "c"}
        }));
        assert_eq!(snake, camel);
        assert_eq!(snake.halt, Some(Some("s".into())));
        assert_eq!(snake.permission, Some(Permission::Deny));
        assert_eq!(snake.permission_reason.as_deref(), Some("r"));
        assert_eq!(snake.additional_context.as_deref(), Some("c"));
    }

    #[test]
    fn unreadable_answers_are_errors() {
        for bad in [
            json!({"continue": "no"}),
            json!({"decision": "maybe"}),
            json!({"hook_specific_output": {"permission_decision": "perhaps"}}),
            json!({"hook_specific_output": "deny"}),
            json!({"updated_input": [1]}),
            json!([1]),
        ] {
            assert!(Reply::from_json(&bad).is_err(), "{bad}");
        }
        let cut = Captured {
            bytes: b"{\"decision\": \"blo".to_vec(),
            dropped: 10,
        };
        assert!(Reply::from_stdout(&cut).unwrap_err().contains("cut"));
    }

    #[test]
    fn before_tool_mapping() {
        let h = hook(&["pre_tool_use"]);
        let a = |v: Value| h.answer(Stage::BeforeTool, "pre_tool_use", parse(v));
        assert_eq!(a(json!({})), json!({"action": "continue"}));
        assert_eq!(
            a(json!({"decision": "block", "reason": "no"})),
            json!({"action": "deny_tool", "reason": "no"})
        );
        assert_eq!(
            a(json!({"continue": false, "stopReason": "halt"})),
            json!({"action": "abort_turn", "reason": "halt"})
        );
        assert_eq!(
            a(
                json!({"hook_specific_output": {"permission_decision": "allow",
                "updated_input": {"cmd": "ls -h"}}})
            ),
            json!({"action": "modify", "call": {"arguments": {"cmd": "ls -h"}}})
        );
        let ask = a(json!({"hookSpecificOutput": {"permissionDecision": "ask"}}));
        assert_eq!(ask["action"], "deny_tool");
        assert!(
            ask["reason"]
                .as_str()
                .is_some_and(|r| r.contains("approval"))
        );
        assert_eq!(
            h.answer(
                Stage::BeforeTool,
                "pre_tool_use",
                Reply::blocked(&Captured {
                    bytes: b"grep is slow\n".to_vec(),
                    dropped: 0
                })
            ),
            json!({"action": "deny_tool", "reason": "grep is slow"})
        );
        assert_eq!(
            a(json!({"decision": "block"}))["reason"],
            "blocked by command hook `h`"
        );
    }

    #[test]
    fn approve_tool_mapping() {
        let h = hook(&["permission_request"]);
        let a = |v: Value| h.answer(Stage::ApproveTool, "permission_request", parse(v));
        assert_eq!(a(json!({})), json!({"approved": true}));
        assert_eq!(
            a(json!({"hook_specific_output": {"permission_decision": "allow"}})),
            json!({"approved": true})
        );
        assert_eq!(
            a(
                json!({"hook_specific_output": {"permission_decision": "deny",
                "permission_decision_reason": "nope"}})
            ),
            json!({"approved": false, "reason": "nope"})
        );
        assert_eq!(
            a(json!({"hookSpecificOutput": {"decision": {"behavior": "deny", "message": "m"}}})),
            json!({"approved": false, "reason": "m"})
        );
        let ask = a(
            json!({"hook_specific_output": {"permission_decision": "ask",
            "permission_decision_reason": "human please"}}),
        );
        assert_eq!(ask["approved"], false);
        assert!(
            ask["reason"]
                .as_str()
                .is_some_and(|r| r.contains("human please"))
        );
    }

    #[test]
    fn intercept_stages_abort_on_block() {
        let h = hook(&["post_tool_use", "before_llm_call", "after_llm_call"]);
        for (stage, event) in [
            (Stage::AfterTool, "post_tool_use"),
            (Stage::BeforeLlm, "before_llm_call"),
            (Stage::AfterLlm, "after_llm_call"),
        ] {
            let a = |v: Value| h.answer(stage, event, parse(v));
            assert_eq!(
                a(json!({"decision": "block", "reason": "r"})),
                json!({"action": "abort_turn", "reason": "r"})
            );
            assert_eq!(
                a(json!({"continue": false, "stop_reason": "s"})),
                json!({"action": "abort_turn", "reason": "s"})
            );
            assert_eq!(
                a(json!({"additional_context": "c", "updated_input": {"x": 1}})),
                json!({"action": "continue"})
            );
        }
    }

    #[test]
    fn lifecycle_mapping() {
        let h = hook(&["session_start", "user_prompt_submit", "before_compaction"]);
        let a = |event: &str, v: Value| h.answer(Stage::Lifecycle, event, parse(v));
        assert_eq!(
            a(
                "user_prompt_submit",
                json!({"decision": "block", "reason": "no"})
            ),
            json!({"action": "block", "reason": "no"})
        );
        assert_eq!(
            a(
                "session_start",
                json!({"decision": "block", "reason": "no"})
            ),
            json!({"action": "continue"})
        );
        assert_eq!(
            a(
                "session_start",
                json!({"hook_specific_output": {"additional_context": "c"},
                "system_message": "m"})
            ),
            json!({"action": "continue", "additional_context": "c", "system_message": "m"})
        );
        assert_eq!(
            a(
                "before_compaction",
                json!({"additional_context": "c",
                "hookSpecificOutput": {"summary": "short"}})
            ),
            json!({"action": "continue", "summary": "short"})
        );
        assert_eq!(
            a(
                "before_compaction",
                json!({"hook_specific_output": {"permission_decision": "deny"}})
            ),
            json!({"action": "block", "reason": "blocked by command hook `h`"})
        );
        let text = Reply::from_stdout(&Captured {
            bytes: b"  hello context\n".to_vec(),
            dropped: 0,
        })
        .expect("plain text");
        assert_eq!(
            h.answer(Stage::Lifecycle, "session_start", text),
            json!({"action": "continue", "additional_context": "hello context"})
        );
    }

    #[test]
    fn input_is_docker_agent_shaped() {
        let h = hook(&[
            "pre_tool_use",
            "post_tool_use",
            "after_llm_call",
            "pre_compact",
        ]);
        let i = h.input(
            Stage::BeforeTool,
            "pre_tool_use",
            &json!({"meta": {"session_key": "s1"}, "tool": "shell",
                "arguments": {"cmd": "ls"}, "tool_call_id": "t1"}),
        );
        assert_eq!(
            i,
            json!({"session_id": "s1", "cwd": "/tmp", "hook_event_name": "pre_tool_use",
                "tool_name": "shell", "tool_use_id": "t1", "tool_input": {"cmd": "ls"}})
        );
        let i = h.input(
            Stage::AfterTool,
            "post_tool_use",
            &json!({"tool": "shell", "result": {"for_llm": "out", "is_error": true}}),
        );
        assert_eq!(i["tool_response"]["for_llm"], "out");
        assert_eq!(i["tool_error"], true);
        assert_eq!(i["session_id"], "");
        let i = h.input(
            Stage::AfterLlm,
            "after_llm_call",
            &json!({"model": "m", "response": {"content": "hi"}}),
        );
        assert_eq!(i["stop_response"], "hi");
        let i = h.input(
            Stage::Lifecycle,
            "pre_compact",
            &json!({"event": "pre_compact", "payload": {"trigger": "auto", "cwd": "/evil"}}),
        );
        assert_eq!(i["source"], "auto");
        assert_eq!(i["cwd"], "/tmp");
        assert_eq!(i["hook_event_name"], "pre_compact");
    }

    #[test]
    fn tail_keeps_the_end_on_a_char_boundary() {
        assert_eq!(tail("  abc  ", 10), "abc");
        assert_eq!(tail("aé", 1), "");
        assert_eq!(tail("abcdef", 3), "def");
    }
}
