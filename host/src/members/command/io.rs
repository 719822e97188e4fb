//! The two translations of a command hook, in docker-agent's terms: the
//! stage's params become its snake_case input (`session_id`, `cwd`,
//! `hook_event_name`, `tool_name`, `tool_input`, ...), and the script's
//! answer, in docker-agent's snake_case or Claude Code's camelCase, is read
//! into one [`Reply`] (what it means for the stage is in `answer`).
//!
//! A wrong type or an unknown decision in an answer is an error: a gate
//! whose answer cannot be read must not count as an allow.

use std::path::Path;

use hookhost_protocol::Stage;
use hookhost_protocol::action::type_name;
use serde_json::{Map, Value, json};

use super::run::{Captured, OUTPUT_CAP};

/// A script's permission decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Permission {
    Allow,
    Ask,
    Deny,
}

/// A script's answer, whatever the spelling it used.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Reply {
    /// `continue: false`, with its `stop_reason`.
    pub(super) halt: Option<Option<String>>,
    /// `decision: "block"` (with `reason`) or exit 2 (with stderr).
    pub(super) block: Option<Option<String>>,
    pub(super) permission: Option<Permission>,
    pub(super) permission_reason: Option<String>,
    pub(super) updated_input: Option<Map<String, Value>>,
    /// `additional_context`, or plain text on stdout.
    pub(super) additional_context: Option<String>,
    pub(super) system_message: Option<String>,
    pub(super) summary: Option<String>,
}

/// `meta.session_key` of a params object, else a top-level `session_id`.
pub(super) fn session_id(params: &Value) -> String {
    params
        .get("meta")
        .and_then(|m| m.get("session_key"))
        .or_else(|| params.get("session_id"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// The fields every input starts with.
fn common(session: String, dir: &Path, event: &str) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("session_id".into(), Value::from(session));
    m.insert("cwd".into(), Value::from(dir.display().to_string()));
    m.insert("hook_event_name".into(), Value::from(event));
    m
}

/// docker-agent's input for a lifecycle event nobody waits on: the common
/// fields, then the payload's own (never overriding them).
pub(super) fn notice(dir: &Path, event: &str, payload: &Value) -> Value {
    let mut m = common(session_id(payload), dir, event);
    if let Some(fields) = payload.as_object() {
        for (k, v) in fields.iter().filter(|(k, _)| *k != "meta") {
            m.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    Value::Object(m)
}

/// docker-agent's snake_case input for one chain call; `dir` is the
/// working directory the script runs in.
pub(super) fn input(dir: &Path, stage: Stage, event: &str, params: &Value) -> Value {
    let payload = params.get("payload").and_then(Value::as_object);
    let mut session = session_id(params);
    if session.is_empty() {
        if let Some(s) = payload
            .and_then(|p| p.get("session_id"))
            .and_then(Value::as_str)
        {
            session = s.to_string();
        }
    }
    let mut m = common(session, dir, event);
    match stage {
        Stage::BeforeTool | Stage::ApproveTool | Stage::AfterTool => {
            tool_input(&mut m, stage, params)
        }
        Stage::BeforeLlm | Stage::AfterLlm => llm_input(&mut m, stage, params),
        Stage::Lifecycle => lifecycle_input(&mut m, event, params, payload),
    }
    Value::Object(m)
}

/// `params[key]`, null counting as absent.
fn get<'v>(params: &'v Value, key: &str) -> Option<&'v Value> {
    params.get(key).filter(|v| !v.is_null())
}

fn tool_input(m: &mut Map<String, Value>, stage: Stage, params: &Value) {
    let tool = get(params, "tool").cloned();
    m.insert("tool_name".into(), tool.unwrap_or_else(|| Value::from("")));
    if let Some(id) = get(params, "tool_call_id") {
        m.insert("tool_use_id".into(), id.clone());
    }
    let arguments = get(params, "arguments").cloned();
    m.insert("tool_input".into(), arguments.unwrap_or_else(|| json!({})));
    if stage != Stage::AfterTool {
        return;
    }
    if let Some(result) = get(params, "result") {
        m.insert("tool_response".into(), result.clone());
        let is_error = result
            .get("is_error")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        m.insert("tool_error".into(), Value::from(is_error));
    }
}

fn llm_input(m: &mut Map<String, Value>, stage: Stage, params: &Value) {
    if let Some(model) = get(params, "model") {
        m.insert("model".into(), model.clone());
    }
    if stage == Stage::AfterLlm {
        let content = params
            .get("response")
            .and_then(|r| r.get("content"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        m.insert("stop_response".into(), Value::from(content));
    }
}

fn lifecycle_input(
    m: &mut Map<String, Value>,
    event: &str,
    params: &Value,
    payload: Option<&Map<String, Value>>,
) {
    if let Some(payload) = payload {
        for (k, v) in payload {
            m.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    // docker-agent's names for the compaction trigger.
    if let Some(t) = payload.and_then(|p| p.get("trigger")).cloned() {
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

/// Non-empty text, or nothing.
pub(super) fn non_empty(s: Option<String>) -> Option<String> {
    s.filter(|s| !s.trim().is_empty())
}

impl Reply {
    /// Reads a JSON answer in docker-agent's snake_case or Claude Code's
    /// camelCase (snake_case wins when both are given). A wrong type or an
    /// unknown decision is an error: a gate whose answer cannot be read
    /// must not count as an allow.
    pub(super) fn from_json(value: &Value) -> Result<Reply, String> {
        let top = value
            .as_object()
            .ok_or("the JSON answer must be an object")?;
        let specific = object_field(top, "hook_specific_output", "hookSpecificOutput")?;
        let mut reply = Reply::default();
        reply.read_continue(top)?;
        let reason = non_empty(string_field(top, "reason", "reason")?);
        reply.read_decision(top, &reason)?;
        reply.read_permission(specific, top, reason)?;
        reply.read_updated_input(specific, top)?;
        if let Some(s) = specific {
            reply.read_permission_request(s)?;
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
            Some(other) => {
                return Err(format!(
                    "`decision`: unknown value {other:?} (expected block or approve)"
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
        if let Some(p) = either_string(specific, top, "permission_decision", "permissionDecision")?
        {
            if let Some(p) = parse_permission(&p, "permission_decision")? {
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
        }
        if updated.is_none() {
            updated = object_field(top, "updated_input", "updatedInput")?;
        }
        self.updated_input = updated.cloned();
        Ok(())
    }

    /// Claude Code's PermissionRequest answer:
    /// `hookSpecificOutput.decision = {behavior, message, updatedInput}`,
    /// which overrides the other spellings.
    fn read_permission_request(&mut self, specific: &Map<String, Value>) -> Result<(), String> {
        let Some(d) = specific.get("decision").filter(|d| !d.is_null()) else {
            return Ok(());
        };
        let d = d
            .as_object()
            .ok_or("`hook_specific_output.decision` must be an object")?;
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

    /// Reads stdout after exit 0: a JSON object when it starts with `{`,
    /// otherwise plain text, which is context.
    pub(super) fn from_stdout(stdout: &Captured) -> Result<Reply, String> {
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
    pub(super) fn blocked(stderr: &Captured) -> Reply {
        Reply {
            block: Some(non_empty(Some(stderr.text().trim().to_string()))),
            ..Reply::default()
        }
    }

    /// The refusal this answer carries, if any: a block or a deny.
    pub(super) fn refusal(&self) -> Option<Option<String>> {
        if let Some(r) = &self.block {
            return Some(r.clone());
        }
        if self.permission == Some(Permission::Deny) {
            return Some(self.permission_reason.clone());
        }
        None
    }
}
