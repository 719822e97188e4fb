//! A fake agent loop embedding hookhost: it asks the host before every
//! tool call, acts on the verdict, and reports what happened. It exits 1 if
//! a verdict is not the one the example's guard should give, so it doubles
//! as an end-to-end check: `cargo run -p hookhost-embed-example`.

use std::path::Path;
use std::process::ExitCode;

use hookhost::protocol::event::RuntimeEvent;
use hookhost::protocol::params::ToolCall;
use hookhost::{Approval, Config, Host, ToolOutcome};
use serde_json::json;

fn shell(command: &str) -> ToolCall {
    ToolCall {
        tool: "shell".into(),
        arguments: json!({ "command": command })
            .as_object()
            .cloned()
            .unwrap_or_default(),
        ..ToolCall::default()
    }
}

/// One shell call as the agent makes it: the event its observers see,
/// then the chain's verdict on it, in words.
async fn before_tool(host: &Host, command: &str) -> String {
    host.emit(RuntimeEvent {
        id: host.next_event_id(),
        kind: "agent.tool.exec_start".into(),
        time: "2026-11-22T00:00:00Z".into(),
        source: Some("embed-example".into()),
        scope: None,
        severity: None,
        payload: json!({ "command": command }),
        extra: Default::default(),
    });
    match host.before_tool(shell(command)).await {
        ToolOutcome::Continue { call, .. } => {
            format!("run: {}", call.arguments["command"].as_str().unwrap_or("?"))
        }
        // This example has no user to ask: it treats an ask as a no.
        ToolOutcome::Ask { reason, .. } => format!("asked: {reason}"),
        ToolOutcome::Respond(result) => format!("answered: {}", result.for_llm),
        ToolOutcome::Deny { reason } => {
            println!("  ({reason})");
            "denied".into()
        }
        ToolOutcome::Abort { reason, .. } => format!("aborted: {reason}"),
        // An outcome added in a later hookhost: refuse what is not understood.
        _ => "refused: an outcome this agent does not know".into(),
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("hooks.toml");
    let config = match Config::load(&path) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let host = Host::start(config).await;
    if !host.start_failures().is_empty() {
        host.shutdown().await;
        return ExitCode::FAILURE;
    }
    let mut ok = true;
    for (command, expect) in [
        ("ls", "run: ls -h"),
        ("sudo reboot", "denied"),
        ("echo hi", "run: echo hi"),
    ] {
        let seen = before_tool(&host, command).await;
        println!("before_tool {command:?} -> {seen}");
        ok &= seen == expect;
    }

    let curl = ToolCall {
        tool: "curl".into(),
        ..ToolCall::default()
    };
    let verdict = host.approve_tool(curl).await;
    println!("approve_tool curl -> {verdict:?}");
    ok &= matches!(verdict, Approval::Refused { .. });

    host.shutdown().await;
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
