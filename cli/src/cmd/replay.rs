//! `hookhost replay`: run a recorded session (JSON lines) through the
//! chain, one result per stage line.

use std::io::BufRead;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use hookhost::Host;
use hookhost::protocol::chain::StepOutcome;
use hookhost::protocol::event::RuntimeEvent;
use hookhost_protocol::Stage;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::shared::config::load_config;
use crate::shared::exit::usage_error;

/// Replay JSONL stage calls and events through the configured hooks.
#[derive(Args)]
#[command(after_help = "Each input line is one of:\n  \
{\"stage\": \"before_tool\", \"input\": {\"tool\": \"shell\", \"arguments\": {\"command\": \"ls\"}}}\n  \
{\"event\": {\"id\": \"e1\", \"kind\": \"agent.turn.start\", \"time\": \"2026-01-01T00:00:00Z\", \"payload\": {}}}\n\n\
One JSON result is printed per stage line, in order (events print nothing). A bad line \
is reported with its line number, as {\"line\": N, \"error\": \"...\"} on stdout and on \
stderr, and the rest go on; the exit status is then 1.\n\n\
Examples:\n  \
hookhost replay -c examples/hooks.toml session.jsonl\n  \
cat session.jsonl | hookhost replay -c examples/hooks.toml --trace -")]
pub struct ReplayArgs {
    /// The config file (TOML, or JSON in PicoClaw's shape).
    #[arg(short = 'c', long = "config")]
    config: PathBuf,
    /// The JSONL file, or `-` for stdin.
    file: String,
    /// Add, per result, which hooks ran, what each answered and how long it took.
    #[arg(long)]
    trace: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StageLine {
    stage: Stage,
    input: Value,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EventLine {
    event: RuntimeEvent,
}

pub async fn run(args: ReplayArgs) -> ExitCode {
    let config = match load_config(&args.config) {
        Ok(c) => c,
        Err(e) => return usage_error(e),
    };
    let reader: Box<dyn BufRead + Send> = if args.file == "-" {
        Box::new(std::io::BufReader::new(std::io::stdin()))
    } else {
        match std::fs::File::open(&args.file) {
            Ok(f) => Box::new(std::io::BufReader::new(f)),
            Err(e) => return usage_error(format!("{}: {e}", args.file)),
        }
    };
    let host = Host::start(config).await;
    let mut bad = 0usize;
    for (i, line) in reader.lines().enumerate() {
        let n = i + 1;
        let line = match line {
            Ok(l) => l,
            Err(e) => {
                report_bad(n, &format!("unreadable: {e}"));
                bad += 1;
                break;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        match replay_line(&host, &line, args.trace).await {
            Ok(Some(out)) => outln!("{out}"),
            Ok(None) => {}
            Err(e) => {
                report_bad(n, &e);
                bad += 1;
            }
        }
    }
    host.shutdown().await;
    if bad == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn report_bad(n: usize, error: &str) {
    eprintln!("hookhost: line {n}: {error}");
    outln!("{}", json!({"line": n, "error": error}));
}

async fn replay_line(host: &Host, line: &str, trace: bool) -> Result<Option<Value>, String> {
    let value: Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
    if value.get("event").is_some() {
        let e: EventLine =
            serde_json::from_value(value).map_err(|e| format!("bad event line: {e}"))?;
        host.emit(e.event);
        return Ok(None);
    }
    let s: StageLine = serde_json::from_value(value).map_err(|e| {
        format!("expected {{\"stage\": ..., \"input\": {{...}}}} or {{\"event\": {{...}}}}: {e}")
    })?;
    let (outcome, steps) = host
        .run_stage_traced(s.stage, s.input)
        .await
        .map_err(|e| e.to_string())?;
    let result = outcome.to_wire(s.stage);
    if !trace {
        return Ok(Some(result));
    }
    let hooks: Vec<Value> = steps
        .iter()
        .map(|t| {
            let mut entry = json!({
                "hook": t.hook,
                "ms": (t.elapsed.as_secs_f64() * 1e6).round() / 1e3,
            });
            match &t.answer {
                Ok(answer) => entry["answer"] = answer.clone(),
                Err(e) => entry["error"] = json!(e.to_string()),
            }
            match &t.outcome {
                StepOutcome::Applied(d) => entry["applied"] = d.to_value(),
                StepOutcome::Failed { error, policy } => {
                    entry["failed"] = json!({"error": error, "on_error": policy.as_str()});
                }
            }
            entry
        })
        .collect();
    Ok(Some(
        json!({"stage": s.stage, "result": result, "trace": hooks}),
    ))
}
