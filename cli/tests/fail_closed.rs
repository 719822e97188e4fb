//! Fail closed means closed: a hook whose policy is deny refuses whenever
//! it cannot answer, however it fails, at every stage that can refuse.
//! These tests drive the real `hookhost` binary with a config file, as a
//! user (or an attacker feeding the model) would.

#![allow(clippy::unwrap_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::scratch;
use hookhost::protocol::{OnError, Stage};
use hookhost::{FailurePolicy, Host};

use serde_json::{Value, json};

use common::{FAULT_HOOK, HOOKHOST, TEST_HOOK};

/// Writes `body` as the folder's hooks.toml, with `TEST_HOOK` replaced by
/// the test hook's path.
fn write_config(dir: &Path, body: &str) -> PathBuf {
    let path = dir.join("hooks.toml");
    std::fs::write(&path, body.replace("TEST_HOOK", &TEST_HOOK)).unwrap();
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

/// An executable shell script `name` in `dir`.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn a_permission_request_command_that_times_out_refuses() {
    let dir = scratch();
    let config = write_config(
        &dir,
        r#"
[hooks.commands.gate]
command = "sleep 5"
events = ["permission_request"]
timeout = 1
"#,
    );
    let v = verdict(&call(&config, "approve_tool", &json!({"tool": "shell"})));
    assert_eq!(v["approved"], json!(false), "{v}");
    assert!(
        v["reason"].as_str().unwrap().contains("no answer within"),
        "{v}"
    );
}

/// A host running one command hook whose program is removed after load.
async fn vanished_command(events: &str, on_error: Option<&str>) -> Host {
    let dir = scratch();
    let program = script(&dir, "gate.sh", "exit 0");
    let on_error = on_error.map_or(String::new(), |o| format!("on_error = \"{o}\""));
    let config = write_config(
        &dir,
        &format!(
            "[hooks.commands.gate]\nargs = [\"./gate.sh\"]\nevents = [\"{events}\"]\n{on_error}\n"
        ),
    );
    let host = Host::start(hookhost::Config::load(&config).unwrap()).await;
    std::fs::remove_file(program).unwrap();
    host
}

#[tokio::test]
async fn a_command_that_cannot_be_spawned_fails_closed() {
    let call = json!({"tool": "shell", "arguments": {}});
    // An approver that cannot start has not approved, whatever its kind.
    let host = vanished_command("permission_request", None).await;
    let v = host.run_stage(Stage::ApproveTool, call.clone()).await;
    let v = v.unwrap().to_wire(Stage::ApproveTool);
    assert_eq!(v["approved"], json!(false), "{v}");
    assert!(
        v["reason"].as_str().unwrap().contains("cannot start"),
        "{v}"
    );
    host.shutdown().await;
    // A gate with no policy of its own refuses when it cannot start: it
    // never ran (docker-agent's default `warn` is for a gate that ran).
    let host = vanished_command("pre_tool_use", None).await;
    let v = host.run_stage(Stage::BeforeTool, call.clone()).await;
    assert_eq!(v.unwrap().to_wire(Stage::BeforeTool)["action"], "deny_tool");
    host.shutdown().await;
    // A gate that blocks on failure blocks when it cannot start.
    let host = vanished_command("pre_tool_use", Some("block")).await;
    let v = host.run_stage(Stage::BeforeTool, call.clone()).await;
    assert_eq!(v.unwrap().to_wire(Stage::BeforeTool)["action"], "deny_tool");
    host.shutdown().await;
    // A docker-agent pre_tool_use gate refuses whatever its policy says
    // (docker-agent's failure_test.go TestHookFailurePolicyMatrix).
    let host = vanished_command("pre_tool_use", Some("warn")).await;
    let v = host.run_stage(Stage::BeforeTool, call.clone()).await;
    assert_eq!(v.unwrap().to_wire(Stage::BeforeTool)["action"], "deny_tool");
    host.shutdown().await;
    // Elsewhere only a policy that says allow lets the call pass.
    let host = vanished_command("tool_input_transform", Some("warn")).await;
    let v = host.run_stage(Stage::BeforeTool, call).await;
    assert_eq!(v.unwrap().to_wire(Stage::BeforeTool)["action"], "continue");
    host.shutdown().await;
}

#[test]
fn on_error_ignore_is_quiet_and_warn_is_not() {
    let dir = scratch();
    for (policy, loud) in [("ignore", false), ("warn", true)] {
        let config = write_config(
            &dir,
            &format!(
                "[hooks.commands.flaky]\ncommand = \"exit 1\"\nevents = [\"tool_input_transform\"]\non_error = \"{policy}\"\n"
            ),
        );
        let out = call(&config, "before_tool", &json!({"tool": "shell"}));
        assert_eq!(verdict(&out), json!({"action": "continue"}), "{policy}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.contains("WARN"), loud, "{policy}: {stderr}");
    }
}

/// `hookhost replay -c CONFIG FILE`: one host for every line.
fn replay(config: &Path, lines: &[Value]) -> Vec<Value> {
    let dir = scratch();
    let file = dir.join("session.jsonl");
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    std::fs::write(&file, text.join("\n")).unwrap();
    let out = Command::new(HOOKHOST)
        .args(["replay", "-c"])
        .arg(config)
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn six_large_outputs_through_the_example_redact_hook_come_back_redacted() {
    let config = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/hooks.toml"
    ));
    let secret = "sk-live-0123456789abcdefghij";
    let output = |text: String| {
        json!({"stage": "after_tool", "input": {
            "tool": "shell", "arguments": {"command": "cat dump"},
            "result": {"for_llm": text}}})
    };
    let big = format!("{secret}\n{}\n{secret}", "x".repeat(6 * 1024 * 1024));
    let mut lines = vec![output(big); 6];
    lines.push(output(format!("token {secret}")));
    let verdicts = replay(config, &lines);
    assert_eq!(verdicts.len(), 7);
    for (i, v) in verdicts.iter().enumerate() {
        assert_eq!(v["action"], "modify", "output {i}: {}", v["action"]);
        let text = v["result"]["result"]["for_llm"].as_str().unwrap();
        assert!(!text.contains(secret), "output {i} leaked the secret");
        assert!(text.contains("[REDACTED]"), "output {i}");
    }
}

/// What the 7th before_tool call gets from a hook that fails its first 6.
async fn seventh_call(on_error: Option<OnError>, breaker: Option<bool>) -> (String, String) {
    let mut gate = common::hook(
        &[
            "--fail-first",
            "6",
            "--answer",
            r#"{"action":"modify","call":{"arguments":{"ok":true}}}"#,
        ],
        &[Stage::BeforeTool],
    );
    gate.on_error = on_error.map(Into::into);
    gate.breaker = breaker;
    let host = Host::start(common::config(vec![("gate", gate)])).await;
    let call = || common::tool_call("shell", json!({}));
    for _ in 0..6 {
        host.before_tool(call()).await;
    }
    let out = format!("{:?}", host.before_tool(call()).await);
    let breaker = host.stats()[0].breaker.clone();
    host.shutdown().await;
    (out, breaker)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fail_closed_hook_has_no_breaker_unless_its_config_asks() {
    // Fail-closed: the breaker is off, so the 7th call reaches the hook.
    let (out, state) = seventh_call(Some(OnError::Deny), None).await;
    assert!(out.contains("\"ok\": Bool(true)"), "{out}");
    assert_eq!(state, "off");
    // Fail-open but opted out: the same.
    let (out, state) = seventh_call(None, Some(false)).await;
    assert!(out.contains("\"ok\": Bool(true)"), "{out}");
    assert_eq!(state, "off");
    // Fail-closed with the breaker asked for: skipped, refused.
    let (out, state) = seventh_call(Some(OnError::Deny), Some(true)).await;
    assert!(out.contains("circuit breaker open"), "{out}");
    assert_eq!(state, "open");
}

/// A normalizer after the guards renames `sh` to `shell`: the guards that
/// passed `sh` are asked again about `shell`, and `deny_tools` refuses.
/// A normalizer that keeps renaming is refused outright.
#[test]
fn a_tool_renamed_after_the_guards_is_checked_by_them_again() {
    let dir = scratch();
    let config = write_config(
        &dir,
        r#"
[hooks.builtins.deny_tools]
priority = 10
config = { tools = ["shell"], reason = "no shell here" }

[hooks.processes.normalizer]
priority = 20
command = ["TEST_HOOK", "--answer", '{"action":"modify","call":{"tool":"shell"}}']
intercept = ["before_tool"]
"#,
    );
    let v = verdict(&call(
        &config,
        "before_tool",
        &json!({"tool": "sh", "arguments": {}}),
    ));
    assert_eq!(v["action"], "deny_tool", "{v}");
    assert!(
        v["reason"].as_str().unwrap().contains("no shell here"),
        "{v}"
    );

    let config = write_config(
        &dir,
        r#"
[hooks.processes.renamer]
priority = 10
command = ["TEST_HOOK", "--answer", '{"action":"modify","call":{"tool":"bash"}}']
intercept = ["before_tool"]
on_error = "deny"

[hooks.processes.normalizer]
priority = 20
command = ["TEST_HOOK", "--answer", '{"action":"modify","call":{"tool":"shell"}}']
intercept = ["before_tool"]
"#,
    );
    let v = verdict(&call(
        &config,
        "before_tool",
        &json!({"tool": "sh", "arguments": {}}),
    ));
    assert_eq!(v["action"], "deny_tool", "{v}");
    assert!(
        v["reason"]
            .as_str()
            .unwrap()
            .contains("renamed the tool again"),
        "{v}"
    );
}

#[test]
fn call_sends_arguments_the_agent_left_out() {
    let dir = scratch();
    let config = write_config(
        &dir,
        "[hooks.processes.echo]\ncommand = [\"TEST_HOOK\", \"--echo-args\"]\nintercept = [\"before_tool\"]\n",
    );
    let v = verdict(&call(&config, "before_tool", &json!({"tool": "shell"})));
    assert_eq!(v["call"]["arguments"]["seen"], json!({}), "{v}");
}

#[tokio::test]
async fn embedded_params_without_the_stage_shape_are_refused() {
    use hookhost::{Approval, StageOutcome, ToolOutcome};
    let host = Host::start(hookhost::Config::empty(std::env::temp_dir())).await;
    // An agent's own key that collides with a protocol member breaks the
    // shape: no hook can be asked, so nothing may pass.
    let mut call = common::tool_call("shell", json!({}));
    call.extra
        .insert("arguments".into(), json!("not an object"));
    let approval = host.approve_tool(call.clone()).await;
    assert!(matches!(approval, Approval::Refused { .. }), "{approval:?}");
    let out = host.before_tool(call).await;
    assert!(matches!(out, ToolOutcome::Deny { .. }), "{out:?}");
    let mut request = hookhost::protocol::params::BeforeLlmParams::default();
    request.extra.insert("messages".into(), json!(7));
    let out = host.before_llm(request).await;
    assert!(matches!(out, StageOutcome::Abort { .. }), "{out:?}");
    host.shutdown().await;
}

// ---------------------------------------------------------------------
// The fail-closed matrix: every way a hook can fail to answer, at every
// stage that can refuse, under `on_error = "deny"`, ends in a refusal.
// ---------------------------------------------------------------------

/// Every stage that can refuse, with params for it (lifecycle: an event
/// that can be blocked).
fn refusing_stages() -> Vec<(Stage, &'static str, Value)> {
    let call = json!({"tool": "shell", "arguments": {"command": "ls"}});
    vec![
        (Stage::BeforeTool, "before_tool", call.clone()),
        (Stage::ApproveTool, "approve_tool", call),
        (
            Stage::AfterTool,
            "after_tool",
            json!({"tool": "shell", "arguments": {}, "result": {"for_llm": "x"}}),
        ),
        (
            Stage::BeforeLlm,
            "before_llm",
            json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]}),
        ),
        (
            Stage::AfterLlm,
            "after_llm",
            json!({"model": "m", "response": {"content": "hi"}}),
        ),
        (
            Stage::Lifecycle,
            "user_prompt_submit",
            json!({"event": "user_prompt_submit", "payload": {"prompt": "hi"}}),
        ),
    ]
}

/// Whether an outcome is the stage's refusal.
fn is_refusal(outcome: &hookhost::protocol::Outcome) -> bool {
    use hookhost::protocol::Outcome::*;
    matches!(
        outcome,
        DenyTool { .. } | Refused { .. } | Blocked { .. } | Abort { .. }
    )
}

/// A process hook for every stage, failing closed quickly.
fn gate(command: &[&str]) -> hookhost::ProcessConfig {
    let mut p = hookhost::ProcessConfig::new(
        command.iter().map(|s| s.to_string()).collect(),
        Stage::ALL.to_vec(),
    );
    p.on_error = Some(FailurePolicy::Block);
    p.timeout_ms = Some(300);
    p
}

/// A remote hook for every stage at `url`, failing closed quickly.
fn remote_gate(url: String) -> hookhost::RemoteConfig {
    let mut r = hookhost::RemoteConfig::new(url, Stage::ALL.to_vec());
    r.on_error = Some(FailurePolicy::Block);
    r.timeout_ms = Some(300);
    r.connect_timeout_ms = Some(300);
    r
}

/// A config holding one process or remote hook named `gate`.
fn one_gate(
    process: Option<hookhost::ProcessConfig>,
    remote: Option<hookhost::RemoteConfig>,
) -> hookhost::Config {
    let mut c = common::config(vec![]);
    c.defaults.hello_timeout_ms = 600;
    c.defaults.max_line_bytes = 4096;
    if let Some(p) = process {
        c.processes.insert("gate".into(), p);
    }
    if let Some(r) = remote {
        c.remotes.insert("gate".into(), r);
    }
    c
}

/// A port with nothing listening on it.
fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// A server that answers every HTTP request (a WebSocket upgrade or a
/// POST) with a redirect to another local port.
async fn redirecting_server() -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let target = closed_port();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                let _ = s.read(&mut buf).await;
                let answer = format!(
                    "HTTP/1.1 302 Found\r\nLocation: ws://127.0.0.1:{target}/\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                );
                let _ = s.write_all(answer.as_bytes()).await;
            });
        }
    });
    port
}

/// One matrix row: runs every refusing stage through a host with `config`
/// and says, per stage, whether it refused.
async fn row(config: hookhost::Config) -> Vec<String> {
    let host = Host::start(config).await;
    let mut cells = Vec::new();
    for (stage, _, params) in refusing_stages() {
        let outcome = host.run_stage(stage, params).await.unwrap();
        cells.push(if is_refusal(&outcome) {
            "refused".to_string()
        } else {
            format!("NOT REFUSED: {:?}", outcome.to_wire(stage))
        });
    }
    host.shutdown().await;
    cells
}

/// The descriptor-exhaustion row: the real binary under `prlimit` with a
/// soft and hard limit too low to spawn anything, per stage.
fn exhausted_row(dir: &Path) -> Vec<String> {
    let config = write_config(
        dir,
        &format!(
            "[hooks.commands.gate]\nargs = [\"{TEST_HOOK}\"]\nevents = [\"pre_tool_use\", \"post_tool_use\", \"permission_request\", \"before_llm_call\", \"after_llm_call\", \"user_prompt_submit\"]\non_error = \"block\"\n\n[hooks.processes.proc]\ncommand = [\"TEST_HOOK\"]\nintercept = [\"before_tool\", \"after_tool\", \"approve_tool\", \"before_llm\", \"after_llm\", \"lifecycle\"]\non_error = \"deny\"\n"
        ),
    );
    refusing_stages()
        .into_iter()
        .map(|(stage, name, params)| {
            let input = match stage {
                Stage::Lifecycle => params["payload"].clone(),
                _ => params,
            };
            let out = Command::new("prlimit")
                .arg("--nofile=12:12")
                .arg(HOOKHOST)
                .args(["call", "-c"])
                .arg(&config)
                .args([name, "--input", &input.to_string()])
                .output()
                .unwrap();
            let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
            let refused = v["approved"] == json!(false)
                || ["deny_tool", "abort_turn", "block"]
                    .contains(&v["action"].as_str().unwrap_or(""));
            if refused {
                "refused".to_string()
            } else {
                format!("NOT REFUSED: {v} {}", String::from_utf8_lossy(&out.stderr))
            }
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fail_closed_matrix() {
    let dir = scratch();
    let big_reason = "r".repeat(100 * 1024);
    let oversized = format!(r#"{{"action":"continue","reason":"{big_reason}"}}"#);
    let mut breaker = gate(&[&*TEST_HOOK, "--fail-first", "1"]);
    breaker.breaker = Some(true);
    breaker.breaker_failures = Some(1);
    let mut if_error = gate(&[&*TEST_HOOK]);
    if_error.condition = Some("size(arguments.nope) > 0".into());
    // A config built in code skips the load-time check, so the spawn
    // itself fails (ENOENT), at start and at every restart.
    let gone = dir.join("no-such-hook").to_string_lossy().into_owned();
    let redirect = redirecting_server().await;
    let mut rows: Vec<(&str, Vec<String>)> = vec![
        (
            "crash",
            row(one_gate(
                Some(gate(&[&*FAULT_HOOK, "crash-nth", "--n", "1"])),
                None,
            ))
            .await,
        ),
        (
            "hang",
            row(one_gate(Some(gate(&[&*FAULT_HOOK, "hang"])), None)).await,
        ),
        (
            "oversized reply",
            row(one_gate(
                Some(gate(&[&*TEST_HOOK, "--answer", &oversized])),
                None,
            ))
            .await,
        ),
        (
            "unparsable reply",
            row(one_gate(Some(gate(&[&*FAULT_HOOK, "wrong-type"])), None)).await,
        ),
        ("`if` error", row(one_gate(Some(if_error), None)).await),
        ("breaker open (breaker = true)", {
            // The first call fails and opens it; the table shows the rest.
            let host = Host::start(one_gate(Some(breaker), None)).await;
            let (stage, _, params) = refusing_stages().remove(0);
            host.run_stage(stage, params).await.unwrap();
            let mut cells = Vec::new();
            for (stage, _, params) in refusing_stages() {
                let outcome = host.run_stage(stage, params).await.unwrap();
                let skipped = format!("{outcome:?}").contains("circuit breaker open");
                cells.push(if is_refusal(&outcome) && skipped {
                    "refused".into()
                } else {
                    format!("NOT REFUSED: {outcome:?}")
                });
            }
            host.shutdown().await;
            cells
        }),
        (
            "spawn failure (no program)",
            row(one_gate(Some(gate(&[&gone])), None)).await,
        ),
        (
            "descriptor exhaustion (prlimit, binary)",
            exhausted_row(&dir),
        ),
        (
            "remote unreachable",
            row(one_gate(
                None,
                Some(remote_gate(format!("ws://127.0.0.1:{}/", closed_port()))),
            ))
            .await,
        ),
        (
            "remote redirect (ws)",
            row(one_gate(
                None,
                Some(remote_gate(format!("ws://127.0.0.1:{redirect}/"))),
            ))
            .await,
        ),
        (
            "remote redirect (http)",
            row(one_gate(
                None,
                Some(remote_gate(format!("http://127.0.0.1:{redirect}/"))),
            ))
            .await,
        ),
    ];
    let mut table = String::from(
        "| failure | before_tool | approve_tool | after_tool | before_llm | after_llm | lifecycle (user_prompt_submit) |\n|---|---|---|---|---|---|---|\n",
    );
    let mut failed = false;
    for (label, cells) in rows.drain(..) {
        failed |= cells.iter().any(|c| c != "refused");
        table.push_str(&format!("| {label} | {} |\n", cells.join(" | ")));
    }
    println!("{table}");
    assert!(!failed, "some cell did not refuse:\n{table}");
}
