//! Reading a hook's answer, whatever the dialect: the exit code, stdout and
//! stderr become one [`Reply`]. The JSON reader takes every dialect's
//! spellings (docker-agent's snake_case, Claude Code's camelCase, Cursor's
//! `permission`, Gemini's `decision` and `tool_input`, Copilot's
//! `modifiedArgs`), so a script is never misread as an allow because it
//! spelled a decision its own way.
//!
//! A wrong type, an unknown decision, two JSON documents or an answer that
//! echoes the input event is an error: a guard whose answer cannot be read
//! must not count as an allow.

use hookhost_protocol::action::type_name;
use serde_json::{Map, Value};

use super::Dialect;
use super::gemini_answers;
use super::spec::Spec;

/// A script's permission decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Permission {
    Allow,
    Ask,
    Deny,
}

/// A script's answer, whatever the spelling it used.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Reply {
    /// `continue: false`, with its `stop_reason`.
    pub(crate) halt: Option<Option<String>>,
    /// `decision: "block"` (with `reason`) or exit 2 (with stderr).
    pub(crate) block: Option<Option<String>>,
    pub(crate) permission: Option<Permission>,
    pub(crate) permission_reason: Option<String>,
    /// The rewritten input, in the dialect's keys; whole or a merge as the
    /// dialect's [`Rewrite`](super::spec::Rewrite) says.
    pub(crate) updated_input: Option<Map<String, Value>>,
    /// `additional_context`, or plain text on stdout where it is context.
    pub(crate) additional_context: Option<String>,
    /// Exit 2, with its stderr as written: the agent frames such a block
    /// apart from a JSON one.
    pub(crate) by_exit: Option<String>,
    /// Gemini CLI's exit 1 with text: a failed hook whose text the agent
    /// shows as a warning.
    pub(crate) warned: Option<String>,
    /// The run did not exit 0, yet its answer is read (Gemini CLI reads
    /// JSON at any exit): the agent uses the answer, hands none of it to
    /// the next hook, and counts the hook as failed (it says so to the
    /// user).
    pub(crate) failed: bool,
    /// The context was plain stdout, which some agents frame apart from
    /// JSON context (Claude Code: "hook success: ...").
    pub(crate) plain: bool,
    pub(crate) system_message: Option<String>,
    pub(crate) summary: Option<String>,
    /// Cursor's `followup_message`: at stop, the next instruction.
    pub(crate) followup: Option<String>,
    /// docker-agent's `updated_messages`: the messages to send the model
    /// instead, in its message shape.
    pub(crate) updated_messages: Option<Vec<Value>>,
    /// docker-agent's `updated_tool_response`: the tool's result text
    /// instead (empty text clears it).
    pub(crate) updated_tool_response: Option<String>,
    /// docker-agent's `metadata`: key/value notes for the approval prompt.
    pub(crate) metadata: Option<Map<String, Value>>,
    /// Top-level keys the agent reads that hookhost's protocol has no word
    /// for (`suppressOutput`; `continue: false` with its `stopReason`),
    /// passed back to an agent of the hook's own dialect as they are.
    pub(crate) native_top: Map<String, Value>,
    /// `hookSpecificOutput` keys this reader does not interpret (Gemini's
    /// `tailToolCallRequest`, `clearContext`, `llm_request`, ...), passed
    /// back the same way.
    pub(crate) native_specific: Map<String, Value>,
}

/// The `hookSpecificOutput` keys the reader interprets; every other one is
/// the agent's own, passed back unread.
const READ_SPECIFIC: [&str; 19] = [
    "hookEventName",
    "hook_event_name",
    "permissionDecision",
    "permission_decision",
    "permissionDecisionReason",
    "permission_decision_reason",
    "updatedInput",
    "updated_input",
    "tool_input",
    "additionalContext",
    "additional_context",
    "summary",
    "decision",
    "reason",
    "updated_messages",
    "updatedMessages",
    "updated_tool_response",
    "updatedToolResponse",
    "metadata",
];

/// Top-level keys passed back unread.
const NATIVE_TOP: [&str; 3] = ["suppressOutput", "suppress_output", "interrupt"];

/// How a run ended, as the reader needs it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ending<'a> {
    /// The exit code.
    pub(crate) code: i32,
    /// What it wrote to stdout.
    pub(crate) stdout: &'a str,
    /// What it wrote to stderr.
    pub(crate) stderr: &'a str,
    /// stdout was cut at the output cap.
    pub(crate) truncated: bool,
}

/// Why an answer cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ReadError {
    /// An exit other than 0 and 2: the dialect's non-blocking error.
    Exit,
    /// An answer that cannot be read.
    Invalid(String),
}

/// Reads a finished run: exit 2 blocks with stderr (and beats any JSON,
/// as in Claude Code), exit 0 is read as JSON or plain text, anything else
/// is a failure. `plain_is_context` says whether plain stdout is context at
/// this event.
pub(crate) fn read(
    spec: &Spec,
    event: &str,
    end: Ending<'_>,
    plain_is_context: bool,
) -> Result<Reply, ReadError> {
    if spec.dialect == Dialect::GeminiCli {
        return gemini_answers::read(end);
    }
    if spec
        .event(event)
        .is_some_and(super::spec::Event::is_literal)
    {
        return literal(end);
    }
    match end.code {
        0 => read_output(spec, event, end, plain_is_context).map_err(ReadError::Invalid),
        2 if spec.block_needs_reason && end.stderr.trim().is_empty() => {
            tracing::warn!(
                event,
                "command hook exited 2 with no reason, which {} does not take as a block; set aside",
                spec.dialect
            );
            Ok(Reply::default())
        }
        2 if spec.dialect == Dialect::Copilot && event == "permissionRequest" => {
            denied_by_exit(spec, event, end)
        }
        2 => Ok(Reply::blocked(end.stderr)),
        _ => Err(ReadError::Exit),
    }
}

/// Copilot CLI's exit 2 at permissionRequest: a deny, with what stdout's
/// JSON says (its `message`) merged in; stderr is not read there. A deny
/// whatever stdout holds: JSON that cannot be read, or an allow beside the
/// exit 2, leaves the deny standing.
fn denied_by_exit(spec: &Spec, event: &str, end: Ending<'_>) -> Result<Reply, ReadError> {
    let stdout = serde_json::from_str::<Value>(end.stdout.trim()).ok();
    let mut reply = match stdout {
        Some(Value::Object(mut answer)) if (spec.unusable)(event, &answer).is_ok() => {
            answer.insert("behavior".into(), Value::from("deny"));
            Reply::from_json(&Value::Object(answer)).unwrap_or_default()
        }
        _ => Reply::default(),
    };
    reply.permission = Some(Permission::Deny);
    Ok(reply)
}

/// An answer that is text ([`Caps::literal`](super::spec::Caps::literal)):
/// trimmed stdout on exit 0, nothing when that is blank; any other exit,
/// 2 included, is a failure.
fn literal(end: Ending<'_>) -> Result<Reply, ReadError> {
    if end.code != 0 {
        return Err(ReadError::Exit);
    }
    let text = non_empty(Some(end.stdout.trim().to_string()));
    Ok(Reply {
        plain: text.is_some(),
        additional_context: text,
        ..Reply::default()
    })
}

/// The text the agent reads as a JSON answer on exit 0, when it reads
/// one: trimmed stdout starting with `{`, or, where JSON may come on
/// stderr (Gemini CLI), stderr when stdout is empty, and a JSON string
/// too. `Err` carries the plain text otherwise read.
pub(crate) fn json_answer<'a>(
    spec: &Spec,
    stdout: &'a str,
    stderr: &'a str,
) -> Result<&'a str, &'a str> {
    let mut text = stdout.trim();
    if text.is_empty() && spec.json_from_stderr {
        text = stderr.trim();
    }
    if text.starts_with('{') || (spec.json_from_stderr && text.starts_with('"')) {
        Ok(text)
    } else {
        Err(text)
    }
}

/// A parsed answer as the agent takes it: Gemini CLI parses a JSON string
/// a second time.
pub(crate) fn unquote(value: Value) -> Result<Value, String> {
    match value {
        Value::String(inner) => {
            serde_json::from_str(&inner).map_err(|e| format!("a JSON string that is not JSON: {e}"))
        }
        v => Ok(v),
    }
}

fn read_output(
    spec: &Spec,
    event: &str,
    end: Ending<'_>,
    plain_is_context: bool,
) -> Result<Reply, String> {
    let text = match json_answer(spec, end.stdout, end.stderr) {
        Ok(json) => {
            let value: Value = serde_json::from_str(json).map_err(|e| match end.truncated {
                true => "stdout starts with `{` but is not JSON: it was cut at the output cap"
                    .to_string(),
                false => format!("stdout starts with `{{` but is not one JSON document: {e}"),
            })?;
            let value = unquote(value)?;
            if let Some(Err(why)) = value.as_object().map(|m| (spec.unusable)(event, m)) {
                tracing::warn!(
                    event,
                    "command hook answer set aside, as {} sets it aside: {why}",
                    spec.dialect
                );
                return Ok(Reply::default());
            }
            return Reply::from_json(&value);
        }
        Err(plain) => plain,
    };
    let text = non_empty(Some(text.to_string()));
    Ok(match (plain_is_context, spec.json_from_stderr) {
        (true, _) => Reply {
            plain: text.is_some(),
            additional_context: text,
            ..Reply::default()
        },
        // Gemini CLI: plain output is a message for the user.
        (false, true) => Reply {
            system_message: text,
            ..Reply::default()
        },
        (false, false) => {
            if let Some(t) = text {
                tracing::debug!(
                    "command hook wrote plain text where it is not context; ignored: {t}"
                );
            }
            Reply::default()
        }
    })
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
            type_name(other)
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
            type_name(other)
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

/// Keys only an input event has: an answer carrying one is the input
/// echoed back (a dispatcher that printed what it read).
const ECHOED: [&str; 4] = [
    "hook_event_name",
    "session_id",
    "tool_input",
    "transcript_path",
];

/// Copilot CLI's `modifiedArgs`: an object, or the JSON text of one (it
/// hands `toolArgs` over as a string, and scripts answer in kind).
fn modified_args(top: &Map<String, Value>) -> Result<Option<Map<String, Value>>, String> {
    match top.get("modifiedArgs").filter(|v| !v.is_null()) {
        None => Ok(None),
        Some(Value::Object(o)) => Ok(Some(o.clone())),
        Some(Value::String(s)) => match serde_json::from_str(s) {
            Ok(Value::Object(o)) => Ok(Some(o)),
            _ => Err("`modifiedArgs` is a string that is not a JSON object".to_string()),
        },
        Some(other) => Err(format!(
            "`modifiedArgs` must be an object, got {}",
            type_name(other)
        )),
    }
}

/// Non-empty text, or nothing.
pub(crate) fn non_empty(s: Option<String>) -> Option<String> {
    s.filter(|s| !s.trim().is_empty())
}

impl Reply {
    /// Reads a JSON answer in docker-agent's snake_case or Claude Code's
    /// camelCase (snake_case wins when both are given). A wrong type or an
    /// unknown decision is an error: a guard whose answer cannot be read
    /// must not count as an allow.
    pub(crate) fn from_json(value: &Value) -> Result<Reply, String> {
        let top = value
            .as_object()
            .ok_or("the JSON answer must be an object")?;
        if let Some(k) = ECHOED.iter().find(|k| top.contains_key(**k)) {
            return Err(format!(
                "the answer has `{k}`, a key of the input event: the hook echoed its input instead of answering"
            ));
        }
        let specific = object_field(top, "hook_specific_output", "hookSpecificOutput")?;
        let mut reply = Reply::default();
        reply.read_continue(top)?;
        let reason = non_empty(string_field(top, "reason", "reason")?).or(non_empty(string_field(
            top,
            "agent_message",
            "agentMessage",
        )?));
        reply.read_decision(top, &reason)?;
        reply.read_permission(specific, top, reason)?;
        reply.read_updated_input(specific, top)?;
        if let Some(s) = specific {
            reply.read_permission_request(s)?;
        }
        // Copilot CLI's permissionRequest answer: `{behavior, message}`.
        if let Some(b) = string_field(top, "behavior", "behavior")? {
            reply.permission = parse_permission(&b, "behavior")?.or(reply.permission);
            if let Some(m) = non_empty(string_field(top, "message", "message")?) {
                reply.permission_reason = Some(m);
            }
        }
        reply.followup = non_empty(string_field(top, "followup_message", "followupMessage")?);
        reply.additional_context = non_empty(either_string(
            specific,
            top,
            "additional_context",
            "additionalContext",
        )?);
        reply.system_message = non_empty(string_field(top, "system_message", "systemMessage")?)
            .or(non_empty(string_field(top, "user_message", "userMessage")?));
        reply.summary = non_empty(either_string(specific, top, "summary", "summary")?);
        if let Some(s) = specific {
            reply.read_payloads(s)?;
        }
        reply.keep_native(top, specific);
        Ok(reply)
    }

    /// Keeps the keys the agent reads and the reader does not
    /// ([`Reply::native_top`], [`Reply::native_specific`]).
    fn keep_native(&mut self, top: &Map<String, Value>, specific: Option<&Map<String, Value>>) {
        let mut keep = |k: &str| {
            if let Some(v) = top.get(k) {
                self.native_top.insert(k.to_string(), v.clone());
            }
        };
        NATIVE_TOP.iter().for_each(|k| keep(k));
        if self.halt.is_some() {
            ["continue", "stopReason", "stop_reason", "reason"]
                .iter()
                .for_each(|k| keep(k));
            // A block given beside the stop (never an allow: the chain's
            // verdict decides that).
            if self.block.is_some() {
                keep("decision");
            }
        }
        let unread = specific
            .into_iter()
            .flatten()
            .filter(|(k, _)| !READ_SPECIFIC.contains(&k.as_str()));
        self.native_specific = unread.map(|(k, v)| (k.clone(), v.clone())).collect();
    }

    /// docker-agent's other payloads: `updated_messages` (an array),
    /// `updated_tool_response` (text) and `metadata` (an object of text).
    fn read_payloads(&mut self, specific: &Map<String, Value>) -> Result<(), String> {
        self.updated_messages = match field(specific, "updated_messages", "updatedMessages") {
            None => None,
            Some(Value::Array(m)) => Some(m.clone()),
            Some(other) => {
                return Err(format!(
                    "`updated_messages` must be an array, got {}",
                    type_name(other)
                ));
            }
        };
        self.updated_tool_response =
            string_field(specific, "updated_tool_response", "updatedToolResponse")?;
        self.metadata = object_field(specific, "metadata", "metadata")?.cloned();
        if let Some((k, v)) = self.metadata.iter().flatten().find(|(_, v)| !v.is_string()) {
            return Err(format!(
                "`metadata.{k}` must be a string, got {}",
                type_name(v)
            ));
        }
        Ok(())
    }

    /// `continue: false` halts, with `stop_reason`.
    fn read_continue(&mut self, top: &Map<String, Value>) -> Result<(), String> {
        match field(top, "continue", "continue") {
            None | Some(Value::Bool(true)) => Ok(()),
            Some(Value::Bool(false)) => {
                self.halt = Some(non_empty(string_field(top, "stop_reason", "stopReason")?));
                Ok(())
            }
            Some(other) => Err(format!(
                "`continue` must be a boolean, got {}",
                type_name(other)
            )),
        }
    }

    /// The top-level `decision`: block (or deny) with `reason`, or allow.
    fn read_decision(
        &mut self,
        top: &Map<String, Value>,
        reason: &Option<String>,
    ) -> Result<(), String> {
        match string_field(top, "decision", "decision")?.as_deref() {
            None | Some("") => {}
            Some("block") | Some("deny") => self.block = Some(reason.clone()),
            // Claude Code's older PreToolUse spelling of "allow".
            Some("approve") | Some("allow") => self.permission = Some(Permission::Allow),
            // Gemini CLI's spelling of asking the user.
            Some("ask") => self.permission = Some(Permission::Ask),
            Some(other) => {
                return Err(format!(
                    "`decision`: unknown value {other:?} (expected block, deny, ask, allow or approve)"
                ));
            }
        }
        Ok(())
    }

    /// `permission_decision` and its reason (the top-level `reason` when
    /// it has none).
    fn read_permission(
        &mut self,
        specific: Option<&Map<String, Value>>,
        top: &Map<String, Value>,
        reason: Option<String>,
    ) -> Result<(), String> {
        let cursor = string_field(top, "permission", "permission")?;
        if let Some(p) =
            either_string(specific, top, "permission_decision", "permissionDecision")?.or(cursor)
        {
            if let Some(p) = parse_permission(
                &p,
                "permissionDecision` / `permission_decision` / `permission",
            )? {
                self.permission = Some(p);
            }
        }
        self.permission_reason = non_empty(either_string(
            specific,
            top,
            "permission_decision_reason",
            "permissionDecisionReason",
        )?)
        .or(reason);
        Ok(())
    }

    /// `updated_input`, from `hook_specific_output` first.
    fn read_updated_input(
        &mut self,
        specific: Option<&Map<String, Value>>,
        top: &Map<String, Value>,
    ) -> Result<(), String> {
        let mut updated = None;
        if let Some(s) = specific {
            updated = object_field(s, "updated_input", "updatedInput")?;
            if updated.is_none() {
                // Gemini CLI's rewrite: the whole new input.
                updated = object_field(s, "tool_input", "tool_input")?;
            }
        }
        if updated.is_none() {
            updated = object_field(top, "updated_input", "updatedInput")?;
        }
        self.updated_input = match updated {
            Some(u) => Some(u.clone()),
            None => modified_args(top)?,
        };
        Ok(())
    }

    /// Claude Code's PermissionRequest answer:
    /// `hookSpecificOutput.decision = {behavior, message, updatedInput}`,
    /// which overrides the other spellings.
    fn read_permission_request(&mut self, specific: &Map<String, Value>) -> Result<(), String> {
        let Some(d) = specific.get("decision").filter(|d| !d.is_null()) else {
            return Ok(());
        };
        if d.is_string() {
            // VS Code's Stop and SubagentStop shape:
            // `hookSpecificOutput: {decision: "block", reason}`.
            let reason = non_empty(string_field(specific, "reason", "reason")?);
            return self.read_decision(specific, &reason.or(self.block.clone().flatten()));
        }
        let d = d
            .as_object()
            .ok_or("`hook_specific_output.decision` must be an object or a decision")?;
        if let Some(b) = string_field(d, "behavior", "behavior")? {
            if let Some(p) = parse_permission(&b, "decision.behavior")? {
                self.permission = Some(p);
            }
        }
        if let Some(m) = non_empty(string_field(d, "message", "message")?) {
            self.permission_reason = Some(m);
        }
        if let Some(u) = object_field(d, "updated_input", "updatedInput")? {
            self.updated_input = Some(u.clone());
        }
        Ok(())
    }

    /// Exit 2: a block, with stderr as the reason.
    pub(crate) fn blocked(stderr: &str) -> Reply {
        Reply {
            block: Some(non_empty(Some(stderr.trim().to_string()))),
            by_exit: Some(stderr.to_string()),
            ..Reply::default()
        }
    }

    /// The refusal this answer carries, if any: a block or a deny.
    pub(crate) fn refusal(&self) -> Option<Option<String>> {
        if let Some(r) = &self.block {
            return Some(r.clone());
        }
        if self.permission == Some(Permission::Deny) {
            return Some(self.permission_reason.clone());
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::Dialect;
    use serde_json::json;

    fn parse(v: Value) -> Reply {
        Reply::from_json(&v).expect("readable answer")
    }

    fn ending<'a>(code: i32, stdout: &'a str, stderr: &'a str) -> Ending<'a> {
        Ending {
            code,
            stdout,
            stderr,
            truncated: false,
        }
    }

    #[test]
    fn copilots_exit_2_at_permission_request_denies_with_stdouts_message() {
        let spec = Dialect::Copilot.spec();
        let read = |stdout: &str| {
            let r = read(
                spec,
                "permissionRequest",
                ending(2, stdout, "ignored"),
                false,
            );
            r.expect("a deny")
        };
        let with_message = read(r#"{"message":"not this one"}"#);
        assert_eq!(with_message.refusal(), Some(Some("not this one".into())));
        // An allow beside the exit 2, or stdout that is not JSON: a deny.
        let allow = read(r#"{"behavior":"allow","message":"m"}"#);
        assert_eq!(allow.refusal(), Some(Some("m".into())));
        assert_eq!(read("no json").refusal(), Some(None));
        // Elsewhere exit 2 keeps its stderr.
        let pre = super::read(spec, "preToolUse", ending(2, "{}", "why"), false);
        assert_eq!(pre.expect("a block").refusal(), Some(Some("why".into())));
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
        // The halt's own keys are kept as each spelled them, for its agent.
        assert_eq!(
            snake.native_top,
            json!({"continue": false, "stop_reason": "s"})
                .as_object()
                .cloned()
                .unwrap()
        );
        let unspelled = |r: Reply| Reply {
            native_top: Map::new(),
            ..r
        };
        let (snake, camel) = (unspelled(snake), unspelled(camel));
        assert_eq!(snake, camel);
        assert_eq!(snake.halt, Some(Some("s".into())));
        assert_eq!(snake.permission, Some(Permission::Deny));
    }

    #[test]
    fn every_dialects_spelling_of_a_decision_is_read() {
        // Cursor: `permission`, `agent_message`, `user_message`.
        let r = parse(
            json!({"permission": "deny", "agent_message": "no rm", "user_message": "blocked"}),
        );
        assert_eq!(r.refusal(), Some(Some("no rm".into())));
        assert_eq!(r.system_message.as_deref(), Some("blocked"));
        assert_eq!(
            parse(json!({"permission": "ask"})).permission,
            Some(Permission::Ask)
        );
        // Gemini: top-level decision, tool_input rewrite.
        assert_eq!(
            parse(json!({"decision": "ask"})).permission,
            Some(Permission::Ask)
        );
        let r = parse(
            json!({"decision": "allow", "hookSpecificOutput": {"tool_input": {"command": "ls"}}}),
        );
        assert_eq!(
            Value::Object(r.updated_input.expect("rewrite")),
            json!({"command": "ls"})
        );
        // Copilot: modifiedArgs as text or object.
        let r = parse(
            json!({"permissionDecision": "allow", "modifiedArgs": "{\"command\":\"npm ci\"}"}),
        );
        assert_eq!(
            Value::Object(r.updated_input.expect("rewrite")),
            json!({"command": "npm ci"})
        );
        // Cursor's follow-up at stop.
        assert_eq!(
            parse(json!({"followup_message": "run the tests"}))
                .followup
                .as_deref(),
            Some("run the tests")
        );
    }

    #[test]
    fn unreadable_or_echoed_answers_are_errors() {
        for bad in [
            json!({"continue": "no"}),
            json!({"decision": "maybe"}),
            json!({"permission": "perhaps"}),
            json!({"hook_specific_output": "deny"}),
            json!({"updated_input": [1]}),
            json!({"modifiedArgs": "not json"}),
            json!({"session_id": "s", "hook_event_name": "PreToolUse", "tool_input": {}}),
            json!([1]),
        ] {
            assert!(Reply::from_json(&bad).is_err(), "{bad}");
        }
        let claude = Dialect::ClaudeCode.spec();
        let two = read(
            claude,
            "PreToolUse",
            ending(0, "{}\n{\"decision\":\"block\"}", ""),
            false,
        );
        assert!(matches!(two, Err(ReadError::Invalid(e)) if e.contains("one JSON document")));
        let cut = Ending {
            truncated: true,
            ..ending(0, "{\"decision\": \"blo", "")
        };
        assert!(
            matches!(read(claude, "PreToolUse", cut, false), Err(ReadError::Invalid(e)) if e.contains("cut"))
        );
        assert_eq!(
            read(claude, "PreToolUse", ending(1, "{}", ""), false),
            Err(ReadError::Exit)
        );
    }

    #[test]
    fn exit_2_beats_json_and_plain_text_is_context_only_where_defined() {
        let claude = Dialect::ClaudeCode.spec();
        let allow = r#"{"hookSpecificOutput":{"permissionDecision":"allow"}}"#;
        let r = read(
            claude,
            "PreToolUse",
            ending(2, allow, "touches /etc"),
            false,
        )
        .expect("read");
        assert_eq!(r.refusal(), Some(Some("touches /etc".into())));
        let r = read(claude, "PreToolUse", ending(0, "use tabs\n", ""), true).expect("read");
        assert_eq!(r.additional_context.as_deref(), Some("use tabs"));
        let r = read(claude, "PreToolUse", ending(0, "debug noise", ""), false).expect("read");
        assert_eq!(r, Reply::default());
        // Gemini: JSON on stderr when stdout is empty, a JSON string parsed
        // twice, plain text a message for the user.
        let gemini = Dialect::GeminiCli.spec();
        let r = read(
            gemini,
            "BeforeTool",
            ending(0, "", r#"{"decision":"deny","reason":"no"}"#),
            false,
        )
        .expect("read");
        assert_eq!(r.refusal(), Some(Some("no".into())));
        let r = read(
            gemini,
            "BeforeTool",
            ending(0, r#""{\"decision\":\"block\"}""#, ""),
            false,
        )
        .expect("read");
        assert!(r.block.is_some());
        let r = read(gemini, "PreToolUse", ending(0, "hello", ""), false).expect("read");
        assert_eq!(r.system_message.as_deref(), Some("hello"));
    }

    /// Codex's UserInstructions takes stdout as text, never as an answer:
    /// JSON there is instructions, exit 2 no block but a failure.
    #[test]
    fn a_literal_answer_is_its_trimmed_text_and_any_failure_is_nothing() {
        let codex = Dialect::Codex.spec();
        let read = |e| read(codex, "UserInstructions", e, true);
        let r = read(ending(0, "  {\"continue\":false}\n", "")).expect("read");
        assert_eq!(
            r.additional_context.as_deref(),
            Some("{\"continue\":false}")
        );
        assert_eq!(r.halt, None);
        assert_eq!(read(ending(0, " \n", "")), Ok(Reply::default()));
        for code in [1, 2, 7] {
            let r = read(ending(code, "ignored", "provider unavailable"));
            assert_eq!(r, Err(ReadError::Exit), "exit {code}");
        }
    }
}
