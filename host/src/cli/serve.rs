//! `hookhost serve`: hookhost as a sidecar, for agents not written in Rust.

use std::fs::File;
use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::PathBuf;
use std::pin::Pin;
use std::process::ExitCode;

use clap::Args;
use hookhost::Host;
use hookhost::sidecar::{ReloadFrom, Sidecar};
use tokio::io::{AsyncRead, AsyncWrite};

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
With --listen ADDR it serves WebSocket instead (one message per text frame; any number of \
agents, each connection its own session) and prints `listening on ws://ADDR` on stdout once \
bound; SIGTERM or SIGINT stops it. There is no authentication: bind a loopback address.\n\n\
Examples:\n  \
hookhost serve -c examples/hooks.toml --stdio\n  \
hookhost serve -c examples/hooks.toml --listen 127.0.0.1:7070"
)]
pub struct ServeArgs {
    /// The config file (TOML, or JSON in PicoClaw's shape).
    #[arg(short = 'c', long = "config")]
    config: PathBuf,
    /// Speak JSON-RPC over stdin and stdout.
    #[arg(long, conflicts_with = "listen")]
    stdio: bool,
    /// Serve JSON-RPC over WebSocket on this address (port 0: any free port).
    #[arg(long, value_name = "ADDR")]
    listen: Option<SocketAddr>,
}

pub async fn run(args: ServeArgs) -> ExitCode {
    if !args.stdio && args.listen.is_none() {
        return usage_error("serve: choose a transport: --stdio or --listen ADDR");
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
    if let Some(addr) = args.listen {
        let code = listen(sidecar, addr).await;
        reloads.abort();
        host.shutdown().await;
        return code;
    }
    let (input, output) = match take_stdio() {
        Ok(io) => io,
        Err(e) => {
            host.shutdown().await;
            eprintln!("hookhost: serve: cannot take stdin and stdout: {e}");
            return ExitCode::from(1);
        }
    };
    let served = tokio::select! {
        r = hookhost::sidecar::serve(sidecar, input, output) => r,
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

/// Accepts WebSocket agents until SIGTERM or SIGINT, each connection its
/// own session over the one host.
async fn listen(sidecar: std::sync::Arc<Sidecar>, addr: SocketAddr) -> ExitCode {
    let listener = match tokio::net::TcpListener::bind(addr).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("hookhost: serve: cannot listen on {addr}: {e}");
            return ExitCode::from(1);
        }
    };
    let bound = listener.local_addr().unwrap_or(addr);
    if !bound.ip().is_loopback() {
        tracing::warn!(
            "serve: listening on {bound}, which is not a loopback address; the sidecar has no authentication"
        );
    }
    {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "listening on ws://{bound}");
        let _ = out.flush();
    }
    let mut sessions = tokio::task::JoinSet::new();
    let terminated = super::terminated();
    tokio::pin!(terminated);
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) if sessions.len() >= hookhost::sidecar::MAX_CONNECTIONS => {
                    tracing::warn!(
                        %peer,
                        "serve: refused a connection: {} sessions are open already",
                        hookhost::sidecar::MAX_CONNECTIONS
                    );
                    drop(stream);
                }
                Ok((stream, peer)) => {
                    let sidecar = sidecar.clone();
                    sessions.spawn(async move {
                        if let Err(e) = hookhost::sidecar::serve_websocket(sidecar, stream).await {
                            tracing::warn!(%peer, "sidecar session: {e}");
                        }
                    });
                }
                // Out of descriptors and the like: pause rather than spin.
                Err(e) => {
                    tracing::warn!("serve: accept failed: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                }
            },
            Some(_) = sessions.join_next(), if !sessions.is_empty() => {}
            _ = &mut terminated => break,
        }
    }
    sessions.abort_all();
    ExitCode::SUCCESS
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

type Input = Pin<Box<dyn AsyncRead + Send>>;
type Output = Pin<Box<dyn AsyncWrite + Send>>;

/// Moves the wire off fds 0 and 1 and points fd 1 at stderr, so that
/// nothing printed by mistake can corrupt an answer. Pipes (what an agent
/// gives a sidecar) go through tokio's reactor: through tokio's own stdin
/// and stdout every read and write took a blocking-pool thread hop, which
/// the benchmark's sidecar row showed as about a third of its latency.
fn take_stdio() -> io::Result<(Input, Output)> {
    let wire_out = dup_cloexec(1)?;
    let wire_in = dup_cloexec(0)?;
    // SAFETY: dup2 on descriptors this process owns; fd 2 stays open.
    if unsafe { libc::dup2(2, 1) } < 0 {
        return Err(io::Error::last_os_error());
    }
    let input: Input = if is_fifo(&wire_in) {
        Box::pin(tokio::net::unix::pipe::Receiver::from_owned_fd(wire_in)?)
    } else {
        Box::pin(tokio::fs::File::from_std(File::from(wire_in)))
    };
    let output: Output = if is_fifo(&wire_out) {
        Box::pin(tokio::net::unix::pipe::Sender::from_owned_fd(wire_out)?)
    } else {
        Box::pin(tokio::fs::File::from_std(File::from(wire_out)))
    };
    Ok((input, output))
}

fn dup_cloexec(fd: i32) -> io::Result<OwnedFd> {
    // SAFETY: F_DUPFD_CLOEXEC returns a fresh descriptor or -1.
    let new = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
    if new < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `new` was just created and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(new) })
}

fn is_fifo(fd: &OwnedFd) -> bool {
    // SAFETY: fstat writes into the zeroed struct we own.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        libc::fstat(fd.as_raw_fd(), &mut st) == 0 && (st.st_mode & libc::S_IFMT) == libc::S_IFIFO
    }
}
