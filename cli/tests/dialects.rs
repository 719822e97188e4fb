//! Every example of `examples/dialects/` through `hookhost relay`: each
//! case's event, exactly as its agent sends it, goes in on stdin, and the
//! answer, read the way that agent reads a command hook's answer, must be
//! the case's expected decision. The hooks are the examples' own scripts
//! (bash + jq, Python, Node), run unchanged from their settings files.

#![allow(clippy::unwrap_used)]

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Map, Value, json};

fn cases(dialect: &str) -> Vec<Value> {
    let text =
        std::fs::read_to_string(common::dialect_example(dialect).join("cases.json")).unwrap();
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

/// Runs `hookhost relay` on a case's event. `HOOK_TOKEN` is in the relay's
/// environment for the HTTP hooks' `allowedEnvVars`.
fn relay(dialect: &str, settings: &Path, case: &Value) -> (i32, String, String) {
    let mut cmd = Command::new(common::HOOKHOST);
    cmd.args(["relay", "--dialect", dialect, "-c"])
        .arg(settings)
        .env("HOOK_TOKEN", "s3cret");
    if settings.exists() {
        // The examples are a project's files: trusted, as the user would.
        cmd.env(
            "XDG_CONFIG_HOME",
            common::trusted_xdg(settings, Some(dialect)),
        );
    }
    if dialect == "copilot" {
        cmd.args(["--event", case["native_event"].as_str().unwrap()]);
    }
    cmd.current_dir(common::dialect_example(dialect));
    common::run_with_stdin(&mut cmd, case["event"].to_string().as_bytes())
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
    for (dialect, file) in common::DIALECT_SETTINGS {
        let settings = common::dialect_example(dialect).join(file);
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
    let settings = common::dialect_example("claude-code").join(".claude/settings.json");
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

/// A one-shot HTTP server on loopback: answers each request with `status`
/// and `body`, and hands back what it received.
fn http_server(status: u16, body: &'static str) -> (String, std::sync::mpsc::Receiver<String>) {
    use std::io::{BufRead, BufReader, Read};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let (mut head, mut len) = (String::new(), 0usize);
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap_or(0);
                }
                head.push_str(&line);
            }
            let mut req = vec![0; len];
            reader.read_exact(&mut req).unwrap();
            let _ = tx.send(format!("{head}\n{}", String::from_utf8_lossy(&req)));
            let reply = format!(
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(reply.as_bytes());
        }
    });
    (url, rx)
}

/// A Claude settings file with one `type: "http"` PreToolUse hook.
fn http_settings(dir: &Path, url: &str, fail_closed: bool) -> PathBuf {
    let on_failure = if fail_closed {
        json!("block")
    } else {
        Value::Null
    };
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{
        "type": "http", "url": url, "timeout": 5, "onFailure": on_failure,
        "headers": {"Authorization": "Bearer $HOOK_TOKEN", "X-Other": "${HOME}"},
        "allowedEnvVars": ["HOOK_TOKEN"]}]}]}});
    let path = dir.join(".claude/settings.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, settings.to_string()).unwrap();
    path
}

#[test]
fn claude_http_hooks_are_posted_the_event_and_answer_in_the_body() {
    let dir = common::scratch();
    let deny = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"http says no"}}"#;
    let (url, seen) = http_server(200, deny);
    let settings = http_settings(&dir, &url, false);
    let event = json!({"session_id": "s-http", "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}});
    let (code, stdout, stderr) = relay("claude-code", &settings, &json!({"event": event}));
    let got = read("claude-code", code, &stdout, &stderr);
    assert_eq!(
        (got.decision, got.reason.as_str()),
        ("deny", "http says no"),
        "{stderr}"
    );
    let request = seen
        .recv_timeout(std::time::Duration::from_secs(5))
        .unwrap();
    let lower = request.to_ascii_lowercase();
    assert!(lower.contains("authorization: bearer s3cret"), "{request}");
    assert!(
        lower.contains("x-other: \r\n") || !lower.contains("x-other: /"),
        "HOME is not allowed: {request}"
    );
    assert!(
        request.contains(r#""tool_name":"Bash""#) && request.contains(r#""session_id":"s-http""#),
        "{request}"
    );
}

#[test]
fn a_failing_http_hook_is_open_unless_it_fails_closed() {
    let dir = common::scratch();
    let (url, _seen) = http_server(500, "boom");
    let event = json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}});
    let open = http_settings(&dir, &url, false);
    let (code, stdout, stderr) = relay("claude-code", &open, &json!({"event": event}));
    assert_eq!(
        read("claude-code", code, &stdout, &stderr).decision,
        "allow",
        "{stderr}"
    );
    let closed = http_settings(&dir, &url, true);
    let (code, stdout, stderr) = relay("claude-code", &closed, &json!({"event": event}));
    let got = read("claude-code", code, &stdout, &stderr);
    assert_eq!(got.decision, "deny", "onFailure: block refuses: {stderr}");
    assert!(got.reason.contains("HTTP 500"), "{got:?}");
}

#[test]
fn an_event_hookhost_does_not_name_still_runs_the_hooks_that_list_it() {
    let dir = common::scratch();
    let log = dir.join("cwd.log");
    let settings = json!({"hooks": {"CwdChanged": [{"hooks": [{"type": "command",
        "command": format!("jq -c '{{e: .hook_event_name, to: .new_cwd}}' >> '{}'", log.display())}]}]}});
    let path = dir.join(".claude/settings.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, settings.to_string()).unwrap();
    let event = json!({"session_id": "s", "hook_event_name": "CwdChanged", "old_cwd": "/a", "new_cwd": "/b"});
    let (code, stdout, stderr) = relay("claude-code", &path, &json!({"event": event}));
    assert_eq!((code, stdout.trim()), (0, ""), "{stderr}");
    let written = std::fs::read_to_string(&log).unwrap();
    assert_eq!(written.trim(), r#"{"e":"CwdChanged","to":"/b"}"#);
}

#[test]
fn check_lists_every_imported_hook_with_its_source_and_what_is_skipped() {
    let dir = common::scratch();
    let mut body = String::from("[hooks.import]\n");
    for (dialect, file) in common::DIALECT_SETTINGS
        .iter()
        .filter(|(d, _)| *d != "docker-agent")
    {
        let path = common::dialect_example(dialect).join(file);
        body.push_str(&format!("{dialect} = {:?}\n", path.display().to_string()));
    }
    // A Claude file with a prompt hook, which hookhost runs as a model.
    let extra = dir.join(".claude/settings.local.json");
    std::fs::create_dir_all(extra.parent().unwrap()).unwrap();
    let prompt =
        json!({"hooks": {"Stop": [{"hooks": [{"type": "prompt", "prompt": "Done? $ARGUMENTS"}]}]}});
    std::fs::write(&extra, prompt.to_string()).unwrap();
    body = body.replacen(
        "claude-code = ",
        &format!("claude-code = [{:?}, ", extra.display().to_string()),
        1,
    );
    body = body.replacen(".claude/settings.json\"\n", ".claude/settings.json\"]\n", 1);
    let config = dir.join("hooks.toml");
    std::fs::write(&config, &body).unwrap();
    let out = Command::new(common::HOOKHOST)
        .args(["check", "-c"])
        .arg(&config)
        .env("XDG_CONFIG_HOME", common::trusted_xdg(&config, None))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (dialect, file) in common::DIALECT_SETTINGS
        .iter()
        .filter(|(d, _)| *d != "docker-agent")
    {
        let settings =
            std::fs::read_to_string(common::dialect_example(dialect).join(file)).unwrap();
        let v: Value = serde_json::from_str(&settings).unwrap();
        for (event, entries) in v["hooks"].as_object().unwrap() {
            let listed = stdout
                .lines()
                .filter(|l| l.contains(dialect) && l.contains(file) && l.contains(event.as_str()))
                .count();
            let configured = entries
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e.get("hooks").and_then(Value::as_array).map_or(1, Vec::len));
            assert_eq!(
                listed,
                configured.sum::<usize>(),
                "{dialect} {event}:\n{stdout}"
            );
        }
    }
    assert!(
        stdout.contains("runs as a prompt hook (claude-haiku-4-5)"),
        "{stdout}"
    );
}

/// Writes `text` at `path`, creating its folders.
fn put(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Where and with what an imported hook runs, through the relay: a
/// plugin's hook in the session's project (the event's `cwd`) with
/// `CLAUDE_PROJECT_DIR` naming it and `CLAUDE_PLUGIN_ROOT` the plugin, and
/// `HOME` passed to a `set -u` script; a Qwen Code file's hook in the
/// project with Qwen's variables; the agent's secret withheld.
#[test]
fn imported_hooks_run_in_the_events_project_with_their_agents_variables() {
    let dir = common::scratch().canonicalize().unwrap();
    let (project, plugin, log) = (
        dir.join("project"),
        dir.join("plugin"),
        dir.join("where.log"),
    );
    std::fs::create_dir_all(&project).unwrap();
    let hook = |line: &str| {
        json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command",
            "command": format!("set -u; printf '%s\\n' \"{line}\" >> '{}'", log.display())}]}]}})
        .to_string()
    };
    put(
        &plugin.join("hooks/hooks.json"),
        &hook("plugin $(pwd) $CLAUDE_PROJECT_DIR $CLAUDE_PLUGIN_ROOT $HOME ${API_KEY:-withheld}"),
    );
    put(
        &dir.join("other/.qwen/settings.json"),
        &hook("qwen $(pwd) $QWEN_PROJECT_DIR $GEMINI_PROJECT_DIR $CLAUDE_PROJECT_DIR"),
    );
    let config = dir.join("hooks.toml");
    let import = format!(
        "[hooks.import]\nclaude-code = [{:?}, {:?}]\n",
        plugin.join("hooks/hooks.json").display().to_string(),
        dir.join("other/.qwen/settings.json").display().to_string()
    );
    std::fs::write(&config, import).unwrap();
    let event = json!({"session_id": "s", "transcript_path": "/tmp/t.jsonl", "cwd": project,
        "hook_event_name": "UserPromptSubmit", "prompt": "hi", "permission_mode": "default"});
    let xdg = dir.join("xdg");
    common::trust_all_as(&config, &xdg, &dir);
    let mut cmd = Command::new(common::HOOKHOST);
    cmd.args(["relay", "--dialect", "claude-code", "-c"])
        .arg(&config)
        .env("XDG_CONFIG_HOME", &xdg)
        .env("HOME", &dir)
        .env("API_KEY", "s3cret")
        .current_dir(&dir);
    let (code, stdout, stderr) = common::run_with_stdin(&mut cmd, event.to_string().as_bytes());
    assert_eq!((code, stdout.trim()), (0, ""), "{stderr}");
    let written = std::fs::read_to_string(&log).unwrap();
    let (p, d) = (project.display(), dir.display());
    let mut lines: Vec<&str> = written.lines().collect();
    lines.sort();
    assert_eq!(
        lines,
        [
            format!("plugin {p} {p} {} {d} withheld", plugin.display()),
            format!("qwen {p} {p} {p} {p}"),
        ]
    );
}

/// A settings file with one malformed entry, a switched-off hook and a
/// bad matcher, through the relay and `hookhost check`: Gemini CLI skips
/// just those, so the file's good guard still refuses (before, the whole
/// file failed to load and the relay's exit 2 refused everything for the
/// wrong reason), and `check` names each one left out, with why.
#[test]
fn a_settings_file_with_a_bad_entry_runs_the_rest_and_check_names_it() {
    let dir = common::scratch().canonicalize().unwrap();
    let settings = dir.join(".gemini/settings.json");
    let guard = r#"echo '{"decision": "deny", "reason": "no ls here"}'"#;
    put(
        &settings,
        &json!({"hooksConfig": {"disabled": ["off"]}, "hooks": {"BeforeTool": [
            {"matcher": "run_shell_command", "hooks": [
                {"type": "command", "command": guard},
                {"type": "command", "command": "   "},
                {"name": "off", "type": "command", "command": "exit 2"}]},
            {"matcher": "read_file(", "hooks": [{"type": "command", "command": "exit 2"}]}],
            "AfterTool": "not a list"}})
        .to_string(),
    );
    let xdg = common::trusted_xdg(&settings, Some("gemini-cli"));
    let event = json!({"session_id": "s", "transcript_path": "/t", "cwd": dir,
        "hook_event_name": "BeforeTool", "timestamp": "2026-11-24T01:11:07.412Z",
        "tool_name": "run_shell_command", "tool_input": {"command": "ls"}});
    let mut cmd = Command::new(common::HOOKHOST);
    cmd.args(["relay", "--dialect", "gemini-cli", "-c"])
        .arg(&settings)
        .env("XDG_CONFIG_HOME", &xdg);
    let (code, stdout, stderr) = common::run_with_stdin(&mut cmd, event.to_string().as_bytes());
    let got = read("gemini-cli", code, &stdout, &stderr);
    assert_eq!(
        (got.decision, got.reason.as_str()),
        ("deny", "no ls here"),
        "{stderr}"
    );

    let config = dir.join("hooks.toml");
    let body = format!(
        "[hooks.import]\ngemini-cli = {:?}\n",
        settings.display().to_string()
    );
    std::fs::write(&config, body).unwrap();
    let out = Command::new(common::HOOKHOST)
        .args(["check", "-c"])
        .arg(&config)
        .env("XDG_CONFIG_HOME", &xdg)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for why in [
        "SKIPPED invalid hook: key `hooks.BeforeTool[0].hooks[1]`: `command` is missing or empty",
        "SKIPPED command hook: `off` is in the `disabled` list",
        "SKIPPED invalid hook: key `hooks.AfterTool`: expected a list of matcher groups",
    ] {
        assert!(text.contains(why), "{why:?} not in:\n{text}");
    }
    // Gemini reads `read_file(` as the exact tool name: imported, not skipped.
    assert!(
        text.contains("read_file(") && !text.contains("not a valid pattern"),
        "{text}"
    );
}
