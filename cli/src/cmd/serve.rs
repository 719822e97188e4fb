//! `hookhost serve`: hookhost as a sidecar, for agents not written in Rust.

use std::fs::File;
use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::pin::Pin;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use crate::gateway::jwt::Jwt;
use crate::gateway::tls;
use crate::gateway::tokens::Tokens;
use crate::sidecar::{
    Access, ConnectionCap, Reader, ReloadFrom, Sidecar, Ticket, Writer, WsError, WsOptions,
};
use clap::Args;
use hookhost::LogBudget;
use hookhost::{Config, Host};
use tokio::io::{AsyncRead, AsyncWrite};

use super::daemon;
use crate::gateway::state::Redis;
use crate::shared::config::load_config;
use crate::shared::exit::usage_error;
use crate::shared::paths;
use crate::shared::signal::terminated;

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
With --listen ADDR it serves WebSocket instead (one message per text message; any number of \
agents, each connection its own session) and prints `listening on ws://ADDR` on stdout once \
bound; SIGTERM or SIGINT stops it. The same port answers agents' HTTP hooks: POST \
/hooks/<dialect> (claude-code, codex, gemini-cli, cursor, copilot, docker-agent) takes the event \
as that agent sends it and answers in its format. An upgrade or request that carries an Origin \
header (a browser) is refused with 403 unless --allow-origin lists it; bound to loopback, the \
Host header must name a loopback address. With --token-file every upgrade and request must \
carry `Authorization: Bearer TOKEN`, else 401; on an address that is not loopback the token is \
required.\n\n\
With --socket it is the user's daemon: it serves `hookhost relay` and `hookhost status` on a \
Unix socket (default $XDG_RUNTIME_DIR/hookhost/hookhost.sock), refuses to start while another \
daemon holds it, and reloads when the config or a settings file it imports changes. Without \
-c it serves ~/.config/hookhost/hooks.toml; while that file does not exist (a first run) it \
starts with no hook, so every event is answered as no hook decided and each agent decides as \
it would without hookhost, says so on stderr, and loads the file once it is written (`hookhost \
init` writes a commented one). A -c FILE that does not exist is an error. Its --listen port always requires the token: \
--token-file, else ~/.config/hookhost/http-token (created 0600 when missing; `hookhost install \
--via http` writes it into the agent's settings).\n\n\
With --policy URL_OR_PATH --policy-key PUB (instead of -c) it serves only signed policy bundles \
(`hookhost bundle`): until a first valid bundle is loaded every refusable event is refused; every \
--policy-poll SECS it fetches the bundle (https with ETag, or a file) and its .minisig, and swaps \
in a valid newer one; a bad, unsigned or older one is refused and the policy in force kept.\n\n\
Examples:\n  \
hookhost serve -c examples/hooks.toml --stdio\n  \
hookhost serve -c examples/hooks.toml --listen 127.0.0.1:7070\n  \
hookhost serve -c examples/hooks.toml --listen 127.0.0.1:7070 --token-file ~/.config/hookhost/token\n  \
hookhost serve --socket --listen 127.0.0.1:7070"
)]
pub struct ServeArgs {
    /// The config file (TOML, or JSON in PicoClaw's shape); default
    /// `~/.config/hookhost/hooks.toml`, which may be missing (no hook runs
    /// until it is written; `hookhost init`).
    #[arg(short = 'c', long = "config")]
    config: Option<PathBuf>,
    /// Speak JSON-RPC over stdin and stdout.
    #[arg(long, conflicts_with_all = ["listen", "socket"])]
    stdio: bool,
    /// Serve WebSocket JSON-RPC and the agents' HTTP hooks
    /// (`POST /hooks/<dialect>`) on this address (port 0: any free port).
    #[arg(long, value_name = "ADDR")]
    listen: Option<SocketAddr>,
    /// Serve `hookhost relay` and `hookhost status` on this Unix socket,
    /// as the user's daemon (default `$XDG_RUNTIME_DIR/hookhost/hookhost.sock`).
    #[arg(long, value_name = "PATH", num_args = 0..=1)]
    socket: Option<Option<PathBuf>>,
    /// Do not reload when the config or a settings file it imports changes
    /// (SIGHUP still reloads).
    #[arg(long = "no-watch")]
    no_watch: bool,
    /// Admit WebSocket upgrades and HTTP requests from a browser page of
    /// this exact origin (for example https://app.example); repeatable.
    /// Without it every request that carries an Origin header is refused.
    #[arg(long = "allow-origin", value_name = "ORIGIN", requires = "listen")]
    allow_origin: Vec<String>,
    /// Require `Authorization: Bearer TOKEN` on every WebSocket upgrade and
    /// HTTP request; TOKEN is this file's content without surrounding
    /// whitespace. With --socket the token is always required, by default
    /// the one in ~/.config/hookhost/http-token (created when missing).
    #[arg(long = "token-file", value_name = "PATH", requires = "listen")]
    token_file: Option<PathBuf>,
    /// Serve the port over TLS with this certificate chain (PEM, leaf
    /// first); with --tls-key. Off loopback TLS is required.
    #[arg(long = "tls-cert", value_name = "FILE", requires_all = ["listen", "tls_key"])]
    tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert (PEM).
    #[arg(long = "tls-key", value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Know each caller by credential, as a team's gateway: `tokens:FILE`
    /// (lines of `sha256:HASH tenant=T user=U [agent=A]`, written by
    /// `hookhost token new`), or `jwt:JWKS` (a JWKS file or https URL:
    /// tokens the team's identity provider signed, claims `tenant`, `sub`
    /// and optionally `agent`). The caller's tenant, user and agent
    /// replace what its events say, so scopes hold to the credential.
    #[arg(
        long,
        value_name = "KIND:SOURCE",
        requires = "listen",
        conflicts_with = "token_file"
    )]
    auth: Option<String>,
    /// With `--auth jwt:JWKS`: the `iss` every token must carry.
    #[arg(long = "auth-issuer", value_name = "ISS", requires = "auth")]
    auth_issuer: Option<String>,
    /// With `--auth jwt:JWKS`: the `aud` every token must carry.
    #[arg(long = "auth-audience", value_name = "AUD", requires = "auth")]
    auth_audience: Option<String>,
    /// Close a WebSocket connection that has sent nothing and has nothing
    /// in flight for this many seconds (0: never).
    #[arg(
        long = "idle-timeout",
        value_name = "SECS",
        default_value_t = 300,
        requires = "listen"
    )]
    idle_timeout: u64,
    /// Share the counts the replicas of a gateway must agree on (a stop's
    /// blocks in a row, a quality gate's retries) through this Redis
    /// (`redis://HOST[:PORT][/DB]`). When it does not answer, a stop's
    /// block is let go (the agent stops) and the user is told why.
    #[arg(long, value_name = "URL")]
    state: Option<String>,
    /// Export a trace per hook point, with a span per hook call, to the
    /// OpenTelemetry collector at this URL (OTLP over HTTP, protobuf; for
    /// example http://127.0.0.1:4318). A W3C `traceparent` on an agent's
    /// HTTP request becomes the trace's parent.
    #[arg(long, value_name = "URL")]
    otlp: Option<String>,
    /// Signed policy bundles instead of a config file (`--policy`).
    #[command(flatten)]
    policy: crate::policy::PolicyArgs,
}

impl ServeArgs {
    /// `--otlp`'s collector, when given.
    pub(crate) fn otlp(&self) -> Option<&str> {
        self.otlp.as_deref()
    }

    /// The socket to serve, when asked for.
    fn socket(&self) -> Option<PathBuf> {
        let chosen = self.socket.as_ref()?;
        Some(chosen.clone().unwrap_or_else(paths::default_socket))
    }
}

pub async fn run(args: ServeArgs) -> ExitCode {
    if !args.stdio && args.listen.is_none() && args.socket.is_none() {
        return usage_error("serve: choose a transport: --stdio, --listen ADDR or --socket");
    }
    let options = match args.listen.map(|addr| ws_options(&args, addr)).transpose() {
        Ok(o) => o,
        Err(e) => return usage_error(format!("serve: {e}")),
    };
    // With --policy: the gate that refuses until a signed bundle loads.
    let policy = match crate::policy::Policy::prepare(&args.policy) {
        Ok(p) => p,
        Err(e) => return usage_error(format!("serve: {e}")),
    };
    let state = match args.state.as_deref().map(Redis::open).transpose() {
        Ok(s) => s,
        Err(e) => return usage_error(format!("serve: {e}")),
    };
    let (path, config, registry) = match first_chain(&args, policy.as_ref()) {
        Ok(s) => s,
        Err(e) => return usage_error(e),
    };
    // Claimed before any hook starts: a second daemon starts nothing.
    let claim = match args.socket().map(|s| daemon::claim(&s)).transpose() {
        Ok(c) => c,
        Err(e) => return usage_error(format!("serve: {e}")),
    };
    let sources = config.sources.clone();
    // Taken now, before the hooks start, so the watch misses no change.
    let seen = daemon::Stamps::of(&sources);
    let host = Host::start_with(config, registry).await;
    if let Some(store) = state {
        host.share_state(store);
    }
    let from = ReloadFrom::File(path);
    let sidecar = Sidecar::new(host.clone(), from, load_config, sources);
    if args.tls_cert.is_some() {
        sidecar.behind_tls();
    }
    let mut background = tokio::task::JoinSet::new();
    background.spawn(reload_on_sighup(sidecar.clone()));
    if !args.no_watch && !args.stdio && policy.is_none() {
        background.spawn(daemon::watch(sidecar.clone(), seen));
    }
    let _policy_folder = policy.as_ref().map(crate::policy::Policy::folder);
    if let Some(policy) = policy {
        sidecar.report_policy(crate::policy::status);
        background.spawn(policy.run(sidecar.clone()));
    }
    let code = match args.stdio {
        true => serve_stdio(sidecar).await,
        false => serve_network(sidecar, &args, options, claim.as_ref()).await,
    };
    background.abort_all();
    host.shutdown().await;
    drop(claim);
    code
}

/// The config to start with, the path reloads read, and the builtins:
/// with `--policy`, the gate until a signed bundle loads; else the config
/// file's ([`initial_config`]) and the library's builtins.
fn first_chain(
    args: &ServeArgs,
    policy: Option<&crate::policy::Policy>,
) -> Result<(PathBuf, Config, hookhost::BuiltinRegistry), String> {
    match policy {
        Some(p) => p.waiting().map(|(c, r)| (p.config_path(), c, r)),
        None => {
            initial_config(args).map(|(p, c)| (p, c, hookhost::BuiltinRegistry::with_defaults()))
        }
    }
}

/// The config to serve and its path: `-c`, which must load, or the
/// default path. On a first run nothing is there yet: then the chain is
/// empty (no hook decides, so every agent decides as it would without
/// hookhost; never an allow hookhost made up), and stderr says where the
/// config goes and how to write one. The path stays the config's source,
/// so the watch (or SIGHUP) loads the file once it is written.
fn initial_config(args: &ServeArgs) -> Result<(PathBuf, Config), String> {
    if let Some(path) = &args.config {
        return load_config(path).map(|c| (path.clone(), c));
    }
    let path = paths::default_config();
    // A dangling link is there, and fails to load as it should.
    let absent =
        std::fs::symlink_metadata(&path).is_err_and(|e| e.kind() == io::ErrorKind::NotFound);
    if !absent {
        return load_config(&path).map(|c| (path, c));
    }
    let then = if args.no_watch || args.stdio {
        "then send this process SIGHUP (or restart it)"
    } else {
        "this daemon loads it as soon as it is there"
    };
    eprintln!(
        "hookhost: serve: no config at {} yet, so no hook runs: every event is answered as no hook \
         decided, and the agent decides as it would without hookhost. `hookhost init` writes a \
         commented one there (and names the agents whose hooks `hookhost install AGENT --adopt` \
         can bring in); {then}.",
        path.display()
    );
    let mut config = Config::empty(paths::config_dir());
    config.sources = vec![path.clone()];
    Ok((path, config))
}

/// JSON-RPC on stdin and stdout, until end of input or a signal.
async fn serve_stdio(sidecar: Arc<Sidecar>) -> ExitCode {
    let (input, output) = match take_stdio() {
        Ok(io) => io,
        Err(e) => {
            eprintln!("hookhost: serve: cannot take stdin and stdout: {e}");
            return ExitCode::from(1);
        }
    };
    let served = tokio::select! {
        r = crate::sidecar::serve(sidecar, input, output) => r,
        _ = terminated() => Ok(()),
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hookhost: serve: {e}");
            ExitCode::from(1)
        }
    }
}

/// The TCP port and the Unix socket, whichever were asked for, until
/// SIGTERM or SIGINT. Each prints `listening on ...` once bound.
async fn serve_network(
    sidecar: Arc<Sidecar>,
    args: &ServeArgs,
    options: Option<WsOptions>,
    claim: Option<&daemon::Claim>,
) -> ExitCode {
    // Watched before an address is printed: whoever reads it may signal.
    let terminated = terminated();
    let mut servers = tokio::task::JoinSet::new();
    if let (Some(addr), Some(options)) = (args.listen, options) {
        let tls = match port_tls(args) {
            Ok(tls) => tls,
            Err(e) => return usage_error(format!("serve: {e}")),
        };
        let listener = match tokio::net::TcpListener::bind(addr).await {
            Ok(l) => l,
            Err(e) => {
                eprintln!("hookhost: serve: cannot listen on {addr}: {e}");
                return ExitCode::from(1);
            }
        };
        let scheme = if tls.is_some() { "wss" } else { "ws" };
        announce(format_args!(
            "{scheme}://{}",
            listener.local_addr().unwrap_or(addr)
        ));
        let hooks = sidecar.host().stats().len();
        let port = Port { options, tls };
        servers.spawn(accept_tcp(sidecar.clone(), listener, port, hooks));
    }
    if let Some(claim) = claim {
        let listener = match daemon::bind(claim) {
            Ok(l) => l,
            Err(e) => {
                eprintln!("hookhost: serve: {e}");
                return ExitCode::from(1);
            }
        };
        announce(format_args!("unix:{}", claim.path().display()));
        servers.spawn(daemon::accept_unix(sidecar, listener));
    }
    terminated.await;
    servers.abort_all();
    ExitCode::SUCCESS
}

/// The port's TLS, when --tls-cert and --tls-key are given.
fn port_tls(args: &ServeArgs) -> Result<Option<tokio_rustls::TlsAcceptor>, String> {
    match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => tls::acceptor(cert, key).map(Some),
        _ => Ok(None),
    }
}

/// Prints `listening on WHERE` on stdout, at once.
fn announce(at: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "listening on {at}");
    let _ = out.flush();
}

/// The access check and timeouts for `--listen`, from the flags: the token
/// is required off loopback, and always on the daemon's port (with
/// `--socket`), where it defaults to the per-user token that `install
/// --via http` wires into the agent's settings (created when missing).
fn ws_options(args: &ServeArgs, addr: SocketAddr) -> Result<WsOptions, String> {
    let tls = args.tls_cert.is_some();
    if !addr.ip().is_loopback() && !tls {
        return Err(format!(
            "{addr} is not a loopback address: give --tls-cert and --tls-key, so tokens and \
             events never cross the network in the clear, and --auth tokens:FILE (or \
             --token-file), so only callers holding a token are served"
        ));
    }
    // Behind TLS the Host header names the gateway's public name.
    let mut access = Access::new().loopback_host(addr.ip().is_loopback() && !tls);
    for origin in &args.allow_origin {
        access = access.allow_origin(origin.trim_end_matches('/'));
    }
    if let Some(auth) = &args.auth {
        access = with_auth(access, args, auth)?;
    } else if let Some(path) = &args.token_file {
        access = access.token(read_token(path)?);
    } else if args.socket.is_some() {
        let path = paths::default_token_file();
        let token = paths::ensure_token(&path)?;
        access = access.token(token.into_bytes());
    } else if !addr.ip().is_loopback() {
        return Err(format!(
            "{addr} is not a loopback address: give --auth tokens:FILE or --token-file, so only \
             agents holding a token are served"
        ));
    }
    let idle = (args.idle_timeout > 0).then(|| Duration::from_secs(args.idle_timeout));
    Ok(WsOptions::new(access).idle_timeout(idle))
}

/// `--auth tokens:FILE` (the gateway's table of callers) or `--auth
/// jwt:JWKS` (tokens of the team's identity provider, with
/// `--auth-issuer` and `--auth-audience`; a JWKS URL is fetched again in
/// the background).
fn with_auth(access: Access, args: &ServeArgs, auth: &str) -> Result<Access, String> {
    match auth.split_once(':') {
        Some(("tokens", path)) if !path.is_empty() => {
            let tokens = Tokens::open(std::path::Path::new(path))?;
            Ok(access.tokens(Arc::new(tokens)))
        }
        Some(("jwt", source)) if !source.is_empty() => {
            let (Some(issuer), Some(audience)) = (&args.auth_issuer, &args.auth_audience) else {
                return Err("--auth jwt: give --auth-issuer and --auth-audience".into());
            };
            let jwt = Arc::new(Jwt::open(source, issuer, audience)?);
            tokio::spawn(jwt.clone().refresh());
            Ok(access.jwt(jwt))
        }
        _ => Err(format!(
            "--auth {auth:?}: give tokens:FILE (lines written by `hookhost token new`) or \
             jwt:JWKS (a JWKS file or https URL)"
        )),
    }
}

/// The token in `path`, without surrounding whitespace; an empty file is
/// an error (it would accept the empty token).
fn read_token(path: &std::path::Path) -> Result<Vec<u8>, String> {
    let raw = std::fs::read(path)
        .map_err(|e| format!("cannot read --token-file {}: {e}", path.display()))?;
    let token = raw.trim_ascii();
    if token.is_empty() {
        return Err(format!("--token-file {} is empty", path.display()));
    }
    if std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o077 != 0) {
        tracing::warn!(
            "serve: --token-file {} can be read by other users; chmod 600 it",
            path.display()
        );
    }
    Ok(token.to_vec())
}

/// What the TCP port serves each connection with: the access rules and
/// timeouts, and TLS when it is on.
struct Port {
    options: WsOptions,
    tls: Option<tokio_rustls::TlsAcceptor>,
}

/// Accepts agents on the TCP port (WebSocket sessions and HTTP hooks),
/// each connection its own session over the one host, counted by the
/// [`ConnectionCap`].
async fn accept_tcp(
    sidecar: Arc<Sidecar>,
    listener: tokio::net::TcpListener,
    port: Port,
    hooks: usize,
) {
    let cap = ConnectionCap::for_hooks(hooks);
    let options = Arc::new(port);
    let accept_log = LogBudget::new(1, Duration::from_secs(10));
    // The sessions belong to this loop: when serve stops, dropping it
    // closes every connection at once, so a waiting agent learns it then
    // rather than getting an answer from hooks being shut down.
    let mut sessions = tokio::task::JoinSet::new();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            Some(_) = sessions.join_next(), if !sessions.is_empty() => continue,
        };
        match accepted {
            Ok((stream, peer)) => {
                if let Some(ticket) = cap.take(peer.ip()) {
                    let (sidecar, options) = (sidecar.clone(), options.clone());
                    sessions.spawn(session(sidecar, stream, peer, options, ticket));
                }
            }
            // Out of descriptors and the like: pause rather than spin,
            // and say so once in a while, not twenty times a second.
            Err(e) => {
                accept_log.warn_line(format_args!("serve: accept failed: {e}"));
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// One connection, until it ends, is evicted, or misses the deadline to
/// pass the access check; its ticket gives its place back when dropped.
async fn session(
    sidecar: Arc<Sidecar>,
    stream: tokio::net::TcpStream,
    peer: SocketAddr,
    port: Arc<Port>,
    ticket: Ticket,
) {
    let checked = || ticket.checked();
    let served = async {
        let halves = split(stream, port.tls.as_ref()).await?;
        crate::sidecar::serve_websocket(sidecar, halves, &port.options, &checked).await
    };
    let outcome = tokio::select! {
        r = served => r,
        () = ticket.cut_off() => return,
    };
    match outcome {
        Ok(()) => {}
        Err(e @ (WsError::Refused(..) | WsError::Handshake(_))) => {
            refusal_log().warn_line(format_args!("sidecar: {peer}: {e}"));
        }
        Err(e) => tracing::info!(%peer, "sidecar session: {e}"),
    }
}

/// The connection's two halves: the TCP stream's, or, with TLS, the TLS
/// session's once its handshake is done (within the time an upgrade
/// request gets, so a peer that starts one and stalls holds nothing).
async fn split(
    stream: tokio::net::TcpStream,
    tls: Option<&tokio_rustls::TlsAcceptor>,
) -> Result<(Reader, Writer), WsError> {
    let _ = stream.set_nodelay(true);
    let Some(tls) = tls else {
        let (read, write) = stream.into_split();
        return Ok((Box::new(read), Box::new(write)));
    };
    let handshake = tokio::time::timeout(crate::sidecar::HANDSHAKE_TIMEOUT, tls.accept(stream));
    match handshake.await {
        Ok(Ok(session)) => {
            let (read, write) = tokio::io::split(session);
            Ok((Box::new(read), Box::new(write)))
        }
        Ok(Err(e)) => Err(WsError::Handshake(format!("TLS: {e}"))),
        Err(_) => Err(WsError::Handshake("TLS: no handshake in time".into())),
    }
}

/// Refused upgrades are what an attack looks like: logged within a budget.
fn refusal_log() -> &'static LogBudget {
    static LOG: std::sync::OnceLock<LogBudget> = std::sync::OnceLock::new();
    LOG.get_or_init(|| LogBudget::new(5, Duration::from_secs(10)))
}

/// Reloads the config file at every SIGHUP; the outcome goes to the log.
async fn reload_on_sighup(sidecar: Arc<Sidecar>) {
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
