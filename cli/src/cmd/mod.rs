//! Subcommands of the `hookhost` binary, and the dispatcher that runs one.
//! Exit codes: 0 done, 1 a check failed, 2 a usage or config error (one
//! line on stderr, [`crate::shared::exit`]). What the subcommands share is
//! in [`crate::shared`], not here.

mod audit;
mod bundle;
mod call;
mod check;
mod conformance;
mod daemon;
mod demo;
mod doctor;
mod install;
mod logging;
mod probe;
mod relay;
mod replay;
mod serve;
mod status;
mod token;
mod trust;
mod unit;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::gateway::otel;
use crate::shared::limits;

#[derive(Parser)]
#[command(
    name = "hookhost",
    version,
    about = "Run agent hooks as long-lived processes and merge their verdicts",
    long_about = "hookhost starts hook processes written in any language, speaks JSON-RPC 2.0 \
to each over stdin/stdout, and merges their answers into one verdict per hook point.\n\n\
Under an agent you already use: `hookhost init` (a commented ~/.config/hookhost/hooks.toml, \
and the agents whose own hooks `install --adopt` can bring in), `hookhost serve --socket` (the \
daemon; with no config yet no hook runs), `hookhost install claude-code` (or codex, gemini-cli, \
cursor, copilot).\n\n\
Logs go to stderr; set HOOKHOST_LOG (e.g. HOOKHOST_LOG=info, or \
HOOKHOST_LOG=hookhost::hook_stderr=info to see what hooks print) to change the level. \
`hookhost relay` writes on stdout and stderr only its answer to the agent: its log goes to \
$XDG_STATE_HOME/hookhost/relay.log (~/.local/state/hookhost/relay.log), or to stderr when \
HOOKHOST_LOG is set."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Demo(demo::DemoArgs),
    Init(install::InitArgs),
    Call(call::CallArgs),
    Check(check::CheckArgs),
    Replay(replay::ReplayArgs),
    Conformance(conformance::ConformanceArgs),
    Probe(probe::ProbeArgs),
    Serve(Box<serve::ServeArgs>),
    Relay(relay::RelayArgs),
    Status(status::StatusArgs),
    Unit(unit::UnitArgs),
    Install(install::InstallArgs),
    Uninstall(install::UninstallArgs),
    Trust(trust::TrustArgs),
    Token(token::TokenArgs),
    Audit(audit::AuditArgs),
    Bundle(bundle::BundleArgs),
    Doctor(doctor::DoctorArgs),
}

/// `hookhost relay` alone. An agent starts a relay for every hook call, so
/// its arguments are parsed without building the other subcommands'
/// (which costs more than the relay's round trip to the daemon).
#[derive(Parser)]
#[command(name = "hookhost")]
struct RelayOnly {
    #[command(subcommand)]
    command: RelayCommand,
}

#[derive(Subcommand)]
enum RelayCommand {
    Relay(relay::RelayArgs),
}

/// The command line's subcommand. A well-formed relay is read by
/// [`RelayOnly`]; everything else, and any relay it refuses (`--help`,
/// a mistake), by the whole [`Cli`], which says what is wrong as usual.
fn parse() -> Command {
    if std::env::args_os().nth(1).is_some_and(|a| a == "relay") {
        if let Ok(RelayOnly {
            command: RelayCommand::Relay(args),
        }) = RelayOnly::try_parse()
        {
            return Command::Relay(args);
        }
    }
    Cli::parse().command
}

/// Parses arguments, runs the subcommand, maps errors to exit codes.
pub fn main() -> ExitCode {
    let command = parse();
    let telemetry = match start_log(&command) {
        Ok(telemetry) => telemetry,
        Err(code) => return code,
    };
    // A relay to the daemon is done before any runtime or hook exists.
    let command = match command {
        Command::Relay(args) => match relay::prepare(args) {
            Ok(code) => return code,
            Err(local) => Work::Relay(local),
        },
        Command::Status(args) => return status::run(args),
        Command::Unit(args) => return unit::run(args),
        Command::Trust(args) => return trust::run(args),
        Command::Token(args) => return token::run(args),
        Command::Audit(args) => return audit::run(args),
        Command::Bundle(args) => return bundle::run(args),
        other => Work::Command(Box::new(other)),
    };
    limits::raise_nofile();
    // hookhost spawns nothing but hooks: it adopts what escapes their
    // groups (setsid daemons), and kills it at exit.
    if let Err(e) = hookhost::become_subreaper() {
        tracing::warn!(
            "cannot become the subreaper of the hooks ({e}); a hook's daemon may outlive hookhost"
        );
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("hookhost: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    runtime.spawn(reap_adopted());
    let code = runtime.block_on(dispatch(command));
    // Hooks are stopped by then; do not wait on stray blocking tasks.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    let escaped = hookhost::kill_all_children();
    if escaped > 0 {
        tracing::info!("killed {escaped} processes that escaped their hook's process group");
    }
    // The spans still queued are sent (bounded in time).
    drop(telemetry);
    code
}

/// Starts the log and, for `serve --otlp URL`, the exporter the log's
/// subscriber carries: its guard (exit flushes it), or the usage error.
fn start_log(command: &Command) -> Result<Option<otel::Telemetry>, ExitCode> {
    let otlp = match command {
        Command::Serve(args) => args.otlp(),
        _ => None,
    };
    let started = otlp.map(otel::start).transpose();
    let (export, telemetry) = started
        .map_err(|e| crate::shared::exit::usage_error(format!("serve: {e}")))?
        .unzip();
    logging::init(matches!(command, Command::Relay(_)), export);
    Ok(telemetry)
}

/// What runs on the runtime: a subcommand, or a relay's in-process chain.
enum Work {
    Command(Box<Command>),
    Relay(relay::Local),
}

async fn dispatch(work: Work) -> ExitCode {
    let command = match work {
        Work::Relay(local) => return relay::run_local(local).await,
        Work::Command(command) => *command,
    };
    match command {
        Command::Demo(args) => demo::run(args).await,
        Command::Init(args) => install::init(args).await,
        Command::Call(args) => call::run(args).await,
        Command::Check(args) => check::run(args).await,
        Command::Replay(args) => replay::run(args).await,
        Command::Conformance(args) => conformance::run(args).await,
        Command::Probe(args) => probe::run(args).await,
        Command::Serve(args) => serve::run(*args).await,
        Command::Install(args) => install::install(args).await,
        Command::Uninstall(args) => install::uninstall(args).await,
        Command::Doctor(args) => doctor::run(args),
        Command::Relay(_)
        | Command::Status(_)
        | Command::Unit(_)
        | Command::Trust(_)
        | Command::Token(_)
        | Command::Audit(_)
        | Command::Bundle(_) => {
            unreachable!(
                "relay, status, unit, trust, token and bundle are done before the runtime starts"
            )
        }
    }
}

/// Reaps the orphans hookhost adopted (as subreaper) that exit while it
/// runs, so that a long `serve` does not collect zombies.
async fn reap_adopted() {
    loop {
        tokio::time::sleep(std::time::Duration::from_secs(2)).await;
        hookhost::reap_adopted_zombies();
    }
}
