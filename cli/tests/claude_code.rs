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
    let hooks = dir.join("hooks.toml");
    // The example's hooks, adopted into the session's project, where
    // Claude Code (and so hookhost) runs them.
    let import = common::adopted_example("claude-code", &dir.join("project"));
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

/// Where and with what a plugin's hook and a project's settings hook run,
/// under Claude Code itself and under hookhost: each prints its folder,
/// `CLAUDE_PROJECT_DIR`, `CLAUDE_PLUGIN_ROOT`, `HOME` and
/// `CLAUDE_PLUGIN_DATA` at
/// UserPromptSubmit. First Claude Code runs them (the plugin through
/// `--plugin-dir`, the other from the project's settings), then the same
/// two files are imported by hookhost, whose relay is the project's only
/// hook. Both runs must print the same lines.
#[test]
fn plugin_and_project_hooks_run_where_claude_code_runs_them() {
    let dir = common::scratch().canonicalize().unwrap();
    let (project, home, plugin) = (dir.join("project"), dir.join("home"), dir.join("plugin"));
    let log = dir.join("where.log");
    for d in [
        &project.join(".claude"),
        &home,
        &plugin.join(".claude-plugin"),
    ] {
        std::fs::create_dir_all(d).unwrap();
    }
    let hooks = |tag: &str| {
        let line = format!(
            "{tag} $(pwd) ${{CLAUDE_PROJECT_DIR-unset}} ${{CLAUDE_PLUGIN_ROOT-unset}} $HOME ${{CLAUDE_PLUGIN_DATA-unset}}"
        );
        json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command",
            "command": format!("printf '%s\\n' \"{line}\" >> '{}'", log.display())}]}]}})
    };
    std::fs::write(
        plugin.join(".claude-plugin/plugin.json"),
        r#"{"name": "where", "version": "1.0.0"}"#,
    )
    .unwrap();
    std::fs::create_dir_all(plugin.join("hooks")).unwrap();
    std::fs::write(plugin.join("hooks/hooks.json"), hooks("plugin").to_string()).unwrap();
    let settings = project.join(".claude/settings.json");
    std::fs::write(&settings, hooks("project").to_string()).unwrap();
    let (url, _seen) = claude::fake_model(|_| claude::done());

    let plugin_arg = plugin.display().to_string();
    let own = claude::command(&project, &home, &url, "hello")
        .args(["--plugin-dir", &plugin_arg])
        .output()
        .unwrap();
    claude::result(&own);
    let by_claude = std::fs::read_to_string(&log).unwrap_or_default();
    std::fs::remove_file(&log).unwrap();

    // The same two files, now hookhost's: the project's settings file is
    // copied where Claude Code does not read it, and its only hook is the
    // relay.
    let copied = dir.join("adopted/.claude/settings.json");
    std::fs::create_dir_all(copied.parent().unwrap()).unwrap();
    std::fs::copy(&settings, &copied).unwrap();
    let config = dir.join("hooks.toml");
    let import = format!(
        "[hooks.import]\nclaude-code = [{:?}, {:?}]\n",
        plugin.join("hooks/hooks.json").display().to_string(),
        copied.display().to_string()
    );
    std::fs::write(&config, import).unwrap();
    // Approved as the user would, under the HOME Claude Code gives the
    // relay (the plugin's data folder, part of what is approved, is in it).
    common::trust_all_as(&config, &home.join(".config"), &home);
    let relay = format!(
        "'{}' relay --dialect claude-code -c '{}'",
        common::HOOKHOST,
        config.display()
    );
    let only_relay = json!({"hooks": {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": relay, "timeout": 30}]}]}});
    std::fs::write(&settings, only_relay.to_string()).unwrap();
    let relayed = claude::command(&project, &home, &url, "hello")
        .output()
        .unwrap();
    claude::result(&relayed);
    let by_hookhost = std::fs::read_to_string(&log).unwrap_or_default();

    let sorted = |text: &str| {
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        lines.sort();
        lines
    };
    let (p, r, h) = (project.display(), plugin.display(), home.display());
    assert_eq!(
        sorted(&by_claude),
        [
            format!("plugin {p} {p} {r} {h} {h}/.claude/plugins/data/where-inline"),
            format!("project {p} {p} unset {h} unset")
        ],
        "what Claude Code itself gives its hooks"
    );
    assert_eq!(sorted(&by_hookhost), sorted(&by_claude));
}

/// Whether the UserPromptSubmit hook of a settings file that also holds a
/// malformed entry under `event` runs: under Claude Code itself, and with
/// the same file imported by hookhost behind the relay.
fn good_hook_runs_beside_a_bad_entry(event: &str) -> (bool, bool) {
    let dir = common::scratch().canonicalize().unwrap();
    let (project, home) = (dir.join("project"), dir.join("home"));
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let marker = dir.join("ran");
    let file = json!({"hooks": {
        "UserPromptSubmit": [{"hooks": [{"type": "command",
            "command": format!("touch '{}'", marker.display())}]}],
        event: [{"matcher": "Bash", "hooks": [{"type": "command"}]}]}});
    let settings = project.join(".claude/settings.json");
    std::fs::write(&settings, file.to_string()).unwrap();
    let (url, _seen) = claude::fake_model(|_| claude::done());
    claude::command(&project, &home, &url, "hello")
        .output()
        .unwrap();
    let by_claude = marker.exists();
    let _ = std::fs::remove_file(&marker);

    let copied = dir.join("adopted/.claude/settings.json");
    std::fs::create_dir_all(copied.parent().unwrap()).unwrap();
    std::fs::copy(&settings, &copied).unwrap();
    let config = dir.join("hooks.toml");
    let import = format!(
        "[hooks.import]\nclaude-code = {:?}\n",
        copied.display().to_string()
    );
    std::fs::write(&config, import).unwrap();
    common::trust_all_as(&config, &home.join(".config"), &home);
    let relay = format!(
        "'{}' relay --dialect claude-code -c '{}'",
        common::HOOKHOST,
        config.display()
    );
    let only_relay = json!({"hooks": {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": relay, "timeout": 30}]}]}});
    std::fs::write(&settings, only_relay.to_string()).unwrap();
    let relayed = claude::command(&project, &home, &url, "hello")
        .output()
        .unwrap();
    claude::result(&relayed);
    (by_claude, marker.exists())
}

/// A malformed entry costs what Claude Code makes it cost: under
/// PostToolUse only itself, so the file's other hooks run; under
/// PreToolUse the whole file (it may guard the file's permissions). The
/// real Claude Code and hookhost agree on both.
#[test]
fn a_malformed_entry_costs_under_hookhost_what_it_costs_under_claude_code() {
    assert_eq!(
        good_hook_runs_beside_a_bad_entry("PostToolUse"),
        (true, true)
    );
    assert_eq!(
        good_hook_runs_beside_a_bad_entry("PreToolUse"),
        (false, false)
    );
}
