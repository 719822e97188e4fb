//! The keys each dialect reads in a command hook's JSON answer. The agent
//! reads only its own: a key of another dialect, or a typo, is an answer
//! the agent does not act on. `hookhost conformance --dialect` checks
//! answers against these lists, and Gemini CLI's are all hookhost reads
//! of a gemini-cli hook (`gemini_answers.rs`); docker-agent's are its
//! `strict_output` lists (contract.rs).

#[cfg(feature = "conformance")]
use serde_json::{Map, Value};

use super::Dialect;
#[cfg(feature = "conformance")]
use super::contract;
#[cfg(feature = "conformance")]
use super::spec::Event;
use super::spec::{Casing, Spec};

/// Claude Code's top-level keys (also Codex's, Gemini CLI's and VS
/// Code's `.github/hooks` files, which follow it).
const CLAUDE_TOP: &[&str] = &[
    "continue",
    "stopReason",
    "suppressOutput",
    "systemMessage",
    "decision",
    "reason",
    "hookSpecificOutput",
];

/// Claude Code's `hookSpecificOutput` keys, over all its events
/// (PermissionRequest's `decision`, PostToolUse's `updatedMCPToolOutput`,
/// Elicitation's `action` and `content`). Codex reads the first
/// [`CODEX_SPECIFIC`] of them.
const CLAUDE_SPECIFIC: &[&str] = &[
    "hookEventName",
    "permissionDecision",
    "permissionDecisionReason",
    "updatedInput",
    "additionalContext",
    "decision",
    "updatedMCPToolOutput",
    "action",
    "content",
];

/// How many of [`CLAUDE_SPECIFIC`] Codex reads: up to PermissionRequest's
/// `decision`.
const CODEX_SPECIFIC: usize = 6;

/// Gemini CLI's `hookSpecificOutput` keys: its rewrites of the tool input,
/// the model request and response, and the tool selection.
const GEMINI_SPECIFIC: &[&str] = &[
    "hookEventName",
    "additionalContext",
    "tool_input",
    "llm_request",
    "llm_response",
    "toolConfig",
    "tailToolCallRequest",
    "clearContext",
];

/// Cursor's keys: flat, snake_case, no `hookSpecificOutput`.
const CURSOR_TOP: &[&str] = &[
    "continue",
    "permission",
    "user_message",
    "agent_message",
    "decision",
    "reason",
    "updated_input",
    "additional_context",
    "followup_message",
];

/// Copilot CLI's keys, for its camelCase events: flat.
const COPILOT_TOP: &[&str] = &[
    "continue",
    "stopReason",
    "systemMessage",
    "suppressOutput",
    "decision",
    "reason",
    "permissionDecision",
    "permissionDecisionReason",
    "modifiedArgs",
    "additionalContext",
];

/// The keys a dialect reads at `native`: top level, and inside the
/// event-specific object (none where it has no such object).
pub(crate) fn keys(
    spec: &Spec,
    native: &str,
) -> (&'static [&'static str], &'static [&'static str]) {
    match spec.dialect {
        Dialect::Codex => (CLAUDE_TOP, &CLAUDE_SPECIFIC[..CODEX_SPECIFIC]),
        Dialect::GeminiCli => (CLAUDE_TOP, GEMINI_SPECIFIC),
        Dialect::Cursor => (CURSOR_TOP, &[]),
        Dialect::Copilot if spec.casing_of(native) == Casing::Camel => (COPILOT_TOP, &[]),
        _ => (CLAUDE_TOP, CLAUDE_SPECIFIC),
    }
}

/// Checks a JSON answer's keys as the dialect reads them at `event`:
/// every key one it reads, `hookSpecificOutput` an object whose
/// `hookEventName`, when given, names this event. docker-agent's answers
/// get its `strict_output` shape. The error names the key.
#[cfg(feature = "conformance")]
pub(crate) fn check_keys(spec: &Spec, event: &Event, value: &Value) -> Result<(), String> {
    let native = event.native;
    if spec.dialect == Dialect::DockerAgent {
        return contract::check_shape(&event.answer_caps(), native, value)
            .map_err(|e| e.replace("strict_output: ", ""));
    }
    let top = value.as_object().ok_or("the answer is not a JSON object")?;
    let (top_keys, specific_keys) = keys(spec, native);
    unknown(top, top_keys, "", spec.dialect, native)?;
    let specific = match top.get("hookSpecificOutput") {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Object(s)) => s,
        Some(_) => return Err("`hookSpecificOutput` must be an object".into()),
    };
    unknown(
        specific,
        specific_keys,
        "hookSpecificOutput.",
        spec.dialect,
        native,
    )?;
    match specific.get("hookEventName") {
        None | Some(Value::Null) => Ok(()),
        Some(Value::String(name)) if name == native => Ok(()),
        Some(other) => Err(format!(
            "`hookSpecificOutput.hookEventName` is {other}, not {native:?}: {} does not apply it to this event",
            spec.dialect
        )),
    }
}

/// Every key of `obj` is one of `keys`; the error names the first that
/// is not.
#[cfg(feature = "conformance")]
fn unknown(
    obj: &Map<String, Value>,
    keys: &[&str],
    prefix: &str,
    dialect: Dialect,
    native: &str,
) -> Result<(), String> {
    match obj.keys().find(|k| !keys.contains(&k.as_str())) {
        Some(k) => Err(format!(
            "unknown field `{prefix}{k}`: {dialect} does not read it at {native} (it reads {})",
            keys.join(", ")
        )),
        None => Ok(()),
    }
}

#[cfg(all(test, feature = "conformance"))]
mod tests {
    use serde_json::json;

    use super::*;

    fn check(d: Dialect, native: &str, v: Value) -> Result<(), String> {
        let spec = d.spec();
        check_keys(spec, spec.event(native).expect("an event"), &v)
    }

    #[test]
    fn each_dialect_reads_its_own_spelling_only() {
        let claude = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
            "permissionDecision": "deny"}});
        assert_eq!(
            check(Dialect::ClaudeCode, "PreToolUse", claude.clone()),
            Ok(())
        );
        let snake = json!({"hook_specific_output": {"permission_decision": "deny"}});
        let e = check(Dialect::ClaudeCode, "PreToolUse", snake.clone()).unwrap_err();
        assert!(e.contains("`hook_specific_output`"), "{e}");
        assert_eq!(check(Dialect::DockerAgent, "pre_tool_use", snake), Ok(()));
        let e = check(Dialect::DockerAgent, "pre_tool_use", claude).unwrap_err();
        assert!(e.contains("hookSpecificOutput"), "{e}");
        assert_eq!(
            check(
                Dialect::Cursor,
                "beforeShellExecution",
                json!({"permission": "allow"})
            ),
            Ok(())
        );
        assert_eq!(
            check(Dialect::Copilot, "preToolUse", json!({"modifiedArgs": {}})),
            Ok(())
        );
        let other = json!({"hookSpecificOutput": {"hookEventName": "PostToolUse"}});
        let e = check(Dialect::ClaudeCode, "PreToolUse", other).unwrap_err();
        assert!(e.contains("not \"PreToolUse\""), "{e}");
    }
}
