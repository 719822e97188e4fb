//! Every example of `examples/dialects/` through `hookhost relay`: each
//! case's event, exactly as its agent sends it, goes in on stdin, and the
//! answer, read the way that agent reads a command hook's answer, must be
//! the case's expected decision. The hooks are the examples' own scripts
//! (bash + jq, Python, Node), run unchanged from their settings files.

#![allow(clippy::unwrap_used)]

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Map, Value, json};

/// Each dialect's settings file, relative to its example folder.
const SETTINGS: [(&str, &str); 6] = [
    ("claude-code", ".claude/settings.json"),
    ("codex", ".codex/hooks.json"),
    ("gemini-cli", ".gemini/settings.json"),
    ("cursor", ".cursor/hooks.json"),
    ("copilot", ".github/hooks/hooks.json"),
    ("docker-agent", "hooks.toml"),
];

fn example(dialect: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/dialects")
        .join(dialect)
}

fn cases(dialect: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(example(dialect).join("cases.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// What the agent makes of an answer.
#[derive(Debug, Default)]
struct Read {
    decision: &'static str,
    reason: String,
    context: String,
    input: Option<Map<String, Value>>,
}

fn text(v: Option<&Value>) -> String {
    v.and_then(Value::as_str).unwrap_or_default().to_string()
}

/// Reads a relay's answer as agent `dialect` would.
fn read(dialect: &str, code: i32, stdout: &str, stderr: &str) -> Read {
    if code == 2 {
        return Read {
            decision: "deny",
            reason: stderr.to_string(),
            ..Read::default()
        };
    }
    assert_eq!(
        code, 0,
        "{dialect}: unexpected exit {code}; stderr: {stderr}"
    );
    let v: Value = match stdout.trim() {
        "" => json!({}),
        s => serde_json::from_str(s)
            .unwrap_or_else(|e| panic!("{dialect}: stdout is not one JSON object ({e}): {s}")),
    };
    let hso = v
        .get("hookSpecificOutput")
        .or(v.get("hook_specific_output"))
        .cloned()
        .unwrap_or(json!({}));
    let permission = [
        hso.get("permissionDecision"),
        hso.get("permission_decision"),
        v.get("permissionDecision"),
        v.get("permission"),
    ]
    .into_iter()
    .find_map(|p| p.and_then(Value::as_str).map(str::to_string));
    let mut r = Read {
        reason: [
            hso.get("permissionDecisionReason"),
            hso.get("permission_decision_reason"),
            v.get("permissionDecisionReason"),
            v.get("agent_message"),
            v.get("reason"),
            v.get("followup_message"),
        ]
        .into_iter()
        .map(text)
        .find(|s| !s.is_empty())
        .unwrap_or_default(),
        context: [
            hso.get("additionalContext"),
            hso.get("additional_context"),
            v.get("additional_context"),
            v.get("additionalContext"),
        ]
        .into_iter()
        .map(text)
        .find(|s| !s.is_empty())
        .unwrap_or_default(),
        input: [
            hso.get("updatedInput"),
            hso.get("updated_input"),
            hso.get("tool_input"),
            v.get("updated_input"),
            v.get("modifiedArgs"),
        ]
        .into_iter()
        .find_map(|i| i.and_then(Value::as_object).cloned()),
        decision: "allow",
    };
    let decision = text(v.get("decision"));
    r.decision = match (permission.as_deref(), decision.as_str()) {
        (Some("deny"), _) | (_, "deny") => "deny",
        (Some("ask"), _) | (_, "ask") => "ask",
        (_, "block") => "block",
        _ if v.get("followup_message").is_some() => "block",
        _ if !r.context.is_empty() => "context",
        _ => "allow",
    };
    r
}

fn relay(dialect: &str, settings: &Path, case: &Value) -> (i32, String, String) {
    let mut cmd = Command::new(common::HOOKHOST);
    cmd.args(["relay", "--dialect", dialect, "-c"])
        .arg(settings);
    if dialect == "copilot" {
        cmd.args(["--event", case["native_event"].as_str().unwrap()]);
    }
    let mut child = cmd
        .current_dir(example(dialect))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let event = case["event"].to_string();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(event.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let text = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
    (
        out.status.code().unwrap_or(-1),
        text(out.stdout),
        text(out.stderr),
    )
}

/// The expected decision of a case against what the agent read.
fn check(dialect: &str, case: &Value, got: &Read, stderr: &str) {
    let name = case["name"].as_str().unwrap();
    let expect = &case["expect"];
    let want = expect["decision"].as_str().unwrap();
    let at = format!("{dialect}: {name}: got {got:?}; stderr: {stderr}");
    // Gemini's AfterAgent keep-going is its `deny`.
    let decision = match (dialect, got.decision, want) {
        ("gemini-cli", "deny", "block") => "block",
        (_, d, _) => d,
    };
    assert_eq!(decision, want, "{at}");
    if let Some(part) = expect["reason_contains"].as_str() {
        assert!(got.reason.contains(part), "{at}");
    }
    if let Some(part) = expect["context_contains"].as_str() {
        assert!(got.context.contains(part), "{at}");
    }
    if let Some(input) = expect["tool_input"].as_object() {
        assert_eq!(got.input.as_ref(), Some(input), "{at}");
    }
}

#[test]
fn every_example_answers_its_cases_through_the_relay() {
    let mut ran = 0;
    for (dialect, file) in SETTINGS {
        let settings = example(dialect).join(file);
        for case in cases(dialect) {
            let (code, stdout, stderr) = relay(dialect, &settings, &case);
            let got = read(dialect, code, &stdout, &stderr);
            check(dialect, &case, &got, &stderr);
            ran += 1;
        }
    }
    assert!(ran >= 50, "only {ran} cases ran");
}

#[test]
fn a_relay_that_cannot_read_its_event_refuses() {
    let settings = example("claude-code").join(".claude/settings.json");
    for input in [
        json!("not an object"),
        json!({"hook_event_name": "PreTool"}),
    ] {
        let (code, _, stderr) = relay("claude-code", &settings, &json!({"event": input}));
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.starts_with("hookhost relay:"), "{stderr}");
    }
    let missing = Path::new("/no/such/settings.json");
    let case =
        json!({"event": {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {}}});
    let (code, _, stderr) = relay("claude-code", missing, &case);
    assert_eq!(code, 2, "a config that does not load refuses: {stderr}");
}
