//! `hookhost call`: run one stage through the configured chain and print
//! the merged verdict.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use hookhost::{Config, Host};
use hookhost_protocol::chain::ParamsError;
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

/// Runs `hookhost call`: the verdict on stdout, 0; 2 for a usage error
/// or params the chain refused; 130 when interrupted.
pub async fn run(args: CallArgs) -> ExitCode {
    let request = match Request::of(&args) {
        Ok(r) => r,
        Err(e) => return usage_error(e),
    };
    let config = match config_for(&args.config, &request) {
        Ok(c) => c,
        Err(e) => return usage_error(e),
    };
    let host = tokio::select! {
        h = Host::start(config) => h,
        _ = terminated() => return ExitCode::from(130),
    };
    // Start failures are already logged (with the hook's stderr tail).
    let verdict = tokio::select! {
        v = verdict(&host, request) => Some(v),
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

/// The call the arguments ask for: a stage (or a lifecycle event) and its
/// params, checked before any hook starts.
struct Request {
    stage: Stage,
    /// The lifecycle event, when `stage` is `Stage::Lifecycle`.
    event: Option<LifecycleEvent>,
    params: Value,
}

impl Request {
    /// Reads STAGE and --input; `Err` is the usage error to print.
    fn of(args: &CallArgs) -> Result<Request, String> {
        let (stage, event) = parse_stage(&args.stage)?;
        let params = stage_params(event, read_input(&args.input)?)?;
        if event.is_none_or(LifecycleEvent::is_request)
            && let Err(e) = hookhost_protocol::chain::validate_params(stage, &params)
        {
            return Err(format!("--input: {e}"));
        }
        Ok(Request {
            stage,
            event,
            params,
        })
    }
}

/// A stage name, or a lifecycle event's (as `Stage::Lifecycle` and the
/// event); `lifecycle` alone names no event and is refused.
fn parse_stage(name: &str) -> Result<(Stage, Option<LifecycleEvent>), String> {
    match name.parse::<Stage>() {
        Ok(Stage::Lifecycle) => {
            Err("give the lifecycle event itself as STAGE, e.g. session_start".to_string())
        }
        Ok(s) => Ok((s, None)),
        Err(e) => match name.parse::<LifecycleEvent>() {
            Ok(ev) => Ok((Stage::Lifecycle, Some(ev))),
            Err(_) => Err(format!("{e}, or a lifecycle event ({})", lifecycle_names())),
        },
    }
}

/// --input as JSON: the text itself, or the file named after `@`.
fn read_input(input: &str) -> Result<Value, String> {
    let text = match input.strip_prefix('@') {
        Some(path) => std::fs::read_to_string(path).map_err(|e| format!("--input @{path}: {e}"))?,
        None => input.to_string(),
    };
    serde_json::from_str(&text).map_err(|e| format!("--input is not valid JSON: {e}"))
}

/// The stage's params: --input itself, or for a lifecycle event the
/// event's params with --input (an object) as its payload.
fn stage_params(event: Option<LifecycleEvent>, input: Value) -> Result<Value, String> {
    let Some(ev) = event else {
        return Ok(input);
    };
    let Value::Object(payload) = input else {
        return Err("--input: a lifecycle event's payload must be a JSON object".to_string());
    };
    let mut p = LifecycleParams::new(ev);
    p.payload = payload;
    serde_json::to_value(&p).map_err(|e| format!("--input: {e}"))
}

/// The config with only the hooks the call needs: observers and the other
/// stages' hooks would only add start-up time.
fn config_for(path: &Path, request: &Request) -> Result<Config, String> {
    let mut config = load_config(path)?;
    let (stage, lifecycle) = (request.stage, request.event.is_some());
    config
        .processes
        .retain(|_, p| p.intercept.contains(&stage) || (lifecycle && !p.observe.is_empty()));
    Ok(config)
}

/// Runs the call through the chain: the verdict in the protocol's result
/// shape for the stage.
async fn verdict(host: &Host, request: Request) -> Result<Value, ParamsError> {
    let Request {
        stage,
        event,
        params,
    } = request;
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
