//! `hookhost conformance`: check a hook program against the protocol.

use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use hookhost::{ConformanceOptions as Options, conformance};

use super::usage_error;

/// Spawn a hook and check it against protocol v1, one line per check.
#[derive(Args)]
#[command(after_help = "Examples:\n  \
hookhost conformance -- python3 examples/python/guard.py\n  \
hookhost conformance --json --env CACHE_TTL_SECONDS=5 -- ./target/release/cache\n\n\
Checks: the hello handshake; every declared stage answered with a valid result for \
sample params (plain, unicode, empty arguments, a 1 MiB argument); an unknown method \
answered -32601; malformed lines survived; notifications not answered; 64 concurrent \
requests answered with matching ids; $/cancel_request tolerated; exit within 2 s of \
stdin EOF; nothing but JSON-RPC on stdout. The last line is `N passed, N failed`; \
exit status 1 when any check failed.")]
pub struct ConformanceArgs {
    /// Print the report as one JSON object instead of lines.
    #[arg(long)]
    json: bool,
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
    let mut env = Vec::new();
    for kv in &args.env {
        match kv.split_once('=') {
            Some((k, v)) if !k.is_empty() => env.push((k.to_string(), v.to_string())),
            _ => return usage_error(format!("--env {kv:?}: expected KEY=VALUE")),
        }
    }
    if args.timeout_ms == 0 {
        return usage_error("--timeout-ms must be at least 1");
    }
    let mut opts = Options::new(args.command);
    opts.env = env;
    opts.timeout = Duration::from_millis(args.timeout_ms);
    let report = conformance(&opts).await;
    if args.json {
        let body = serde_json::json!({
            "command": opts.command,
            "checks": report.checks,
            "passed": report.passed(),
            "failed": report.failed(),
        });
        outln!("{body}");
    } else {
        for c in &report.checks {
            if c.passed {
                outln!("PASS {}", c.name);
            } else {
                outln!("FAIL {}: {}", c.name, c.detail);
            }
        }
        outln!("{} passed, {} failed", report.passed(), report.failed());
    }
    if report.failed() == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
