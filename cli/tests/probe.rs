//! `hookhost probe` run as a hook: under hookhost itself (every check
//! passes, the calls, the event, the cancel and the shutdown are seen),
//! and under a deliberately bad host (each broken rule is its own
//! violation, exit status 1).

#![allow(clippy::unwrap_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{HOOKHOST, scratch};
use serde_json::Value;

/// A hooks.toml in a fresh folder whose one process hook is the probe
/// with `probe_args` (plus `--json --report FILE`), and that file.
fn probe_config(probe_args: &[&str], hook_keys: &str, defaults: &str) -> (PathBuf, PathBuf) {
    let dir = scratch();
    let report = dir.join("report.json");
    let mut argv = vec![HOOKHOST, "probe", "--json", "--report"];
    let report_arg = report.to_str().unwrap();
    argv.push(report_arg);
    argv.extend_from_slice(probe_args);
    let command = serde_json::to_string(&argv).unwrap();
    let config = dir.join("hooks.toml");
    let text = format!(
        "[hooks.defaults]\n{defaults}\n[hooks.processes.probe]\ncommand = {command}\n{hook_keys}\n"
    );
    std::fs::write(&config, text).unwrap();
    (config, report)
}

/// Runs `hookhost ARGS...`; its stdout, and panics on a failed run.
fn hookhost(args: &[&str], stdin: Option<&str>) -> String {
    let mut cmd = Command::new(HOOKHOST);
    cmd.args(args);
    let (code, out, err) = common::run_with_stdin(&mut cmd, stdin.unwrap_or("").as_bytes());
    assert_eq!(code, 0, "hookhost {args:?}: {out}{err}");
    out
}

/// The probe's JSON report, once it has been written whole.
fn read_report(path: &Path) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && let Ok(v) = serde_json::from_str::<Value>(&text)
        {
            return v;
        }
        assert!(Instant::now() < deadline, "no report at {}", path.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The details of one check's violations.
fn violations(report: &Value, check: &str) -> Vec<Value> {
    let checks = report["checks"].as_array().unwrap();
    let c = checks.iter().find(|c| c["name"] == check).unwrap();
    c["violations"].as_array().unwrap().clone()
}

fn lines_of(report: &Value, check: &str) -> Vec<Value> {
    violations(report, check)
        .iter()
        .map(|v| v["line"].clone())
        .collect()
}

#[test]
fn hookhost_call_passes_every_check_and_the_hello_comes_first() {
    let (config, report) = probe_config(&[], r#"intercept = ["before_tool"]"#, "");
    let cfg = config.to_str().unwrap();
    let input = r#"{"tool":"shell","arguments":{"command":"ls"}}"#;
    let out = hookhost(&["call", "-c", cfg, "before_tool", "--input", input], None);
    assert_eq!(out.trim(), r#"{"action":"continue"}"#);
    let r = read_report(&report);
    assert_eq!(r["violations"], 0, "{r:#}");
    assert_eq!(r["checks_run"], 10);
    assert_eq!(r["checks"][0]["name"], "hello_first");
    assert_eq!(r["checks"][0]["passed"], true);
    assert_eq!(r["summary"]["requests"]["hook.hello"], 1);
    assert_eq!(r["summary"]["requests"]["hook.before_tool"], 1);
    assert_eq!(r["summary"]["ended"], "eof");
}

#[test]
fn a_replayed_session_with_an_event_keeps_to_the_declaration() {
    let keys = "intercept = [\"before_llm\", \"after_llm\", \"before_tool\", \"after_tool\", \"approve_tool\"]\nobserve = [\"*\"]";
    let (config, report) = probe_config(&["--declare"], keys, "");
    let session = [
        r#"{"stage":"before_llm","input":{"model":"m","messages":[]}}"#,
        r#"{"stage":"after_llm","input":{"model":"m","response":{"content":"hi"}}}"#,
        r#"{"event":{"id":"e1","kind":"agent.turn.start","time":"2026-01-01T00:00:00Z","payload":{}}}"#,
        r#"{"stage":"before_tool","input":{"tool":"shell","arguments":{"command":"ls"}}}"#,
        r#"{"stage":"approve_tool","input":{"tool":"shell","arguments":{"command":"ls"}}}"#,
        r#"{"stage":"after_tool","input":{"tool":"shell","arguments":{},"result":{"for_llm":"a"}}}"#,
    ]
    .join("\n");
    let cfg = config.to_str().unwrap();
    let out = hookhost(&["replay", "-c", cfg, "-"], Some(&session));
    assert_eq!(out.lines().count(), 5, "{out}");
    let r = read_report(&report);
    assert_eq!(r["violations"], 0, "{r:#}");
    let requests = r["summary"]["requests"].as_object().unwrap();
    assert_eq!(requests.len(), 6, "hello and five stages: {requests:?}");
    assert!(requests.values().all(|n| n == 1), "{requests:?}");
    assert_eq!(r["summary"]["notifications"]["hook.runtime_event"], 1);
}

#[test]
fn a_stalled_call_is_cancelled_by_hookhost_after_its_deadline() {
    let keys = "intercept = [\"before_tool\"]\ntimeout_ms = 200";
    let (config, report) = probe_config(&["--stall", "before_tool"], keys, "");
    let cfg = config.to_str().unwrap();
    let input = r#"{"tool":"shell","arguments":{"command":"ls"}}"#;
    hookhost(&["call", "-c", cfg, "before_tool", "--input", input], None);
    let r = read_report(&report);
    assert_eq!(violations(&r, "cancel_after_deadline"), Vec::<Value>::new());
    assert_eq!(r["violations"], 0, "{r:#}");
    let cancels = r["summary"]["cancels"].as_array().unwrap();
    assert_eq!(cancels.len(), 1, "{r:#}");
    assert_eq!(cancels[0]["target"], "stalled");
    assert_eq!(cancels[0]["method"], "hook.before_tool");
    let after = cancels[0]["after_ms"].as_u64().unwrap();
    assert!((100..5000).contains(&after), "cancelled after {after} ms");
}

#[test]
fn hookhost_closes_stdin_and_waits_the_grace_before_sigterm() {
    let (config, report) = probe_config(
        &["--linger-ms", "5000"],
        r#"intercept = ["before_tool"]"#,
        "shutdown_grace_ms = 200",
    );
    let cfg = config.to_str().unwrap();
    let input = r#"{"tool":"shell","arguments":{}}"#;
    hookhost(&["call", "-c", cfg, "before_tool", "--input", input], None);
    let r = read_report(&report);
    assert_eq!(r["violations"], 0, "{r:#}");
    let s = &r["summary"];
    assert_eq!(s["ended"], "term", "{r:#}");
    let (eof, term) = (
        s["eof_ms"].as_u64().unwrap(),
        s["term_ms"].as_u64().unwrap(),
    );
    assert!(term >= eof + 150, "EOF at {eof} ms, SIGTERM at {term} ms");
}

#[test]
fn a_bad_host_gets_each_broken_rule_reported_and_exit_status_1() {
    let dir = scratch();
    let report = dir.join("report.json");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/probe_bad_host.py");
    let out = Command::new("python3")
        .arg(&script)
        .args([HOOKHOST, "probe", "--json", "--report"])
        .arg(&report)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let seen: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(seen["status"], 1, "{seen}");
    assert_eq!(seen["answer_ids"], serde_json::json!([0, 1, "s-2"]));
    let r = read_report(&report);
    assert_eq!(lines_of(&r, "ids"), [1, 3], "{r:#}");
    assert_eq!(lines_of(&r, "nothing_before_hello_answer"), [2], "{r:#}");
    assert_eq!(lines_of(&r, "eof_before_term"), [Value::Null], "{r:#}");
    assert_eq!(r["violations"], 4, "{r:#}");
    assert_eq!(r["summary"]["ended"], "term");
}

#[test]
fn the_human_report_goes_to_stderr_and_stdout_is_only_the_wire() {
    let hello =
        r#"{"jsonrpc":"2.0","id":1,"method":"hook.hello","params":{"name":"p","version":1}}"#;
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"hook.before_tool","params":{"tool":"t"}}"#;
    let mut cmd = Command::new(HOOKHOST);
    cmd.args(["probe", "--hello-delay-ms", "50"]);
    let (code, out, err) =
        common::run_with_stdin(&mut cmd, format!("{hello}\n{call}\n").as_bytes());
    assert_eq!(code, 1, "a call written right behind the hello: {err}");
    let ids: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["id"].clone())
        .collect();
    assert_eq!(ids, [1, 2], "{out}");
    let last = err.lines().last().unwrap();
    assert_eq!(last, "10 checks, 1 violations", "{err}");
    assert!(
        err.contains(
            "VIOLATION nothing_before_hello_answer: line 2: hook.before_tool id 2 arrived"
        ),
        "{err}"
    );
    assert!(err.lines().any(|l| l == "PASS ids"), "{err}");
}
