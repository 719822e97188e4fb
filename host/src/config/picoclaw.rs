//! How a `.json` config is read: as PicoClaw reads its own config file, so
//! that a PicoClaw user's file runs under hookhost as it ran there
//! (spec/protocol.md section 15). TOML files never come here.
//!
//! What differs from hookhost's TOML rules, each as PicoClaw does it:
//! - a `hooks.defaults` timeout of 0 or less means the default;
//! - `intercept`: `""` is skipped, and `before_llm` or `after_llm` asks
//!   for both LLM stages, `before_tool` or `after_tool` for both tool
//!   stages (PicoClaw's modes are `llm` and `tool`, not single stages);
//! - a process hook's `dir` (and its program) are checked when it is
//!   spawned, not at load, and a relative `dir` is the agent's working
//!   directory's (see [`super::Config::hook_dir`]);
//! - a builtin hookhost does not have (one of PicoClaw's Go builtins) is
//!   skipped with a warning ([`super::Config::skip_unknown_builtins`]).
//!
//! - a process hook or builtin with no `enabled` key is off, as PicoClaw
//!   leaves it (its Go config's `Enabled` is false unless written), with a
//!   warning that says how to turn it on.

use serde_json::Value;

use hookhost_protocol::Stage;

/// The `hooks.defaults` keys PicoClaw reads, where 0 or less means "use the
/// default".
const TIMEOUT_KEYS: [&str; 3] = [
    "observer_timeout_ms",
    "interceptor_timeout_ms",
    "approval_timeout_ms",
];

/// Drops the PicoClaw timeouts that mean "the default" (0 or negative).
pub(super) fn defaults(raw: &mut Value) {
    let Some(map) = raw.as_object_mut() else {
        return;
    };
    map.retain(|key, v| {
        !(TIMEOUT_KEYS.contains(&key.as_str()) && v.as_f64().is_some_and(|n| n <= 0.0))
    });
}

/// Rewrites one `hooks.processes.NAME` section the way PicoClaw reads it.
pub(super) fn process(name: &str, raw: &mut Value) {
    off_unless_enabled("hook", name, raw);
    let Some(map) = raw.as_object_mut() else {
        return;
    };
    if let Some(Value::Array(list)) = map.get_mut("intercept") {
        *list = intercept(list);
    }
}

/// A hook (`kind` names which: "hook", "builtin") with no `enabled` key
/// is off, as PicoClaw leaves it, with a warning: running a hook the agent
/// would not run is not hookhost's to decide.
pub(super) fn off_unless_enabled(kind: &str, name: &str, raw: &mut Value) {
    let Some(map) = raw.as_object_mut() else {
        return;
    };
    if !map.contains_key("enabled") {
        tracing::warn!(
            hook = %name,
            "{kind} `{name}` has no `enabled` key: off, as PicoClaw leaves it; \
             write \"enabled\": true to run it"
        );
        map.insert("enabled".into(), Value::Bool(false));
    }
}

/// PicoClaw's `intercept` list as hookhost stages: `""` skipped, each
/// stage widened to its pair. Unknown entries are kept, for the decoder to
/// name them.
fn intercept(list: &[Value]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for entry in list {
        let widened: Vec<Value> = match entry.as_str() {
            Some("") => Vec::new(),
            Some("before_llm" | "after_llm") => stages([Stage::BeforeLlm, Stage::AfterLlm]),
            Some("before_tool" | "after_tool") => stages([Stage::BeforeTool, Stage::AfterTool]),
            _ => vec![entry.clone()],
        };
        for v in widened {
            if !out.contains(&v) {
                out.push(v);
            }
        }
    }
    out
}

fn stages(pair: [Stage; 2]) -> Vec<Value> {
    pair.iter().map(|s| Value::from(s.as_str())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// From PicoClaw pkg/agent/hook_mount.go processHookOptionsFromConfig,
    /// as TestAgentLoop_MountProcessHook_ToolRewrite relies on it: one
    /// tool stage asks for both, `""` is skipped.
    #[test]
    fn one_stage_of_a_pair_asks_for_both_and_empty_is_skipped() {
        let mut raw = json!({"command": ["x"], "intercept": ["before_tool", "", "approve_tool", "after_llm"]});
        process("h", &mut raw);
        assert_eq!(
            raw["intercept"],
            json!([
                "before_tool",
                "after_tool",
                "approve_tool",
                "before_llm",
                "after_llm"
            ])
        );
    }

    /// From PicoClaw pkg/agent/hook_mount.go hookTimeoutFromMS: 0 or less
    /// keeps the default.
    #[test]
    fn a_zero_or_negative_timeout_means_the_default() {
        let mut raw = json!({"observer_timeout_ms": 0, "interceptor_timeout_ms": -5, "approval_timeout_ms": 10});
        defaults(&mut raw);
        assert_eq!(raw, json!({"approval_timeout_ms": 10}));
    }
}
