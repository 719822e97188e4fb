//! Command hooks driven directly: real `#!/bin/sh` scripts written to a
//! temporary folder, run through `CommandHook` as the chain would. (They
//! were integration tests; `CommandHook` is internal, so they live here.)

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use hookhost_protocol::{Chain, OnError, Stage};

use crate::config::CommandConfig;
use crate::error::CallError;
use crate::members::command::{CommandHook, OUTPUT_CAP};
use serde_json::{Value, json};
use tokio::time::Instant;

/// A fresh folder for one test.
fn temp_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hookhost-commands-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir
}

/// Writes an executable `#!/bin/sh` script and returns its path.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

/// A hook running a fresh script `name` with `body`, in a fresh folder for
/// `test`, for `events`.
fn script_hook(test: &str, name: &str, body: &str, events: &[&str]) -> CommandHook {
    let dir = temp_dir(test);
    let path = script(&dir, name, body);
    hook_for(&dir, &path, events)
}

/// The shell string that runs `path`, quoted for `sh -c`.
fn shell_path(path: &Path) -> String {
    format!("'{}'", path.display())
}

/// A hook running `path` (through `sh -c`) for `events`.
fn hook_for(dir: &Path, path: &Path, events: &[&str]) -> CommandHook {
    let config = CommandConfig::shell(&shell_path(path), events);
    CommandHook::new("test", &config, dir, Default::default()).expect("valid hook")
}

fn in_secs(secs: u64) -> Instant {
    Instant::now() + Duration::from_secs(secs)
}

/// One call with the usual 10 s deadline.
async fn call(hook: &CommandHook, stage: Stage, params: &Value) -> Result<Value, CallError> {
    hook.call(stage, params, in_secs(10)).await
}

fn tool_call(tool: &str, arguments: Value) -> Value {
    json!({"meta": {"session_key": "sess-1"}, "tool": tool, "arguments": arguments, "tool_call_id": "call-7"})
}

/// Whether a process is gone (or a zombie waiting for its reaper).
fn gone(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

fn read_pid(path: &Path) -> String {
    for _ in 0..200 {
        if let Ok(text) = std::fs::read_to_string(path) {
            if !text.trim().is_empty() {
                return text.trim().to_string();
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("no pid in {}", path.display());
}

#[tokio::test]
async fn claude_code_validator_exit_2_denies_with_its_stderr() {
    let hook = script_hook(
        "exit2",
        "validate.sh",
        r#"input=$(cat)
case "$input" in
  *'"command":"grep '*)
    echo "Use 'rg' (ripgrep) instead of 'grep' for better performance" >&2
    exit 2;;
esac
exit 0"#,
        &["pre_tool_use"],
    );
    let denied = call(
        &hook,
        Stage::BeforeTool,
        &tool_call("Bash", json!({"command": "grep -r TODO ."})),
    )
    .await;
    assert_eq!(
        denied,
        Ok(json!({
            "action": "deny_tool",
            "reason": "Use 'rg' (ripgrep) instead of 'grep' for better performance"
        }))
    );
    let allowed = call(
        &hook,
        Stage::BeforeTool,
        &tool_call("Bash", json!({"command": "ls"})),
    )
    .await;
    assert_eq!(allowed, Ok(json!({"action": "continue"})));
}

#[tokio::test]
async fn claude_code_permission_decision_deny() {
    let hook = script_hook(
        "ccdeny",
        "deny.sh",
        r#"cat > /dev/null
echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"x"}}'"#,
        &["pre_tool_use"],
    );
    let r = call(
        &hook,
        Stage::BeforeTool,
        &tool_call("Bash", json!({"command": "rm -rf /"})),
    )
    .await;
    assert_eq!(r, Ok(json!({"action": "deny_tool", "reason": "x"})));
}

#[tokio::test]
async fn docker_agent_updated_input_rewrites_ls() {
    let hook = script_hook(
        "lsh",
        "ls_h.sh",
        r#"input=$(cat)
case "$input" in
  *'"hook_event_name":"pre_tool_use"'*'"tool_input":{"cmd":"ls"}'*)
    echo '{"hook_specific_output":{"permission_decision":"allow","updated_input":{"cmd":"ls -h"}},"system_message":"added -h"}';;
esac"#,
        &["pre_tool_use"],
    );
    let params = tool_call("shell", json!({"cmd": "ls"}));
    let answer = call(&hook, Stage::BeforeTool, &params)
        .await
        .expect("answer");
    // The hook's own allow is kept (it was not inferred), with its rewrite.
    assert_eq!(
        answer,
        json!({"action": "allow", "call": {"arguments": {"cmd": "ls -h"}}})
    );
    // The chain applies it as any process hook's allow.
    let mut chain = Chain::new(Stage::BeforeTool, params).expect("params");
    chain.step("test", OnError::Allow, Ok(&answer));
    let wire = chain.finish().to_wire(Stage::BeforeTool);
    assert_eq!(wire["call"]["arguments"]["cmd"], "ls -h");
    assert_eq!(wire["call"]["tool"], "shell");

    let untouched = call(
        &hook,
        Stage::BeforeTool,
        &tool_call("shell", json!({"cmd": "pwd"})),
    )
    .await;
    assert_eq!(untouched, Ok(json!({"action": "continue"})));
}

#[tokio::test]
async fn camel_case_updated_input_modifies() {
    let hook = script_hook(
        "camel",
        "camel.sh",
        r#"cat > /dev/null
echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"ls -la"}}}'"#,
        &["pre_tool_use"],
    );
    let r = call(
        &hook,
        Stage::BeforeTool,
        &tool_call("Bash", json!({"command": "ls"})),
    )
    .await;
    assert_eq!(
        r,
        Ok(json!({"action": "allow", "call": {"arguments": {"command": "ls -la"}}}))
    );
}

#[tokio::test]
async fn continue_false_aborts_with_the_stop_reason() {
    let hook = script_hook(
        "stop",
        "stop.sh",
        r#"cat > /dev/null
echo '{"continue": false, "stopReason": "budget exhausted"}'"#,
        &["pre_tool_use", "before_llm_call", "after_llm_call"],
    );
    let r = call(&hook, Stage::BeforeTool, &tool_call("shell", json!({}))).await;
    assert_eq!(
        r,
        Ok(json!({"action": "abort_turn", "reason": "budget exhausted"}))
    );
    let r = call(
        &hook,
        Stage::BeforeLlm,
        &json!({"model": "m", "messages": []}),
    )
    .await;
    assert_eq!(
        r,
        Ok(json!({"action": "abort_turn", "reason": "budget exhausted"}))
    );
    // docker-agent's after_llm_call is observe-only: the halt is ignored
    // (with a warning), as docker-agent ignores it.
    let r = call(
        &hook,
        Stage::AfterLlm,
        &json!({"model": "m", "response": {"content": "hi"}}),
    )
    .await;
    assert_eq!(r, Ok(json!({"action": "continue"})));
}

#[tokio::test]
async fn session_start_plain_stdout_becomes_context() {
    let hook = script_hook(
        "context",
        "context.sh",
        r#"input=$(cat)
echo "This project uses pnpm."
case "$input" in
  *'"source":"startup"'*) echo "Fresh session $(echo "$input" | sed 's/.*"session_id":"\([^"]*\)".*/\1/')";;
esac"#,
        &["session_start"],
    );
    assert!(hook.handles("session_start"));
    assert!(!hook.handles("session_end"));
    let r = call(
        &hook,
        Stage::Lifecycle,
        &json!({"event": "session_start", "meta": {"session_key": "s-42"},
                "payload": {"source": "startup"}}),
    )
    .await;
    assert_eq!(
        r,
        Ok(json!({
            "action": "continue",
            "additional_context": "This project uses pnpm.\nFresh session s-42"
        }))
    );
    // An event the hook is not configured for costs no spawn.
    let r = call(
        &hook,
        Stage::Lifecycle,
        &json!({"event": "turn_start", "payload": {}}),
    )
    .await;
    assert_eq!(r, Ok(json!({"action": "continue"})));
}

#[tokio::test]
async fn a_backgrounded_grandchild_does_not_hold_the_host() {
    let dir = temp_dir("background");
    let pid_file = dir.join("sleep.pid");
    let path = script(
        &dir,
        "bg.sh",
        &format!(
            r#"cat > /dev/null
sleep 300 &
echo $! > '{}'
echo '{{"hook_specific_output":{{"permission_decision":"deny","permission_decision_reason":"bg"}}}}'
exit 0"#,
            pid_file.display()
        ),
    );
    let hook = hook_for(&dir, &path, &["pre_tool_use"]);
    let started = std::time::Instant::now();
    let r = call(&hook, Stage::BeforeTool, &tool_call("shell", json!({}))).await;
    let took = started.elapsed();
    assert_eq!(r, Ok(json!({"action": "deny_tool", "reason": "bg"})));
    assert!(took < Duration::from_millis(600), "took {took:?}");
    let pid = read_pid(&pid_file);
    let _ = std::process::Command::new("kill")
        .args(["-9", &pid])
        .status();
}

#[tokio::test]
async fn a_timeout_kills_the_process_tree() {
    let dir = temp_dir("timeout");
    let pid_file = dir.join("child.pid");
    let path = script(
        &dir,
        "hang.sh",
        &format!(
            r#"sleep 300 &
echo $! > '{}'
sleep 300"#,
            pid_file.display()
        ),
    );
    let hook = hook_for(&dir, &path, &["pre_tool_use"]);
    let started = std::time::Instant::now();
    let r = hook
        .call(
            Stage::BeforeTool,
            &tool_call("shell", json!({})),
            Instant::now() + Duration::from_millis(700),
        )
        .await;
    let took = started.elapsed();
    assert!(matches!(r, Err(CallError::Timeout(_))), "{r:?}");
    assert!(took < Duration::from_secs(2), "took {took:?}");
    let pid = read_pid(&pid_file);
    let mut dead = false;
    for _ in 0..200 {
        if gone(&pid) {
            dead = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    if !dead {
        let _ = std::process::Command::new("kill")
            .args(["-9", &pid])
            .status();
    }
    assert!(dead, "the backgrounded sleep {pid} survived the timeout");
}

#[tokio::test]
async fn exit_1_is_an_error_with_status_and_stderr() {
    let hook = script_hook(
        "exit1",
        "fail.sh",
        r#"cat > /dev/null
echo "jq: command not found" >&2
exit 1"#,
        &["pre_tool_use"],
    );
    let r = call(&hook, Stage::BeforeTool, &tool_call("shell", json!({}))).await;
    let Err(e) = r else {
        panic!("expected an error, got {r:?}")
    };
    let text = e.to_string();
    assert!(text.contains("exit status 1"), "{text}");
    assert!(text.contains("jq: command not found"), "{text}");
}

#[tokio::test]
async fn a_spawn_failure_is_an_error() {
    let dir = temp_dir("spawn");
    let config = CommandConfig {
        args: Some(vec!["./no-such-program".into(), "x".into()]),
        events: vec!["permission_request".into()],
        ..CommandConfig::default()
    };
    let hook = CommandHook::new("missing", &config, &dir, Default::default()).expect("valid hook");
    let r = call(&hook, Stage::ApproveTool, &tool_call("shell", json!({}))).await;
    let Err(CallError::Unavailable(text)) = &r else {
        panic!("expected Unavailable, got {r:?}")
    };
    assert!(text.contains("no-such-program"), "{text}");

    let gone_dir = CommandConfig::shell("true", &["pre_tool_use"]);
    let hook = CommandHook::new(
        "nodir",
        &gone_dir,
        &dir.join("does-not-exist"),
        Default::default(),
    )
    .expect("valid hook");
    let r = call(&hook, Stage::BeforeTool, &tool_call("shell", json!({}))).await;
    assert!(matches!(r, Err(CallError::Unavailable(_))), "{r:?}");
}

#[tokio::test]
async fn output_is_capped_at_one_mebibyte_per_stream() {
    let hook = script_hook(
        "cap",
        "big.sh",
        r#"cat > /dev/null
head -c 3000000 /dev/zero | tr '\0' 'a'
head -c 3000000 /dev/zero | tr '\0' 'b' >&2
exit 0"#,
        &["session_start"],
    );
    let r = hook
        .call(
            Stage::Lifecycle,
            &json!({"event": "session_start"}),
            in_secs(20),
        )
        .await
        .expect("answer");
    let context = r["additional_context"].as_str().expect("context");
    assert_eq!(context.len(), OUTPUT_CAP);
    assert!(context.bytes().all(|b| b == b'a'));

    let hook = script_hook(
        "cap_block",
        "big_block.sh",
        r#"cat > /dev/null
head -c 3000000 /dev/zero | tr '\0' 'b' >&2
exit 2"#,
        &["user_prompt_submit"],
    );
    let r = hook
        .call(
            Stage::Lifecycle,
            &json!({"event": "user_prompt_submit", "payload": {"prompt": "hi"}}),
            in_secs(20),
        )
        .await
        .expect("answer");
    assert_eq!(r["action"], "block");
    assert_eq!(r["reason"].as_str().map(str::len), Some(OUTPUT_CAP));
}

#[tokio::test]
async fn the_environment_is_clean() {
    // SAFETY: std serializes its own environment access; nothing in this
    // test binary reads the environment through libc directly.
    unsafe {
        std::env::set_var("HOOKHOST_TEST_SECRET", "hunter2");
        std::env::set_var("HOOKHOST_TEST_SHARED", "shared-value");
    }
    let dir = temp_dir("env");
    let path = script(&dir, "env.sh", "cat > /dev/null\nenv");
    let config = CommandConfig {
        env: BTreeMap::from([("HOOK_PROFILE".to_string(), "dev".to_string())]),
        inherit_env: vec!["HOOKHOST_TEST_SHARED".into()],
        ..CommandConfig::shell(&shell_path(&path), &["session_start"])
    };
    let hook = CommandHook::new("env", &config, &dir, Default::default()).expect("valid hook");
    let r = call(&hook, Stage::Lifecycle, &json!({"event": "session_start"}))
        .await
        .expect("answer");
    let env = r["additional_context"].as_str().expect("context");
    assert!(!env.contains("hunter2"), "{env}");
    assert!(env.contains("HOOK_PROFILE=dev"), "{env}");
    assert!(env.contains("HOOKHOST_TEST_SHARED=shared-value"), "{env}");
    assert!(env.lines().any(|l| l.starts_with("PATH=")), "{env}");
}

/// The context a session_start hook printed, for `params`' meta.
async fn printed(hook: &CommandHook, meta: Value) -> String {
    let params = json!({"event": "session_start", "meta": meta, "payload": {"source": "startup"}});
    let r = call(hook, Stage::Lifecycle, &params).await.expect("answer");
    r["additional_context"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn identity_and_locale_variables_are_passed_and_secrets_are_not() {
    // SAFETY: as in the_environment_is_clean.
    unsafe {
        std::env::set_var("LC_HOOKHOST_TEST", "C.UTF-8");
        std::env::set_var("XDG_HOOKHOST_TEST", "/xdg");
        std::env::set_var("HOOKHOST_TEST_TOKEN", "s3cret");
    }
    let home = std::env::var("HOME").expect("the test runs with a HOME");
    // A script under `set -u` that reads $HOME aborted when HOME was withheld.
    let hook = script_hook(
        "identity",
        "identity.sh",
        "set -u\ncat > /dev/null\necho \"home=$HOME\"\nenv",
        &["session_start"],
    );
    let env = printed(&hook, json!({})).await;
    assert!(env.starts_with(&format!("home={home}\n")), "{env}");
    assert!(env.contains("LC_HOOKHOST_TEST=C.UTF-8"), "{env}");
    assert!(env.contains("XDG_HOOKHOST_TEST=/xdg"), "{env}");
    assert!(!env.contains("s3cret"), "{env}");
    // The hook's own `env` still wins.
    let dir = temp_dir("identity-own");
    let path = script(&dir, "home.sh", "cat > /dev/null\necho \"$HOME\"");
    let config = CommandConfig {
        env: BTreeMap::from([("HOME".to_string(), "/elsewhere".to_string())]),
        ..CommandConfig::shell(&shell_path(&path), &["session_start"])
    };
    let hook = CommandHook::new("own", &config, &dir, Default::default()).expect("valid hook");
    assert_eq!(printed(&hook, json!({})).await, "/elsewhere");
}

/// A Claude Code hook, imported (its agent runs it in the session's
/// folder), printing its folder, its project variable and its `$1`.
fn where_hook(test: &str, in_session_cwd: bool) -> (PathBuf, CommandHook) {
    let dir = temp_dir(test);
    let path = script(
        &dir,
        "where.sh",
        "cat > /dev/null\necho \"$(pwd) $CLAUDE_PROJECT_DIR $1\"",
    );
    let mut config = CommandConfig {
        dialect: crate::Dialect::ClaudeCode,
        args: Some(vec![
            path.display().to_string(),
            "${CLAUDE_PROJECT_DIR}/x".into(),
        ]),
        events: vec!["SessionStart".into()],
        ..CommandConfig::default()
    };
    if in_session_cwd {
        // Imported from Claude Code's settings: Claude runs it in its cwd.
        let file = dir.join(".claude/settings.json");
        config.source = Some(crate::config::HookSource::new(
            file,
            "SessionStart".into(),
            None,
        ));
    }
    let hook = CommandHook::new("where", &config, &dir, Default::default()).expect("valid hook");
    (dir, hook)
}

#[tokio::test]
async fn an_agent_hook_runs_in_the_events_cwd_which_is_its_project() {
    let (dir, hook) = where_hook("where", true);
    let project = temp_dir("where-project");
    let p = project.display();
    let said = printed(&hook, json!({"cwd": project.display().to_string()})).await;
    assert_eq!(said, format!("{p} {p} {p}/x"));
    // No cwd, or one that is no folder: the hook's own folder.
    let d = dir.display();
    assert_eq!(printed(&hook, json!({})).await, format!("{d} {d} {d}/x"));
    let said = printed(&hook, json!({"cwd": "/no/such/folder"})).await;
    assert_eq!(said, format!("{d} {d} {d}/x"));
    // A hook of hookhost's own config keeps its configured folder.
    let (dir, hook) = where_hook("where-own", false);
    let d = dir.display();
    let said = printed(&hook, json!({"cwd": project.display().to_string()})).await;
    assert_eq!(said, format!("{d} {d} {d}/x"));
}

#[tokio::test]
async fn gemini_plans_dir_is_the_agents_own_or_unset() {
    let dir = temp_dir("plans");
    let path = script(
        &dir,
        "plans.sh",
        "cat > /dev/null\necho \"plans=${GEMINI_PLANS_DIR-unset}\"",
    );
    let config = CommandConfig {
        dialect: crate::Dialect::GeminiCli,
        command: Some(shell_path(&path)),
        events: vec!["SessionStart".into()],
        ..CommandConfig::default()
    };
    let hook = CommandHook::new("plans", &config, &dir, Default::default()).expect("valid hook");
    let params = json!({"event": "session_start", "payload": {"source": "startup"}});
    let before = call(&hook, Stage::Lifecycle, &params)
        .await
        .expect("answer");
    // SAFETY: as in the_environment_is_clean; no other test reads it.
    unsafe { std::env::set_var("GEMINI_PLANS_DIR", "/home/u/.gemini/tmp/p/plans") };
    let after = call(&hook, Stage::Lifecycle, &params)
        .await
        .expect("answer");
    unsafe { std::env::remove_var("GEMINI_PLANS_DIR") };
    assert!(format!("{before}").contains("plans=unset"), "{before}");
    assert!(
        format!("{after}").contains("plans=/home/u/.gemini/tmp/p/plans"),
        "{after}"
    );
}

#[tokio::test]
async fn the_matcher_selects_tools_without_spawning_for_others() {
    let dir = temp_dir("matcher");
    let marker = dir.join("ran");
    let path = script(
        &dir,
        "mark.sh",
        &format!(
            r#"cat > /dev/null
echo x >> '{}'
echo "denied by matcher test" >&2
exit 2"#,
            marker.display()
        ),
    );
    let mut config =
        CommandConfig::shell(&shell_path(&path), &["pre_tool_use", "permission_request"]);
    config.matcher = Some("shell|edit_file".into());
    let hook = CommandHook::new("m", &config, &dir, Default::default()).expect("valid hook");
    for tool in ["read_file", "shell_exec", "my_shell"] {
        let r = call(&hook, Stage::BeforeTool, &tool_call(tool, json!({}))).await;
        assert_eq!(r, Ok(json!({"action": "continue"})), "{tool}");
        // A hook that is not called decides nothing: never an approval.
        let r = call(&hook, Stage::ApproveTool, &tool_call(tool, json!({}))).await;
        assert_eq!(r, Ok(json!({"action": "continue"})), "{tool}");
    }
    assert!(!marker.exists(), "the script ran for an unmatched tool");
    let r = call(
        &hook,
        Stage::ApproveTool,
        &tool_call("edit_file", json!({})),
    )
    .await;
    assert_eq!(
        r,
        Ok(json!({"approved": false, "reason": "denied by matcher test"}))
    );
    assert!(marker.exists());
    // Not configured for post_tool_use: nothing runs.
    let r = call(
        &hook,
        Stage::AfterTool,
        &json!({"tool": "shell", "result": {"for_llm": ""}}),
    )
    .await;
    assert_eq!(r, Ok(json!({"action": "continue"})));
}

#[tokio::test]
async fn notify_runs_for_events_nobody_waits_on() {
    let dir = temp_dir("notify");
    let log = dir.join("session.log");
    let path = script(
        &dir,
        "end.sh",
        &format!(
            r#"cat >> '{}'
exit 1"#,
            log.display()
        ),
    );
    let hook = hook_for(&dir, &path, &["session_end"]);
    hook.notify_from(
        "session_end",
        &json!({"meta": {"session_key": "s-9"}, "reason": "logout"}),
        None,
    )
    .await;
    let written = std::fs::read_to_string(&log).expect("the hook ran");
    let input: Value = serde_json::from_str(written.trim()).expect("JSON input");
    assert_eq!(input["hook_event_name"], "session_end");
    assert_eq!(input["session_id"], "s-9");
    assert_eq!(input["reason"], "logout");
    assert!(input.get("meta").is_none());
    // Not configured for stop: nothing runs.
    std::fs::remove_file(&log).expect("remove log");
    hook.notify_from("stop", &json!({}), None).await;
    assert!(!log.exists());
}

#[tokio::test]
async fn a_dropped_call_kills_the_process_tree() {
    let dir = temp_dir("dropped");
    let pid_file = dir.join("child.pid");
    let path = script(
        &dir,
        "hang.sh",
        &format!(
            r#"sleep 300 &
echo $! > '{}'
sleep 300"#,
            pid_file.display()
        ),
    );
    let hook = hook_for(&dir, &path, &["pre_tool_use"]);
    let params = tool_call("shell", json!({}));
    // The chain gives up on the call (its budget is spent) before the hook's
    // own deadline: dropping the future must not leave the script behind.
    let r = tokio::time::timeout(
        Duration::from_millis(500),
        hook.call(Stage::BeforeTool, &params, in_secs(60)),
    )
    .await;
    assert!(r.is_err(), "{r:?}");
    let pid = read_pid(&pid_file);
    let mut dead = false;
    for _ in 0..200 {
        if gone(&pid) {
            dead = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    if !dead {
        let _ = std::process::Command::new("kill")
            .args(["-9", &pid])
            .status();
    }
    assert!(
        dead,
        "the backgrounded sleep {pid} survived the dropped call"
    );
}
