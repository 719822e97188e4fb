//! The other direction: an agent's own hook event in, hookhost's params
//! out, and the chain's verdict back in the shape that agent reads from a
//! command hook. `hookhost relay` (and the HTTP routes after it) stand in
//! for a command hook with these.
//!
//! Every verdict is written in a shape the agent cannot misread: what the
//! agent has no way to say (an answer in place of the tool, a rewrite at
//! an event that takes none, `ask` in Codex) becomes a refusal with the
//! reason, never a silent allow.

use hookhost_protocol::Stage;
use serde_json::{Map, Value, json};

use super::Dialect;
use super::spec::{Casing, Event, Spec, Target};
use super::tools;

/// The keys every event carries, kept out of a lifecycle payload.
const COMMON: &[&str] = &[
    "session_id",
    "sessionId",
    "conversation_id",
    "generation_id",
    "workspace_roots",
    "transcript_path",
    "transcriptPath",
    "cwd",
    "permission_mode",
    "hook_event_name",
    "hookEventName",
    "model",
    "turn_id",
    "timestamp",
];

/// An agent's event, read.
#[derive(Debug, Clone)]
pub(crate) struct Incoming {
    /// The native event.
    pub(crate) event: &'static Event,
    /// hookhost's params for it: a stage's params, or for a lifecycle
    /// event `{event, meta, payload}`.
    pub(crate) params: Value,
}

/// Why an event cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EventError {
    /// Not a JSON object.
    #[error("the event is not a JSON object")]
    NotAnObject,
    /// No event name in the input and none given.
    #[error("the event does not name itself (no `hook_event_name`); pass --event")]
    Unnamed,
    /// A name the dialect does not have.
    #[error("{0} has no event {1:?}")]
    Unknown(Dialect, String),
    /// A tool event that names no tool (and whose event implies none):
    /// there is nothing to judge, so it is refused, never let through.
    #[error("the {0} event names no tool (`tool_name`)")]
    NoTool(&'static str),
}

fn text<'v>(m: &'v Map<String, Value>, keys: &[&str]) -> Option<&'v str> {
    keys.iter().find_map(|k| m.get(*k).and_then(Value::as_str))
}

/// Reads what agent `spec` sent for a command hook. `named` is the event
/// when the payload does not say (Copilot's camelCase payloads do not).
pub(crate) fn read_event(
    spec: &'static Spec,
    input: &Value,
    named: Option<&str>,
) -> Result<Incoming, EventError> {
    let m = input.as_object().ok_or(EventError::NotAnObject)?;
    let name = named
        .or_else(|| text(m, &["hook_event_name", "hookEventName"]))
        .ok_or(EventError::Unnamed)?;
    let event = spec
        .event(name)
        .ok_or_else(|| EventError::Unknown(spec.dialect, name.to_string()))?;
    let mut params = Map::new();
    params.insert("meta".into(), meta(m));
    match event.target {
        Target::Stage(Stage::BeforeLlm | Stage::AfterLlm) => model_params(m, &mut params),
        Target::Stage(_) => tool_params(spec, event, m, &mut params)?,
        Target::Lifecycle(name) => {
            let payload: Map<String, Value> = m
                .iter()
                .filter(|(k, _)| !COMMON.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            params.insert("event".into(), Value::from(name));
            params.insert("payload".into(), Value::Object(payload));
        }
    }
    Ok(Incoming {
        event,
        params: Value::Object(params),
    })
}

/// The context every dialect sends, as `meta`.
fn meta(m: &Map<String, Value>) -> Value {
    let mut meta = Map::new();
    let pairs: [(&str, &[&str]); 6] = [
        (
            "session_key",
            &["session_id", "sessionId", "conversation_id"],
        ),
        ("transcript_path", &["transcript_path", "transcriptPath"]),
        ("cwd", &["cwd"]),
        ("permission_mode", &["permission_mode"]),
        ("model", &["model"]),
        ("turn_id", &["turn_id", "generation_id"]),
    ];
    for (key, from) in pairs {
        if let Some(v) = text(m, from).filter(|v| !v.is_empty()) {
            meta.insert(key.into(), Value::from(v));
        }
    }
    Value::Object(meta)
}

/// The tool, its arguments and result, in canonical names and keys.
fn tool_params(
    spec: &Spec,
    event: &'static Event,
    m: &Map<String, Value>,
    params: &mut Map<String, Value>,
) -> Result<(), EventError> {
    let d = spec.dialect;
    let native = text(m, &["tool_name", "toolName"]).filter(|n| !n.is_empty());
    // Cursor's tool-specific events name no tool: the event says which.
    let tool = match (native, event.tools.first()) {
        // Cursor's MCP events name the server's tool alone (`get_issue`):
        // it is an MCP tool all the same.
        (Some(n), Some(&"mcp")) if !n.starts_with("mcp__") => format!("mcp__{n}"),
        (Some(n), _) => tools::from_native(d, n),
        (None, Some(implied)) => implied.to_string(),
        (None, None) => return Err(EventError::NoTool(event.native)),
    };
    let args = match m.get("tool_input").or_else(|| m.get("toolArgs")) {
        Some(Value::Object(o)) => o.clone(),
        Some(Value::String(s)) => serde_json::from_str(s).unwrap_or_default(),
        _ => cursor_args(m),
    };
    let args = tools::args_from_native(d, &tool, &args, None);
    params.insert("tool".into(), Value::from(tool));
    params.insert("arguments".into(), Value::Object(args));
    if let Some(id) = text(m, &["tool_use_id", "tool_call_id", "toolCallId"]) {
        params.insert("tool_call_id".into(), Value::from(id));
    }
    if event.target == Target::Stage(Stage::AfterTool) {
        params.insert("result".into(), result(m, event.failed == Some(true)));
    }
    Ok(())
}

/// Cursor's shell and file events carry their arguments at the top level.
fn cursor_args(m: &Map<String, Value>) -> Map<String, Value> {
    ["command", "file_path"]
        .iter()
        .filter_map(|k| Some((k.to_string(), m.get(*k)?.clone())))
        .collect()
}

/// A tool's result as the agent reported it, as hookhost's tool result.
fn result(m: &Map<String, Value>, failed: bool) -> Value {
    let raw = [
        "tool_response",
        "toolResult",
        "tool_result",
        "tool_output",
        "result_json",
        "output",
    ]
    .iter()
    .find_map(|k| m.get(*k))
    .cloned()
    .unwrap_or(Value::Null);
    let for_llm = match &raw {
        Value::String(s) => s.clone(),
        Value::Object(o) => text(o, &["for_llm", "textResultForLlm", "llmContent", "stdout"])
            .map(str::to_string)
            .unwrap_or_else(|| raw.to_string()),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    let is_error = failed || m.get("error").is_some_and(|e| !e.is_null());
    json!({"for_llm": for_llm, "is_error": is_error, "raw": raw})
}

fn model_params(m: &Map<String, Value>, params: &mut Map<String, Value>) {
    let request = m.get("llm_request").and_then(Value::as_object);
    let model = request
        .and_then(|r| text(r, &["model"]))
        .or(text(m, &["model"]));
    params.insert("model".into(), Value::from(model.unwrap_or_default()));
    let messages = request
        .and_then(|r| r.get("messages"))
        .cloned()
        .unwrap_or(json!([]));
    params.insert("messages".into(), messages);
    if let Some(r) = m.get("llm_response") {
        params.insert("response".into(), r.clone());
    }
}

/// What a command hook of agent D answers: stdout, stderr, exit code.
/// Serialized as `{code, stdout, stderr}`, it is also what the daemon
/// sends `hookhost relay` over its socket.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NativeAnswer {
    /// A JSON object, or empty.
    #[serde(default)]
    pub stdout: String,
    /// A reason, where the exit code carries the decision.
    #[serde(default)]
    pub stderr: String,
    /// 0, or 2 to block.
    pub code: i32,
}

/// The keys that carry a reason or a message: written only when there is
/// one, so a hook that gave none leaves the agent to say what it says
/// then, and no `""` stands in for it.
const REASONS: [&str; 8] = [
    "reason",
    "permissionDecisionReason",
    "permission_decision_reason",
    "stopReason",
    "stop_reason",
    "agent_message",
    "user_message",
    "message",
];

/// `v` without empty [`REASONS`], at the top and one level down.
fn without_empty_reasons(v: Value) -> Value {
    let Value::Object(m) = v else { return v };
    let kept = m.into_iter().filter_map(|(k, v)| match v {
        Value::String(s) if s.is_empty() && REASONS.contains(&k.as_str()) => None,
        Value::Object(inner) => Some((k, without_empty_reasons_flat(inner))),
        other => Some((k, other)),
    });
    Value::Object(kept.collect())
}

fn without_empty_reasons_flat(m: Map<String, Value>) -> Value {
    let kept = m
        .into_iter()
        .filter(|(k, v)| !(REASONS.contains(&k.as_str()) && v.as_str().is_some_and(str::is_empty)));
    Value::Object(kept.collect())
}

impl NativeAnswer {
    pub(super) fn json(value: Value) -> NativeAnswer {
        let value = without_empty_reasons(value);
        let stdout = match &value {
            Value::Object(o) if o.is_empty() => String::new(),
            v => v.to_string(),
        };
        NativeAnswer {
            stdout,
            stderr: String::new(),
            code: 0,
        }
    }

    /// Exit 2 with the reason on stderr: the one refusal every dialect
    /// reads the same, used where JSON could be misread.
    pub fn block(reason: &str) -> NativeAnswer {
        NativeAnswer {
            stdout: String::new(),
            stderr: reason.to_string(),
            code: 2,
        }
    }
}

/// A verdict's text field.
fn field<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str)
}

/// Writes the chain's verdict (its wire shape, spec §8) for `incoming` the
/// way agent `spec` reads a command hook's answer.
pub(crate) fn write_answer(
    spec: &'static Spec,
    incoming: &Incoming,
    verdict: &Value,
) -> NativeAnswer {
    let ev = incoming.event;
    let w = Writer {
        spec,
        event: ev,
        casing: spec.casing_of(ev.native),
    };
    let json = match ev.target {
        Target::Stage(Stage::BeforeTool) => w.before_tool(incoming, verdict),
        Target::Stage(Stage::AfterTool) => w.after_tool(verdict),
        Target::Stage(Stage::ApproveTool) => w.approve(verdict),
        Target::Stage(_) => return w.model_stage(verdict),
        Target::Lifecycle(name) => return w.lifecycle(name, verdict),
    };
    NativeAnswer::json(strip_nulls(Value::Object(json)))
}

/// The refusal of `incoming`'s event in the dialect's JSON, for an agent
/// that has no exit code to read (an HTTP hook's response body): a denied
/// tool, feedback in place of a result, a refused approval, a blocked
/// model call or lifecycle event.
pub(crate) fn write_refusal(
    spec: &'static Spec,
    incoming: &Incoming,
    reason: &str,
) -> NativeAnswer {
    let verdict = match incoming.event.target {
        Target::Stage(Stage::BeforeTool) => json!({"action": "deny_tool", "reason": reason}),
        Target::Stage(Stage::AfterTool) => {
            json!({"action": "modify", "result": {"result": {"for_llm": reason}}})
        }
        Target::Stage(Stage::ApproveTool) => json!({"approved": false, "reason": reason}),
        Target::Stage(_) => json!({"action": "abort_turn", "reason": reason}),
        Target::Lifecycle(_) => json!({"action": "block", "reason": reason}),
    };
    write_answer(spec, incoming, &verdict)
}

/// Where a dialect reads a message for the user.
pub(super) fn message_key(d: Dialect) -> &'static str {
    match d {
        Dialect::Cursor => "user_message",
        Dialect::DockerAgent => "system_message",
        _ => "systemMessage",
    }
}

/// A JSON answer being built.
type Object = Map<String, Value>;

pub(super) struct Writer {
    spec: &'static Spec,
    event: &'static Event,
    casing: Casing,
}

impl Writer {
    /// The writer of `event`'s answers in `spec`.
    pub(super) fn of(spec: &'static Spec, event: &'static Event) -> Writer {
        Writer {
            spec,
            event,
            casing: spec.casing_of(event.native),
        }
    }

    fn d(&self) -> Dialect {
        self.spec.dialect
    }

    /// Claude-shaped dialects put decisions in `hookSpecificOutput`.
    fn claude_shaped(&self) -> bool {
        matches!(self.d(), Dialect::ClaudeCode | Dialect::Codex)
            || (self.d() == Dialect::Copilot && self.casing == Casing::Snake)
    }

    /// `hookSpecificOutput` with `hookEventName` first, then `fields`.
    fn specific(&self, fields: Value) -> Object {
        let mut m = Map::new();
        m.insert("hookEventName".into(), Value::from(self.event.native));
        m.extend(fields.as_object().cloned().unwrap_or_default());
        object(json!({"hookSpecificOutput": m}))
    }

    /// A permission decision with its reason (and rewritten arguments).
    fn permission(&self, decision: &str, reason: Option<&str>, args: Option<Value>) -> Object {
        self.decided(Some(decision), reason, args)
    }

    /// [`Writer::permission`], where `None` writes no decision at all (a
    /// rewrite alone): the agent's own permission rules then apply.
    fn decided(&self, decision: Option<&str>, reason: Option<&str>, args: Option<Value>) -> Object {
        let reason = reason.map(Value::from);
        object(match self.d() {
            _ if self.claude_shaped() => {
                return self.specific(json!({"permissionDecision": decision,
                    "permissionDecisionReason": reason, "updatedInput": args}));
            }
            Dialect::GeminiCli => json!({"decision": decision, "reason": reason,
                "hookSpecificOutput": {"tool_input": args}}),
            // The user's message is the hooks' own `user_message` (notes).
            Dialect::Cursor => json!({"permission": decision, "agent_message": reason,
                "updated_input": args}),
            Dialect::Copilot => json!({"permissionDecision": decision,
                "permissionDecisionReason": reason, "modifiedArgs": args}),
            _ => json!({"hook_specific_output": {"permission_decision": decision,
                "permission_decision_reason": reason, "updated_input": args}}),
        })
    }

    fn before_tool(&self, incoming: &Incoming, verdict: &Value) -> Object {
        let reason = field(verdict, "reason");
        let answer = match field(verdict, "action").unwrap_or("continue") {
            "continue" => Map::new(),
            "modify" => self.rewrite(incoming, verdict, None),
            "allow" if verdict.get("call").is_some() => {
                self.rewrite(incoming, verdict, Some(("allow", reason)))
            }
            "allow" => self.allow(reason),
            "ask" if self.spec.ask => self.permission("ask", reason, None),
            "ask" => {
                let why = format!(
                    "needs the user's approval, which {} cannot ask for here: {}",
                    self.d(),
                    reason.unwrap_or_default()
                );
                self.permission("deny", Some(&why), None)
            }
            "respond" => {
                let text = verdict
                    .get("result")
                    .and_then(|r| field(r, "for_llm"))
                    .unwrap_or_default();
                self.permission("deny", Some(text), None)
            }
            "abort_turn" | "hard_abort" => return self.halt(reason.unwrap_or_default(), true),
            _ => self.permission("deny", reason, None),
        };
        self.context(verdict, answer)
    }

    /// A hook's explicit allow with no rewrite, passed on. Codex takes
    /// `allow` only with `updatedInput` (alone it marks the hook failed and
    /// goes on), so for Codex it is written as nothing, which goes on too.
    fn allow(&self, reason: Option<&str>) -> Object {
        match self.d() {
            Dialect::Codex => Map::new(),
            _ => self.permission("allow", reason, None),
        }
    }

    /// A rewrite: the whole new input in the agent's keys, where the event
    /// takes one; a refusal where it does not (Cursor's shell events).
    /// `decision` is a hook's own allow and its reason; a rewrite alone
    /// carries no decision, so the agent still applies its own permission
    /// rules, except in Codex, which reads `updatedInput` only with
    /// `allow` (and has no prompt that `allow` skips at PreToolUse).
    fn rewrite(
        &self,
        incoming: &Incoming,
        verdict: &Value,
        decision: Option<(&str, Option<&str>)>,
    ) -> Object {
        let call = verdict.get("call").cloned().unwrap_or(Value::Null);
        let tool = field(&call, "tool").unwrap_or_default();
        let before = field(&incoming.params, "tool").unwrap_or_default();
        if tool != before || (self.d() == Dialect::Cursor && !self.event.tools.is_empty()) {
            let why = format!(
                "a hook rewrote the call in a way {} cannot take at {}",
                self.d(),
                self.event.native
            );
            return self.permission("deny", Some(&why), None);
        }
        let empty = Map::new();
        let args = call
            .get("arguments")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let args = Value::Object(tools::args_to_native(self.d(), tool, args));
        let (decision, reason) = match (decision, self.d()) {
            (Some((d, reason)), _) => (Some(d), reason),
            (None, Dialect::Codex) => (Some("allow"), None),
            (None, _) => (None, None),
        };
        self.decided(decision, reason, Some(args))
    }
}

/// The object inside a `json!` that is one.
fn object(v: Value) -> Object {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// Drops null members, so no field says "null" where the agent expects a
/// string or nothing.
fn strip_nulls(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, strip_nulls(v)))
                .filter(|(_, v)| !matches!(v, Value::Object(o) if o.is_empty()))
                .collect(),
        ),
        other => other,
    }
}

impl Writer {
    /// Adds the chain's `additional_context` to an answer, in the
    /// dialect's spelling, where it has one.
    pub(super) fn context(&self, verdict: &Value, mut m: Object) -> Object {
        let Some(ctx) = field(verdict, "additional_context") else {
            return m;
        };
        let (outer, key) = match self.d() {
            Dialect::Cursor => (None, "additional_context"),
            Dialect::Copilot if !self.claude_shaped() => (None, "additionalContext"),
            Dialect::DockerAgent => (Some("hook_specific_output"), "additional_context"),
            _ => (Some("hookSpecificOutput"), "additionalContext"),
        };
        let Some(outer) = outer else {
            m.insert(key.into(), Value::from(ctx));
            return m;
        };
        let slot = m.entry(outer).or_insert_with(|| json!({}));
        if let Some(s) = slot.as_object_mut() {
            if self.claude_shaped() {
                s.entry("hookEventName")
                    .or_insert_with(|| Value::from(self.event.native));
            }
            s.insert(key.into(), Value::from(ctx));
        }
        m
    }

    /// Stop the agent: `continue: false`; at a tool event also a refusal,
    /// so an agent that ignores `continue` still does not run the tool. An
    /// agent that rejects `continue` there (Codex) gets the refusal alone.
    fn halt(&self, reason: &str, tool: bool) -> Object {
        let mut m = match tool {
            true => self.permission("deny", Some(reason), None),
            false => Map::new(),
        };
        if tool && !self.spec.tool_halt {
            return m;
        }
        m.insert("continue".into(), Value::Bool(false));
        let key = match self.d() {
            Dialect::DockerAgent => "stop_reason",
            _ => "stopReason",
        };
        m.insert(key.into(), Value::from(reason));
        m
    }

    fn after_tool(&self, verdict: &Value) -> Object {
        let answer = match field(verdict, "action").unwrap_or("continue") {
            "abort_turn" | "hard_abort" => {
                return self.halt(field(verdict, "reason").unwrap_or_default(), false);
            }
            "modify" => {
                // `result` holds the whole params; the tool's own result
                // is its `result`.
                let text = verdict
                    .get("result")
                    .and_then(|params| params.get("result"))
                    .and_then(|r| field(r, "for_llm"));
                self.feedback(text.unwrap_or_default())
            }
            _ => Map::new(),
        };
        self.context(verdict, answer)
    }

    /// A rewritten tool result: the feedback the model sees instead
    /// (PostToolUse `decision: "block"`); context where no block exists.
    fn feedback(&self, text: &str) -> Object {
        match self.d() {
            Dialect::ClaudeCode | Dialect::Codex | Dialect::DockerAgent => {
                object(json!({"decision": "block", "reason": text}))
            }
            Dialect::GeminiCli => object(json!({"decision": "deny", "reason": text})),
            _ => self.context(&json!({"additional_context": text}), Map::new()),
        }
    }

    /// A PermissionRequest's answer: the decision a hook gave, or nothing
    /// when none decided, so the agent shows its own dialog exactly as it
    /// would without hookhost.
    fn approve(&self, verdict: &Value) -> Object {
        let behavior = match verdict.get("approved").and_then(Value::as_bool) {
            Some(true) => "allow",
            Some(false) => "deny",
            None => return Map::new(),
        };
        let message = field(verdict, "reason");
        match self.d() {
            _ if self.claude_shaped() => {
                self.specific(json!({"decision": {"behavior": behavior, "message": message}}))
            }
            Dialect::Copilot => object(json!({"behavior": behavior, "message": message})),
            _ => self.permission(behavior, message, None),
        }
    }

    /// A model call's answer: `abort_turn` blocks the call (Gemini CLI
    /// ends the turn with the reason), `hard_abort` stops the agent
    /// (`continue: false`), as a hook's own `decision: "block"` and
    /// `continue: false` do.
    fn model_stage(&self, verdict: &Value) -> NativeAnswer {
        let reason = field(verdict, "reason").unwrap_or_default();
        match field(verdict, "action").unwrap_or("continue") {
            "hard_abort" => NativeAnswer::json(json!({"continue": false, "stopReason": reason})),
            "abort_turn" | "deny_tool" => {
                NativeAnswer::json(json!({"decision": "block", "reason": reason}))
            }
            "modify" => NativeAnswer::block(&format!(
                "a hook rewrote the model call, which {} cannot take from a hook at {}",
                self.d(),
                self.event.native
            )),
            _ => NativeAnswer::json(json!({})),
        }
    }
}

impl Writer {
    fn lifecycle(&self, name: &str, verdict: &Value) -> NativeAnswer {
        // Compaction instructions are plain text to Claude Code and Codex.
        if name == "pre_compact" && matches!(self.d(), Dialect::ClaudeCode | Dialect::Codex) {
            if let (Some(ctx), false) = (
                field(verdict, "additional_context"),
                field(verdict, "action") == Some("block"),
            ) {
                return NativeAnswer {
                    stdout: ctx.to_string(),
                    stderr: String::new(),
                    code: 0,
                };
            }
        }
        let mut v = Map::new();
        if let Some(msg) = field(verdict, "system_message") {
            v.insert(message_key(self.d()).into(), Value::from(msg));
        }
        let v = match field(verdict, "action") {
            Some("block") => {
                let reason = field(verdict, "reason").unwrap_or_default();
                self.block_event(name, reason, v)
            }
            _ => self.context(verdict, v),
        };
        NativeAnswer::json(Value::Object(v))
    }

    /// A blocked lifecycle event. At stop the reason is the next
    /// instruction: Claude's `decision: "block"`, Gemini's `deny`, Cursor's
    /// `followup_message`.
    fn block_event(&self, name: &str, reason: &str, mut v: Object) -> Object {
        let stop = name == "stop" || name == "subagent_stop";
        // Codex's PreCompact answer has the common keys only: a hook stops
        // compaction with `continue: false` (codex-rs/hooks/src/events/compact.rs).
        if self.d() == Dialect::Codex && name == "pre_compact" {
            v.insert("continue".into(), Value::Bool(false));
            v.insert("stopReason".into(), Value::from(reason));
            return v;
        }
        let (key, value) = match self.d() {
            Dialect::Cursor if stop => ("followup_message", reason),
            Dialect::Cursor => {
                v.insert("continue".into(), Value::Bool(false));
                ("user_message", reason)
            }
            Dialect::GeminiCli if stop => ("decision", "deny"),
            _ => ("decision", "block"),
        };
        v.insert(key.into(), Value::from(value));
        if key == "decision" {
            v.insert("reason".into(), Value::from(reason));
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn incoming(d: Dialect, input: Value, named: Option<&str>) -> Incoming {
        read_event(d.spec(), &input, named).expect("readable event")
    }

    #[test]
    fn refusals_without_an_exit_code_are_json_in_each_event_s_shape() {
        let claude = |event: &str, extra: Value| {
            let mut input = json!({"session_id": "s", "hook_event_name": event});
            input
                .as_object_mut()
                .unwrap()
                .extend(extra.as_object().cloned().unwrap());
            let i = incoming(Dialect::ClaudeCode, input, None);
            let a = write_refusal(Dialect::ClaudeCode.spec(), &i, "no");
            assert_eq!(a.code, 0, "{event}: an HTTP body has no exit code");
            serde_json::from_str::<Value>(&a.stdout).unwrap()
        };
        let tool = json!({"tool_name": "Bash", "tool_input": {"command": "ls"}});
        let v = claude("PreToolUse", tool.clone());
        assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
        assert_eq!(v["hookSpecificOutput"]["permissionDecisionReason"], "no");
        let mut done = tool.clone();
        done["tool_response"] = json!("out");
        assert_eq!(
            claude("PostToolUse", done),
            json!({"decision": "block", "reason": "no"})
        );
        assert_eq!(
            claude("Stop", json!({"stop_hook_active": false}))["decision"],
            "block"
        );
        let v = claude("PermissionRequest", tool);
        assert_eq!(v["hookSpecificOutput"]["decision"]["behavior"], "deny");
        let v = claude("UserPromptSubmit", json!({"prompt": "hi"}));
        assert_eq!(v["decision"], "block");
    }

    #[test]
    fn events_read_into_canonical_params() {
        let i = incoming(
            Dialect::ClaudeCode,
            json!({"session_id": "s1", "cwd": "/p", "permission_mode": "plan",
            "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "t1"}),
            None,
        );
        assert_eq!(
            i.params,
            json!({"meta": {"session_key": "s1", "cwd": "/p", "permission_mode": "plan"},
            "tool": "shell", "arguments": {"command": "ls"}, "tool_call_id": "t1"})
        );
        let i = incoming(
            Dialect::Copilot,
            json!({"sessionId": "s2", "timestamp": 1, "cwd": "/p",
            "toolName": "bash", "toolArgs": "{\"command\":\"ls\"}"}),
            Some("preToolUse"),
        );
        assert_eq!(i.params["tool"], "shell");
        assert_eq!(i.params["arguments"], json!({"command": "ls"}));
        let i = incoming(
            Dialect::Cursor,
            json!({"conversation_id": "c", "hook_event_name": "beforeShellExecution",
            "command": "rm -rf /", "cwd": "/p"}),
            None,
        );
        assert_eq!(
            (i.params["tool"].clone(), i.params["arguments"].clone()),
            (json!("shell"), json!({"command": "rm -rf /"}))
        );
        let i = incoming(
            Dialect::GeminiCli,
            json!({"session_id": "s", "hook_event_name": "AfterAgent",
            "prompt": "p", "prompt_response": "r", "stop_hook_active": false}),
            None,
        );
        assert_eq!(i.params["event"], "stop");
        assert_eq!(
            i.params["payload"],
            json!({"prompt": "p", "prompt_response": "r", "stop_hook_active": false})
        );
        let bad = read_event(
            Dialect::ClaudeCode.spec(),
            &json!({"hook_event_name": "PreTool"}),
            None,
        );
        assert!(matches!(bad, Err(EventError::Unknown(..))));
        let unnamed = read_event(Dialect::Copilot.spec(), &json!({}), None);
        assert!(matches!(unnamed, Err(EventError::Unnamed)));
    }

    fn answer(d: Dialect, input: Value, named: Option<&str>, verdict: Value) -> Value {
        let i = incoming(d, input, named);
        let a = write_answer(d.spec(), &i, &verdict);
        assert_eq!(a.code, 0);
        serde_json::from_str(&a.stdout).unwrap_or(Value::Null)
    }

    /// Every dialect's approval event, with a tool call in its spelling.
    fn approval_events() -> Vec<(Dialect, &'static str, Value)> {
        Dialect::ALL
            .into_iter()
            .flat_map(|d| {
                d.spec()
                    .events
                    .iter()
                    .filter(|e| e.target == Target::Stage(Stage::ApproveTool))
                    .map(move |e| {
                        let input = json!({"hook_event_name": e.native, "tool_name": "Bash",
                            "toolName": "bash", "tool_input": {"command": "rm -rf ~"}});
                        (d, e.native, input)
                    })
            })
            .collect()
    }

    #[test]
    fn a_permission_request_no_hook_decided_gets_no_decision_in_every_dialect() {
        let events = approval_events();
        let dialects: Vec<Dialect> = events.iter().map(|(d, ..)| *d).collect();
        for d in [
            Dialect::ClaudeCode,
            Dialect::Codex,
            Dialect::Copilot,
            Dialect::DockerAgent,
        ] {
            assert!(dialects.contains(&d), "{d} has an approval event");
        }
        for (d, native, input) in events {
            let i = incoming(d, input, Some(native));
            // What the chain gives when no hook decided (an empty chain).
            let a = write_answer(d.spec(), &i, &json!({"action": "continue"}));
            assert_eq!(
                (a.code, a.stdout.as_str()),
                (0, ""),
                "{d} {native}: the agent shows its own dialog"
            );
            let yes = write_answer(d.spec(), &i, &json!({"approved": true, "reason": "ok"}));
            assert!(yes.stdout.contains("allow"), "{d} {native}: {yes:?}");
            let no = write_answer(d.spec(), &i, &json!({"approved": false, "reason": "no"}));
            assert!(no.stdout.contains("deny"), "{d} {native}: {no:?}");
        }
    }

    #[test]
    fn a_rewrite_alone_carries_no_allow_and_a_hooks_allow_is_passed_on() {
        let pre = json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "npm install"}});
        let call = json!({"tool": "shell", "arguments": {"command": "npm ci"}});
        let modify = json!({"action": "modify", "call": call});
        let v = answer(Dialect::ClaudeCode, pre.clone(), None, modify.clone());
        assert_eq!(
            v,
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"command": "npm ci"}}}),
            "Claude Code applies updatedInput alone and still asks for permission"
        );
        let v = answer(Dialect::Codex, pre.clone(), None, modify);
        assert_eq!(
            v["hookSpecificOutput"]["permissionDecision"], "allow",
            "Codex reads updatedInput only with allow"
        );
        let allow = json!({"action": "allow", "reason": "read-only", "call": call});
        let v = answer(Dialect::ClaudeCode, pre.clone(), None, allow);
        assert_eq!(
            v["hookSpecificOutput"],
            json!({"hookEventName": "PreToolUse", "permissionDecision": "allow",
                "permissionDecisionReason": "read-only", "updatedInput": {"command": "npm ci"}})
        );
        let bare = json!({"action": "allow", "reason": "read-only"});
        let v = answer(Dialect::ClaudeCode, pre.clone(), None, bare.clone());
        assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "allow");
        assert_eq!(
            answer(Dialect::Codex, pre.clone(), None, bare),
            Value::Null,
            "Codex rejects a bare allow; nothing goes on just the same"
        );
        let gemini = json!({"hook_event_name": "BeforeTool", "tool_name": "run_shell_command", "tool_input": {"command": "npm install"}});
        let modify = json!({"action": "modify", "call": call});
        let v = answer(Dialect::GeminiCli, gemini, None, modify);
        assert!(v.get("decision").is_none(), "{v}");
        assert_eq!(v["hookSpecificOutput"]["tool_input"]["command"], "npm ci");
    }

    #[test]
    fn a_tool_event_without_a_tool_is_unreadable_never_allowed() {
        let no_tool =
            json!({"hook_event_name": "PreToolUse", "tool_input": {"command": "rm -rf ~"}});
        let err = read_event(Dialect::ClaudeCode.spec(), &no_tool, None);
        assert!(
            matches!(err, Err(EventError::NoTool("PreToolUse"))),
            "{err:?}"
        );
        let empty = json!({"hook_event_name": "PreToolUse", "tool_name": ""});
        assert!(read_event(Dialect::ClaudeCode.spec(), &empty, None).is_err());
        // Cursor's shell event names its tool by being that event.
        let cursor = json!({"hook_event_name": "beforeShellExecution", "command": "ls"});
        assert!(read_event(Dialect::Cursor.spec(), &cursor, None).is_ok());
    }

    #[test]
    fn verdicts_are_written_as_each_agent_reads_them() {
        let pre = json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "npm install", "timeout": 5}});
        let deny = json!({"action": "deny_tool", "reason": "no"});
        assert_eq!(
            answer(Dialect::ClaudeCode, pre.clone(), None, deny.clone()),
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "no"}})
        );
        let modify = json!({"action": "modify", "call": {"tool": "shell", "arguments": {"command": "npm ci", "timeout": 5}}});
        assert_eq!(
            answer(Dialect::ClaudeCode, pre.clone(), None, modify)["hookSpecificOutput"]["updatedInput"],
            json!({"command": "npm ci", "timeout": 5})
        );
        let ask = json!({"action": "ask", "reason": "pushes", "call": {}});
        assert_eq!(
            answer(Dialect::Codex, pre.clone(), None, ask)["hookSpecificOutput"]["permissionDecision"],
            "deny",
            "Codex refuses ask, so the relay refuses the call"
        );
        let halt = json!({"action": "abort_turn", "reason": "frozen"});
        assert_eq!(
            answer(Dialect::Codex, pre.clone(), None, halt.clone()),
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "frozen"}}),
            "Codex 0.169.0 runs the tool when a PreToolUse answer has `continue`"
        );
        assert_eq!(
            answer(Dialect::ClaudeCode, pre, None, halt)["continue"],
            false
        );
        let cursor = json!({"hook_event_name": "beforeShellExecution", "command": "rm -rf /"});
        assert_eq!(
            answer(Dialect::Cursor, cursor, None, deny)["permission"],
            "deny"
        );
        let stop = json!({"hook_event_name": "stop", "status": "completed", "loop_count": 0});
        let block = json!({"action": "block", "reason": "run the tests"});
        assert_eq!(
            answer(Dialect::Cursor, stop, None, block.clone()),
            json!({"followup_message": "run the tests"})
        );
        let after_agent = json!({"hook_event_name": "AfterAgent"});
        assert_eq!(
            answer(Dialect::GeminiCli, after_agent, None, block),
            json!({"decision": "deny", "reason": "run the tests"})
        );
        let post = json!({"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {}, "tool_response": "ok"});
        let ctx = json!({"action": "continue", "additional_context": "2 tests failed"});
        assert_eq!(
            answer(Dialect::ClaudeCode, post, None, ctx)["hookSpecificOutput"]["additionalContext"],
            "2 tests failed"
        );
    }
}
