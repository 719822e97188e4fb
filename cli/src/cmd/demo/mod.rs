//! `hookhost demo`: a scripted agent session through the example hooks, so
//! a newcomer sees every kind of verdict in one run.

mod files;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;
use hookhost::protocol::chain::StepOutcome;
use hookhost::protocol::event::RuntimeEvent;
use hookhost::{Config, HookKind, HookStatus, HookTrace, Host};
use hookhost_protocol::chain::ParamsError;
use hookhost_protocol::{Decision, Outcome, Stage};
use serde_json::{Value, json};

use crate::shared::config::load_config;
use crate::shared::exit::usage_error;
use crate::shared::table::print_table;
use crate::shared::term::sanitize as safe;

/// Run a scripted agent session through the example hooks and show what each hook did.
#[derive(Args)]
#[command(after_help = "Examples:\n  \
hookhost demo\n  \
hookhost demo --config my-hooks.toml\n\n\
The session is fixed: echo hello, rm -rf /tmp/test, sudo apt update, ls, cat README.md \
twice, and a command whose output holds an API key. No command really runs: the tools \
are fakes. The example hooks (the repository's examples/hooks.toml and examples/python/, \
with the Python SDK) are built into the binary and written to a temporary folder for the \
run, so the demo needs no clone; it needs python3 (3.11 or later) on PATH.")]
pub struct DemoArgs {
    /// Use this config instead of the built-in example hooks (examples/hooks.toml).
    #[arg(short = 'c', long = "config")]
    config: Option<PathBuf>,
}

/// One scripted tool call and what the fake tool prints when it runs.
struct Step {
    command: &'static str,
    output: &'static str,
}

const SESSION: [Step; 7] = [
    Step {
        command: "echo hello",
        output: "hello",
    },
    Step {
        command: "rm -rf /tmp/test",
        output: "",
    },
    Step {
        command: "sudo apt update",
        output: "",
    },
    Step {
        command: "ls",
        output: "README.md  examples  host  protocol  spec",
    },
    Step {
        command: "cat README.md",
        output: "# hookhost\nhookhost runs the hooks of an AI agent...",
    },
    Step {
        command: "cat README.md",
        output: "# hookhost\nhookhost runs the hooks of an AI agent...",
    },
    Step {
        command: "env",
        output: "HOME=/home/agent\nOPENAI_API_KEY=sk-proj-Xy7qLm2vNc8RtWz4Kp9s\nLANG=C.UTF-8",
    },
];

struct Style {
    on: bool,
}

impl Style {
    fn paint(&self, code: &str, text: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }
    fn bold(&self, t: &str) -> String {
        self.paint("1", t)
    }
    fn dim(&self, t: &str) -> String {
        self.paint("2", t)
    }
    fn red(&self, t: &str) -> String {
        self.paint("31", t)
    }
    fn green(&self, t: &str) -> String {
        self.paint("32", t)
    }
    fn yellow(&self, t: &str) -> String {
        self.paint("33", t)
    }
    fn cyan(&self, t: &str) -> String {
        self.paint("36", t)
    }
}

/// The config the demo runs: `--config`, or the built-in example hooks
/// unpacked into a folder that lives as long as the returned guard.
fn load(args: &DemoArgs) -> Result<(Config, Option<files::DemoDir>), String> {
    match &args.config {
        Some(path) => Ok((load_config(path)?, None)),
        None => {
            let dir = files::DemoDir::unpack()?;
            Ok((load_config(&dir.config())?, Some(dir)))
        }
    }
}

/// What one hook did, in a few words.
fn describe(t: &HookTrace) -> String {
    match &t.outcome {
        StepOutcome::Applied(d) => match d {
            Decision::Continue => "continue".into(),
            Decision::Modify(_) => "modify".into(),
            Decision::Respond(_) => "respond".into(),
            Decision::DenyTool(_) => "deny_tool".into(),
            Decision::Ask(_) => "ask".into(),
            Decision::Allow { .. } => "allow".into(),
            Decision::Abort { hard: false, .. } => "abort_turn".into(),
            Decision::Abort { hard: true, .. } => "hard_abort".into(),
            Decision::Approval { approved: true, .. } => "approved".into(),
            Decision::Approval {
                approved: false, ..
            } => "refused".into(),
            Decision::Lifecycle { block: true, .. } => "block".into(),
            Decision::Lifecycle { block: false, .. } => "continue".into(),
        },
        StepOutcome::Failed { error, policy } => {
            format!("failed ({}; on_error = {policy})", safe(&error.to_string()))
        }
    }
}

fn stage_line(st: &Style, stage: Stage, trace: &[HookTrace], took: Duration) -> String {
    let hooks = if trace.is_empty() {
        st.dim("no hook")
    } else {
        trace
            .iter()
            .map(|t| format!("{} {}", st.cyan(&safe(&t.hook)), describe(t)))
            .collect::<Vec<_>>()
            .join(&st.dim(" → "))
    };
    format!(
        "    {:<13}{}  {}",
        stage.as_str(),
        hooks,
        st.dim(&format!("{:.1} ms", took.as_secs_f64() * 1e3))
    )
}

fn event(host: &Host, kind: &str, payload: Value) {
    host.emit(RuntimeEvent {
        id: host.next_event_id(),
        kind: kind.into(),
        time: "2026-01-01T00:00:00Z".into(),
        source: Some("hookhost-demo".into()),
        scope: None,
        severity: None,
        payload,
        extra: Default::default(),
    });
}

/// Plays the scripted session and prints what each hook did, then a
/// summary: 0 done, 1 a hook did not start, 2 a config error.
pub async fn run(args: DemoArgs) -> ExitCode {
    // `_files` keeps the built-in hooks' folder until the hooks have stopped.
    let (config, _files) = match load(&args) {
        Ok(loaded) => loaded,
        Err(e) => return usage_error(e),
    };
    let st = Style {
        on: std::io::stdout().is_terminal(),
    };
    outln!(
        "{}",
        st.bold("hookhost demo: a scripted agent session through the example hooks")
    );
    let Some(host) = start(config, &st).await else {
        return ExitCode::FAILURE;
    };
    let mut rows = vec![[
        "#".to_string(),
        "tool call".into(),
        "decision".into(),
        "by".into(),
        "hook time".into(),
    ]];
    for (i, step) in SESSION.iter().enumerate() {
        match play(&host, &st, i + 1, step).await {
            Ok(verdict) => rows.push(conclude(&st, i + 1, step, verdict)),
            Err(e) => {
                host.shutdown().await;
                return usage_error(e);
            }
        }
    }
    host.shutdown().await;
    outln!();
    outln!("{}", st.bold("Summary"));
    print_table(&rows);
    ExitCode::SUCCESS
}

/// Starts the hooks and says which are ready and how fast; `None`, with
/// each failure named and the hooks stopped, when one did not start.
async fn start(config: Config, st: &Style) -> Option<Host> {
    let started = Instant::now();
    let host = Host::start(config).await;
    let ready: Vec<String> = host
        .hooks()
        .into_iter()
        .filter(|h| h.kind == HookKind::Process && h.status == HookStatus::Ready)
        .map(|h| h.name)
        .collect();
    outln!(
        "{}",
        st.dim(&format!(
            "started {} hooks in {} ms: {}",
            ready.len(),
            started.elapsed().as_millis(),
            ready.join(", ")
        ))
    );
    let failures = host.start_failures();
    if failures.is_empty() {
        return Some(host);
    }
    for f in failures {
        outln!(
            "{} hook `{}` did not start: {}",
            st.red("✗"),
            safe(&f.hook),
            safe(&f.error.to_string())
        );
    }
    host.shutdown().await;
    None
}

/// What one tool call came to: the decision shown, the hook it came from
/// (empty when none decided), and the time the hooks took over it.
struct Verdict {
    decision: String,
    by: String,
    spent: Duration,
}

/// Plays the `n`th tool call of the session: before_tool, then, when the
/// call may run, approve_tool, the fake tool and after_tool, printing
/// each stage. `Err` when the chain refused the call's params.
async fn play(host: &Host, st: &Style, n: usize, step: &Step) -> Result<Verdict, ParamsError> {
    outln!();
    outln!(
        "{} {} {}",
        st.bold(&format!("[{n}]")),
        st.dim("shell"),
        st.bold(step.command)
    );
    let mut spent = Duration::ZERO;
    let call = json!({"tool": "shell", "arguments": {"command": step.command}});
    event(host, "agent.tool.requested", call.clone());
    let (outcome, trace) = run_stage(host, st, Stage::BeforeTool, call, &mut spent).await?;
    let (decision, by, may_run) = decide(st, step, outcome, &trace);
    let mut verdict = Verdict {
        decision,
        by,
        spent,
    };
    if let Some(call) = may_run {
        run_tool(host, st, step, call, &mut verdict).await;
    }
    Ok(verdict)
}

/// Runs one stage, adds the time it took to `spent` and, when it ran,
/// prints its line; what the chain decided, with each hook's part.
async fn run_stage(
    host: &Host,
    st: &Style,
    stage: Stage,
    params: Value,
    spent: &mut Duration,
) -> Result<(Outcome, Vec<HookTrace>), ParamsError> {
    let begun = Instant::now();
    let result = host.run_stage_traced(stage, params).await;
    let took = begun.elapsed();
    *spent += took;
    if let Ok((_, trace)) = &result {
        outln!("{}", stage_line(st, stage, trace, took));
    }
    result
}

/// What before_tool's outcome means for the call, as the demo shows it:
/// the decision, the hook it came from, and the params the tool runs with
/// when it may run.
fn decide(
    st: &Style,
    step: &Step,
    outcome: Outcome,
    trace: &[HookTrace],
) -> (String, String, Option<Value>) {
    match outcome {
        Outcome::DenyTool { reason, by } => {
            outln!("    {} {}", st.red("⛔ denied:"), safe(&reason));
            (st.red("denied"), by, None)
        }
        Outcome::Abort { reason, by, .. } => {
            outln!("    {} {}", st.red("⛔ aborted:"), safe(&reason));
            (st.red("aborted"), by, None)
        }
        Outcome::Refused { reason, by } => {
            (st.red(&format!("refused: {}", safe(&reason))), by, None)
        }
        // A lifecycle outcome; not reachable at before_tool.
        Outcome::Blocked { reason, by } => {
            (st.red(&format!("blocked: {}", safe(&reason))), by, None)
        }
        Outcome::Lifecycle { .. } => (st.green("continued"), String::new(), None),
        Outcome::Respond { result, by } => {
            outln!(
                "    {} {:?}",
                st.green("↩ answered by a hook, the tool did not run:"),
                first_line(&result.for_llm)
            );
            (st.green("answered from cache"), by, None)
        }
        Outcome::Ask { reason, by, .. } => {
            outln!(
                "    {} {}",
                st.yellow("? the user is asked:"),
                safe(&reason)
            );
            (st.yellow("asked"), by, None)
        }
        Outcome::Continue {
            params, modified, ..
        }
        | Outcome::Allow {
            params, modified, ..
        } => let_through(st, step, params, modified, trace),
    }
}

/// A call before_tool lets through: "allowed", or "rewritten" with the
/// command it now runs and the hook that rewrote it.
fn let_through(
    st: &Style,
    step: &Step,
    params: Value,
    modified: bool,
    trace: &[HookTrace],
) -> (String, String, Option<Value>) {
    let rewritten_by = last_modifier(trace);
    if modified {
        let now = params["arguments"]["command"]
            .as_str()
            .unwrap_or("?")
            .to_string();
        outln!(
            "    {} {} {} {}",
            st.yellow("✎ rewritten:"),
            step.command,
            st.dim("→"),
            st.bold(&safe(&now))
        );
    }
    let label = if modified {
        st.yellow("rewritten")
    } else {
        st.green("allowed")
    };
    (label, rewritten_by, Some(params))
}

/// Asks approve_tool about a call before_tool let through and, when it is
/// approved, runs the fake tool and after_tool on its output; a refusal
/// or a redacted output becomes the verdict.
async fn run_tool(host: &Host, st: &Style, step: &Step, call: Value, verdict: &mut Verdict) {
    if !approve(host, st, &call, verdict).await {
        return;
    }
    event(host, "agent.tool.exec_start", call.clone());
    let mut result = call;
    result["result"] = json!({"for_llm": step.output});
    result["duration_ms"] = json!(1);
    outln!(
        "    {:<13}{} {:?}",
        "tool runs",
        st.dim("(fake) prints"),
        first_line(step.output)
    );
    after_tool(host, st, result, verdict).await;
    event(
        host,
        "agent.tool.exec_end",
        json!({"command": step.command}),
    );
}

/// approve_tool: whether the call may run. A refusal is the verdict; a
/// stage that could not run keeps the tool from running too.
async fn approve(host: &Host, st: &Style, call: &Value, verdict: &mut Verdict) -> bool {
    let stage = Stage::ApproveTool;
    match run_stage(host, st, stage, call.clone(), &mut verdict.spent).await {
        Ok((Outcome::Refused { reason, by }, _)) => {
            outln!("    {} {}", st.red("⛔ refused:"), safe(&reason));
            verdict.decision = st.red("refused");
            verdict.by = by;
            false
        }
        Ok(_) => true,
        Err(_) => false,
    }
}

/// after_tool on the tool's output: an output a hook rewrote is shown as
/// the model sees it, and is the verdict.
async fn after_tool(host: &Host, st: &Style, result: Value, verdict: &mut Verdict) {
    let stage = Stage::AfterTool;
    let Ok((outcome, trace)) = run_stage(host, st, stage, result, &mut verdict.spent).await else {
        return;
    };
    if let Outcome::Continue {
        params,
        modified: true,
        ..
    } = outcome
    {
        let text = params["result"]["for_llm"].as_str().unwrap_or("");
        outln!(
            "    {} {:?}",
            st.yellow("✎ output rewritten, the model sees:"),
            text
        );
        verdict.decision = st.yellow("output redacted");
        verdict.by = last_modifier(&trace);
    }
}

/// Prints the `n`th call's verdict and returns its row of the summary.
fn conclude(st: &Style, n: usize, step: &Step, verdict: Verdict) -> [String; 5] {
    let Verdict {
        decision,
        by,
        spent,
    } = verdict;
    outln!(
        "    {} {}{}",
        st.bold("⇒"),
        decision,
        if by.is_empty() {
            String::new()
        } else {
            st.dim(&format!(" (by {})", safe(&by)))
        }
    );
    [
        n.to_string(),
        step.command.to_string(),
        strip_ansi(&decision),
        if by.is_empty() { "-".into() } else { by },
        format!("{:.1} ms", spent.as_secs_f64() * 1e3),
    ]
}

/// The last hook that rewrote the params, for the summary's "by" column.
fn last_modifier(trace: &[HookTrace]) -> String {
    trace
        .iter()
        .rev()
        .find(|t| matches!(t.outcome, StepOutcome::Applied(Decision::Modify(_))))
        .map(|t| t.hook.clone())
        .unwrap_or_default()
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_escape = false;
    for c in s.chars() {
        match (in_escape, c) {
            (false, '\x1b') => in_escape = true,
            (true, 'm') => in_escape = false,
            (true, _) => {}
            (false, c) => out.push(c),
        }
    }
    out
}
