//! The Rust example hooks end to end through the real host
//! (`hookhost::Host`): chained before_tool, the cache between after_tool
//! and before_tool, redaction, approvals, runtime events reaching
//! audit_log, and `examples/hooks-rust.toml` as shipped.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use hookhost::protocol::Stage;
use hookhost::protocol::event::RuntimeEvent;
use hookhost::protocol::params::{AfterToolParams, ToolCall, ToolResult};
use hookhost::{Approval, Config, FailurePolicy, Host, ProcessConfig, StageOutcome, ToolOutcome};
use serde_json::{Value, json};

fn examples_dir() -> PathBuf {
    std::fs::canonicalize(Path::new(env!("CARGO_MANIFEST_DIR")).join("..")).unwrap()
}

fn hook(bin: &str, priority: i64, intercept: &[Stage]) -> ProcessConfig {
    let mut h = ProcessConfig::new(vec![bin.to_string()], intercept.to_vec());
    h.priority = priority;
    h
}

/// The hooks of `examples/hooks-rust.toml`, built in code from the debug
/// binaries; audit_log writes to `audit`.
fn config(audit: &Path) -> Config {
    let mut c = Config::empty(examples_dir());
    c.defaults.shutdown_grace_ms = 1000;
    let mut guard = hook(env!("CARGO_BIN_EXE_guard"), 10, &[Stage::BeforeTool]);
    guard.on_error = Some(FailurePolicy::Block);
    let mut approval = hook(env!("CARGO_BIN_EXE_approval"), 10, &[Stage::ApproveTool]);
    approval.on_error = Some(FailurePolicy::Block);
    approval.env.insert(
        "APPROVAL_ALLOWLIST".into(),
        "approval_allowlist.toml".into(),
    );
    let mut audit_log = hook(env!("CARGO_BIN_EXE_audit_log"), 0, &[]);
    audit_log.observe = vec!["agent.*".into()];
    audit_log
        .env
        .insert("AUDIT_LOG_FILE".into(), audit.display().to_string());
    let hooks = [
        ("guard", guard),
        (
            "ls_human",
            hook(env!("CARGO_BIN_EXE_ls_human"), 20, &[Stage::BeforeTool]),
        ),
        (
            "cache",
            hook(
                env!("CARGO_BIN_EXE_cache"),
                30,
                &[Stage::BeforeTool, Stage::AfterTool],
            ),
        ),
        (
            "redact",
            hook(env!("CARGO_BIN_EXE_redact"), 40, &[Stage::AfterTool]),
        ),
        ("approval", approval),
        ("audit_log", audit_log),
    ];
    for (name, h) in hooks {
        c.processes.insert(name.into(), h);
    }
    c
}

fn call(tool: &str, arguments: Value) -> ToolCall {
    ToolCall {
        tool: tool.into(),
        arguments: arguments.as_object().cloned().unwrap(),
        ..ToolCall::default()
    }
}

fn event(host: &Host, kind: &str) -> RuntimeEvent {
    RuntimeEvent {
        id: host.next_event_id(),
        kind: kind.into(),
        time: "2026-05-02T09:14:03.120Z".into(),
        source: Some("test".into()),
        scope: None,
        severity: None,
        payload: json!({"n": kind}),
        extra: Default::default(),
    }
}

fn scratch_file(name: &str) -> PathBuf {
    let path =
        std::env::temp_dir().join(format!("hookhost-examples-{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_chain_through_the_host() {
    let audit = scratch_file("audit.jsonl");
    let host = Host::start(config(&audit)).await;
    assert!(
        host.start_failures().is_empty(),
        "{:?}",
        host.start_failures()
    );

    // guard denies first (priority 10), so ls_human and cache are not asked.
    let out = host
        .before_tool(call("shell", json!({"command": "sudo rm -rf /"})))
        .await;
    assert_eq!(
        out,
        ToolOutcome::Deny {
            reason: "guard: rule `sudo` denies this command: sudo rm -rf /".into()
        }
    );

    // ls_human rewrites; the patch keeps the other arguments.
    let out = host
        .before_tool(call("shell", json!({"command": "ls", "cwd": "/tmp"})))
        .await;
    let ToolOutcome::Continue { call: c, .. } = out else {
        panic!("{out:?}")
    };
    assert_eq!(
        Value::Object(c.arguments),
        json!({"command": "ls -h", "cwd": "/tmp"})
    );

    // after_tool fills the cache (redact leaves clean output alone) ...
    let ran = AfterToolParams {
        tool: "read_file".into(),
        arguments: json!({"path": "README.md"}).as_object().cloned().unwrap(),
        result: ToolResult::text("# hookhost"),
        ..AfterToolParams::default()
    };
    let out = host.after_tool(ran.clone()).await;
    assert_eq!(out, StageOutcome::proceed(ran));
    // ... and the same call is then answered from it.
    let out = host
        .before_tool(call("read_file", json!({"path": "README.md"})))
        .await;
    assert_eq!(out, ToolOutcome::Respond(ToolResult::text("# hookhost")));

    // redact masks a secret; cache (priority 30) sees the output first.
    let leaky = AfterToolParams {
        tool: "shell".into(),
        arguments: json!({"command": "env"}).as_object().cloned().unwrap(),
        result: ToolResult::text("KEY=sk-abcdefghijklmnopqrstuv"),
        ..AfterToolParams::default()
    };
    let StageOutcome::Continue { params: masked, .. } = host.after_tool(leaky).await else {
        panic!()
    };
    assert_eq!(masked.result.for_llm, "KEY=[REDACTED]");

    // approval by allowlist.
    assert_eq!(
        host.approve_tool(call("read_file", json!({}))).await,
        Approval::Approved
    );
    assert_eq!(
        host.approve_tool(call("curl", json!({}))).await,
        Approval::Refused {
            reason: "approval: tool `curl` is not on the allowlist".into()
        }
    );

    // audit_log records agent.* events, in order, and nothing else.
    for kind in ["agent.turn.start", "llm.request", "agent.tool.exec_start"] {
        host.emit(event(&host, kind));
    }
    let mut lines = Vec::new();
    for _ in 0..200 {
        lines = std::fs::read_to_string(&audit)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .collect();
        if lines.len() >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    host.shutdown().await;
    let kinds: Vec<&str> = lines.iter().map(|l| l["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["agent.turn.start", "agent.tool.exec_start"]);
    assert_eq!(lines[0]["payload"], json!({"n": "agent.turn.start"}));
    let _ = std::fs::remove_file(&audit);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_rust_toml_as_shipped_denies_sudo() {
    // `read`, not `load`: the shipped commands name release binaries, which
    // a test run need not have built; they are pointed at the debug ones.
    let path = examples_dir().join("hooks-rust.toml");
    let mut c = Config::read(&path).unwrap();
    assert_eq!(c.processes.len(), 6);
    let debug_dir = Path::new(env!("CARGO_BIN_EXE_guard")).parent().unwrap();
    for (name, h) in c.processes.iter_mut() {
        assert!(
            h.command[0].contains("target/release/"),
            "{name}: {:?}",
            h.command
        );
        let file = Path::new(&h.command[0]).file_name().unwrap();
        h.command[0] = debug_dir.join(file).display().to_string();
    }
    c.preflight(&path).unwrap();
    // Keep the shared /tmp audit file out of the tests.
    let audit = scratch_file("toml-audit.jsonl");
    if let Some(a) = c.processes.get_mut("audit_log") {
        a.env
            .insert("AUDIT_LOG_FILE".into(), audit.display().to_string());
    }
    c.defaults.shutdown_grace_ms = 1000;
    let host = Host::start(c).await;
    assert!(
        host.start_failures().is_empty(),
        "{:?}",
        host.start_failures()
    );
    let input = json!({"tool": "shell", "arguments": {"command": "sudo rm -rf /"}});
    let outcome = host.run_stage(Stage::BeforeTool, input).await.unwrap();
    assert_eq!(
        outcome.to_wire(Stage::BeforeTool),
        json!({"action": "deny_tool", "reason": "guard: rule `sudo` denies this command: sudo rm -rf /"})
    );
    host.shutdown().await;
}
