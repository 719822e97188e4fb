//! `hookhost probe`: a hook that checks the host running it. Its stdout is
//! the wire, so nothing here prints there (no `outln!`): the report goes
//! to stderr or to `--report FILE`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use hookhost::protocol::Stage;
use hookhost::protocol::event::EventPattern;
use hookhost::{ProbeOptions, ProbeReport, probe};

use crate::shared::exit::usage_error;

/// Run as a hook under a host and check what the host sends against
/// protocol v1; print a report at exit.
#[derive(Args)]
#[command(
    after_help = "Examples (as the command of a process hook in the host under test):\n  \
command = [\"hookhost\", \"probe\", \"--report\", \"/tmp/probe.txt\"]\n  \
command = [\"hookhost\", \"probe\", \"--json\", \"--report\", \"/tmp/probe.json\", \"--declare\", \"--stall\", \"before_tool\"]\n  \
command = [\"hookhost\", \"probe\", \"--linger-ms\", \"10000\"]   # see the host's EOF, grace, SIGTERM\n\n\
The probe speaks protocol v1 on stdin/stdout, answers every stage with its neutral answer \
(continue, approved, {}), records every line and checks: hello_first, \
nothing_before_hello_answer, ids, jsonrpc, methods, params, notifications, declared, \
cancel_after_deadline, eof_before_term. It exits at stdin EOF (or --linger-ms after it), on \
SIGTERM, or when stdout closes, and prints `PASS name` or `VIOLATION name: line N: detail` \
per check, a summary, and `N checks, N violations` last. Exit status 1 when any violation \
was seen. spec/conformance.md section 4 has the rules; section 5.3 the --json shape."
)]
pub struct ProbeArgs {
    /// Write the report to FILE instead of stderr.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Print the report as one JSON object instead of lines.
    #[arg(long)]
    json: bool,
    /// Hold the hello answer back this long, so that a host writing before
    /// it has the answer is seen doing so.
    #[arg(long, default_value_t = 100, value_name = "MS")]
    hello_delay_ms: u64,
    /// Declare every stage and every event (`observe = ["*"]`) in the hello
    /// answer; without it the probe declares nothing, PicoClaw-style.
    #[arg(long)]
    declare: bool,
    /// Declare these stages in the hello answer (repeatable); a call of any
    /// other stage is then a violation.
    #[arg(long, value_name = "STAGE", value_parser = parse_stage)]
    intercept: Vec<Stage>,
    /// Declare these event patterns in the hello answer (repeatable); an
    /// event matching none is then a violation.
    #[arg(long, value_name = "PATTERN", value_parser = parse_pattern)]
    observe: Vec<String>,
    /// Never answer calls of this stage (repeatable): each must then be
    /// followed by a `$/cancel_request` for its id.
    #[arg(long, value_name = "STAGE", value_parser = parse_stage)]
    stall: Vec<Stage>,
    /// After stdin EOF, stay up to MS waiting for SIGTERM, to observe the
    /// host's EOF, grace, SIGTERM sequence.
    #[arg(long, value_name = "MS")]
    linger_ms: Option<u64>,
}

fn parse_stage(s: &str) -> Result<Stage, String> {
    s.parse::<Stage>().map_err(|e| e.to_string())
}

fn parse_pattern(s: &str) -> Result<String, String> {
    EventPattern::parse(s)
        .map(|_| s.to_string())
        .map_err(|e| e.to_string())
}

/// The library's options from the flags.
fn options(args: &ProbeArgs) -> ProbeOptions {
    let mut opts = ProbeOptions::new();
    opts.hello_delay = Duration::from_millis(args.hello_delay_ms);
    if args.declare {
        opts.declare_all();
    }
    if !args.intercept.is_empty() {
        opts.intercept = Some(args.intercept.clone());
    }
    if !args.observe.is_empty() {
        opts.observe = Some(args.observe.clone());
    }
    opts.stall.clone_from(&args.stall);
    opts.linger = args.linger_ms.map(Duration::from_millis);
    opts
}

pub async fn run(args: ProbeArgs) -> ExitCode {
    let report = match probe(&options(&args)).await {
        Ok(r) => r,
        Err(e) => return usage_error(e),
    };
    let text = render(&report, args.json);
    match &args.report {
        Some(path) => {
            if let Err(e) = std::fs::write(path, &text) {
                eprint!("{text}");
                return usage_error(format!("--report {}: {e}", path.display()));
            }
        }
        None => eprint!("{text}"),
    }
    if report.violations() == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn render(report: &ProbeReport, json: bool) -> String {
    if json {
        format!("{}\n", report.to_json())
    } else {
        report.to_text()
    }
}
