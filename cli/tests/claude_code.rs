//! The real Claude Code (`@anthropic-ai/claude-code`, pinned in
//! `tests/agents/package.json`, installed by scripts/test with `npm ci`)
//! runs a whole session offline against a fake Anthropic Messages API on
//! loopback, with `hookhost relay` as its PreToolUse command hook. The
//! relay runs the Claude-format hooks of `examples/dialects/claude-code/`
//! through hookhost's chain, and Claude Code must act on the answer: the
//! tool call is refused with the hook's reason, or runs rewritten.

#![allow(clippy::unwrap_used)]

#[path = "common/claude.rs"]
mod claude;
mod common;

use std::path::Path;

use serde_json::{Value, json};

/// The assistant's turn the fake model gives: a Bash call for the
/// scenario named in the prompt, or, once a tool result came back, text.
fn reply_for(body: &Value) -> (Value, &'static str) {
    let text = body["messages"].to_string();
    let command = if text.contains("SCENARIO-RM") {
        "rm -rf build"
    } else {
        "npm install"
    };
    if claude::has_bash(body) && !claude::answered(body) && text.contains("SCENARIO-") {
        return claude::bash_call(command);
    }
    claude::done()
}

/// A project whose only hook is `hookhost relay`, importing the Claude
/// example hooks; runs `claude -p PROMPT` in it and returns its JSON result
/// and the tool results the model was sent.
fn session(prompt: &str) -> (Value, Vec<Value>) {
    let dir = common::scratch();
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/dialects/claude-code");
    let hooks = dir.join("hooks.toml");
    let import = examples
        .join(".claude/settings.json")
        .canonicalize()
        .unwrap();
    std::fs::write(
        &hooks,
        format!(
            "[hooks.import]\nclaude-code = {:?}\n",
            import.display().to_string()
        ),
    )
    .unwrap();
    let relay = format!(
        "'{}' relay --dialect claude-code -c '{}'",
        common::HOOKHOST,
        hooks.display()
    );
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "Bash",
        "hooks": [{"type": "command", "command": relay, "timeout": 30}]}]}});
    let project = dir.join("project");
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    std::fs::create_dir_all(dir.join("home")).unwrap();
    std::fs::write(project.join(".claude/settings.json"), settings.to_string()).unwrap();
    let (url, seen) = claude::fake_model(reply_for);
    let out = claude::run(&project, &dir.join("home"), &url, prompt);
    let result = claude::result(&out);
    let results = claude::tool_results(&seen);
    (result, results)
}

fn text_of(result: &Value) -> String {
    match &result["content"] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[test]
fn claude_code_refuses_the_call_a_relayed_hook_denies() {
    let (result, tool_results) = session("SCENARIO-RM: clean the build folder");
    assert_eq!(result["is_error"], false, "{result}");
    let denied = result["permission_denials"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        denied
            .iter()
            .any(|d| d["tool_input"]["command"] == "rm -rf build"),
        "{result}"
    );
    let sent = tool_results
        .first()
        .unwrap_or_else(|| panic!("no tool result reached the model: {result}"));
    assert_eq!(sent["is_error"], true, "{sent}");
    assert!(
        text_of(sent).contains("Blocked: 'rm -rf' is not allowed"),
        "{sent}"
    );
}

#[test]
fn claude_code_runs_the_call_a_relayed_hook_rewrote() {
    let (result, tool_results) = session("SCENARIO-NPM: install the dependencies");
    let sent = tool_results
        .first()
        .unwrap_or_else(|| panic!("no tool result reached the model: {result}"));
    // The example hook turned `npm install` into `npm ci`, and that is what
    // ran: in an empty folder npm ci says it needs a lockfile.
    let text = text_of(sent);
    assert!(text.contains("npm ci"), "the rewritten command ran: {sent}");
    let denied = result["permission_denials"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(denied.is_empty(), "{result}");
}
