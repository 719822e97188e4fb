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

/// One part of an answer an event may not take: its name as docker-agent
/// gives it, whether `reply` has it where `caps` does not take it, and how
/// to drop it.
struct Part {
    name: &'static str,
    unused: fn(&Caps, &Reply) -> bool,
    drop: fn(&mut Reply),
}

/// Every part an event's contract decides on, in one table, so that what
/// is checked and what is dropped cannot drift apart.
const PARTS: [Part; 8] = [
    Part {
        name: "a block",
        unused: |c, r| (r.halt.is_some() || r.block.is_some()) && !c.block,
        drop: |r| (r.halt, r.block) = (None, None),
    },
    Part {
        name: "permission_decision",
        unused: |c, r| r.permission.is_some() && !c.decision,
        drop: |r| r.permission = None,
    },
    Part {
        name: "updated_input",
        unused: |c, r| r.updated_input.is_some() && c.replaces != Replaces::ToolInput,
        drop: |r| r.updated_input = None,
    },
    Part {
        name: "updated_messages",
        unused: |c, r| r.updated_messages.is_some() && c.replaces != Replaces::Messages,
        drop: |r| r.updated_messages = None,
    },
    Part {
        name: "updated_tool_response",
        unused: |c, r| r.updated_tool_response.is_some() && c.replaces != Replaces::ToolResponse,
        drop: |r| r.updated_tool_response = None,
    },
    Part {
        name: "metadata",
        unused: |c, r| r.metadata.is_some() && !c.metadata,
        drop: |r| r.metadata = None,
    },
    Part {
        name: "additional_context",
        unused: |c, r| r.additional_context.is_some() && !c.context,
        drop: |r| r.additional_context = None,
    },
    Part {
        name: "summary",
        unused: |c, r| r.summary.is_some() && !c.summary,
        drop: |r| r.summary = None,
    },
];

/// Drops from `reply` what `caps` does not take, logging a warning that
/// names each part: the hook's author thinks it mattered.
pub(crate) fn limit(caps: &Caps, reply: &mut Reply, hook: &str, event: &str) {
    for part in &PARTS {
        if !(part.unused)(caps, reply) {
            continue;
        }
        let name = part.name;
        tracing::warn!(
            hook,
            event,
            "command hook answered {name}, which {event} cannot use here; ignored"
        );
        (part.drop)(reply);
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
    check_shape(caps, event, &value)?;
    let reply = Reply::from_json(&value)?;
    match unused(caps, &reply).first() {
        Some(part) => Err(format!("strict_output: {event} does not support {part}")),
        None => Ok(()),
    }
}

/// The shape `strict_output` asks of a docker-agent answer, before what
/// it asks for: an object of docker-agent's keys, no `suppress_output:
/// true`, a `hook_specific_output` object naming no other event, and
/// `instruction_context` only where `caps` takes it. `hookhost
/// conformance --dialect docker-agent` checks every answer against it.
pub(crate) fn check_shape(caps: &Caps, event: &str, value: &Value) -> Result<(), String> {
    let top = value.as_object().ok_or("strict_output: not an object")?;
    known(top, &TOP_KEYS, "")?;
    if top.get("suppress_output") == Some(&Value::Bool(true)) {
        return Err("strict_output: suppress_output is not supported; use stderr".into());
    }
    let specific = match top.get("hook_specific_output") {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Object(s)) => s,
        Some(_) => return Err("strict_output: hook_specific_output must be an object".into()),
    };
    known(specific, &SPECIFIC_KEYS, "hook_specific_output.")?;
    match specific.get("hook_event_name").and_then(Value::as_str) {
        Some(name) if !name.is_empty() && name != event => {
            return Err(format!(
                "strict_output: hook_event_name {name:?} does not match {event}"
            ));
        }
        _ => {}
    }
    if specific.contains_key("instruction_context") && !caps.instructions {
        return Err(format!(
            "strict_output: {event} does not support instruction_context"
        ));
    }
    Ok(())
}

/// The parts of `reply` that `caps` does not take, by the names
/// docker-agent gives them: what [`limit`] drops.
pub(crate) fn unused(caps: &Caps, reply: &Reply) -> Vec<&'static str> {
    PARTS
        .iter()
        .filter(|p| (p.unused)(caps, reply))
        .map(|p| p.name)
        .collect()
}

/// Every key of `obj` is one of `keys`.
fn known(obj: &Map<String, Value>, keys: &[&str], prefix: &str) -> Result<(), String> {
    match obj.keys().find(|k| !keys.contains(&k.as_str())) {
        Some(k) => Err(format!("strict_output: unknown field `{prefix}{k}`")),
        None => Ok(()),
    }
}
