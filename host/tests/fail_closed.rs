//! Fail closed means closed: a hook whose policy is deny refuses whenever
//! it cannot answer, however it fails, at every stage that can refuse.
//! These tests drive the real `hookhost` binary with a config file, as a
//! user (or an attacker feeding the model) would.

#![allow(clippy::unwrap_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::scratch;

use serde_json::{Value, json};

const HOOKHOST: &str = env!("CARGO_BIN_EXE_hookhost");
const TEST_HOOK: &str = env!("CARGO_BIN_EXE_hookhost-test-hook");

/// Writes `body` as the folder's hooks.toml, with `TEST_HOOK` replaced by
/// the test hook's path.
fn write_config(dir: &Path, body: &str) -> PathBuf {
    let path = dir.join("hooks.toml");
    std::fs::write(&path, body.replace("TEST_HOOK", TEST_HOOK)).unwrap();
    path
}

/// `hookhost call -c CONFIG STAGE --input INPUT`.
fn call(config: &Path, stage: &str, input: &Value) -> Output {
    Command::new(HOOKHOST)
        .args(["call", "-c"])
        .arg(config)
        .args([stage, "--input", &input.to_string()])
        .output()
        .unwrap()
}

/// The verdict `hookhost call` printed.
fn verdict(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn an_if_error_on_a_fail_closed_approver_refuses() {
    let dir = scratch();
    let config = write_config(
        &dir,
        r#"
[hooks.processes.approver]
command = ["TEST_HOOK", "--answer", '{"approved":false,"reason":"refuses everything"}']
intercept = ["approve_tool"]
on_error = "deny"
if = 'tool == "shell" && size(arguments.command) > 0'

[hooks.builtins.deny_tools]
config = { tools = ["shell"] }
on_error = "deny"
if = 'arguments.command.startsWith("rm")'
"#,
    );
    // The model left out `command`: the filters cannot be evaluated.
    let input = json!({"tool": "shell", "arguments": {"cmd": "rm -rf /"}});
    let v = verdict(&call(&config, "approve_tool", &input));
    assert_eq!(v["approved"], json!(false), "{v}");
    assert!(
        v["reason"]
            .as_str()
            .unwrap()
            .contains("`if` failed to evaluate"),
        "{v}"
    );
    let v = verdict(&call(&config, "before_tool", &input));
    assert_eq!(v["action"], "deny_tool", "{v}");
    // With the key present the approver itself answers.
    let input = json!({"tool": "shell", "arguments": {"command": "ls"}});
    let v = verdict(&call(&config, "approve_tool", &input));
    assert_eq!(
        v,
        json!({"approved": false, "reason": "refuses everything"})
    );
}

#[test]
fn an_if_error_under_allow_skips_the_hook_quietly() {
    let dir = scratch();
    let config = write_config(
        &dir,
        r#"
[hooks.processes.rewriter]
command = ["TEST_HOOK", "--answer", '{"action":"abort_turn"}']
intercept = ["before_tool"]
on_error = "allow"
if = 'size(arguments.command) > 0'
"#,
    );
    let out = call(&config, "before_tool", &json!({"tool": "shell"}));
    assert_eq!(verdict(&out), json!({"action": "continue"}));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("WARN"), "{stderr}");
}
