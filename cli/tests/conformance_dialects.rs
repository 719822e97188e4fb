//! `hookhost conformance --dialect D`: every example command hook of
//! examples/dialects passes at the required level for the events its
//! settings file lists it under, and each kind of broken command hook
//! fails for its own reason (spec/conformance.md §3).

#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use common::{DIALECT_SETTINGS, HOOKHOST, alive, dialect_example, scratch};

/// `hookhost conformance --json --dialect D FLAGS -- CMD` run in `dir`:
/// the exit code and the report.
fn check(dir: &Path, dialect: &str, flags: &[&str], cmd: &str) -> (Option<i32>, Value) {
    let out = Command::new(HOOKHOST)
        .current_dir(dir)
        .args(["conformance", "--json", "--dialect", dialect])
        .args(flags)
        .args(["--", cmd])
        .output()
        .unwrap();
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        let stderr = String::from_utf8_lossy(&out.stderr);
        panic!("{cmd}: no JSON report ({e}); stderr: {stderr}")
    });
    (out.status.code(), report)
}

/// The failed checks of a report, as `name: detail`.
fn failures(report: &Value) -> Vec<String> {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == "fail")
        .map(|c| {
            format!(
                "{}: {}",
                c["name"].as_str().unwrap(),
                c["detail"].as_str().unwrap()
            )
        })
        .collect()
}

/// Every command hook a settings file lists, with its event: Claude-shaped
/// files nest them under `hooks`, Cursor's and Copilot's list them
/// directly (`command`, Copilot's `bash`), docker-agent's `hooks.toml`
/// has a table each.
fn hooks_of(dialect: &str, settings: &str) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(dialect_example(dialect).join(settings)).unwrap();
    if settings.ends_with(".toml") {
        return toml_hooks(&text);
    }
    let v: Value = serde_json::from_str(&text).unwrap();
    let mut found = Vec::new();
    for (event, entries) in v["hooks"].as_object().unwrap() {
        for entry in entries.as_array().unwrap() {
            let inner = entry["hooks"].as_array().cloned();
            for h in inner.unwrap_or_else(|| vec![entry.clone()]) {
                let cmd = h.get("command").or_else(|| h.get("bash")).unwrap();
                found.push((event.clone(), cmd.as_str().unwrap().to_string()));
            }
        }
    }
    found
}

fn toml_hooks(text: &str) -> Vec<(String, String)> {
    let doc: toml_edit::DocumentMut = text.parse().unwrap();
    let mut found = Vec::new();
    for (_, table) in doc["hooks"]["commands"].as_table().unwrap() {
        let cmd = table["command"].as_str().unwrap().to_string();
        for event in table["events"].as_array().unwrap() {
            found.push((event.as_str().unwrap().to_string(), cmd.clone()));
        }
    }
    found
}

#[test]
fn every_example_command_hook_passes_for_the_events_it_is_listed_under() {
    let mut checked = 0;
    for (dialect, settings) in DIALECT_SETTINGS {
        let dir = dialect_example(dialect);
        for (event, cmd) in hooks_of(dialect, settings) {
            let (code, report) = check(&dir, dialect, &["--event", &event], &cmd);
            assert_eq!(
                failures(&report),
                Vec::<String>::new(),
                "{dialect} {event}: {cmd}"
            );
            assert_eq!(code, Some(0), "{dialect} {event}: {cmd}");
            assert_eq!(report["dialect"], dialect);
            assert_eq!(report["checks"].as_array().unwrap().len(), 9, "{report}");
            checked += 1;
        }
    }
    assert_eq!(checked, 31);
}

/// scripts/test checks the same hooks through scripts/conformance-dialects,
/// whose list is written out by hand: it must not drift from the settings.
#[test]
fn the_ci_list_names_every_example_command_hook() {
    let root = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scripts/conformance-dialects"
    );
    let script = std::fs::read_to_string(root).unwrap();
    let listed: Vec<&str> = script
        .lines()
        .filter(|l| !l.starts_with('#') && l.matches('|').count() == 2)
        .collect();
    let mut expected = Vec::new();
    for (dialect, settings) in DIALECT_SETTINGS {
        for (event, cmd) in hooks_of(dialect, settings) {
            expected.push(format!("{dialect}|{event}|{cmd}"));
        }
    }
    expected.sort();
    let mut listed: Vec<String> = listed.into_iter().map(String::from).collect();
    listed.sort();
    assert_eq!(listed, expected);
}

/// A Claude Code PreToolUse hook whose script is `body`, checked from a
/// fresh folder; the report, after asserting it fails (exit 1).
fn broken(dialect: &str, event: &str, body: &str, flags: &[&str]) -> (Value, std::path::PathBuf) {
    let dir = scratch();
    let script = dir.join("hook.sh");
    std::fs::write(&script, format!("#!/bin/sh\n{body}\n")).unwrap();
    let mut perms = std::fs::metadata(&script).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&script, perms).unwrap();
    let mut all = vec!["--event", event];
    all.extend_from_slice(flags);
    let (code, report) = check(&dir, dialect, &all, "./hook.sh");
    assert_eq!(code, Some(1), "{body}: {report}");
    (report, dir)
}

/// The one failed check is `name`, and its detail says `why`.
fn fails_for(report: &Value, name: &str, why: &str) {
    let failed = failures(report);
    assert!(
        failed
            .iter()
            .any(|f| f.starts_with(&format!("{name}: ")) && f.contains(why)),
        "expected {name} to fail with {why:?}, got {failed:#?}"
    );
}

const DENY: &str =
    r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny"}}"#;

#[test]
fn a_profile_echo_before_the_json_fails_naming_the_line() {
    let body = format!("cat >/dev/null\necho 'Welcome to bash'\necho '{DENY}'");
    let (report, _) = broken("claude-code", "PreToolUse", &body, &[]);
    fails_for(
        &report,
        "PreToolUse: stdout",
        "`Welcome to bash` is written before the JSON",
    );
}

#[test]
fn two_json_documents_fail_the_answer() {
    let body = format!("cat >/dev/null\necho '{{}}'\necho '{DENY}'");
    let (report, _) = broken("claude-code", "PreToolUse", &body, &[]);
    fails_for(&report, "PreToolUse: answer", "two JSON documents");
}

#[test]
fn an_echo_of_the_input_fails_as_an_echo() {
    let (report, _) = broken("claude-code", "PreToolUse", "cat", &[]);
    fails_for(&report, "PreToolUse: stdout", "the input echoed back");
    fails_for(&report, "PreToolUse: answer", "echoed its input");
}

#[test]
fn an_answer_the_event_does_not_take_fails_with_the_reason() {
    // A decision value no dialect has.
    let bad = r#"{"hookSpecificOutput":{"permissionDecision":"block"}}"#;
    let (report, _) = broken("claude-code", "PreToolUse", &format!("echo '{bad}'"), &[]);
    fails_for(&report, "PreToolUse: answer", r#"unknown value "block""#);
    // Another dialect's spelling: Claude Code reads no `hook_specific_output`.
    let snake = r#"{"hook_specific_output":{"permission_decision":"deny"}}"#;
    let (report, _) = broken("claude-code", "PreToolUse", &format!("echo '{snake}'"), &[]);
    fails_for(
        &report,
        "PreToolUse: answer",
        "unknown field `hook_specific_output`",
    );
    // A decision the event does not allow: Codex rejects `ask` at PreToolUse.
    let ask = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask"}}"#;
    let (report, _) = broken("codex", "PreToolUse", &format!("echo '{ask}'"), &[]);
    fails_for(
        &report,
        "PreToolUse: answer",
        "codex sets this answer aside: PreToolUse: permissionDecision:ask",
    );
}

#[test]
fn a_child_left_running_is_named_and_killed() {
    let body = "cat >/dev/null\nsleep 30 >/dev/null 2>&1 &\necho $! > sleep.pid\nexit 0";
    let (report, dir) = broken("claude-code", "PreToolUse", body, &[]);
    let pid: i32 = std::fs::read_to_string(dir.join("sleep.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let named = format!("pid {pid} `sleep 30`");
    fails_for(&report, "PreToolUse: no process left behind", &named);
    assert!(!alive(pid), "the leftover {pid} still runs");
}

#[test]
fn a_hook_that_never_exits_fails_on_time_and_is_killed() {
    let started = Instant::now();
    let body = "echo $$ > hook.pid\nwhile :; do sleep 1; done";
    let (report, dir) = broken("claude-code", "PreToolUse", body, &["--timeout-ms", "500"]);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    fails_for(
        &report,
        "PreToolUse: ends in time",
        "did not exit within 500 ms",
    );
    let pid: i32 = std::fs::read_to_string(dir.join("hook.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(!alive(pid), "the hook {pid} still runs");
}

#[test]
fn stage_and_unknown_events_are_usage_errors() {
    let run = |args: &[&str]| {
        Command::new(HOOKHOST)
            .arg("conformance")
            .args(args)
            .args(["--", "true"])
            .output()
            .unwrap()
            .status
            .code()
    };
    assert_eq!(
        run(&["--dialect", "codex", "--stage", "before_tool"]),
        Some(2)
    );
    assert_eq!(
        run(&["--dialect", "codex", "--event", "BeforeTool"]),
        Some(2)
    );
    assert_eq!(run(&["--event", "PreToolUse"]), Some(2));
}
