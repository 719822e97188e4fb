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
    session_with(&dir, &hooks, reply_for, prompt)
}

/// `claude -p PROMPT` in a project under `dir` whose PreToolUse hook is
/// `hookhost relay -c HOOKS`, against a fake model answering with `reply`.
fn session_with(
    dir: &Path,
    hooks: &Path,
    reply: claude::Reply,
    prompt: &str,
) -> (Value, Vec<Value>) {
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
    // The relay runs under Claude Code's HOME: approve the imported hooks
    // in that HOME's trust store, as the user would.
    common::trust_all(hooks, Some("claude-code"), &dir.join("home/.config"));
    std::fs::write(project.join(".claude/settings.json"), settings.to_string()).unwrap();
    let (url, seen) = claude::fake_model(reply);
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

/// Asserts that Claude Code refused `rm -rf build` (a permission denial)
/// and returns the tool result the model got for it.
fn refused_rm<'a>(result: &Value, tool_results: &'a [Value]) -> &'a Value {
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
    tool_results
        .first()
        .unwrap_or_else(|| panic!("no tool result reached the model: {result}"))
}

#[test]
fn claude_code_refuses_the_call_a_relayed_hook_denies() {
    let (result, tool_results) = session("SCENARIO-RM: clean the build folder");
    assert_eq!(result["is_error"], false, "{result}");
    let sent = refused_rm(&result, &tool_results);
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

/// The fake model's turns when a Claude `prompt` handler is the hook: the
/// hook's own request (it offers the `decide` tool, not Bash) gets the
/// forced call, denying; the session's requests get a Bash call, then text.
fn reply_with_judge(body: &Value) -> (Value, &'static str) {
    let offers = |name: &str| {
        body["tools"]
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t["name"] == name))
    };
    if offers("decide") {
        let input = json!({"decision": "deny", "reason": "JUDGE: rm -rf is destructive"});
        return (
            json!([{"type": "tool_use", "id": "toolu_j", "name": "decide", "input": input}]),
            "tool_use",
        );
    }
    reply_for(body)
}

/// A Claude Code `prompt` handler in a settings file, run by `hookhost
/// relay` as the real Claude Code's PreToolUse hook: the relay inherits
/// Claude's ANTHROPIC_BASE_URL and key, asks that same Messages API with a
/// forced `decide` call, and Claude Code refuses the Bash call with the
/// model's reason.
#[test]
fn claude_code_refuses_the_call_a_relayed_prompt_handler_denies() {
    let dir = common::scratch();
    let judge = dir.join("judge.json");
    let handler = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "prompt", "prompt": "Deny destructive commands. $ARGUMENTS"}]}]}});
    std::fs::write(&judge, handler.to_string()).unwrap();
    let (result, tool_results) = session_with(
        &dir,
        &judge,
        reply_with_judge,
        "SCENARIO-RM: clean the build folder",
    );
    let sent = refused_rm(&result, &tool_results);
    assert!(
        text_of(sent).contains("JUDGE: rm -rf is destructive"),
        "{sent}"
    );
}
