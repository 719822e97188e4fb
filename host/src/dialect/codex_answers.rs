//! The answers Codex sets aside. Codex reads each command hook's answer
//! against its event's output schema and marks a hook whose answer breaks
//! it as failed, with no effect on the turn (codex-rs
//! `hooks/src/engine/output_parser.rs` and `hooks/schema/generated/`, at
//! 0ea8381). A hook written for Codex gets the same under hookhost: such
//! an answer is logged and read as no answer, never obeyed.

use serde_json::{Map, Value};

/// `Err(why)` when Codex would set `answer` (a hook's JSON answer at
/// `event`) aside.
pub(crate) fn unusable(event: &str, answer: &Map<String, Value>) -> Result<(), String> {
    let specific = answer.get("hookSpecificOutput").and_then(Value::as_object);
    match event {
        "PreToolUse" => {
            common_keys_refused(event, answer, &["continue", "stopReason", "suppressOutput"])?;
            match specific.filter(|s| has_decision(s)) {
                Some(s) => pre_tool_use_decision(s),
                None => legacy_decision(event, answer),
            }
        }
        "PermissionRequest" => {
            common_keys_refused(event, answer, &["continue", "stopReason", "suppressOutput"])?;
            permission_request(specific)
        }
        "PostToolUse" => {
            common_keys_refused(event, answer, &["suppressOutput"])?;
            block_has_reason(event, answer)?;
            match (answer.get("decision"), answer.get("reason"), halts(answer)) {
                (None, Some(_), false) => Err(format!("{event}: `reason` without `decision`")),
                _ => Ok(()),
            }
        }
        "UserPromptSubmit" | "Stop" | "SubagentStop" => block_has_reason(event, answer),
        "PreCompact" | "PostCompact" => only_common_keys(event, answer),
        _ => Ok(()),
    }
}

/// The keys every Codex answer may carry.
const COMMON: [&str; 4] = ["continue", "stopReason", "suppressOutput", "systemMessage"];

fn halts(answer: &Map<String, Value>) -> bool {
    answer.get("continue") == Some(&Value::Bool(false))
}

fn common_keys_refused(
    event: &str,
    answer: &Map<String, Value>,
    keys: &[&str],
) -> Result<(), String> {
    let set = |k: &&str| match answer.get(*k) {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) if *k == "continue" => !b,
        Some(Value::Bool(b)) if *k == "suppressOutput" => *b,
        Some(_) => true,
    };
    match keys.iter().copied().find(|k| set(k)) {
        Some(k) => Err(format!("{event} takes no `{k}`")),
        None => Ok(()),
    }
}

fn only_common_keys(event: &str, answer: &Map<String, Value>) -> Result<(), String> {
    match answer.keys().find(|k| !COMMON.contains(&k.as_str())) {
        Some(k) => Err(format!("{event} takes only the common keys, not `{k}`")),
        None => Ok(()),
    }
}

/// A non-empty text.
fn text(v: Option<&Value>) -> Option<&str> {
    v.and_then(Value::as_str).filter(|s| !s.trim().is_empty())
}

fn block_has_reason(event: &str, answer: &Map<String, Value>) -> Result<(), String> {
    let blocks = answer.get("decision").and_then(Value::as_str) == Some("block");
    match blocks && text(answer.get("reason")).is_none() {
        true => Err(format!(
            "{event}: decision:block without a non-empty reason"
        )),
        false => Ok(()),
    }
}

fn has_decision(s: &Map<String, Value>) -> bool {
    [
        "permissionDecision",
        "permissionDecisionReason",
        "updatedInput",
    ]
    .iter()
    .any(|k| s.get(*k).is_some_and(|v| !v.is_null()))
}

fn pre_tool_use_decision(s: &Map<String, Value>) -> Result<(), String> {
    let decision = s.get("permissionDecision").and_then(Value::as_str);
    let rewrites = s.get("updatedInput").is_some_and(|v| !v.is_null());
    match decision {
        Some("allow") if !rewrites => {
            Err("PreToolUse: permissionDecision:allow without updatedInput".into())
        }
        Some("allow") => Ok(()),
        _ if rewrites => Err("PreToolUse: updatedInput without permissionDecision:allow".into()),
        Some("ask") => Err("PreToolUse: permissionDecision:ask".into()),
        Some("deny") if text(s.get("permissionDecisionReason")).is_none() => Err(
            "PreToolUse: permissionDecision:deny without a non-empty permissionDecisionReason"
                .into(),
        ),
        None => Err("PreToolUse: permissionDecisionReason without permissionDecision".into()),
        _ => Ok(()),
    }
}

fn legacy_decision(event: &str, answer: &Map<String, Value>) -> Result<(), String> {
    match answer.get("decision").and_then(Value::as_str) {
        Some("approve") => Err(format!("{event}: decision:approve")),
        Some(_) => block_has_reason(event, answer),
        None if answer.get("reason").is_some() => {
            Err(format!("{event}: `reason` without `decision`"))
        }
        None => Ok(()),
    }
}

fn permission_request(specific: Option<&Map<String, Value>>) -> Result<(), String> {
    let Some(d) = specific
        .and_then(|s| s.get("decision"))
        .and_then(Value::as_object)
    else {
        return Ok(());
    };
    let reserved = ["updatedInput", "updatedPermissions"]
        .into_iter()
        .find(|k| d.get(*k).is_some_and(|v| !v.is_null()));
    match (reserved, d.get("interrupt") == Some(&Value::Bool(true))) {
        (Some(k), _) => Err(format!("PermissionRequest: decision.{k} is reserved")),
        (None, true) => Err("PermissionRequest: decision.interrupt:true is reserved".into()),
        (None, false) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(event: &str, v: Value) -> Result<(), String> {
        unusable(event, v.as_object().expect("an object"))
    }

    #[test]
    fn codex_sets_aside_what_its_schemas_refuse() {
        let set_aside = [
            ("PreToolUse", json!({"continue": false})),
            (
                "PreToolUse",
                json!({"hookSpecificOutput": {"permissionDecision": "allow"}}),
            ),
            (
                "PreToolUse",
                json!({"hookSpecificOutput": {"permissionDecision": "deny"}}),
            ),
            (
                "PreToolUse",
                json!({"hookSpecificOutput": {"updatedInput": {"command": "x"}}}),
            ),
            ("PreToolUse", json!({"decision": "approve"})),
            ("PreToolUse", json!({"reason": "why"})),
            (
                "PermissionRequest",
                json!({"hookSpecificOutput": {"decision": {"behavior": "allow", "updatedInput": {}}}}),
            ),
            (
                "PermissionRequest",
                json!({"hookSpecificOutput": {"decision": {"behavior": "deny", "interrupt": true}}}),
            ),
            ("PostToolUse", json!({"decision": "block", "reason": "  "})),
            ("PostToolUse", json!({"suppressOutput": true})),
            ("Stop", json!({"decision": "block"})),
            (
                "UserPromptSubmit",
                json!({"decision": "block", "reason": ""}),
            ),
            ("PreCompact", json!({"decision": "block", "reason": "no"})),
        ];
        for (event, answer) in set_aside {
            assert!(check(event, answer.clone()).is_err(), "{event} {answer}");
        }
        let taken = [
            (
                "PreToolUse",
                json!({"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "no"}}),
            ),
            (
                "PreToolUse",
                json!({"hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": {"command": "x"}}}),
            ),
            ("PreToolUse", json!({"decision": "block", "reason": "no"})),
            (
                "PostToolUse",
                json!({"continue": false, "stopReason": "s", "reason": "r"}),
            ),
            ("Stop", json!({"decision": "block", "reason": "go on"})),
            (
                "PreCompact",
                json!({"continue": false, "stopReason": "not now"}),
            ),
            ("SessionStart", json!({"anything": 1})),
        ];
        for (event, answer) in taken {
            assert_eq!(check(event, answer.clone()), Ok(()), "{event} {answer}");
        }
    }
}
