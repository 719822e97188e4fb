//! Codex (openai/codex `codex-rs/hooks`).

use serde_json::{Map, Value, json};

use super::{Answer, json_object, looks_like_json, trimmed};
use crate::merge;

/// The event as this agent sends it, before the case's own keys.
pub fn input(event: &str, cwd: &str) -> Value {
    let mut v = json!({"session_id": "0190aaaa-bbbb-7ccc-8ddd-eeeeffff0000", "turn_id": "turn-1",
        "transcript_path": null, "cwd": cwd, "hook_event_name": event,
        "model": "gpt-test", "permission_mode": "default"});
    let extra = match event {
        "PreToolUse" => {
            json!({"tool_name": "Bash", "tool_use_id": "call-1", "tool_input": {"command": "echo hello"}})
        }
        "PostToolUse" => json!({"tool_name": "Bash", "tool_use_id": "call-1",
            "tool_input": {"command": "echo hello"}, "tool_response": "hello"}),
        "PermissionRequest" => {
            json!({"tool_name": "Bash", "tool_input": {"command": "echo hello", "description": null}})
        }
        "UserPromptSubmit" => json!({"prompt": "hello"}),
        "Stop" => json!({"stop_hook_active": false, "last_assistant_message": "done"}),
        "SessionStart" => json!({"source": "startup"}),
        "PreCompact" | "PostCompact" => json!({"trigger": "manual"}),
        "StopFailure" => json!({"error": "server_error", "error_details": null,
            "last_assistant_message": null}),
        _ => json!({}),
    };
    merge(&mut v, &extra);
    let o = v.as_object_mut().unwrap();
    if matches!(event, "SessionStart" | "UserInstructions") {
        o.remove("turn_id");
    }
    // compact.rs: PreCompact/PostCompact inputs carry no permission_mode.
    if matches!(event, "PreCompact" | "PostCompact") {
        o.remove("permission_mode");
    }
    v
}

// Codex: codex-rs/hooks/src/engine/output_parser.rs and the
// parse_completed of each event in codex-rs/hooks/src/events/*.rs, for one
// handler (the relay). Outcome keys: block (PreToolUse refusal reason),
// context (list), updated_input, system_message, stop (continue:false or a
// prompt block: its reason, or null), feedback (PostToolUse text replacing
// the tool output), continuation (Stop: the next prompt), permission
// ("allow" or {"deny": message}).

/// Codex's universal fields: (continue, stopReason, suppressOutput,
/// systemMessage); None when a field has the wrong type (serde refuses
/// the whole answer).
fn universal(o: &Map<String, Value>) -> Option<(bool, Option<String>, bool, Option<String>)> {
    let opt_str = |k: &str| match o.get(k) {
        None | Some(Value::Null) => Some(None),
        Some(Value::String(s)) => Some(Some(s.clone())),
        _ => None,
    };
    let opt_bool = |k: &str, d: bool| match o.get(k) {
        None => Some(d),
        Some(Value::Bool(b)) => Some(*b),
        _ => None,
    };
    Some((
        opt_bool("continue", true)?,
        opt_str("stopReason")?,
        opt_bool("suppressOutput", false)?,
        opt_str("systemMessage")?,
    ))
}

pub fn read(event: &str, a: &Answer) -> Value {
    let mut out = Map::new();
    // user_instructions.rs: exit 0 and non-blank stdout is the literal
    // instructions text (never parsed); anything else is a warning only.
    if event == "UserInstructions" {
        if let (0, Some(text)) = (a.code, trimmed(&a.stdout)) {
            out.insert("instructions".into(), json!([text]));
        }
        return Value::Object(out);
    }
    match a.code {
        0 => read_stdout(event, &a.stdout, &mut out),
        2 => {
            if let Some(reason) = trimmed(&a.stderr) {
                let (k, v) = match event {
                    "PreToolUse" => ("block", json!(reason)),
                    "PostToolUse" => ("feedback", json!(reason)),
                    "UserPromptSubmit" => ("stop", json!(reason)),
                    "Stop" | "SubagentStop" => ("continuation", json!(reason)),
                    "PermissionRequest" => ("permission", json!({"deny": reason})),
                    _ => ("ignored", Value::Null),
                };
                if k != "ignored" {
                    out.insert(k.into(), v);
                }
            }
        }
        _ => {}
    }
    Value::Object(out)
}

fn read_stdout(event: &str, stdout: &str, out: &mut Map<String, Value>) {
    if stdout.trim().is_empty() {
        return;
    }
    let Some(o) = json_object(stdout) else {
        // Plain text: context where Codex takes it, else ignored (Stop
        // fails on anything that is not JSON: no effect either).
        if !looks_like_json(stdout)
            && matches!(event, "SessionStart" | "SubagentStart" | "UserPromptSubmit")
        {
            out.insert("context".into(), json!([stdout.trim()]));
        }
        return;
    };
    let Some(p) = Parsed::new(event, o) else {
        return;
    };
    if let Some(m) = &p.system {
        out.insert("system_message".into(), json!(m));
    }
    match event {
        "PreToolUse" => pre_tool_use(&p, out),
        "PostToolUse" => post_tool_use(&p, out),
        "UserPromptSubmit" => user_prompt_submit(&p, out),
        "Stop" | "SubagentStop" => stop(&p, out),
        "SessionStart" | "SubagentStart" => {
            p.add_context(out);
            if event == "SessionStart" && !p.cont {
                out.insert("stop".into(), json!(p.stop_reason));
            }
        }
        "PermissionRequest" => permission(&p, out),
        "PreCompact" | "PostCompact" if !p.cont => {
            out.insert("stop".into(), json!(p.stop_reason));
        }
        "StopFailure" => stop_failure(p.hso(), out),
        _ => {}
    }
}

/// One answer that passed the event's schema, with its universal fields.
struct Parsed {
    o: Map<String, Value>,
    cont: bool,
    stop_reason: Option<String>,
    suppress: bool,
    system: Option<String>,
}

impl Parsed {
    fn new(event: &str, o: Map<String, Value>) -> Option<Self> {
        if !schema_ok(event, &o) {
            return None;
        }
        let (cont, stop_reason, suppress, system) = universal(&o)?;
        Some(Self {
            o,
            cont,
            stop_reason,
            suppress,
            system,
        })
    }
    fn hso(&self) -> Option<&Map<String, Value>> {
        self.o.get("hookSpecificOutput").and_then(Value::as_object)
    }
    fn text(&self, key: &str) -> Option<String> {
        self.o.get(key).and_then(Value::as_str).map(str::to_string)
    }
    /// `reason`, trimmed, when it is not blank.
    fn reason(&self) -> Option<String> {
        self.text("reason").as_deref().and_then(trimmed)
    }
    fn blocks(&self) -> bool {
        self.o.get("decision") == Some(&json!("block"))
    }
    fn add_context(&self, out: &mut Map<String, Value>) {
        let c = self.hso().and_then(|h| h.get("additionalContext"));
        if let Some(c) = c.and_then(Value::as_str) {
            out.insert("context".into(), json!([c]));
        }
    }
}

/// post_tool_use.rs: continue:false stops and its reason (or stopReason)
/// replaces the output; a block with a reason replaces the output.
fn post_tool_use(p: &Parsed, out: &mut Map<String, Value>) {
    if p.suppress {
        return;
    }
    let invalid_block = (p.blocks() && p.reason().is_none())
        || (!p.blocks() && p.cont && p.text("reason").is_some());
    if !invalid_block {
        p.add_context(out);
    }
    if !p.cont {
        let text = p
            .stop_reason
            .clone()
            .unwrap_or_else(|| "PostToolUse hook stopped execution".into());
        out.insert("stop".into(), json!(p.stop_reason));
        out.insert("feedback".into(), json!(p.reason().unwrap_or(text)));
    } else if p.blocks() && !invalid_block {
        out.insert("feedback".into(), json!(p.text("reason")));
    }
}

/// user_prompt_submit.rs: continue:false or a block with a reason stops
/// the prompt; the context is kept unless the block is invalid.
fn user_prompt_submit(p: &Parsed, out: &mut Map<String, Value>) {
    let invalid_block = p.blocks() && p.reason().is_none();
    if !invalid_block {
        p.add_context(out);
    }
    if !p.cont {
        out.insert("stop".into(), json!(p.stop_reason));
    } else if p.blocks() && !invalid_block {
        out.insert("stop".into(), json!(p.text("reason")));
    }
}

/// stop.rs: continue:false stops (and wins over a block); a block with a
/// non-blank reason continues with it as the next prompt.
fn stop(p: &Parsed, out: &mut Map<String, Value>) {
    if !p.cont {
        out.insert("stop".into(), json!(p.stop_reason));
    } else if p.blocks()
        && let Some(r) = p.reason()
    {
        out.insert("continuation".into(), json!(r));
    }
}

/// The keys each event's output schema allows
/// (`codex-rs/hooks/schema/generated/*.command.output.schema.json`:
/// `additionalProperties: false`, `hookEventName` required): any other
/// key, and Codex refuses the whole answer.
fn schema_ok(event: &str, o: &Map<String, Value>) -> bool {
    const UNIVERSAL: [&str; 4] = ["continue", "stopReason", "suppressOutput", "systemMessage"];
    let (top, hso): (&[&str], &[&str]) = match event {
        "PreToolUse" => (
            &["decision", "reason", "hookSpecificOutput"],
            &[
                "additionalContext",
                "permissionDecision",
                "permissionDecisionReason",
                "updatedInput",
            ],
        ),
        "PostToolUse" => (
            &["decision", "reason", "hookSpecificOutput"],
            &[
                "additionalContext",
                "updatedMCPToolOutput",
                "updatedToolOutput",
            ],
        ),
        "Stop" | "SubagentStop" => (&["decision", "reason"], &[]),
        "UserPromptSubmit" => (
            &["decision", "reason", "hookSpecificOutput"],
            &["additionalContext"],
        ),
        "SessionStart" | "SubagentStart" => {
            (&["hookSpecificOutput"], &["additionalContext", "env"])
        }
        "PermissionRequest" => (&["hookSpecificOutput"], &["decision"]),
        "StopFailure" => (&["hookSpecificOutput"], &["recovery"]),
        _ => (&[], &[]),
    };
    let keys_ok = o
        .keys()
        .all(|k| UNIVERSAL.contains(&k.as_str()) || top.contains(&k.as_str()));
    let hso_ok = match o.get("hookSpecificOutput") {
        None | Some(Value::Null) => true,
        Some(Value::Object(h)) => {
            h.contains_key("hookEventName")
                && h.keys()
                    .all(|k| k == "hookEventName" || hso.contains(&k.as_str()))
        }
        Some(_) => false,
    };
    keys_ok && hso_ok
}

/// StopFailure (`events/stop_failure.rs`): a `recovery` of action `retry`
/// retries the turn on the model it selects; an `id` selector with a
/// blank id refuses the answer.
fn stop_failure(hso: Option<&Map<String, Value>>, out: &mut Map<String, Value>) {
    let Some(r) = hso
        .and_then(|h| h.get("recovery"))
        .and_then(Value::as_object)
    else {
        return;
    };
    if r.get("action") != Some(&json!("retry")) {
        return;
    }
    let model = r
        .get("model")
        .cloned()
        .unwrap_or(json!({"selector": "current"}));
    let blank_id = model.get("selector") == Some(&json!("id"))
        && model
            .get("id")
            .and_then(Value::as_str)
            .and_then(trimmed)
            .is_none();
    if !blank_id {
        out.insert("recovery".into(), json!({"retry": model}));
    }
}

/// pre_tool_use.rs + output_parser.rs: continue:false, stopReason and
/// suppressOutput are unsupported (the answer fails); a deny needs a
/// non-blank reason; updatedInput only with allow; allow alone, ask and
/// approve fail; a failed answer contributes nothing, not even context.
fn pre_tool_use(p: &Parsed, out: &mut Map<String, Value>) {
    if !p.cont || p.stop_reason.is_some() || p.suppress {
        return;
    }
    let o = &p.o;
    let hso = p.hso();
    let get = |k: &str| hso.and_then(|h| h.get(k)).filter(|v| !v.is_null());
    let pd = get("permissionDecision").and_then(Value::as_str);
    let pdr = get("permissionDecisionReason").and_then(Value::as_str);
    let updated = get("updatedInput").cloned();
    if let Some(c) = get("additionalContext").and_then(Value::as_str) {
        out.insert("context".into(), json!([c]));
    }
    let specific = pd.is_some() || pdr.is_some() || updated.is_some();
    let invalid = if specific {
        (updated.is_some() && pd != Some("allow"))
            || match pd {
                Some("allow") => updated.is_none(),
                Some("deny") => pdr.and_then(trimmed).is_none(),
                Some(_) => true,
                None => pdr.is_some(),
            }
    } else {
        let reason = o.get("reason").and_then(Value::as_str);
        match o.get("decision").and_then(Value::as_str) {
            Some("block") => reason.and_then(trimmed).is_none(),
            Some(_) => true,
            None => reason.is_some(),
        }
    };
    if invalid {
        out.remove("context");
        return;
    }
    if specific {
        if pd == Some("deny") {
            out.insert("block".into(), json!(pdr.and_then(trimmed)));
        } else if let Some(u) = updated {
            out.insert("updated_input".into(), u);
        }
    } else if o.get("decision").and_then(Value::as_str) == Some("block") {
        let r = o.get("reason").and_then(Value::as_str).and_then(trimmed);
        out.insert("block".into(), json!(r));
    }
}

/// permission_request.rs: allow, or deny with its message (a default
/// when blank); updatedInput, updatedPermissions and interrupt:true, like
/// the unsupported universal fields, make the answer fail.
fn permission(p: &Parsed, out: &mut Map<String, Value>) {
    if !p.cont || p.stop_reason.is_some() || p.suppress {
        return;
    }
    let hso = p.hso();
    let Some(d) = hso
        .and_then(|h| h.get("decision"))
        .and_then(Value::as_object)
    else {
        return;
    };
    if d.get("updatedInput").is_some()
        || d.get("updatedPermissions").is_some()
        || d.get("interrupt") == Some(&json!(true))
    {
        return;
    }
    match d.get("behavior").and_then(Value::as_str) {
        Some("allow") => {
            out.insert("permission".into(), json!("allow"));
        }
        Some("deny") => {
            let m = d
                .get("message")
                .and_then(Value::as_str)
                .and_then(trimmed)
                .unwrap_or_else(|| "PermissionRequest hook denied approval".into());
            out.insert("permission".into(), json!({"deny": m}));
        }
        _ => {}
    }
}
