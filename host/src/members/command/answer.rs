//! What a command hook's [`Reply`] means at each stage, as the protocol
//! result a process hook would answer there, so the chain treats both
//! kinds alike.
//!
//! `ask` is refused: the host has no one to ask, and a script that wants a
//! human in the loop has not approved. What a stage cannot take (context at
//! a tool stage, a block of an event that cannot be blocked) is logged and
//! ignored.

use hookhost_protocol::Stage;
use hookhost_protocol::lifecycle::LifecycleEvent;
use serde_json::{Map, Value, json};

use super::io::{Permission, Reply};
use crate::config::lifecycle_event;

/// The longest tail of output quoted in an error or a log line.
pub(super) const LOG_TAIL: usize = 500;

/// The answer of a hook that has nothing to say at `stage`.
pub(super) fn neutral(stage: Stage) -> Value {
    match stage {
        Stage::ApproveTool => json!({"approved": true}),
        _ => json!({"action": "continue"}),
    }
}

/// The last `max` bytes of a text, on a char boundary, for error reports.
pub(super) fn tail(text: &str, max: usize) -> &str {
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

/// The reasons a refusal by hook `name` gives when the script wrote none.
struct Reasons<'a> {
    name: &'a str,
}

impl Reasons<'_> {
    fn halt(&self, r: &Option<String>) -> String {
        r.clone()
            .unwrap_or_else(|| format!("stopped by command hook `{}` (continue: false)", self.name))
    }

    fn refusal(&self, r: &Option<String>) -> String {
        r.clone()
            .unwrap_or_else(|| format!("blocked by command hook `{}`", self.name))
    }

    fn ask(&self, reply: &Reply) -> String {
        let why = reply
            .permission_reason
            .as_deref()
            .map(|r| format!(": {r}"))
            .unwrap_or_default();
        format!(
            "command hook `{}` asked for the user's approval, which hookhost cannot ask for{why}",
            self.name
        )
    }
}

/// Maps hook `name`'s answer for `event` to the stage's protocol result.
pub(super) fn answer(name: &str, stage: Stage, event: &str, reply: Reply) -> Value {
    if stage == Stage::Lifecycle {
        return lifecycle(name, event, reply);
    }
    let unused = |what: &str| {
        tracing::debug!(hook = %name, event, "command hook answered {what}, which {stage} does not take; ignored");
    };
    if reply.additional_context.is_some() {
        unused("additional context");
    }
    if let Some(msg) = reply.system_message.as_deref() {
        tracing::info!(hook = %name, event, "command hook system message: {msg}");
    }
    if stage != Stage::BeforeTool && reply.updated_input.is_some() {
        unused("an updated input");
    }
    let reasons = Reasons { name };
    match stage {
        Stage::BeforeTool => before_tool(&reasons, &reply),
        Stage::ApproveTool => approve_tool(&reasons, &reply),
        _ => {
            if let Some(r) = &reply.halt {
                json!({"action": "abort_turn", "reason": reasons.halt(r)})
            } else if let Some(r) = reply.refusal() {
                json!({"action": "abort_turn", "reason": reasons.refusal(&r)})
            } else {
                neutral(stage)
            }
        }
    }
}

fn before_tool(reasons: &Reasons<'_>, reply: &Reply) -> Value {
    if let Some(r) = &reply.halt {
        json!({"action": "abort_turn", "reason": reasons.halt(r)})
    } else if let Some(r) = reply.refusal() {
        json!({"action": "deny_tool", "reason": reasons.refusal(&r)})
    } else if reply.permission == Some(Permission::Ask) {
        json!({"action": "deny_tool", "reason": reasons.ask(reply)})
    } else if let Some(input) = &reply.updated_input {
        json!({"action": "modify", "call": {"arguments": input}})
    } else {
        neutral(Stage::BeforeTool)
    }
}

fn approve_tool(reasons: &Reasons<'_>, reply: &Reply) -> Value {
    if let Some(r) = &reply.halt {
        json!({"approved": false, "reason": reasons.halt(r)})
    } else if let Some(r) = reply.refusal() {
        json!({"approved": false, "reason": reasons.refusal(&r)})
    } else if reply.permission == Some(Permission::Ask) {
        json!({"approved": false, "reason": reasons.ask(reply)})
    } else {
        neutral(Stage::ApproveTool)
    }
}

/// A request lifecycle event: block where the event can be blocked, and
/// context, a system message or a summary where it takes them.
fn lifecycle(name: &str, event: &str, reply: Reply) -> Value {
    let Some(ev) = lifecycle_event(event) else {
        return neutral(Stage::Lifecycle);
    };
    let reasons = Reasons { name };
    let stop = match &reply.halt {
        Some(r) => Some(reasons.halt(r)),
        None => reply.refusal().map(|r| reasons.refusal(&r)),
    };
    let mut out = Map::new();
    let blocking = match stop {
        Some(reason) if ev.can_block() => {
            out.insert("action".into(), Value::from("block"));
            out.insert("reason".into(), Value::from(reason));
            true
        }
        Some(reason) => {
            tracing::info!(hook = %name, event, "command hook asked to block {event}, which cannot be blocked; going on ({reason})");
            out.insert("action".into(), Value::from("continue"));
            false
        }
        None => {
            out.insert("action".into(), Value::from("continue"));
            false
        }
    };
    lifecycle_extras(&mut out, name, ev, reply, blocking);
    Value::Object(out)
}

/// Context, system message and summary of a lifecycle answer, each where
/// the event takes it and is not blocked.
fn lifecycle_extras(
    out: &mut Map<String, Value>,
    name: &str,
    ev: LifecycleEvent,
    reply: Reply,
    blocking: bool,
) {
    let event = ev.as_str();
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
}
