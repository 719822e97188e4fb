//! The `hookhost` binary as a user runs it.

#![allow(clippy::unwrap_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

use common::{FAULT_HOOK, HOOKHOST, TEST_HOOK};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hookhost-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write_config(dir: &Path, body: &str) -> PathBuf {
    let path = dir.join("hooks.toml");
    std::fs::write(&path, body.replace("TEST_HOOK", &TEST_HOOK)).unwrap();
    path
}

fn call(config: &Path, stage: &str, input: &str) -> Output {
    Command::new(HOOKHOST)
        .args(["call", "-c"])
        .arg(config)
        .args([stage, "--input", input])
        .output()
        .unwrap()
}

fn stdout_json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    assert_eq!(
        text.lines().count(),
        1,
        "stdout must be one JSON line: {text:?}"
    );
    serde_json::from_str(&text).unwrap()
}

#[test]
fn call_prints_the_merged_verdict_in_protocol_shape() {
    let dir = scratch("verdict");
    let config = write_config(
        &dir,
        r#"
[hooks.processes.human]
command = ["TEST_HOOK", "--answer", '{"action":"modify","call":{"arguments":{"human":true}}}']
priority = 1
intercept = ["before_tool"]

[hooks.processes.guard]
command = ["TEST_HOOK", "--answer", '{"approved":false,"reason":"not on the list"}']
priority = 2
intercept = ["approve_tool"]
"#,
    );
    let out = call(
        &config,
        "before_tool",
        r#"{"tool":"ls","arguments":{"path":"/tmp"}}"#,
    );
    assert_eq!(
        stdout_json(&out),
        serde_json::json!({"action":"modify","call":{"tool":"ls","arguments":{"path":"/tmp","human":true}}})
    );
    let input = dir.join("call.json");
    std::fs::write(&input, r#"{"tool":"curl"}"#).unwrap();
    let out = call(&config, "approve_tool", &format!("@{}", input.display()));
    assert_eq!(
        stdout_json(&out),
        serde_json::json!({"approved":false,"reason":"not on the list"})
    );
    let out = call(
        &config,
        "after_llm",
        r#"{"model":"m","response":{"content":"hi"}}"#,
    );
    assert_eq!(stdout_json(&out), serde_json::json!({"action":"continue"}));
}

#[test]
fn usage_and_config_errors_exit_2_with_one_line() {
    let dir = scratch("errors");
    let bad = write_config(
        &dir,
        "[hooks.processes.g]\ncommand = [\"x\"]\non_error = \"maybe\"\n",
    );
    let sub = scratch("errors-paths");
    let no_dir = write_config(
        &sub,
        "[hooks.processes.g]\ncommand = [\"true\"]\ndir = \"nope\"\n",
    );
    let script = sub.join("plain.sh");
    std::fs::write(&script, "#!/bin/sh\n").unwrap();
    let not_exec = sub.join("not-exec.toml");
    std::fs::write(
        &not_exec,
        "[hooks.processes.g]\ncommand = [\"./plain.sh\"]\n",
    )
    .unwrap();
    let cases: Vec<(Output, &str)> = vec![
        (
            call(&bad, "before_tool", r#"{"tool":"ls"}"#),
            "hook `g`: key `on_error`: unknown variant `maybe`",
        ),
        (
            call(&no_dir, "before_tool", r#"{"tool":"ls"}"#),
            "hook `g`: key `dir`: folder",
        ),
        (
            call(&not_exec, "before_tool", r#"{"tool":"ls"}"#),
            "plain.sh is not executable (mode 644)",
        ),
        (
            call(&dir.join("missing.toml"), "before_tool", r#"{"tool":"ls"}"#),
            "missing.toml",
        ),
        (
            call(&bad, "before_tools", r#"{"tool":"ls"}"#),
            "unknown stage \"before_tools\"",
        ),
        (
            call(&bad, "before_tool", "{not json"),
            "--input is not valid JSON",
        ),
        (
            call(&bad, "before_tool", r#"{"arguments":{}}"#),
            "missing field `tool`",
        ),
    ];
    for (out, want) in cases {
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(out.stdout.is_empty());
        assert_eq!(
            err.trim_end().lines().count(),
            1,
            "one line expected: {err}"
        );
        assert!(err.contains(want), "{err:?} should contain {want:?}");
    }
}

#[test]
fn a_secret_in_the_hosts_environment_is_not_visible_to_the_hook() {
    let dir = scratch("env");
    let config = write_config(
        &dir,
        r#"
[hooks.processes.dump]
command = ["TEST_HOOK", "--env-dump"]
intercept = ["before_tool"]
inherit_env = ["HOOKHOST_TEST_SHARED"]
env = { GUARD_MODE = "strict" }
"#,
    );
    let out = Command::new(HOOKHOST)
        .args(["call", "-c"])
        .arg(&config)
        .args(["before_tool", "--input", r#"{"tool":"t"}"#])
        .env("OPENAI_API_KEY", "sk-very-secret")
        .env("HOOKHOST_TEST_SHARED", "shared-value")
        .output()
        .unwrap();
    let verdict = stdout_json(&out);
    let env: serde_json::Map<String, Value> =
        serde_json::from_str(verdict["result"]["for_llm"].as_str().unwrap()).unwrap();
    let mut keys: Vec<&str> = env.keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(keys, ["GUARD_MODE", "HOOKHOST_TEST_SHARED", "PATH"]);
    assert_eq!(env["HOOKHOST_TEST_SHARED"], "shared-value");
    assert!(!verdict.to_string().contains("sk-very-secret"));
}

#[test]
fn dir_is_relative_to_the_config_files_folder() {
    let dir = scratch("dir");
    std::fs::create_dir_all(dir.join("hooks")).unwrap();
    let config = write_config(
        &dir,
        r#"
[hooks.processes.where]
command = ["TEST_HOOK", "--pid-file", "here.pid"]
dir = "hooks"
intercept = ["before_tool"]
"#,
    );
    let out = Command::new(HOOKHOST)
        .current_dir(std::env::temp_dir())
        .args(["call", "-c"])
        .arg(&config)
        .args(["before_tool", "--input", r#"{"tool":"t"}"#])
        .output()
        .unwrap();
    stdout_json(&out);
    assert!(dir.join("hooks/here.pid").exists());
}

/// From GoClaw docs/agent-hooks "Web UI Walkthrough" (the Overview tab
/// shows each hook's event, type, scope and matcher): `hookhost check`
/// shows each hook's scope in its last column, `global` when it has none.
#[test]
fn check_shows_each_hooks_scope() {
    let dir = scratch("check-scope");
    let config = write_config(
        &dir,
        r#"
[hooks.processes.acme_guard]
command = ["TEST_HOOK"]
intercept = ["before_tool"]
scope = { agents = ["a1", "a2"], tenants = ["acme"] }

[hooks.builtins.deny_tools]
config = { tools = ["rm"] }
"#,
    );
    let out = Command::new(HOOKHOST)
        .args(["check", "-c"])
        .arg(&config)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{text}");
    let last = |name: &str| {
        let line = text.lines().find(|l| l.starts_with(name)).unwrap();
        line.split_whitespace().last().unwrap().to_string()
    };
    assert!(text.lines().next().unwrap().ends_with("scope"), "{text}");
    assert_eq!(last("acme_guard"), "agents=a1,a2;tenants=acme");
    assert_eq!(last("deny_tools"), "global");
}

#[test]
fn check_prints_a_table_and_names_a_failed_hook() {
    let dir = scratch("check");
    let good = write_config(
        &dir,
        r#"
[hooks.processes.guard]
command = ["TEST_HOOK", "--intercept", "before_tool"]
intercept = ["before_tool", "approve_tool"]
observe = ["agent.*"]
"#,
    );
    let out = Command::new(HOOKHOST)
        .args(["check", "-c"])
        .arg(&good)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("hook") && lines[0].contains("intercepts"),
        "{text}"
    );
    let row: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(row[0], "guard");
    assert_eq!(row[3], "v1");
    assert_eq!(
        row[4], "before_tool",
        "config narrowed by the hook's declaration"
    );
    assert_eq!(row[5], "agent.*");

    std::fs::write(
        &good,
        format!("[hooks.processes.mute]\ncommand = [\"{TEST_HOOK}\", \"--no-hello\"]\n[hooks.defaults]\nhello_timeout_ms = 200\n"),
    )
    .unwrap();
    let out = Command::new(HOOKHOST)
        .args(["check", "-c"])
        .arg(&good)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("FAIL hook `mute`: no answer to hook.hello within 200 ms"),
        "{text}"
    );
    assert!(
        text.contains("test hook test starting"),
        "stderr tail missing: {text}"
    );
}

#[test]
fn replay_answers_each_stage_line_in_order_and_survives_bad_lines() {
    let dir = scratch("replay");
    let config = write_config(
        &dir,
        r#"
[hooks.processes.deny]
command = ["TEST_HOOK", "--answer", '{"action":"deny_tool","reason":"no"}', "--intercept", "before_tool"]
intercept = ["before_tool"]
"#,
    );
    let session = dir.join("session.jsonl");
    std::fs::write(
        &session,
        [
            r#"{"stage":"before_tool","input":{"tool":"shell","arguments":{"command":"ls"}}}"#,
            r#"{"stage":"before_tools","input":{}}"#,
            r#"{"event":{"id":"e1","kind":"agent.turn.start","time":"2026-01-01T00:00:00Z","payload":{}}}"#,
            "",
            r#"{"stage":"after_llm","input":{"model":"m","response":{"content":"hi"}}}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    let out = Command::new(HOOKHOST)
        .args(["replay", "-c"])
        .arg(&config)
        .arg(&session)
        .arg("--trace")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "a bad line makes the exit status 1"
    );
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(
        lines[0]["result"],
        serde_json::json!({"action":"deny_tool","reason":"no"})
    );
    assert_eq!(lines[0]["trace"][0]["hook"], "deny");
    assert_eq!(lines[0]["trace"][0]["answer"]["action"], "deny_tool");
    assert!(lines[0]["trace"][0]["ms"].as_f64().unwrap() >= 0.0);
    assert_eq!(lines[1]["line"], 2);
    assert!(lines[1]["error"].as_str().unwrap().contains("before_tools"));
    assert_eq!(lines[2]["result"], serde_json::json!({"action":"continue"}));
    assert_eq!(lines[2]["trace"], serde_json::json!([]));
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 2:"));
}

#[test]
fn demo_shows_every_kind_of_verdict_through_the_example_hooks() {
    // From an empty folder, as after `cargo install hookhost-cli`: the
    // example hooks are built into the binary, not read from a clone.
    let empty = scratch("demo-empty");
    let out = Command::new(HOOKHOST)
        .arg("demo")
        .current_dir(&empty)
        .output()
        .unwrap();
    assert_eq!(
        std::fs::read_dir(&empty).unwrap().count(),
        0,
        "the demo writes nothing where it is run"
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !text.contains('\x1b'),
        "no colour when stdout is not a terminal"
    );
    let summary: Vec<&str> = text.lines().skip_while(|l| *l != "Summary").collect();
    let row = |n: &str| {
        summary
            .iter()
            .find(|l| l.starts_with(&format!("{n} ")))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_default()
    };
    assert!(
        row("2").contains("rm -rf /tmp/test denied guard"),
        "{}",
        row("2")
    );
    assert!(
        row("3").contains("sudo apt update denied guard"),
        "{}",
        row("3")
    );
    assert!(row("4").contains("ls rewritten ls_human"), "{}", row("4"));
    assert!(row("5").contains("cat README.md allowed"), "{}", row("5"));
    assert!(
        row("6").contains("cat README.md answered from cache cache"),
        "{}",
        row("6")
    );
    assert!(
        row("7").contains("env output redacted redact"),
        "{}",
        row("7")
    );
    assert!(text.contains("ls → ls -h"), "{text}");
    let sees = text
        .lines()
        .find(|l| l.contains("the model sees:"))
        .unwrap_or_default();
    assert!(sees.contains("OPENAI_API_KEY=[REDACTED]"), "{sees}");
    assert!(
        !sees.contains("sk-proj"),
        "the key must not reach the model: {sees}"
    );
}

#[test]
fn call_stats_prints_each_hooks_figures_on_stderr() {
    let dir = scratch("stats");
    let config = write_config(
        &dir,
        r#"
[hooks.processes.guard]
command = ["TEST_HOOK"]
intercept = ["before_tool"]

[hooks.builtins.deny_tools]
priority = 5
config = { tools = ["curl"] }
"#,
    );
    let out = Command::new(HOOKHOST)
        .args(["call", "--stats", "-c"])
        .arg(&config)
        .args(["before_tool", "--input", r#"{"tool":"ls"}"#])
        .output()
        .unwrap();
    assert_eq!(stdout_json(&out), serde_json::json!({"action":"continue"}));
    let err = String::from_utf8(out.stderr).unwrap();
    let rows: Vec<Vec<&str>> = err
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows[0][..4], ["hook", "kind", "calls", "errors"], "{err}");
    let builtin = rows
        .iter()
        .find(|r| r[0] == "deny_tools")
        .expect("builtin row");
    assert_eq!(builtin[1..4], ["builtin", "1", "0"]);
    let guard = rows.iter().find(|r| r[0] == "guard").expect("guard row");
    assert_eq!(guard[1..4], ["process", "1", "0"]);
    assert_eq!(guard[6], "closed");
}

/// Whatever hooks print (banners, stray and over-long lines, a stderr
/// flood) and however loudly the host logs, the host's own stdout carries
/// only its answer: an agent that speaks on its stdout stays intact.
#[test]
fn nothing_a_hook_prints_reaches_the_hosts_stdout() {
    let dir = scratch("stdout");
    let config = write_config(
        &dir,
        &format!(
            r#"
[hooks.processes.noisy]
command = ["TEST_HOOK", "--banner", "--noise", "--unknown-id", "--huge-line", "2000000"]
priority = 1
intercept = ["before_tool"]
[hooks.processes.flood]
command = ["{FAULT_HOOK}", "stderr-flood", "--bytes", "4000000"]
priority = 2
intercept = ["before_tool"]
[hooks.processes.stray]
command = ["{FAULT_HOOK}", "noise", "--name", "stray"]
priority = 3
intercept = ["before_tool"]
[hooks.defaults]
max_line_bytes = 1000000
"#
        ),
    );
    let out = Command::new(HOOKHOST)
        .args(["call", "-c"])
        .arg(&config)
        .args(["before_tool", "--input", r#"{"tool":"shell"}"#])
        .env("HOOKHOST_LOG", "trace")
        .output()
        .unwrap();
    let verdict = stdout_json(&out);
    assert_eq!(verdict["action"], "modify", "{verdict}");
    assert_eq!(verdict["call"]["marks"]["faulty"], true, "{verdict}");
    assert_eq!(verdict["call"]["marks"]["stray"], true, "{verdict}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("my hook v1.0 starting"),
        "the banner is logged, on stderr"
    );
    assert!(
        err.contains("skipped a 2000000-byte line"),
        "over-long line logged on stderr"
    );
}

/// `hookhost check` lists a webhook as kind `webhook` with its URL, the
/// password left out, and the example config loads.
#[test]
fn check_lists_webhooks_with_their_masked_urls() {
    let dir = scratch("check-webhooks");
    let config = write_config(
        &dir,
        "[hooks.webhooks.gate]\nurl = \"https://carol:pw9@hooks.example/gate\"\nevents = [\"PreToolUse\"]\n",
    );
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/webhooks/hooks.toml");
    for (config, row) in [
        (config, "gate webhook https://hooks.example/gate"),
        (example, "guard webhook http://127.0.0.1:8787/hook"),
    ] {
        let out = Command::new(HOOKHOST)
            .args(["check", "-c"])
            .arg(&config)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{stdout}");
        let words = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(words.contains(row), "{stdout}");
        assert!(!stdout.contains("pw9"), "{stdout}");
    }
}

/// `hookhost check` shows a remote's URL without the password in it, in
/// its table and in a failure, and logs it nowhere.
#[test]
fn check_shows_remote_urls_without_their_credentials() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime
        .block_on(hookhost_sdk::serve_ws(Quiet, "127.0.0.1:0"))
        .unwrap();
    let live = server.local_addr();
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead_addr = dead.local_addr().unwrap();
    drop(dead);
    let dir = scratch("check-credentials");
    let config = write_config(
        &dir,
        &format!(
            "[hooks.remotes.live]\nurl = \"ws://alice:s3cr3t@{live}/hook\"\nintercept = [\"before_tool\"]\n\
             [hooks.remotes.dead]\nurl = \"ws://bob:hunter2@{dead_addr}/hook\"\nintercept = [\"before_tool\"]\n"
        ),
    );
    let out = Command::new(HOOKHOST)
        .args(["check", "-c"])
        .arg(&config)
        .env("HOOKHOST_LOG", "debug")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stdout.contains(&format!("ws://{live}/hook")), "{stdout}");
    assert!(
        stdout.contains("FAIL hook `dead`") && stdout.contains(&format!("ws://{dead_addr}/hook")),
        "{stdout}"
    );
    for secret in ["alice", "s3cr3t", "bob", "hunter2"] {
        assert!(!stdout.contains(secret), "{stdout}");
        assert!(!stderr.contains(secret), "{stderr}");
    }
    server.stop();
}

/// A remote hook that declares before_tool and always continues.
struct Quiet;

impl hookhost_sdk::Hook for Quiet {
    fn intercepts(&self) -> Vec<hookhost::protocol::Stage> {
        vec![hookhost::protocol::Stage::BeforeTool]
    }
}

/// Alive and not a zombie.
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z') && !state.starts_with('X')
        }
        Err(_) => false,
    }
}

/// Waits up to 2 s for `path` to hold a pid.
fn pid_in(path: &Path) -> i32 {
    for _ in 0..200 {
        if let Ok(text) = std::fs::read_to_string(path)
            && let Ok(pid) = text.trim().parse()
        {
            return pid;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("no pid in {}", path.display());
}

/// A hook's descendant that leaves its process group with `setsid` (a
/// daemon) is out of reach of the group's signals; the `hookhost` binary
/// is the subreaper of its hooks, and kills such a daemon at exit: one
/// started by a process hook, and one started by a command hook.
#[test]
fn a_setsid_daemon_of_a_process_or_command_hook_is_gone_after_the_binary_exits() {
    let dir = scratch("setsid");
    // Starts the daemon and waits until it has written its pid.
    let daemon = |file: &str| {
        let path = dir.join(file);
        format!(
            "setsid sh -c 'echo $$ > {0}.tmp; mv {0}.tmp {0}; exec sleep 300' </dev/null >/dev/null 2>&1 & \
             while [ ! -s {0} ]; do sleep 0.01; done;",
            path.display()
        )
    };
    let config = write_config(
        &dir,
        &format!(
            "[hooks.processes.spawner]\ncommand = [\"sh\", \"-c\", {:?}]\nintercept = [\"before_tool\"]\n\
             [hooks.commands.script]\ncommand = {:?}\nevents = [\"pre_tool_use\"]\n",
            format!(
                "{} exec TEST_HOOK --intercept before_tool",
                daemon("process.pid")
            ),
            daemon("command.pid"),
        ),
    );
    let out = call(&config, "before_tool", r#"{"tool":"shell","arguments":{}}"#);
    stdout_json(&out);
    for file in ["process.pid", "command.pid"] {
        let pid = pid_in(&dir.join(file));
        let gone = (0..100).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(10));
            !alive(pid)
        });
        if !gone {
            // SAFETY: a plain kill of the daemon this test started.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        assert!(gone, "the {file} daemon {pid} outlived the binary");
    }
}

#[test]
fn hookhost_call_accepts_lifecycle_events_as_the_stage() {
    let dir = scratch("lifecycle-call");
    let greet = dir.join("greet.sh");
    std::fs::write(
        &greet,
        "#!/bin/sh\ncat > /dev/null; echo 'Today is a test day.'\n",
    )
    .unwrap();
    let mut perms = std::fs::metadata(&greet).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&greet, perms).unwrap();
    let config = write_config(
        &dir,
        &format!(
            "[hooks.commands.greet]\nargs = [{:?}]\nevents = [\"session_start\"]\n",
            greet.display().to_string()
        ),
    );
    let out = call(&config, "session_start", r#"{"source":"startup"}"#);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v,
        json!({"action": "continue", "additional_context": "Today is a test day."})
    );
}

/// docker-agent's context builtins from a TOML config, through `hookhost
/// call` at turn_start with the agent's `cwd` in the payload: each adds
/// its text in chain order, and one not listed for turn_start adds none.
/// (docker-agent pkg/hooks/builtins/builtins_test.go
/// TestApplyAgentDefaultsInjectsExpectedEvents: date and prompt files at
/// turn_start, environment info at session_start.)
#[test]
fn context_builtins_add_the_calls_context_in_chain_order() {
    let dir = scratch("context-builtins");
    let project = dir.join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("AGENTS.md"), "Use tabs.").unwrap();
    let config = write_config(
        &dir,
        r#"
[hooks.builtins.add_prompt_files]
priority = 1
config = { args = ["AGENTS.md"] }
[hooks.builtins.add_date]
priority = 2
[hooks.builtins.add_environment_info]
"#,
    );
    let input = serde_json::json!({"cwd": project}).to_string();
    let out = call(&config, "turn_start", &input);
    let context = stdout_json(&out)["additional_context"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let agents = project.join("AGENTS.md");
    assert!(
        context.starts_with(&format!(
            "Instructions from: {}\nUse tabs.\nToday's date: ",
            agents.display()
        )),
        "{context}"
    );
    assert!(
        !context.contains("Working directory"),
        "session_start only: {context}"
    );
}

/// A reader that has gone (`hookhost check | head -1` after its line) is
/// not a panic: `call` and `check` finish with their own exit code and
/// no backtrace. Both panicked ("failed printing to stdout") before.
#[test]
fn a_closed_stdout_is_not_a_panic() {
    let dir = scratch("closed-stdout");
    let config = write_config(&dir, "[hooks.builtins.add_date]\n");
    let runs: [&[&str]; 2] = [
        &["call", "-c", "C", "turn_start", "--input", "{}"],
        &["check", "-c", "C"],
    ];
    for args in runs {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let args: Vec<&std::ffi::OsStr> = args
            .iter()
            .map(|a| {
                if *a == "C" {
                    config.as_os_str()
                } else {
                    std::ffi::OsStr::new(a)
                }
            })
            .collect();
        let out = Command::new(HOOKHOST)
            .args(&args)
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
    }
}

/// The issue's acceptance line: `hookhost call` with a prompt hook against
/// the tests' fake provider denies `rm -rf /` with the model's reason, and
/// `--stats` shows the tokens it spent and its latency.
#[test]
fn call_with_a_prompt_hook_denies_with_the_models_reason_and_shows_tokens() {
    use hookhost_testkit::provider::{Answer, FakeProvider};
    let provider = FakeProvider::start(vec![Answer::Decide(
        "deny",
        "rm -rf / deletes the whole filesystem",
    )]);
    let dir = scratch("prompt");
    let config = write_config(
        &dir,
        &format!(
            r#"
[hooks.prompts.judge]
provider = "openai"
base_url = "{}/v1"
model = "gpt-4o-mini"
prompt = "Deny commands that destroy data. $ARGUMENTS"
events = ["PreToolUse"]
matcher = "Bash"
"#,
            provider.url
        ),
    );
    let out = Command::new(HOOKHOST)
        .args(["call", "--stats", "-c"])
        .arg(&config)
        .args([
            "before_tool",
            "--input",
            r#"{"tool":"shell","arguments":{"command":"rm -rf /"}}"#,
        ])
        .output()
        .unwrap();
    assert_eq!(
        stdout_json(&out),
        serde_json::json!({"action": "deny_tool", "reason": "rm -rf / deletes the whole filesystem"})
    );
    let err = String::from_utf8(out.stderr).unwrap();
    let rows: Vec<Vec<&str>> = err
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    let head = &rows[0];
    assert_eq!(head[head.len() - 2..], ["tokens", "cached"], "{err}");
    let judge = rows.iter().find(|r| r[0] == "judge").expect("judge row");
    assert_eq!(judge[1..4], ["prompt", "1", "0"], "{err}");
    assert!(
        judge[8].parse::<u64>().is_ok() && judge[9] == "µs",
        "p50 latency: {err}"
    );
    assert_eq!(judge[judge.len() - 2..], ["100+20", "0"], "{err}");
    assert_eq!(provider.requests().len(), 1);
}

/// A Claude Code settings file's `prompt` handler, run by `hookhost relay`
/// as Claude Code would run it: the Anthropic API at ANTHROPIC_BASE_URL with
/// ANTHROPIC_API_KEY, `$ARGUMENTS` the event, and the model's deny written
/// back in Claude's own answer shape.
#[test]
fn relay_runs_a_claude_prompt_handler_against_the_anthropic_api() {
    use hookhost_testkit::provider::{Answer, FakeProvider};
    let provider = FakeProvider::start(vec![Answer::Decide("deny", "force-pushes over main")]);
    let dir = scratch("claude-prompt");
    let settings = dir.join("settings.json");
    std::fs::write(
        &settings,
        r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "prompt", "prompt": "Refuse history rewrites. $ARGUMENTS"}]}]}}"#,
    )
    .unwrap();
    let event = serde_json::json!({"session_id": "s-1", "cwd": dir, "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": "git push --force origin main"}});
    let mut cmd = Command::new(HOOKHOST);
    cmd.args(["relay", "--dialect", "claude-code", "-c"])
        .arg(&settings)
        .env(
            "XDG_CONFIG_HOME",
            common::trusted_xdg(&settings, Some("claude-code")),
        )
        .env("ANTHROPIC_BASE_URL", &provider.url)
        .env("ANTHROPIC_API_KEY", "sk-test");
    let (code, stdout, stderr) = common::run_with_stdin(&mut cmd, event.to_string().as_bytes());
    assert_eq!(code, 0, "{stderr}");
    let answer: Value = serde_json::from_str(&stdout).unwrap();
    let out = &answer["hookSpecificOutput"];
    assert_eq!(out["permissionDecision"], "deny", "{stdout}");
    assert_eq!(out["permissionDecisionReason"], "force-pushes over main");
    let reqs = provider.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].header("x-api-key"), Some("sk-test"));
    assert_eq!(reqs[0].body["model"], "claude-haiku-4-5");
    let user = reqs[0].body["messages"][0]["content"].as_str().unwrap();
    assert!(user.contains("git push --force origin main"), "{user}");
}

/// A hook's deny reason with terminal escape sequences (clear the screen,
/// retitle the window) is printed by `demo` with visible escapes.
#[test]
fn demo_shows_a_hooks_escape_sequences_as_text() {
    let dir = scratch("demo-escapes");
    let script = dir.join("deny.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\ncat >/dev/null\nprintf '\\033[2J\\033]0;pwned\\007 no' >&2\nexit 2\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let config = write_config(
        &dir,
        &format!(
            "[hooks.commands.deny]\nargs = [{:?}]\nevents = [\"pre_tool_use\"]\n",
            script.display().to_string()
        ),
    );
    let out = Command::new(HOOKHOST)
        .args(["demo", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("no"), "{text}");
    assert!(
        !text.contains('\x1b') && !text.contains('\x07'),
        "raw escapes printed: {text:?}"
    );
    assert!(text.contains("\\u{1b}]0;pwned"), "{text}");
}
