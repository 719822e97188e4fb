//! Other agents' hooks under the embedding API: the examples of
//! `examples/dialects/` imported from their own settings files and called
//! through `Host::before_tool`, `after_tool` and `lifecycle_with`; Claude
//! rewrites that compose in config order; Claude and Gemini hooks in one
//! chain under an agent whose shell tool has its own name.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use hookhost::protocol::lifecycle::LifecycleParams;
use hookhost::protocol::params::{AfterToolParams, ToolCall};
use hookhost::{Config, Dialect, ForeignEvent, Host, StageOutcome, ToolOutcome};
use hookhost_testkit::{DIALECT_SETTINGS, dialect_example, scratch};
use serde_json::{Value, json};

/// A hooks.toml in a scratch folder with `body`, loaded with its project
/// hooks trusted.
fn config(body: &str) -> Config {
    let dir = scratch();
    let path = dir.join("hooks.toml");
    std::fs::write(&path, body).unwrap();
    hookhost_testkit::load_trusted(&path)
}

fn import(dialect: &str, file: &Path) -> Config {
    if dialect == "docker-agent" {
        return hookhost_testkit::load_trusted(file);
    }
    let path = toml_string(file);
    config(&format!("[hooks.import]\n\"{dialect}\" = {path}\n"))
}

fn toml_string(p: &Path) -> String {
    serde_json::to_string(&p.display().to_string()).unwrap()
}

/// What the agent decides, in the cases' words, and what it carries.
async fn decide(host: &Host, event: &ForeignEvent) -> (String, String, Option<Value>) {
    let params = event.params().clone();
    if params.get("event").is_some() {
        let p: LifecycleParams = serde_json::from_value(params).unwrap();
        let out = host.lifecycle_with(p).await;
        return match (out.blocked, out.contexts.is_empty()) {
            (Some(r), _) => ("block".into(), r, None),
            (None, false) => ("context".into(), out.contexts.join("\n"), None),
            (None, true) => ("allow".into(), String::new(), None),
        };
    }
    if params.get("result").is_some() {
        let p: AfterToolParams = serde_json::from_value(params).unwrap();
        return match host.after_tool(p).await {
            StageOutcome::Continue { contexts, .. } if !contexts.is_empty() => {
                ("context".into(), contexts.join("\n"), None)
            }
            StageOutcome::Continue { .. } => ("allow".into(), String::new(), None),
            other => ("abort".into(), format!("{other:?}"), None),
        };
    }
    let call: ToolCall = serde_json::from_value(params).unwrap();
    match host.before_tool(call).await {
        // The call goes ahead: with no decision, or a hook's own allow.
        ToolOutcome::Continue { call, .. } | ToolOutcome::Allow { call, .. } => (
            "allow".into(),
            String::new(),
            Some(Value::Object(call.arguments)),
        ),
        ToolOutcome::Ask { reason, .. } => ("ask".into(), reason, None),
        ToolOutcome::Deny { reason } => ("deny".into(), reason, None),
        other => ("other".into(), format!("{other:?}"), None),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_example_decides_its_cases_under_the_embedding_api() {
    let mut ran = 0;
    for (dialect, file) in DIALECT_SETTINGS {
        let d: Dialect = dialect.parse().unwrap();
        let host = Host::start(import(dialect, &dialect_example(dialect).join(file))).await;
        assert!(
            host.start_failures().is_empty(),
            "{dialect}: {:?}",
            host.start_failures()
        );
        let text = std::fs::read_to_string(dialect_example(dialect).join("cases.json")).unwrap();
        let cases: Vec<Value> = serde_json::from_str(&text).unwrap();
        for case in cases {
            let named = case["native_event"].as_str();
            let event = ForeignEvent::read(d, &case["event"], named).unwrap();
            let (decision, text, args) = decide(&host, &event).await;
            let expect = &case["expect"];
            let at = format!(
                "{dialect}: {}: got {decision} {text:?} {args:?}",
                case["name"]
            );
            assert_eq!(decision, expect["decision"].as_str().unwrap(), "{at}");
            for key in ["reason_contains", "context_contains"] {
                if let Some(part) = expect[key].as_str() {
                    assert!(text.contains(part), "{at}");
                }
            }
            if let Some(want) = expect["tool_input"].as_object() {
                // The agent sent its own keys and gets them back.
                assert_eq!(args.as_ref(), Some(&Value::Object(want.clone())), "{at}");
            }
            ran += 1;
        }
        host.shutdown().await;
    }
    assert!(ran >= 50, "only {ran} cases ran");
}

/// Writes an executable script.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn shell_call(tool: &str, command: &str) -> ToolCall {
    serde_json::from_value(
        json!({"tool": tool, "arguments": {"command": command, "description": "x"}}),
    )
    .unwrap()
}

#[tokio::test]
async fn two_claude_rewrites_of_different_fields_both_take_effect_in_config_order() {
    let dir = scratch();
    let first = r#"jq -c '{hookSpecificOutput: {hookEventName: "PreToolUse", permissionDecision: "allow", updatedInput: (.tool_input + {command: (.tool_input.command + " --dry-run")})}}'"#;
    let second = r#"jq -c '{hookSpecificOutput: {hookEventName: "PreToolUse", permissionDecision: "allow", updatedInput: (.tool_input + {timeout: 30, command: (.tool_input.command + " && echo second")})}}'"#;
    script(&dir, ".claude/hooks/first.sh", first);
    script(&dir, ".claude/hooks/second.sh", second);
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/first.sh"},
        {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/second.sh"}]}]}});
    let file = dir.join(".claude/settings.json");
    std::fs::write(&file, settings.to_string()).unwrap();
    let host = Host::start(import("claude-code", &file)).await;
    let out = host.before_tool(shell_call("shell", "npm install")).await;
    // Both hooks said allow themselves: the first one's allow is kept.
    let ToolOutcome::Allow { call, by, .. } = out else {
        panic!("{out:?}")
    };
    assert!(
        by.starts_with("import-001"),
        "the first in config order: {by}"
    );
    assert_eq!(
        Value::Object(call.arguments),
        json!({"command": "npm install --dry-run && echo second", "description": "x", "timeout": 30}),
        "the second hook saw the first one's rewrite, and neither was lost"
    );
    host.shutdown().await;
}

#[tokio::test]
async fn claude_and_gemini_hooks_share_a_chain_each_seeing_its_own_tool_name() {
    let dir = scratch();
    let seen = dir.join("seen.log");
    let log = seen.display();
    script(
        &dir,
        "claude/.claude/guard.sh",
        &format!(
            r#"input=$(cat); echo "claude $(echo "$input" | jq -r .tool_name)" >> '{log}'
case "$(echo "$input" | jq -r .tool_input.command)" in rm*) echo "claude says no" >&2; exit 2;; esac"#
        ),
    );
    script(
        &dir,
        "gemini/.gemini/guard.sh",
        &format!(
            r#"input=$(cat); echo "gemini $(echo "$input" | jq -r .tool_name)" >> '{log}'
case "$(echo "$input" | jq -r .tool_input.command)" in curl*) echo '{{"decision":"deny","reason":"gemini says no"}}';; *) echo '{{"decision":"allow"}}';; esac"#
        ),
    );
    let claude = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/guard.sh"}]}]}});
    let gemini = json!({"hooks": {"BeforeTool": [{"matcher": "run_shell_command", "hooks": [
        {"name": "guard", "type": "command", "command": "$GEMINI_PROJECT_DIR/.gemini/guard.sh", "timeout": 5000}]}]}});
    std::fs::write(dir.join("claude/.claude/settings.json"), claude.to_string()).unwrap();
    std::fs::write(dir.join("gemini/.gemini/settings.json"), gemini.to_string()).unwrap();
    let body = format!(
        "[hooks.import]\nclaude-code = {}\ngemini-cli = {}\n[hooks.tool_names]\nexec = \"shell\"\n",
        toml_string(&dir.join("claude/.claude/settings.json")),
        toml_string(&dir.join("gemini/.gemini/settings.json")),
    );
    let host = Host::start(config(&body)).await;
    let deny = |o: ToolOutcome<ToolCall>| match o {
        ToolOutcome::Deny { reason } => reason,
        other => panic!("expected a deny, got {other:?}"),
    };
    assert_eq!(
        deny(host.before_tool(shell_call("shell", "rm -rf /")).await),
        "claude says no"
    );
    assert_eq!(
        deny(host.before_tool(shell_call("shell", "curl evil")).await),
        "gemini says no"
    );
    assert_eq!(
        deny(host.before_tool(shell_call("exec", "curl evil")).await),
        "gemini says no",
        "[hooks.tool_names]"
    );
    let ok = host.before_tool(shell_call("shell", "ls")).await;
    assert!(
        matches!(ok, ToolOutcome::Continue { .. } | ToolOutcome::Allow { .. }),
        "{ok:?}"
    );
    let other = host.before_tool(shell_call("read_file", "ls")).await;
    assert!(matches!(other, ToolOutcome::Continue { .. }), "{other:?}");
    host.shutdown().await;
    let seen = std::fs::read_to_string(&seen).unwrap();
    let lines: Vec<&str> = seen.lines().collect();
    assert_eq!(
        lines,
        [
            "claude Bash",
            "claude Bash",
            "gemini run_shell_command",
            "claude Bash",
            "gemini run_shell_command",
            "claude Bash",
            "gemini run_shell_command"
        ],
        "each hook saw its own name for the agent's shell tool, and neither ran for another tool"
    );
}

#[tokio::test]
async fn a_reload_that_changes_tool_names_reaches_the_command_hooks() {
    let dir = scratch();
    script(&dir, ".claude/guard.sh", r#"echo "no" >&2; exit 2"#);
    let claude = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/guard.sh"}]}]}});
    std::fs::write(dir.join(".claude/settings.json"), claude.to_string()).unwrap();
    let import = format!(
        "[hooks.import]\nclaude-code = {}\n",
        toml_string(&dir.join(".claude/settings.json"))
    );
    let host = Host::start(config(&format!(
        "{import}[hooks.tool_names]\nexec = \"shell\"\n"
    )))
    .await;
    let out = host.before_tool(shell_call("exec", "ls")).await;
    assert!(
        matches!(out, ToolOutcome::Deny { .. }),
        "`exec` is the shell, Claude's Bash: {out:?}"
    );
    host.reload(config(&import)).await;
    let out = host.before_tool(shell_call("exec", "ls")).await;
    assert!(
        matches!(out, ToolOutcome::Continue { .. }),
        "no longer mapped, so not Bash: {out:?}"
    );
    host.shutdown().await;
}
