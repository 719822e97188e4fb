//! `hookhost serve` as an agent drives it: the sessions of
//! spec/vectors/sidecar.json over stdio and over WebSocket (`--listen`),
//! answers to requests still in flight at end of input, several WebSocket
//! agents at once, policies of process hooks, stats, reload by request and
//! by SIGHUP.

#![allow(clippy::unwrap_used)]

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use common::{HOOKHOST, TEST_HOOK};
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

/// Pairs each expected answer with the one of the same id and checks it.
fn match_by_id(name: &str, expect: &[Value], mut got: Vec<Value>, failures: &mut Vec<String>) {
    for e in expect {
        match got.iter().position(|g| g["id"] == e["id"]) {
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
        let got = finish(child);
        let expect = session["expect"].as_array().unwrap();
        if got.len() != expect.len() {
            failures.push(format!(
                "{name}: {} responses for {} expected: {got:?}",
                got.len(),
                expect.len()
            ));
            continue;
        }
        match_by_id(name, expect, got, &mut failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

type WsSender = soketto::connection::Sender<tokio_util::compat::Compat<tokio::net::TcpStream>>;
type WsReceiver = soketto::connection::Receiver<tokio_util::compat::Compat<tokio::net::TcpStream>>;

/// An agent's WebSocket connection to the sidecar.
async fn ws_connect(addr: &str) -> (WsSender, WsReceiver) {
    use tokio_util::compat::TokioAsyncReadCompatExt;
    let socket = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut client = soketto::handshake::Client::new(socket.compat(), "127.0.0.1", "/");
    match client.handshake().await.unwrap() {
        soketto::handshake::ServerResponse::Accepted { .. } => {}
        other => panic!("upgrade refused: {other:?}"),
    }
    client.into_builder().finish()
}

async fn ws_send(tx: &mut WsSender, message: &Value) {
    let text = match message {
        Value::String(raw) => raw.clone(),
        other => other.to_string(),
    };
    tx.send_text(text).await.unwrap();
    tx.flush().await.unwrap();
}

/// The next `n` answers, each within 10 s.
async fn ws_receive(rx: &mut WsReceiver, n: usize) -> Vec<Value> {
    let mut got = Vec::new();
    while got.len() < n {
        let mut buf = Vec::new();
        tokio::time::timeout(Duration::from_secs(10), rx.receive_data(&mut buf))
            .await
            .unwrap_or_else(|_| panic!("only {} of {n} answers: {got:?}", got.len()))
            .unwrap();
        got.push(serde_json::from_slice(&buf).unwrap());
    }
    got
}

fn stop(child: Child) {
    // SAFETY: a signal to the sidecar this test started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The same sessions as `the_sidecar_vectors`, each sent as text frames
/// over `--listen`: the answers must be the same.
#[tokio::test]
async fn the_sidecar_vectors_over_websocket() {
    let vectors: Value = serde_json::from_str(&std::fs::read_to_string(VECTORS).unwrap()).unwrap();
    let mut failures = Vec::new();
    for (n, session) in vectors["sessions"].as_array().unwrap().iter().enumerate() {
        let name = session["name"].as_str().unwrap();
        let dir = scratch(&format!("ws-vector-{n}"));
        let config = dir.join("hooks.toml");
        std::fs::write(&config, session["config"].as_str().unwrap()).unwrap();
        let (child, addr) = common::serve_listen(&config, &[]);
        let (mut tx, mut rx) = ws_connect(&addr).await;
        for message in session["send"].as_array().unwrap() {
            ws_send(&mut tx, message).await;
        }
        let expect = session["expect"].as_array().unwrap();
        let got = ws_receive(&mut rx, expect.len()).await;
        // Nothing more may come: notifications are never answered.
        let mut extra = Vec::new();
        let more =
            tokio::time::timeout(Duration::from_millis(200), rx.receive_data(&mut extra)).await;
        assert!(
            more.is_err(),
            "{name}: an extra answer {:?}",
            String::from_utf8_lossy(&extra)
        );
        match_by_id(name, expect, got, &mut failures);
        stop(child);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Several agents at once over WebSocket, each its own session on one
/// host: answers go to the connection that asked, a binary frame is
/// refused, and one agent leaving does not disturb the others.
#[tokio::test]
async fn several_websocket_agents_share_one_sidecar() {
    let dir = scratch("ws-agents");
    let config = dir.join("hooks.toml");
    std::fs::write(
        &config,
        format!(
            "[hooks.processes.echo]\ncommand = [\"{TEST_HOOK}\", \"--echo-args\"]\nintercept = [\"before_tool\"]\n"
        ),
    )
    .unwrap();
    let (child, addr) = common::serve_listen(&config, &[]);
    let mut agents = Vec::new();
    for _ in 0..3 {
        agents.push(ws_connect(&addr).await);
    }
    for round in 0..20 {
        for (a, (tx, _)) in agents.iter_mut().enumerate() {
            ws_send(
                tx,
                &json!({"jsonrpc": "2.0", "id": round, "method": "host.before_tool",
                        "params": {"tool": "t", "arguments": {"agent": a, "round": round}}}),
            )
            .await;
        }
    }
    for (a, (_, rx)) in agents.iter_mut().enumerate() {
        let got = ws_receive(rx, 20).await;
        let mut rounds: Vec<i64> = got
            .iter()
            .map(|g| {
                let seen = &g["result"]["call"]["arguments"]["seen"];
                assert_eq!(seen["agent"], a, "agent {a} got another's answer: {g}");
                assert_eq!(seen["round"], g["id"], "{g}");
                g["id"].as_i64().unwrap()
            })
            .collect();
        rounds.sort_unstable();
        assert_eq!(rounds, (0..20).collect::<Vec<_>>());
    }
    // A binary frame is not JSON-RPC text: answered -32600, session kept.
    let (tx, rx) = &mut agents[0];
    tx.send_binary(b"{}").await.unwrap();
    tx.flush().await.unwrap();
    let refused = ws_receive(rx, 1).await;
    assert_eq!(refused[0]["error"]["code"], -32600, "{refused:?}");
    // One agent leaves; the others carry on.
    let (mut gone, _) = agents.remove(0);
    gone.close().await.unwrap();
    let (tx, rx) = &mut agents[0];
    ws_send(
        tx,
        &json!({"jsonrpc": "2.0", "id": "after", "method": "host.stats"}),
    )
    .await;
    let stats = ws_receive(rx, 1).await;
    assert_eq!(stats[0]["result"]["hooks"][0]["calls"], 60, "{stats:?}");
    stop(child);
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
            "choose a transport: --stdio, --listen ADDR or --socket",
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
