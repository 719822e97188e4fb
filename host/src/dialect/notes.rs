//! The agent's answer, completed with what the hooks said beside the
//! chain's verdict ([`Notes`], gathered by `origin`): their messages for
//! the user, the context of a refusing hook, the agent's own answer keys,
//! an approval's new input, a stop, and plain-text context kept plain.
//! spec/dialects.md §7 "Beside the verdict".

use serde_json::{Map, Value, json};

use super::Dialect;
use super::agent::{Incoming, NativeAnswer, Writer, message_key};
use super::origin::Notes;
use super::spec::{Spec, Target};

type Object = Map<String, Value>;

/// `answer` with `notes` added where the verdict did not write the key
/// itself. A refusal by exit code carries its reason on stderr, which the
/// agent reads alone, and plain-text answers (compaction instructions)
/// have no room for keys: both are left as they are.
pub(crate) fn add_notes(
    spec: &'static Spec,
    incoming: &Incoming,
    answer: NativeAnswer,
    notes: Notes,
) -> NativeAnswer {
    if answer.code != 0 || notes.is_empty() {
        return answer;
    }
    let mut object = match answer.stdout.as_str() {
        "" => Map::new(),
        s => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(m)) => m,
            _ => return answer,
        },
    };
    if let Some(stderr) = exit_block(&object, &notes) {
        return NativeAnswer::block(&stderr);
    }
    let overturned = notes.overturned();
    add_messages(spec, &mut object, &notes.messages);
    join_reasons(&mut object, &notes.reasons);
    if !notes.contexts.is_empty() && !has_context(&object) {
        let ctx = json!({"additional_context": notes.contexts.join("\n")});
        object = Writer::of(spec, incoming.event).context(&ctx, object);
    }
    let halted = own_stop(&notes.top);
    for (k, v) in notes.top {
        object.entry(k).or_insert(v);
    }
    add_specific(spec, incoming, &mut object, notes.specific);
    if let Some(input) = notes.approved_input {
        add_approved_input(&mut object, input);
    }
    if let Some(stop_reason) = halted {
        as_own_stop(incoming, &mut object, &stop_reason);
    }
    if overturned {
        // Copilot CLI's merged answer: the later `behavior` wins, the
        // earlier `message` stays.
        object.insert("behavior".into(), Value::from("allow"));
    }
    let warning = notes.exit_warning.as_deref();
    written(spec, incoming, object, warning, notes.plain, notes.failed)
}

/// The completed answer as the agent reads it: a warning alone as its
/// exit 1, plain context as plain text, else JSON; exit 1 when an own
/// hook failed while its answer is used (Gemini CLI reads JSON at any
/// exit code, and counts the relay failed as it would that hook).
fn written(
    spec: &Spec,
    incoming: &Incoming,
    object: Object,
    warning: Option<&str>,
    plain: bool,
    failed: bool,
) -> NativeAnswer {
    if let Some(text) = warning_alone(spec, &object, warning) {
        return NativeAnswer {
            stdout: String::new(),
            stderr: format!("{text}\n"),
            code: 1,
        };
    }
    let mut answer = match plain_context(spec, incoming, &object, plain) {
        Some(text) => NativeAnswer {
            stdout: text,
            stderr: String::new(),
            code: 0,
        },
        None => NativeAnswer::json(Value::Object(object)),
    };
    if failed {
        answer.code = 1;
    }
    answer
}

/// An own hook's block by exit 2 that decided the event, when it did: the
/// agent gets that block as the hook gave it (exit 2, the same stderr),
/// which it frames apart from a JSON refusal ("hook error: ...").
fn exit_block(object: &Object, notes: &Notes) -> Option<String> {
    let stderr = notes.exit_block.as_ref()?;
    let reason = stderr.trim();
    let decided = notes.reasons.first().is_some_and(|r| r == reason);
    (decided && refusal_reason(object) == Some(reason)).then(|| stderr.clone())
}

/// The reason of the refusal an answer carries, in any dialect's shape.
fn refusal_reason(object: &Object) -> Option<&str> {
    fn text<'v>(v: &'v Value, k: &str) -> Option<&'v str> {
        v.get(k).and_then(Value::as_str)
    }
    let specific = object
        .get("hookSpecificOutput")
        .or(object.get("hook_specific_output"));
    let refuses = |d: Option<&str>| matches!(d, Some("deny" | "block"));
    if refuses(object.get("decision").and_then(Value::as_str)) {
        return object.get("reason").and_then(Value::as_str);
    }
    let s = specific?;
    if refuses(text(s, "permissionDecision").or(text(s, "permission_decision"))) {
        return s
            .get("permissionDecisionReason")
            .or(s.get("permission_decision_reason"))
            .and_then(Value::as_str);
    }
    let d = s.get("decision")?;
    refuses(text(d, "behavior"))
        .then(|| text(d, "message"))
        .flatten()
}

/// The reason of an own hook's stop alone (`continue: false` with no
/// block beside it).
fn own_stop(top: &Object) -> Option<String> {
    let stops = top.get("continue") == Some(&Value::Bool(false)) && !top.contains_key("decision");
    let reason = top.get("stopReason").or(top.get("stop_reason"));
    stops.then(|| {
        reason
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    })
}

/// The agent's own hook stopped it: the answer is that stop, as the hook
/// wrote it, without the refusal the chain made of it, so the agent does
/// what it does then (Claude Code says "stopped", not "blocked", and lets
/// a tool call it already started run). Only where the chain's refusal is
/// that stop's: another hook's refusal stays.
fn as_own_stop(incoming: &Incoming, object: &mut Object, stop_reason: &str) {
    if refusal_reason(object).is_some_and(|r| r != stop_reason) {
        return;
    }
    // The chain's block (its reason is the stop's); a reason the hook gave
    // beside its stop stays (Codex's PostToolUse feedback).
    if object.get("reason").and_then(Value::as_str) == Some(stop_reason) {
        object.remove("decision");
        object.remove("reason");
    }
    if matches!(incoming.event.target, Target::Lifecycle(_)) {
        return;
    }
    if let Some(s) = object
        .get_mut("hookSpecificOutput")
        .and_then(Value::as_object_mut)
    {
        s.remove("permissionDecision");
        s.remove("permissionDecisionReason");
        if s.len() == 1 {
            object.remove("hookSpecificOutput");
        }
    }
}

/// Adds the messages the answer does not show yet (a lifecycle verdict
/// carries its hooks' messages already), after the one there.
fn add_messages(spec: &Spec, object: &mut Object, messages: &[String]) {
    let key = message_key(spec.dialect);
    let shown = object.get(key).and_then(Value::as_str).unwrap_or_default();
    let new: Vec<&str> = messages
        .iter()
        .map(String::as_str)
        .filter(|m| !shown.lines().any(|l| l == *m))
        .collect();
    if new.is_empty() {
        return;
    }
    let joined = match shown {
        "" => new.join("\n"),
        before => format!("{before}\n{}", new.join("\n")),
    };
    object.insert(key.into(), Value::from(joined));
}

/// The refusal's reason, when it is one of the agent's own hooks', becomes
/// all their reasons joined with newlines: the agent runs every hook of an
/// event and hands all their reasons on (Codex's continuation fragments,
/// Gemini CLI's joined reason), where hookhost's chain stopped at the
/// first.
fn join_reasons(object: &mut Object, reasons: &[String]) {
    let Some(Value::String(reason)) = object.get("reason") else {
        return;
    };
    if reasons.len() > 1 && reasons.contains(reason) {
        object.insert("reason".into(), Value::from(reasons.join("\n")));
    }
}

/// Adds the agent's own `hookSpecificOutput` keys its hooks gave, where
/// the verdict did not write them.
fn add_specific(spec: &Spec, incoming: &Incoming, object: &mut Object, specific: Object) {
    if specific.is_empty() {
        return;
    }
    let outer = match spec.dialect {
        Dialect::DockerAgent => "hook_specific_output",
        _ => "hookSpecificOutput",
    };
    let slot = object.entry(outer).or_insert_with(|| json!({}));
    if let Some(slot) = slot.as_object_mut() {
        if outer == "hookSpecificOutput" {
            slot.entry("hookEventName")
                .or_insert_with(|| Value::from(incoming.event.native));
        }
        for (k, v) in specific {
            slot.entry(k).or_insert(v);
        }
    }
}

/// An approval's new input, beside `decision.behavior: "allow"`.
fn add_approved_input(object: &mut Object, input: Value) {
    let decision = object
        .get_mut("hookSpecificOutput")
        .and_then(|s| s.get_mut("decision"))
        .and_then(Value::as_object_mut);
    if let Some(d) = decision.filter(|d| d.get("behavior") == Some(&Value::from("allow"))) {
        d.entry("updatedInput").or_insert(input);
    }
}

/// Whether an answer already carries context, in any dialect's spelling.
fn has_context(object: &Object) -> bool {
    let keys = ["additionalContext", "additional_context"];
    let inner = ["hookSpecificOutput", "hook_specific_output"]
        .iter()
        .filter_map(|k| object.get(*k)?.as_object());
    keys.iter().any(|k| object.contains_key(*k))
        || inner
            .into_iter()
            .any(|m| keys.iter().any(|k| m.contains_key(*k)))
}

/// The text of an own hook's exit-1 failure, when the answer is nothing
/// but its warning: Gemini CLI then gets the same failure (exit 1 and the
/// text), which it shows as the warning and counts as a failed hook, as it
/// does for its own.
fn warning_alone<'t>(spec: &Spec, object: &Object, text: Option<&'t str>) -> Option<&'t str> {
    let text = text?;
    let message = object.get(message_key(spec.dialect))?.as_str()?;
    (object.len() == 1 && message == format!("Warning: {text}")).then_some(text)
}

/// The JSON form of a failure its agent shows as a warning, for an answer
/// with no exit code to carry it (an HTTP hook's body).
pub(crate) fn warning(spec: &Spec, text: &str) -> NativeAnswer {
    let mut object = Object::new();
    object.insert(
        message_key(spec.dialect).into(),
        Value::from(format!("Warning: {text}")),
    );
    NativeAnswer::json(Value::Object(object))
}

/// The answer as plain text, when it is nothing but context that the
/// event's own hooks wrote as plain stdout: Claude Code and Codex show
/// plain output apart from JSON context ("hook success: ..."), so it goes
/// back as they wrote it.
fn plain_context(spec: &Spec, incoming: &Incoming, object: &Object, plain: bool) -> Option<String> {
    if !plain || !matches!(spec.dialect, Dialect::ClaudeCode | Dialect::Codex) {
        return None;
    }
    let specific = object.get("hookSpecificOutput")?.as_object()?;
    let only_context = object.len() == 1
        && specific.len() == 2
        && specific.get("hookEventName") == Some(&Value::from(incoming.event.native));
    only_context
        .then(|| {
            specific
                .get("additionalContext")?
                .as_str()
                .map(str::to_string)
        })
        .flatten()
}
