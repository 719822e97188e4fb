//! hookhost's params → the stdin a dialect's command hook reads: the
//! common keys (session, transcript, cwd, event name) in the dialect's
//! spelling, then what the event carries, with native tool names and
//! argument keys.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::SystemTime;

use hookhost_protocol::Stage;
use serde_json::{Map, Value, json};

use super::Dialect;
use super::spec::{Casing, Event, Spec, Stamp, Target};
use super::tools;

/// What a hook's input is built from.
pub(crate) struct Call<'a> {
    /// The dialect.
    pub(crate) spec: &'static Spec,
    /// The native event the hook listed.
    pub(crate) event: &'static Event,
    /// The stage's params, as the chain holds them.
    pub(crate) params: &'a Value,
    /// The hook's working directory (the project folder).
    pub(crate) dir: &'a Path,
    /// `[hooks.tool_names]`: the agent's tool names → canonical ones.
    pub(crate) names: &'a BTreeMap<String, String>,
}

/// `params[key]`, null counting as absent.
fn get<'v>(v: &'v Value, key: &str) -> Option<&'v Value> {
    v.get(key).filter(|v| !v.is_null())
}

/// `stop_hook_active` → `stopHookActive`, for Copilot CLI's payloads.
fn camel_case(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut upper = false;
    for c in key.chars() {
        match (c, upper) {
            ('_', _) => upper = true,
            (c, true) => {
                out.extend(c.to_uppercase());
                upper = false;
            }
            (c, false) => out.push(c),
        }
    }
    out
}

/// `meta[key]` as text.
pub(crate) fn meta<'v>(params: &'v Value, key: &str) -> Option<&'v str> {
    params.get("meta")?.get(key)?.as_str()
}

impl Call<'_> {
    /// The session id: `meta.session_key`, else the payload's `session_id`.
    pub(crate) fn session(&self) -> String {
        meta(self.params, "session_key")
            .or_else(|| self.params.get("payload")?.get("session_id")?.as_str())
            .unwrap_or_default()
            .to_string()
    }

    /// The agent's working directory: `meta.cwd`, else the hook's folder.
    pub(crate) fn cwd(&self) -> String {
        meta(self.params, "cwd")
            .map(str::to_string)
            .unwrap_or_else(|| self.dir.display().to_string())
    }

    fn casing(&self) -> Casing {
        self.spec.casing_of(self.event.native)
    }

    /// The canonical tool name of a tool-stage call: the agent's name as
    /// `[hooks.tool_names]` maps it, else as it is.
    pub(crate) fn tool(&self) -> &str {
        let raw = get(self.params, "tool")
            .and_then(Value::as_str)
            .unwrap_or_default();
        self.names.get(raw).map_or(raw, String::as_str)
    }

    /// The native tool name.
    pub(crate) fn native_tool(&self) -> String {
        tools::to_native(self.spec.dialect, self.tool())
    }

    /// The call's arguments in the dialect's keys.
    pub(crate) fn native_args(&self) -> Map<String, Value> {
        let empty = Map::new();
        let args = get(self.params, "arguments")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        tools::args_to_native(self.spec.dialect, self.tool(), args)
    }

    /// The whole input.
    pub(crate) fn input(&self) -> Value {
        let mut m = self.common();
        match self.event.target {
            Target::Stage(s @ (Stage::BeforeTool | Stage::ApproveTool | Stage::AfterTool)) => {
                self.tool_keys(&mut m, s)
            }
            Target::Stage(s) => self.llm_keys(&mut m, s),
            Target::Lifecycle(name) => self.lifecycle_keys(&mut m, name),
        }
        Value::Object(m)
    }

    fn common(&self) -> Map<String, Value> {
        let mut m = Map::new();
        let session = Value::from(self.session());
        let transcript = meta(self.params, "transcript_path").map_or(Value::Null, Value::from);
        match (self.spec.dialect, self.casing()) {
            (_, Casing::Camel) => {
                m.insert("sessionId".into(), session);
            }
            (Dialect::Cursor, _) => {
                m.insert("conversation_id".into(), session);
                let turn = meta(self.params, "turn_id").unwrap_or_default();
                m.insert("generation_id".into(), Value::from(turn));
                m.insert(
                    "workspace_roots".into(),
                    json!([self.dir.display().to_string()]),
                );
                m.insert("transcript_path".into(), transcript);
            }
            _ => {
                m.insert("session_id".into(), session);
                m.insert("transcript_path".into(), transcript);
            }
        }
        m.insert("cwd".into(), Value::from(self.cwd()));
        if self.casing() == Casing::Snake {
            m.insert("hook_event_name".into(), Value::from(self.event.native));
        }
        self.context_keys(&mut m);
        m
    }

    /// permission_mode, model, turn_id and timestamp, where the dialect
    /// sends them.
    fn context_keys(&self, m: &mut Map<String, Value>) {
        let d = self.spec.dialect;
        if matches!(d, Dialect::ClaudeCode | Dialect::Codex) {
            let mode = meta(self.params, "permission_mode").unwrap_or("default");
            m.insert("permission_mode".into(), Value::from(mode));
        }
        if let Some(model) = meta(self.params, "model") {
            m.insert("model".into(), Value::from(model));
        }
        if d == Dialect::Codex {
            if let Some(t) = meta(self.params, "turn_id") {
                m.insert("turn_id".into(), Value::from(t));
            }
        }
        let now = SystemTime::now();
        let stamp = match (self.spec.stamp, self.casing()) {
            (Stamp::None, _) => return,
            (Stamp::Millis, Casing::Camel) => Value::from(
                now.duration_since(SystemTime::UNIX_EPOCH)
                    .map_or(0, |d| d.as_millis() as u64),
            ),
            _ => Value::from(hookhost_protocol::time::rfc3339(now)),
        };
        m.insert("timestamp".into(), stamp);
    }
}

impl Call<'_> {
    fn tool_keys(&self, m: &mut Map<String, Value>, stage: Stage) {
        let args = self.native_args();
        if self.casing() == Casing::Camel {
            m.insert("toolName".into(), Value::from(self.native_tool()));
            // Copilot CLI hands the arguments over as JSON text.
            m.insert(
                "toolArgs".into(),
                Value::from(Value::Object(args).to_string()),
            );
            if stage == Stage::AfterTool {
                m.insert("toolResult".into(), self.copilot_result());
            }
            return;
        }
        if self.spec.dialect == Dialect::Cursor && !self.event.tools.is_empty() {
            return self.cursor_keys(m, stage, args);
        }
        m.insert("tool_name".into(), Value::from(self.native_tool()));
        m.insert("tool_input".into(), Value::Object(args));
        if let Some(id) = get(self.params, "tool_call_id") {
            m.insert("tool_use_id".into(), id.clone());
        }
        if stage == Stage::AfterTool {
            self.response_keys(m);
        }
    }

    fn result(&self) -> &Value {
        get(self.params, "result").unwrap_or(&Value::Null)
    }

    fn failed(&self) -> bool {
        self.result()
            .get("is_error")
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    fn for_llm(&self) -> &str {
        self.result()
            .get("for_llm")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    fn copilot_result(&self) -> Value {
        let kind = if self.failed() { "failure" } else { "success" };
        json!({"resultType": kind, "textResultForLlm": self.for_llm()})
    }

    /// The tool's result in the dialect's shape.
    fn response_keys(&self, m: &mut Map<String, Value>) {
        let result = self.result().clone();
        match self.spec.dialect {
            Dialect::GeminiCli => {
                let display = result.get("for_user").cloned().unwrap_or(Value::Null);
                let error = self.failed().then(|| self.for_llm());
                m.insert(
                    "tool_response".into(),
                    json!({"llmContent": self.for_llm(), "returnDisplay": display, "error": error}),
                );
            }
            Dialect::DockerAgent => {
                // docker-agent sends the tool's output text
                // (`res.Output`), and `tool_error` only when it failed
                // (`omitempty`).
                if self.failed() {
                    m.insert("tool_error".into(), Value::Bool(true));
                }
                m.insert("tool_response".into(), Value::from(self.for_llm()));
            }
            Dialect::Cursor => {
                m.insert("tool_output".into(), Value::from(self.for_llm()));
            }
            d => {
                if self.failed() {
                    m.insert("error".into(), Value::from(self.for_llm()));
                }
                // Codex sends the tool's output as text (Bash, apply_patch);
                // a hook that reads it as a string must not get an object.
                let response = match d {
                    Dialect::Codex => Value::from(self.for_llm()),
                    _ => result,
                };
                m.insert("tool_response".into(), response);
            }
        }
        if let Some(d) = get(self.params, "duration_ms") {
            m.insert("duration_ms".into(), d.clone());
        }
    }

    /// Cursor's tool-specific events carry their fields at the top level.
    fn cursor_keys(&self, m: &mut Map<String, Value>, stage: Stage, args: Map<String, Value>) {
        let pick = |k: &str| args.get(k).cloned().unwrap_or(Value::Null);
        match self.event.native {
            "beforeShellExecution" | "afterShellExecution" => {
                m.insert("command".into(), pick("command"));
            }
            "beforeReadFile" | "afterFileEdit" => {
                m.insert("file_path".into(), pick("file_path"));
            }
            _ => {
                m.insert("tool_name".into(), Value::from(self.native_tool()));
                m.insert("tool_input".into(), Value::Object(args.clone()));
            }
        }
        if self.event.native == "afterFileEdit" {
            let edit = json!({"old_string": pick("old_string"), "new_string": pick("new_string")});
            m.insert("edits".into(), json!([edit]));
        }
        if stage == Stage::AfterTool {
            m.insert("output".into(), Value::from(self.for_llm()));
            m.insert("result_json".into(), self.result().clone());
        }
    }

    fn llm_keys(&self, m: &mut Map<String, Value>, stage: Stage) {
        let model = get(self.params, "model").cloned().unwrap_or(Value::Null);
        if self.spec.dialect == Dialect::GeminiCli {
            let messages = get(self.params, "messages").cloned().unwrap_or(json!([]));
            m.insert(
                "llm_request".into(),
                json!({"model": model, "messages": messages}),
            );
            if stage == Stage::AfterLlm {
                let response = get(self.params, "response").cloned().unwrap_or(Value::Null);
                m.insert("llm_response".into(), response);
            }
            return;
        }
        if self.spec.dialect == Dialect::DockerAgent {
            self.docker_llm_keys(m, stage, &model);
        }
        m.insert("model".into(), model);
        if stage == Stage::AfterLlm {
            let content = self
                .params
                .get("response")
                .and_then(|r| r.get("content"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            m.insert("stop_response".into(), Value::from(content));
        }
    }

    /// docker-agent's own model-event keys: `model_id` and `iteration`;
    /// at before_llm_call the `messages` (its shape, which a hook may
    /// answer rewritten as `updated_messages`); after it, `usage`.
    fn docker_llm_keys(&self, m: &mut Map<String, Value>, stage: Stage, model: &Value) {
        m.insert("model_id".into(), model.clone());
        if let Some(i) = self.params.get("meta").and_then(|x| get(x, "iteration")) {
            m.insert("iteration".into(), i.clone());
        }
        if stage == Stage::BeforeLlm {
            let messages = get(self.params, "messages")
                .and_then(Value::as_array)
                .map_or_else(Vec::new, |v| super::messages::to_docker(v));
            m.insert("messages".into(), Value::Array(messages));
        } else if let Some(u) = get(self.params, "response").and_then(|r| get(r, "usage")) {
            m.insert("usage".into(), u.clone());
        }
    }

    /// The payload's fields (never overriding the common ones), then each
    /// dialect's own names for them.
    fn lifecycle_keys(&self, m: &mut Map<String, Value>, name: &str) {
        let camel = self.casing() == Casing::Camel;
        if let Some(payload) = self.params.get("payload").and_then(Value::as_object) {
            for (k, v) in payload {
                let k = if camel { camel_case(k) } else { k.clone() };
                m.entry(k).or_insert_with(|| v.clone());
            }
        }
        let copy = |m: &mut Map<String, Value>, from: &str, to: &str| {
            if let Some(v) = m.get(from).cloned() {
                m.entry(to.to_string()).or_insert(v);
            }
        };
        match (self.spec.dialect, name) {
            (Dialect::DockerAgent, "pre_compact") => copy(m, "trigger", "source"),
            (Dialect::DockerAgent, "before_compaction") => copy(m, "trigger", "compaction_reason"),
            (Dialect::GeminiCli, "stop") => copy(m, "last_assistant_message", "prompt_response"),
            (Dialect::Cursor, "stop") => {
                m.entry("status")
                    .or_insert_with(|| Value::from("completed"));
                m.entry("loop_count").or_insert_with(|| Value::from(0));
            }
            (Dialect::ClaudeCode | Dialect::Codex, "stop" | "subagent_stop") => {
                m.entry("stop_hook_active").or_insert(Value::Bool(false));
            }
            _ => {}
        }
        if let Some(turn) = meta(self.params, "turn_id") {
            if self.spec.dialect == Dialect::DockerAgent {
                m.entry("turn_id").or_insert_with(|| Value::from(turn));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a hook reads after the tool. Codex 0.169.0 sends
    /// `tool_response` as the output text (cli/tests/codex.rs drives it).
    #[test]
    fn codex_hooks_read_the_tool_output_as_text() {
        let params = json!({"tool": "shell", "arguments": {"command": "npm test"},
            "result": {"for_llm": "  3 failing\n", "is_error": false, "raw": "  3 failing\n"}});
        let names = BTreeMap::new();
        let input = |d: Dialect| {
            let spec = d.spec();
            Call {
                spec,
                event: spec.event("PostToolUse").expect("an event of both"),
                params: &params,
                dir: Path::new("/p"),
                names: &names,
            }
            .input()
        };
        assert_eq!(input(Dialect::Codex)["tool_response"], "  3 failing\n");
        assert_eq!(
            input(Dialect::ClaudeCode)["tool_response"]["for_llm"],
            "  3 failing\n"
        );
    }
}
