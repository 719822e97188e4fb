//! An event's contract applied to a hook's answer (docker-agent states one
//! per event): what the event cannot take is dropped with a warning, as
//! docker-agent drops it, and under `strict_output` it is a failure of the
//! hook instead, as are keys docker-agent does not know.

use serde_json::{Map, Value};

use super::reply::Reply;
use super::spec::{Caps, Replaces};

/// The top-level keys of a docker-agent answer.
const TOP_KEYS: [&str; 7] = [
    "continue",
    "stop_reason",
    "suppress_output",
    "system_message",
    "decision",
    "reason",
    "hook_specific_output",
];

/// The keys of its `hook_specific_output`.
const SPECIFIC_KEYS: [&str; 10] = [
    "hook_event_name",
    "permission_decision",
    "permission_decision_reason",
    "updated_input",
    "additional_context",
    "instruction_context",
    "summary",
    "updated_messages",
    "updated_tool_response",
    "metadata",
];

/// The parts of an answer `caps` does not take, by the name docker-agent
/// gives them.
fn unsupported(caps: &Caps, r: &Reply) -> Vec<&'static str> {
    let present = [
        (
            "a block",
            (r.halt.is_some() || r.block.is_some()) && !caps.block,
        ),
        (
            "permission_decision",
            r.permission.is_some() && !caps.decision,
        ),
        (
            "updated_input",
            r.updated_input.is_some() && caps.replaces != Replaces::ToolInput,
        ),
        (
            "updated_messages",
            r.updated_messages.is_some() && caps.replaces != Replaces::Messages,
        ),
        (
            "updated_tool_response",
            r.updated_tool_response.is_some() && caps.replaces != Replaces::ToolResponse,
        ),
        ("metadata", r.metadata.is_some() && !caps.metadata),
        (
            "additional_context",
            r.additional_context.is_some() && !caps.context,
        ),
        ("summary", r.summary.is_some() && !caps.summary),
    ];
    present
        .into_iter()
        .filter(|(_, p)| *p)
        .map(|(n, _)| n)
        .collect()
}

/// Drops from `reply` what `caps` does not take, logging a warning that
/// names each part: the hook's author thinks it mattered.
pub(crate) fn limit(caps: &Caps, reply: &mut Reply, hook: &str, event: &str) {
    for part in unsupported(caps, reply) {
        tracing::warn!(
            hook,
            event,
            "command hook answered {part}, which {event} cannot use here; ignored"
        );
        match part {
            "a block" => (reply.halt, reply.block) = (None, None),
            "permission_decision" => reply.permission = None,
            "updated_input" => reply.updated_input = None,
            "updated_messages" => reply.updated_messages = None,
            "updated_tool_response" => reply.updated_tool_response = None,
            "metadata" => reply.metadata = None,
            "additional_context" => reply.additional_context = None,
            _ => reply.summary = None,
        }
    }
}

/// `strict_output`: stdout on exit 0 must be empty or one JSON object of
/// known keys, naming no other event, and asking only for what `caps`
/// takes. The error says which rule it broke.
pub(crate) fn check_strict(caps: &Caps, event: &str, stdout: &str) -> Result<(), String> {
    let text = stdout.trim();
    if text.is_empty() {
        return Ok(());
    }
    if !text.starts_with('{') {
        return Err("strict_output: stdout must be one JSON object or nothing".into());
    }
    let value: Value = serde_json::from_str(text)
        .map_err(|e| format!("strict_output: stdout is not one JSON object: {e}"))?;
    let top = value.as_object().ok_or("strict_output: not an object")?;
    known(top, &TOP_KEYS, "")?;
    if top.get("suppress_output") == Some(&Value::Bool(true)) {
        return Err("strict_output: suppress_output is not supported; use stderr".into());
    }
    let specific = match top.get("hook_specific_output") {
        None | Some(Value::Null) => None,
        Some(Value::Object(s)) => Some(s),
        Some(_) => return Err("strict_output: hook_specific_output must be an object".into()),
    };
    if let Some(s) = specific {
        known(s, &SPECIFIC_KEYS, "hook_specific_output.")?;
        match s.get("hook_event_name").and_then(Value::as_str) {
            Some(name) if !name.is_empty() && name != event => {
                return Err(format!(
                    "strict_output: hook_event_name {name:?} does not match {event}"
                ));
            }
            _ => {}
        }
        if s.contains_key("instruction_context") && !caps.instructions {
            return Err(format!(
                "strict_output: {event} does not support instruction_context"
            ));
        }
    }
    let reply = Reply::from_json(&value)?;
    match unsupported(caps, &reply).first() {
        Some(part) => Err(format!("strict_output: {event} does not support {part}")),
        None => Ok(()),
    }
}

/// Every key of `obj` is one of `keys`.
fn known(obj: &Map<String, Value>, keys: &[&str], prefix: &str) -> Result<(), String> {
    match obj.keys().find(|k| !keys.contains(&k.as_str())) {
        Some(k) => Err(format!("strict_output: unknown field `{prefix}{k}`")),
        None => Ok(()),
    }
}
