//! The sample events a command hook is checked with: hookhost's params
//! for each native event (a shell call at a tool event, a prompt at a
//! user-prompt event, ...), which the hook's own rendering turns into the
//! stdin its agent sends. Nothing here spells a dialect's keys: that is
//! `dialect::stdin`'s job, so the sample is exactly what hookhost sends.

use hookhost_protocol::Stage;
use serde_json::{Map, Value, json};

use crate::dialect::Dialect;
use crate::dialect::spec::{Event, Target};

/// Which text the sample carries where a hook reads text (the command,
/// the prompt, the model's message).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Variant {
    /// `echo hello`.
    Plain,
    /// Accents, CJK, an emoji and a right-to-left word.
    Unicode,
    /// A field of 1 MiB.
    Big,
}

/// The size of [`Variant::Big`]'s field.
pub(super) const BIG: usize = 1024 * 1024;

impl Variant {
    fn text(self) -> String {
        match self {
            Variant::Plain => "echo hello".to_string(),
            Variant::Unicode => "echo 'héllo wörld ✓ 日本語 🚀 שלום'".to_string(),
            Variant::Big => format!("echo {}", "x".repeat(BIG)),
        }
    }
}

/// The events to check: those named (each must be one of `dialect`'s),
/// else every event of the dialect but those where a hook takes over the
/// agent's own work, since no hook written for another event expects
/// to be run there.
pub(super) fn select(
    dialect: Dialect,
    names: Option<&[String]>,
) -> Result<Vec<&'static Event>, String> {
    let spec = dialect.spec();
    let Some(names) = names.filter(|n| !n.is_empty()) else {
        let taken: Vec<&str> = dialect
            .events()
            .iter()
            .filter(|e| e.takes_over)
            .map(|e| e.name)
            .collect();
        return Ok(spec
            .events
            .iter()
            .filter(|e| !taken.contains(&e.native))
            .collect());
    };
    names
        .iter()
        .map(|n| {
            spec.event(n).ok_or_else(|| {
                format!(
                    "{dialect} has no event {n:?} (it has {})",
                    spec.event_names()
                )
            })
        })
        .collect()
}

/// hookhost's params for `event`, carrying `variant`'s text.
pub(super) fn params(event: &Event, variant: Variant) -> Value {
    let meta = json!({"session_key": "conformance-session", "turn_id": "conformance-turn"});
    let text = variant.text();
    let mut p = match event.target {
        Target::Stage(Stage::BeforeLlm | Stage::AfterLlm) => model(&text),
        Target::Stage(stage) => tool(event, stage, &text),
        Target::Lifecycle(name) => json!({"event": name, "payload": payload(name, &text)}),
    };
    if let Some(m) = p.as_object_mut() {
        m.insert("meta".into(), meta);
    }
    p
}

/// A tool call: the event's own tool where it is for some tools only
/// (Cursor's beforeShellExecution is for the shell), else the shell.
fn tool(event: &Event, stage: Stage, text: &str) -> Value {
    let tool = event.tools.first().copied().unwrap_or("shell");
    let (tool, arguments) = match tool {
        "read" => ("read", json!({"path": "README.md"})),
        "edit" => (
            "edit",
            json!({"path": "README.md", "old": "hello", "new": text}),
        ),
        "write" => ("write", json!({"path": "README.md", "content": text})),
        "mcp" => ("mcp__conformance__echo", json!({"text": text})),
        _ => ("shell", json!({"command": text})),
    };
    let mut p = json!({"tool": tool, "arguments": arguments, "tool_call_id": "conformance-call-1"});
    if stage == Stage::AfterTool {
        let failed = event.failed == Some(true);
        let output = format!("{}\n", text.strip_prefix("echo ").unwrap_or(text));
        p["result"] = json!({"for_llm": output, "is_error": failed, "raw": output});
        p["duration_ms"] = json!(12);
    }
    p
}

/// A model call with one user message, and its response after it.
fn model(text: &str) -> Value {
    json!({
        "model": "conformance-model",
        "messages": [{"role": "user", "content": text}],
        "response": {"content": text, "usage": {"input_tokens": 3, "output_tokens": 2}},
    })
}

/// A lifecycle event's payload: the fields its agents send, with the text
/// where a hook reads text.
fn payload(name: &str, text: &str) -> Value {
    let mut p = Map::new();
    let mut put = |k: &str, v: Value| {
        p.insert(k.to_string(), v);
    };
    match name {
        "session_start" => put("source", json!("startup")),
        "session_end" => put("reason", json!("other")),
        "user_prompt_submit" => put("prompt", json!(text)),
        "stop" | "subagent_stop" => put("last_assistant_message", json!(text)),
        "pre_compact" | "before_compaction" | "after_compaction" => put("trigger", json!("manual")),
        "notification" => put("notification_type", json!("idle_prompt")),
        _ => {}
    }
    put("message", json!(text));
    Value::Object(p)
}

/// What a hook that expects `input` gets when the agent sends less: only
/// the key naming the event, where the input has one. A hook must not
/// crash on a field it looks for and does not find.
pub(super) fn stripped(input: &Value) -> Value {
    let mut m = Map::new();
    if let Some(name) = input.get("hook_event_name") {
        m.insert("hook_event_name".into(), name.clone());
    }
    Value::Object(m)
}
