//! `hookhost conformance`: check a hook program against the protocol.

use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use hookhost::conformance;
use hookhost::protocol::Stage;
use hookhost::{ConformanceOptions as Options, ConformanceReport as Report, ConformanceStatus};

use super::usage_error;

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
exit status 1 when a required check failed (or, with --strict, a robustness check).")]
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
    #[arg(long = "stage", value_name = "STAGE", value_delimiter = ',')]
    stages: Vec<String>,
    /// How long one answer may take, in milliseconds.
    #[arg(long, default_value_t = 5000)]
    timeout_ms: u64,
    /// Set a variable in the hook's environment (repeatable). The hook
    /// otherwise gets only PATH, as under the host.
    #[arg(long = "env", value_name = "KEY=VALUE")]
    env: Vec<String>,
    /// The hook's command line.
    #[arg(last = true, required = true, value_name = "CMD")]
    command: Vec<String>,
}

pub async fn run(args: ConformanceArgs) -> ExitCode {
    let opts = match options(&args) {
        Ok(opts) => opts,
        Err(msg) => return usage_error(msg),
    };
    let report = conformance(&opts).await;
    print(&opts.command, &report, args.json, args.strict);
    if report.conforms(args.strict) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The library's options from the flags, or the usage error.
fn options(args: &ConformanceArgs) -> Result<Options, String> {
    let mut env = Vec::new();
    for kv in &args.env {
        match kv.split_once('=') {
            Some((k, v)) if !k.is_empty() => env.push((k.to_string(), v.to_string())),
            _ => return Err(format!("--env {kv:?}: expected KEY=VALUE")),
        }
    }
    if args.timeout_ms == 0 {
        return Err("--timeout-ms must be at least 1".into());
    }
    let mut stages = Vec::new();
    for name in &args.stages {
        stages.push(
            name.parse::<Stage>()
                .map_err(|e| format!("--stage {name:?}: {e}"))?,
        );
    }
    let mut opts = Options::new(args.command.clone());
    opts.env = env;
    opts.timeout = Duration::from_millis(args.timeout_ms);
    opts.stages = (!stages.is_empty()).then_some(stages);
    Ok(opts)
}

/// Prints the report as lines or as one JSON object.
pub(super) fn print(command: &[String], report: &Report, json: bool, strict: bool) {
    if json {
        let body = serde_json::json!({
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
