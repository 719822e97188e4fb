//! `hookhost serve`: hookhost as a sidecar, for agents not written in Rust.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use hookhost::Host;
use hookhost::sidecar::{ReloadFrom, Sidecar};

use super::usage_error;

/// Serve the merged chain to an agent over JSON-RPC (spec/sidecar.md).
#[derive(Args)]
#[command(
    after_help = "The agent writes one JSON-RPC request per line to hookhost's stdin \
and reads one response per line on its stdout:\n  \
{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"host.before_tool\",\"params\":{\"tool\":\"shell\",\"arguments\":{\"command\":\"ls\"}}}\n  \
{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"action\":\"continue\"}}\n\n\
Methods: host.before_tool, host.after_tool, host.before_llm, host.after_llm, \
host.approve_tool, host.lifecycle, host.stats, host.reload, and the notification host.emit. \
SIGHUP reloads the config. At end of input every request read is answered, the hooks are \
stopped, and hookhost exits 0.\n\n\
Example:\n  \
hookhost serve -c examples/hooks.toml --stdio"
)]
pub struct ServeArgs {
    /// The config file (TOML, or JSON in PicoClaw's shape).
    #[arg(short = 'c', long = "config")]
    config: PathBuf,
    /// Speak JSON-RPC over stdin and stdout.
    #[arg(long)]
    stdio: bool,
}

pub async fn run(args: ServeArgs) -> ExitCode {
    if !args.stdio {
        return usage_error("serve: choose a transport: --stdio");
    }
    let config = match super::load_config(&args.config) {
        Ok(c) => c,
        Err(e) => return usage_error(e),
    };
    let host = Host::start(config).await;
    let sidecar = Sidecar::new(
        host.clone(),
        ReloadFrom::File(args.config.clone()),
        super::load_config,
    );
    let reloads = {
        let sidecar = sidecar.clone();
        tokio::spawn(async move { reload_on_sighup(&sidecar).await })
    };
    let served = tokio::select! {
        r = hookhost::sidecar::serve(sidecar, tokio::io::stdin(), tokio::io::stdout()) => r,
        _ = super::terminated() => Ok(()),
    };
    reloads.abort();
    host.shutdown().await;
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hookhost: serve: {e}");
            ExitCode::from(1)
        }
    }
}

/// Reloads the config file at every SIGHUP; the outcome goes to the log.
async fn reload_on_sighup(sidecar: &Sidecar) {
    let Ok(mut hup) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()) else {
        tracing::warn!("cannot watch SIGHUP; reload with host.reload instead");
        return;
    };
    while hup.recv().await.is_some() {
        match sidecar.reload().await {
            Ok(report) => tracing::warn!("SIGHUP: config reloaded: {report}"),
            Err(e) => tracing::error!("SIGHUP: reload failed, hooks unchanged: {}", e.message),
        }
    }
}
