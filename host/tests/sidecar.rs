//! `hookhost serve --stdio` as an agent drives it: the sessions of
//! spec/vectors/sidecar.json, answers to requests still in flight at end of
//! input, policies of process hooks, stats, reload by request and by
//! SIGHUP.

#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const HOOKHOST: &str = env!("CARGO_BIN_EXE_hookhost");
const TEST_HOOK: &str = env!("CARGO_BIN_EXE_hookhost-test-hook");
const VECTORS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../spec/vectors/sidecar.json");

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hookhost-sidecar-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn serve(config: &Path) -> Child {
    Command::new(HOOKHOST)
        .args(["serve", "--stdio", "-c"])
        .arg(config)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn send(child: &mut Child, line: &Value) {
    let stdin = child.stdin.as_mut().unwrap();
    let text = match line {
        Value::String(raw) => raw.clone(),
        other => other.to_string(),
    };
    writeln!(stdin, "{text}").unwrap();
    stdin.flush().unwrap();
}

/// Every response until the sidecar exits; its exit status must be 0.
fn finish(mut child: Child) -> Vec<Value> {
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
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

fn check(expect: &Value, got: &Value) -> Result<(), String> {
    if let Some(result) = expect.get("result") {
        return match got.get("result") {
            Some(r) if r == result => Ok(()),
            _ => Err(format!("expected result {result}, got {got}")),
        };
    }
    let want = &expect["error"];
    let code = &got["error"]["code"];
    let message = got["error"]["message"].as_str().unwrap_or("");
    let needle = want["message_contains"].as_str().unwrap();
    if code == &want["code"] && message.contains(needle) {
        Ok(())
    } else {
        Err(format!("expected error {want}, got {got}"))
    }
}

#[test]
fn the_sidecar_vectors() {
    let vectors: Value = serde_json::from_str(&std::fs::read_to_string(VECTORS).unwrap()).unwrap();
    let mut failures = Vec::new();
    for (n, session) in vectors["sessions"].as_array().unwrap().iter().enumerate() {
        let name = session["name"].as_str().unwrap();
        let dir = scratch(&format!("vector-{n}"));
        let config = dir.join("hooks.toml");
        std::fs::write(&config, session["config"].as_str().unwrap()).unwrap();
        let mut child = serve(&config);
        for line in session["send"].as_array().unwrap() {
            send(&mut child, line);
        }
        let mut got = finish(child);
        let expect = session["expect"].as_array().unwrap();
        if got.len() != expect.len() {
            failures.push(format!(
                "{name}: {} responses for {} expected: {got:?}",
                got.len(),
                expect.len()
            ));
            continue;
        }
        for e in expect {
            let at = got.iter().position(|g| g["id"] == e["id"]);
            match at {
                Some(i) => {
                    let g = got.remove(i);
                    if let Err(why) = check(e, &g) {
                        failures.push(format!("{name}: id {}: {why}", e["id"]));
                    }
                }
                None => failures.push(format!("{name}: no response with id {}", e["id"])),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// End of input while slow hooks are still answering: every request read is
/// answered before the sidecar exits, and its hooks are gone.
#[test]
fn end_of_input_answers_what_is_in_flight_then_exits_0() {
    let dir = scratch("eof");
    let pids = dir.join("pid");
    let config = dir.join("hooks.toml");
    std::fs::write(
        &config,
        format!(
            "[hooks.processes.slow]\ncommand = [\"{TEST_HOOK}\", \"--delay-from-args\", \"--pid-file\", \"{}\", \"--answer\", '{{\"action\":\"modify\",\"call\":{{\"arguments\":{{\"seen\":true}}}}}}']\nintercept = [\"before_tool\"]\n",
            pids.display()
        ),
    )
    .unwrap();
    let mut child = serve(&config);
    for id in 0..20 {
        send(
            &mut child,
            &json!({"jsonrpc": "2.0", "id": id, "method": "host.before_tool",
                    "params": {"tool": "t", "arguments": {"delay_ms": 300 - id * 10}}}),
        );
    }
    let begun = Instant::now();
    let got = finish(child);
    assert!(begun.elapsed() < Duration::from_secs(5));
    let mut ids: Vec<i64> = got.iter().map(|g| g["id"].as_i64().unwrap()).collect();
    ids.sort_unstable();
    assert_eq!(ids, (0..20).collect::<Vec<_>>());
    for g in &got {
        assert_eq!(g["result"]["action"], "modify", "{g}");
        assert_eq!(g["result"]["call"]["arguments"]["seen"], true, "{g}");
        assert_eq!(g["result"]["call"]["tool"], "t", "the whole call: {g}");
    }
    let pid: i32 = std::fs::read_to_string(&pids)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists()
            || std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .unwrap_or_default()
                .contains(") Z"),
        "the hook outlived the sidecar"
    );
}

/// A hook that fails is answered by its policy; stats count it; reload by
/// request and by SIGHUP picks up a changed config file.
#[test]
fn policies_stats_and_reload() {
    let dir = scratch("reload");
    let config = dir.join("hooks.toml");
    let mute = format!(
        "[hooks.processes.mute]\ncommand = [\"{TEST_HOOK}\", \"--sleep-ms\", \"5000\"]\nintercept = [\"before_tool\"]\ntimeout_ms = 100\non_error = \"deny\"\n"
    );
    std::fs::write(&config, &mute).unwrap();
    let mut child = serve(&config);
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let ask = |child: &mut Child, out: &mut BufReader<ChildStdout>, line: Value| {
        send(child, &line);
        let mut text = String::new();
        out.read_line(&mut text).unwrap();
        serde_json::from_str::<Value>(&text).unwrap()
    };
    let denied = ask(
        &mut child,
        &mut out,
        json!({"jsonrpc": "2.0", "id": 1, "method": "host.before_tool", "params": {"tool": "t"}}),
    );
    assert_eq!(
        denied["result"],
        json!({"action": "deny_tool", "reason": "hook `mute` failed (on_error = deny): no answer within 100 ms"})
    );
    let stats = ask(
        &mut child,
        &mut out,
        json!({"jsonrpc": "2.0", "id": 2, "method": "host.stats"}),
    );
    let hooks = stats["result"]["hooks"].as_array().unwrap();
    assert_eq!(hooks.len(), 1);
    assert_eq!(
        (hooks[0]["hook"].clone(), hooks[0]["timeouts"].clone()),
        (json!("mute"), json!(1))
    );

    // A broken config is refused and changes nothing.
    std::fs::write(&config, "[hooks.processes.x]\ncommand = []\n").unwrap();
    let refused = ask(
        &mut child,
        &mut out,
        json!({"jsonrpc": "2.0", "id": 3, "method": "host.reload"}),
    );
    assert_eq!(refused["error"]["code"], -32000, "{refused}");

    // A good one replaces the hook.
    std::fs::write(
        &config,
        format!("[hooks.processes.echo]\ncommand = [\"{TEST_HOOK}\", \"--echo-args\"]\nintercept = [\"before_tool\"]\n"),
    )
    .unwrap();
    let report = ask(
        &mut child,
        &mut out,
        json!({"jsonrpc": "2.0", "id": 4, "method": "host.reload"}),
    );
    assert_eq!(
        report["result"],
        json!({"unchanged": [], "changed": ["echo"], "removed": ["mute"]})
    );
    let echoed = ask(
        &mut child,
        &mut out,
        json!({"jsonrpc": "2.0", "id": 5, "method": "host.before_tool", "params": {"tool": "t", "arguments": {"a": 1}}}),
    );
    assert_eq!(
        echoed["result"]["call"]["arguments"]["seen"],
        json!({"a": 1}),
        "{echoed}"
    );

    // SIGHUP reloads the file too: back to the mute hook.
    std::fs::write(&config, &mute).unwrap();
    // SAFETY: a signal to the sidecar this test started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGHUP);
    }
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        let s = ask(
            &mut child,
            &mut out,
            json!({"jsonrpc": "2.0", "id": 6, "method": "host.stats"}),
        );
        if s["result"]["hooks"][0]["hook"] == "mute" {
            break;
        }
        assert!(Instant::now() < until, "SIGHUP did not reload: {s}");
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());
}

/// Usage and config errors: exit 2, one line on stderr, nothing on stdout.
#[test]
fn usage_and_config_errors_exit_2() {
    let dir = scratch("usage");
    let good = dir.join("hooks.toml");
    std::fs::write(&good, "").unwrap();
    let bad = dir.join("bad.toml");
    std::fs::write(
        &bad,
        "[hooks.processes.g]\ncommand = [\"no-such-hook-binary\"]\n",
    )
    .unwrap();
    let cases = [
        (
            vec!["serve", "-c", good.to_str().unwrap()],
            "choose a transport: --stdio",
        ),
        (
            vec!["serve", "--stdio", "-c", bad.to_str().unwrap()],
            "`no-such-hook-binary` is not an executable on PATH",
        ),
    ];
    for (args, want) in cases {
        let out = Command::new(HOOKHOST)
            .args(&args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(out.stdout.is_empty());
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(want), "{err}");
    }
}
