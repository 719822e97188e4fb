//! `hookhost call`: run one stage through the configured chain and print
//! the merged verdict.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use hookhost::Host;
use hookhost_protocol::{LifecycleEvent, LifecycleParams, Stage};
use serde_json::Value;

use crate::shared::config::load_config;
use crate::shared::exit::usage_error;
use crate::shared::signal::terminated;
use crate::shared::table::table_lines;

/// Run one stage through the chain and print the merged result as JSON.
#[derive(Args)]
#[command(after_help = "Examples:\n  \
hookhost call -c hooks.toml before_tool --input '{\"tool\":\"shell\",\"arguments\":{\"command\":\"sudo rm -rf /\"}}'\n  \
hookhost call -c hooks.toml approve_tool --input @call.json\n  \
hookhost call -c hooks.toml user_prompt_submit --input '{\"prompt\":\"hello\"}'\n\n\
For a lifecycle event, --input is the event's payload object.\n\
The result is printed on stdout in the protocol's result shape for the stage, e.g.\n  \
{\"action\":\"deny_tool\",\"reason\":\"...\"}   {\"approved\":false,\"reason\":\"...\"}   {\"action\":\"continue\"}")]
pub struct CallArgs {
    /// The config file (TOML, or JSON in PicoClaw's shape).
    #[arg(short = 'c', long = "config")]
    config: PathBuf,
    /// before_llm, after_llm, before_tool, after_tool, approve_tool, or a
    /// lifecycle event (session_start, user_prompt_submit, turn_start,
    /// subagent_start, pre_compact, before_compaction, session_end, ...).
    stage: String,
    /// The stage's params as JSON, or @FILE to read them from a file.
    #[arg(long)]
    input: String,
    /// Print each hook's figures (calls, errors, timeouts, restarts,
    /// breaker, latency) on stderr afterwards.
    #[arg(long)]
    stats: bool,
}

pub async fn run(args: CallArgs) -> ExitCode {
    let (stage, event): (Stage, Option<LifecycleEvent>) = match args.stage.parse::<Stage>() {
        Ok(Stage::Lifecycle) => {
            return usage_error("give the lifecycle event itself as STAGE, e.g. session_start");
        }
        Ok(s) => (s, None),
        Err(e) => match args.stage.parse::<LifecycleEvent>() {
            Ok(ev) => (Stage::Lifecycle, Some(ev)),
            Err(_) => {
                return usage_error(format!("{e}, or a lifecycle event ({})", lifecycle_names()));
            }
        },
    };
    let text = match args.input.strip_prefix('@') {
        Some(path) => match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => return usage_error(format!("--input @{path}: {e}")),
        },
        None => args.input.clone(),
    };
    let params: Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => return usage_error(format!("--input is not valid JSON: {e}")),
    };
    let params = match event {
        Some(ev) => {
            let Value::Object(payload) = params else {
                return usage_error("--input: a lifecycle event's payload must be a JSON object");
            };
            let mut p = LifecycleParams::new(ev);
            p.payload = payload;
            match serde_json::to_value(&p) {
                Ok(v) => v,
                Err(e) => return usage_error(format!("--input: {e}")),
            }
        }
        None => params,
    };
    if event.is_none_or(LifecycleEvent::is_request)
        && let Err(e) = hookhost_protocol::chain::validate_params(stage, &params)
    {
        return usage_error(format!("--input: {e}"));
    }
    let mut config = match load_config(&args.config) {
        Ok(c) => c,
        Err(e) => return usage_error(e),
    };
    // One stage needs only the hooks configured for it; observers and the
    // other stages' hooks would only add start-up time.
    config
        .processes
        .retain(|_, p| p.intercept.contains(&stage) || (event.is_some() && !p.observe.is_empty()));
    let host = tokio::select! {
        h = Host::start(config) => h,
        _ = terminated() => return ExitCode::from(130),
    };
    // Start failures are already logged (with the hook's stderr tail).
    let run = async {
        match event.filter(|ev| !ev.is_request()) {
            // A lifecycle event that is not a request only notifies:
            // observers and the command hooks that list it.
            Some(ev) => {
                let payload = params["payload"].as_object().cloned().unwrap_or_default();
                host.lifecycle(ev, payload).await;
                Ok(serde_json::json!({"action": "continue"}))
            }
            None => host
                .run_stage(stage, params)
                .await
                .map(|outcome| outcome.to_wire(stage)),
        }
    };
    let verdict = tokio::select! {
        v = run => Some(v),
        _ = terminated() => None,
    };
    if args.stats && verdict.is_some() {
        print_stats(&host);
    }
    host.shutdown().await;
    match verdict {
        None => ExitCode::from(130),
        Some(Ok(verdict)) => {
            outln!("{verdict}");
            ExitCode::SUCCESS
        }
        Some(Err(e)) => usage_error(format!("--input: {e}")),
    }
}

/// Writes `Host::stats` as a table on stderr (stdout holds the verdict);
/// with a prompt hook in the chain, two more columns: the tokens its model
/// spent (prompt + answer) and the calls its cache answered.
fn print_stats(host: &Host) {
    let stats = host.stats();
    let head = [
        "hook", "kind", "calls", "errors", "timeouts", "restarts", "breaker", "dropped", "p50",
        "p99", "tokens", "cached",
    ];
    let mut rows = vec![head.map(String::from)];
    let us = |v: Option<u64>| v.map_or("-".to_string(), |v| format!("{v} µs"));
    let models = stats.iter().any(|s| s.model.is_some());
    for s in stats {
        let (tokens, cached) = match &s.model {
            Some(m) => (
                format!("{}+{}", m.tokens_in, m.tokens_out),
                m.cache_hits.to_string(),
            ),
            None => ("-".to_string(), "-".to_string()),
        };
        rows.push([
            s.hook,
            s.kind.to_string(),
            s.calls.to_string(),
            s.errors.to_string(),
            s.timeouts.to_string(),
            s.restarts.to_string(),
            s.breaker.to_string(),
            s.dropped_events.to_string(),
            us(s.p50_us),
            us(s.p99_us),
            tokens,
            cached,
        ]);
    }
    let lines = match models {
        true => table_lines(&rows),
        false => {
            let short: Vec<[String; 10]> = rows
                .iter()
                .map(|r| std::array::from_fn(|i| r[i].clone()))
                .collect();
            table_lines(&short)
        }
    };
    for line in lines {
        eprintln!("{line}");
    }
}

fn lifecycle_names() -> String {
    LifecycleEvent::ALL
        .iter()
        .map(|e| e.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}
