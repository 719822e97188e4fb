//! `hookhost conformance`: check a hook program against the protocol, or
//! (`--dialect D`) a one-shot command hook the way agent D runs it.

use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use hookhost::conformance;
use hookhost::protocol::Stage;
use hookhost::{ConformanceCommandOptions as CommandOptions, Dialect, conformance_command};
use hookhost::{ConformanceOptions as Options, ConformanceReport as Report, ConformanceStatus};

use crate::shared::exit::usage_error;

/// Spawn a hook and check it against protocol v1, one line per check.
#[derive(Args)]
#[command(after_help = "Examples:\n  \
hookhost conformance -- python3 examples/python/guard.py\n  \
hookhost conformance --json --env CACHE_TTL_SECONDS=5 -- ./target/release/cache\n  \
hookhost conformance --stage before_tool --strict -- ./my_hook\n\n\
Required checks (what a host relies on): the hello handshake; a valid, legal answer at every \
stage checked, for sample params as the host sends them (plain, unicode, empty arguments); an \
unknown method answered with an error; notifications not answered; 64 concurrent requests \
answered with matching ids; exit within 2 s of stdin EOF; nothing but JSON-RPC on stdout.\n\n\
Robustness checks (what a careful hook also does; a miss is a WARN with advice): a 1 MiB \
argument; -32601 for an unknown method; string ids; malformed lines; a batch; \
$/cancel_request. A check that kills the hook is followed by a fresh process, and the \
report says which checks needed one.\n\n\
A hook that declares no stages (PicoClaw's `{\"ok\": true}` hello) is checked at PicoClaw's \
five stages unless --stage says otherwise. The last line is `N passed, N warnings, N failed`; \
exit status 1 when a required check failed (or, with --strict, a robustness check).\n\n\
With --dialect D, CMD is a one-shot command hook of agent D (claude-code, codex, gemini-cli, \
cursor, copilot, docker-agent), run as hookhost and D run it: one argument is a settings \
file's `command` string (sh -c), more are an argv; from the current folder, with D's \
variables (CLAUDE_PROJECT_DIR, ...). Each event (--event, or every event of D) gets D's stdin \
for a sample (a shell call at tool events); required: it ends in time, exits 0 or 2, answers \
one JSON object D can parse and takes there, writes nothing D would misread (a line before \
the JSON, the input echoed back) and leaves no process running. Robustness: unicode, a 1 MiB \
field, missing fields, nothing D ignores. Example:\n  \
hookhost conformance --dialect claude-code --event PreToolUse -- \
'\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/bash-guard.sh'")]
pub struct ConformanceArgs {
    /// Print the report as one JSON object instead of lines
    /// (spec/conformance.md section 5).
    #[arg(long)]
    json: bool,
    /// Fail on robustness misses too, not only on required checks.
    #[arg(long)]
    strict: bool,
    /// Check only these stages (repeatable, or comma-separated). A hook
    /// that declares its stages is checked only where it declares.
    /// Process hooks only.
    #[arg(long = "stage", value_name = "STAGE", value_delimiter = ',')]
    stages: Vec<String>,
    /// Check CMD as a one-shot command hook of this agent's dialect.
    #[arg(long, value_name = "D")]
    dialect: Option<Dialect>,
    /// With --dialect: check only these native events (repeatable, or
    /// comma-separated); default every event of D but WorktreeCreate and
    /// WorktreeRemove, where a hook takes over the agent's own work.
    #[arg(long = "event", value_name = "NAME", value_delimiter = ',')]
    events: Vec<String>,
    /// How long one answer (with --dialect: one run) may take, in
    /// milliseconds; default 5000 (with --dialect: 10000).
    #[arg(long)]
    timeout_ms: Option<u64>,
    /// Set a variable in the hook's environment (repeatable). The hook
    /// otherwise gets only PATH, as under the host.
    #[arg(long = "env", value_name = "KEY=VALUE")]
    env: Vec<String>,
    /// The hook's command line.
    #[arg(last = true, required = true, value_name = "CMD")]
    command: Vec<String>,
}

pub async fn run(args: ConformanceArgs) -> ExitCode {
    if let Some(dialect) = args.dialect {
        return run_dialect(&args, dialect).await;
    }
    if !args.events.is_empty() {
        return usage_error("--event needs --dialect (process hooks take --stage)");
    }
    let opts = match options(&args) {
        Ok(opts) => opts,
        Err(msg) => return usage_error(msg),
    };
    let report = conformance(&opts).await;
    print(&opts.command, None, &report, args.json, args.strict);
    if report.conforms(args.strict) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// `--dialect D`: the command hook's checks, printed as a process
/// hook's are.
async fn run_dialect(args: &ConformanceArgs, dialect: Dialect) -> ExitCode {
    let opts = match command_options(args, dialect) {
        Ok(opts) => opts,
        Err(msg) => return usage_error(msg),
    };
    let report = conformance_command(&opts).await;
    print(
        &opts.command,
        Some(dialect),
        &report,
        args.json,
        args.strict,
    );
    if report.conforms(args.strict) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The library's command-hook options from the flags, or the usage
/// error: `--stage` is for process hooks, and each `--event` must be one
/// of D's.
fn command_options(args: &ConformanceArgs, dialect: Dialect) -> Result<CommandOptions, String> {
    if !args.stages.is_empty() {
        return Err("--stage is for process hooks; with --dialect use --event".into());
    }
    let known = dialect.events();
    if let Some(bad) = args
        .events
        .iter()
        .find(|e| !known.iter().any(|k| k.name == *e))
    {
        let names: Vec<&str> = known.iter().map(|k| k.name).collect();
        return Err(format!(
            "--event {bad:?}: {dialect} has no such event (it has {})",
            names.join(", ")
        ));
    }
    let mut opts = CommandOptions::new(dialect, args.command.clone());
    opts.env = env(args)?;
    opts.timeout = timeout(args, 10_000)?;
    opts.events = args.events.clone();
    Ok(opts)
}

/// `--env KEY=VALUE` pairs.
fn env(args: &ConformanceArgs) -> Result<Vec<(String, String)>, String> {
    let mut env = Vec::new();
    for kv in &args.env {
        match kv.split_once('=') {
            Some((k, v)) if !k.is_empty() => env.push((k.to_string(), v.to_string())),
            _ => return Err(format!("--env {kv:?}: expected KEY=VALUE")),
        }
    }
    Ok(env)
}

/// `--timeout-ms`, else `default`; never 0.
fn timeout(args: &ConformanceArgs, default: u64) -> Result<Duration, String> {
    match args.timeout_ms.unwrap_or(default) {
        0 => Err("--timeout-ms must be at least 1".into()),
        ms => Ok(Duration::from_millis(ms)),
    }
}

/// The library's options from the flags, or the usage error.
fn options(args: &ConformanceArgs) -> Result<Options, String> {
    let env = env(args)?;
    let timeout = timeout(args, 5000)?;
    let mut stages = Vec::new();
    for name in &args.stages {
        stages.push(
            name.parse::<Stage>()
                .map_err(|e| format!("--stage {name:?}: {e}"))?,
        );
    }
    let mut opts = Options::new(args.command.clone());
    opts.env = env;
    opts.timeout = timeout;
    opts.stages = (!stages.is_empty()).then_some(stages);
    Ok(opts)
}

/// Prints the report as lines or as one JSON object; a command hook's
/// JSON also names its `dialect`.
fn print(command: &[String], dialect: Option<Dialect>, report: &Report, json: bool, strict: bool) {
    if json {
        let mut body = serde_json::json!({
            "command": command,
            "strict": strict,
            "conforms": report.conforms(strict),
            "passed": report.count(ConformanceStatus::Pass),
            "warnings": report.count(ConformanceStatus::Warn),
            "failed": report.count(ConformanceStatus::Fail),
            "restarted_after": report.restarts(),
            "notes": report.notes,
            "skipped": report.skipped,
            "checks": report.checks,
        });
        if let Some(d) = dialect {
            body["dialect"] = serde_json::json!(d);
        }
        outln!("{body}");
        return;
    }
    for c in &report.checks {
        let restart = if c.restarted {
            " [the hook was restarted after this check]"
        } else {
            ""
        };
        match c.status {
            ConformanceStatus::Pass => outln!("PASS {}{restart}", c.name),
            status => outln!("{} {}: {}{restart}", status.as_str(), c.name, c.detail),
        }
        if !c.advice.is_empty() {
            outln!("     advice: {}", c.advice);
        }
    }
    for note in &report.notes {
        outln!("note: {note}");
    }
    outln!(
        "{} passed, {} warnings, {} failed",
        report.count(ConformanceStatus::Pass),
        report.count(ConformanceStatus::Warn),
        report.count(ConformanceStatus::Fail)
    );
}
