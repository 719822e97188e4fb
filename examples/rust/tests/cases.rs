//! Every case of `examples/cases.json` against the Rust example binaries,
//! speaking the protocol over each child's stdin and stdout, with the
//! working directory `examples/` and exactly the case's environment.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

fn examples_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn binary(name: &str) -> &'static str {
    match name {
        "guard" => env!("CARGO_BIN_EXE_guard"),
        "ls_human" => env!("CARGO_BIN_EXE_ls_human"),
        "cache" => env!("CARGO_BIN_EXE_cache"),
        "audit_log" => env!("CARGO_BIN_EXE_audit_log"),
        "approval" => env!("CARGO_BIN_EXE_approval"),
        "redact" => env!("CARGO_BIN_EXE_redact"),
        other => panic!("cases.json names `{other}`, which has no Rust binary"),
    }
}

/// One running hook, driven line by line.
struct Hook {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    next_id: i64,
}

impl Hook {
    fn spawn(name: &str, env: &serde_json::Map<String, Value>) -> Hook {
        let mut cmd = Command::new(binary(name));
        cmd.current_dir(examples_dir())
            .env_clear()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for (k, v) in env {
            cmd.env(k, v.as_str().unwrap());
        }
        let mut child = cmd.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Hook {
            child,
            stdin,
            lines,
            next_id: 1,
        }
    }

    /// Sends one request and returns its result, checking the envelope.
    fn call(&mut self, method: &str, params: &Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{msg}").unwrap();
        stdin.flush().unwrap();
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| panic!("no answer to {msg}"));
        let answer: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(answer["jsonrpc"], "2.0", "{line}");
        assert_eq!(answer["id"], id, "{line}");
        answer
            .get("result")
            .cloned()
            .unwrap_or_else(|| panic!("an error answer to {msg}: {line}"))
    }

    fn stage(&mut self, stage: &str, params: &Value) -> Value {
        self.call(&format!("hook.{stage}"), params)
    }

    /// Closes stdin and checks the hook exits cleanly within a second.
    fn finish(mut self) {
        drop(self.stdin.take());
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "exit status {status}");
                return;
            }
            if started.elapsed() > Duration::from_secs(1) {
                let _ = self.child.kill();
                panic!("the hook did not exit within 1 s of stdin EOF");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

fn cases() -> serde_json::Map<String, Value> {
    let text = std::fs::read_to_string(examples_dir().join("cases.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn run_cases(name: &str) {
    let all = cases();
    let cases = all[name].as_array().unwrap();
    assert!(!cases.is_empty());
    let no_env = serde_json::Map::new();
    for case in cases {
        let title = case["name"].as_str().unwrap();
        let env = case
            .get("env")
            .and_then(Value::as_object)
            .unwrap_or(&no_env);
        let mut hook = Hook::spawn(name, env);
        let hello = hook.call("hook.hello", &json!({"name": name, "version": 1}));
        assert_eq!(hello["version"], 1, "{name}: {hello}");
        for earlier in case
            .get("state")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            hook.stage(earlier["stage"].as_str().unwrap(), &earlier["params"]);
        }
        let got = hook.stage(case["stage"].as_str().unwrap(), &case["params"]);
        assert_eq!(got, case["expect"], "{name}: case `{title}`");
        hook.finish();
    }
}

#[test]
fn every_example_in_cases_json_has_a_test_here() {
    let mut names: Vec<String> = cases().keys().filter(|k| *k != "about").cloned().collect();
    names.sort();
    assert_eq!(names, ["approval", "cache", "guard", "ls_human", "redact"]);
}

/// guard logs each denial with `println!`; the SDK points fd 1 at stderr,
/// so the wire still carries only answers (a stray line would fail the
/// envelope checks in `Hook::call`).
#[test]
fn guard_cases() {
    run_cases("guard");
}

#[test]
fn ls_human_cases() {
    run_cases("ls_human");
}

#[test]
fn cache_cases() {
    run_cases("cache");
}

#[test]
fn approval_cases() {
    run_cases("approval");
}

#[test]
fn redact_cases() {
    run_cases("redact");
}

#[test]
fn each_hook_declares_what_it_handles() {
    let expect = [
        ("guard", json!(["before_tool"]), json!([])),
        ("ls_human", json!(["before_tool"]), json!([])),
        ("cache", json!(["before_tool", "after_tool"]), json!([])),
        ("redact", json!(["after_tool"]), json!([])),
        ("approval", json!(["approve_tool"]), json!([])),
        ("audit_log", json!([]), json!(["agent.*"])),
    ];
    for (name, intercept, observe) in expect {
        let mut hook = Hook::spawn(name, &serde_json::Map::new());
        let hello = hook.call("hook.hello", &json!({"name": name, "version": 1}));
        assert_eq!(hello["intercept"], intercept, "{name}");
        assert_eq!(hello["observe"], observe, "{name}");
        hook.finish();
    }
}

#[test]
fn a_missing_allowlist_refuses_everything_with_the_reason() {
    let mut env = serde_json::Map::new();
    env.insert(
        "APPROVAL_ALLOWLIST".into(),
        json!("/nonexistent/allow.toml"),
    );
    let mut hook = Hook::spawn("approval", &env);
    let got = hook.stage("approve_tool", &json!({"tool": "shell"}));
    assert_eq!(got["approved"], false);
    assert!(
        got["reason"].as_str().unwrap().contains("cannot be read"),
        "{got}"
    );
    hook.finish();
}
