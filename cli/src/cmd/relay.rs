//! `hookhost relay`: stand in for a command hook of agent D. Reads one
//! event on stdin exactly as D sends it, has the whole chain answer it,
//! and answers exactly as D expects (stdout JSON, exit code, stderr).
//!
//! Two ways to reach the chain:
//! - without `-c`, the running daemon (`hookhost serve --socket`) answers
//!   over its Unix socket: the relay is a small native process that starts
//!   no runtime and no hook, so each call costs a process start and one
//!   round trip, while the hooks stay warm in the daemon;
//! - with `-c CONFIG`, the chain runs in this process for this one event.
//!
//! When no daemon answers, `--unreachable` decides: `deny` (the default)
//! refuses, `allow` lets the event through, `run` runs the chain of the
//! default config in-process; `deny` says why on stderr (a refusal's
//! reason is what the agent reads), `allow` and `run` say so in the
//! relay's log. The relay writes on stdout and stderr only the answer the
//! agent reads: its log goes to a file ([`super::logging`]). Anything else that
//! goes wrong (an unreadable event, a config that does not load, a
//! signal) answers exit 2 with the reason on stderr: the one refusal every
//! dialect reads the same. A relay in front of a guard must never let a
//! call through because the relay itself broke.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use hookhost::{Config, Dialect, ForeignEvent, Host, NativeAnswer};
use serde_json::Value;

use crate::shared::client::{self, Failed};
use crate::shared::config::load_config;
use crate::shared::paths;
use crate::shared::remote::Gateway;
use crate::shared::signal::terminated;

/// The largest event read from stdin.
const MAX_EVENT_BYTES: u64 = 16 * 1024 * 1024;

/// Answer one hook event of another agent, in that agent's own format.
#[derive(Args)]
#[command(after_help = "Examples:\n  \
echo \"$EVENT\" | hookhost relay --dialect claude-code\n  \
echo \"$EVENT\" | hookhost relay --dialect claude-code -c .claude/settings.json\n  \
hookhost relay --dialect copilot --event preToolUse --unreachable allow < event.json\n\n\
Without -c the event goes to the running daemon (hookhost serve --socket) on its Unix socket \
(--connect to choose one); when none answers, --unreachable decides: deny (default) refuses, \
allow lets the event through, run runs the chain of ~/.config/hookhost/hooks.toml here. \
-c names a hookhost config (hooks.toml, which may import settings files of any dialect) \
or directly one settings file of dialect D, run in this process. Exit 0 with the answer on \
stdout, or exit 2 with a reason on stderr: a refusal in every dialect. The relay answers \
within --timeout seconds (default: 5 s before the agent's own hook timeout) whatever happens, \
as --unreachable says. A daemon that does not run as your user is refused, as if unreachable. \
Stdout and stderr carry only the answer the agent reads: the relay's own log goes to \
$XDG_STATE_HOME/hookhost/relay.log (~/.local/state/hookhost/relay.log), or to stderr when \
HOOKHOST_LOG is set (HOOKHOST_LOG=debug, HOOKHOST_LOG=warn, ...).")]
pub struct RelayArgs {
    /// The agent's dialect: claude-code, codex, gemini-cli, cursor, copilot
    /// or docker-agent.
    #[arg(long)]
    dialect: Dialect,
    /// Run the chain in this process: a hookhost config, or one settings
    /// file of the dialect.
    #[arg(short = 'c', long = "config", conflicts_with = "connect")]
    config: Option<PathBuf>,
    /// The daemon's socket (default `$XDG_RUNTIME_DIR/hookhost/hookhost.sock`),
    /// or a team's gateway: `https://HOST[:PORT][/PATH]` (`http://` on
    /// loopback only), with the token in `HOOKHOST_TOKEN` or --token-file.
    #[arg(long, value_name = "SOCKET|URL")]
    connect: Option<String>,
    /// The gateway token's file (its content without surrounding
    /// whitespace), when `HOOKHOST_TOKEN` is not set.
    #[arg(long = "token-file", value_name = "PATH", requires = "connect")]
    token_file: Option<PathBuf>,
    /// What to do when no daemon answers.
    #[arg(long, value_enum, default_value_t = Unreachable::Deny)]
    unreachable: Unreachable,
    /// The native event name, for payloads that do not carry one (Copilot
    /// CLI's camelCase events).
    #[arg(long)]
    event: Option<String>,
    /// Answer within this many seconds whatever happens (default: 5 s
    /// less than the agent's own default hook timeout); past it the relay
    /// answers as `--unreachable` says, `run` refusing like `deny`.
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    timeout: Option<u64>,
}

/// Set once an answer is being written: by the relay, or by its deadline.
static ANSWERED: AtomicBool = AtomicBool::new(false);

/// The agent's own default timeout for a command hook, in seconds: a hook
/// still running then is killed, and most agents read that as "no
/// objection". The relay answers before it.
fn agent_timeout(dialect: Dialect) -> u64 {
    match dialect {
        Dialect::ClaudeCode | Dialect::Codex => 600,
        Dialect::Copilot => 30,
        _ => 60,
    }
}

/// The relay's own deadline.
fn deadline(args: &RelayArgs) -> Duration {
    let secs = args
        .timeout
        .unwrap_or_else(|| agent_timeout(args.dialect).saturating_sub(5).max(1));
    Duration::from_secs(secs)
}

/// The event, kept to word a refusal when hookhost could not answer it:
/// read only then, so the relay's common path parses nothing.
#[derive(Clone)]
struct Refuser {
    dialect: Dialect,
    event: Option<String>,
    text: Arc<str>,
}

impl Refuser {
    /// The event's answer when hookhost could not answer
    /// ([`ForeignEvent::unanswered`]: a refusal, but at a stop the agent
    /// stops); an event that does not read is refused.
    fn answer(&self, why: &str) -> NativeAnswer {
        let event = serde_json::from_str::<Value>(&self.text)
            .ok()
            .and_then(|v| ForeignEvent::read(self.dialect, &v, self.event.as_deref()).ok());
        match event {
            Some(event) => event.unanswered(why),
            None => NativeAnswer::block(why),
        }
    }
}

/// Answers as `--unreachable` says for a relay whose deadline (`limit`
/// after its start) passed with no answer: `allow` exits 0 with a warning
/// in the log, `deny` and `run` refuse with exit 2 and the reason (at a
/// stop, the agent stops with it as a warning). The exit code, or `None`
/// when an answer was written already.
fn late(limit: Duration, policy: Unreachable, refuser: Option<&Refuser>) -> Option<i32> {
    if ANSWERED.swap(true, Ordering::SeqCst) {
        return None;
    }
    let why = format!("no answer within {} s (--timeout)", limit.as_secs());
    Some(match policy {
        Unreachable::Allow => {
            tracing::warn!(
                "hookhost relay: {why}; letting the event through (--unreachable allow)"
            );
            0
        }
        Unreachable::Deny | Unreachable::Run => {
            let why = format!("hookhost relay: {why}; refusing");
            let answer = match refuser {
                Some(refuser) => refuser.answer(&why),
                None => NativeAnswer::block(&why),
            };
            write_answer(&answer);
            answer.code
        }
    })
}

/// The exit code [`late`] chose; a relay that answered already has
/// nothing more to say and waits for its own end.
fn late_code(limit: Duration, policy: Unreachable, refuser: Option<&Refuser>) -> ExitCode {
    match late(limit, policy, refuser) {
        Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(2)),
        None => loop {
            std::thread::park();
        },
    }
}

/// Starts the watch that answers for a relay running the chain in this
/// process, once `until` has passed with no answer ([`late`]), then ends
/// the process. Forwarding to the daemon needs none: its every wait is
/// bounded by the deadline itself, and a thread standing watch would cost
/// about as much as the rest of the relay (it has to be woken to end the
/// process).
fn start_deadline(until: Instant, limit: Duration, policy: Unreachable, refuser: Refuser) {
    std::thread::spawn(move || {
        std::thread::sleep(until.saturating_duration_since(Instant::now()));
        let Some(code) = late(limit, policy, Some(&refuser)) else {
            return;
        };
        let _ = std::io::Write::flush(&mut std::io::stdout());
        hookhost::kill_all_children();
        std::process::exit(code);
    });
}

/// What a relay does when the daemon cannot be reached.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Unreachable {
    /// Let the event through, as if no hook were configured.
    Allow,
    /// Refuse it (exit 2): a stopped hookhost never lets a call through unguarded.
    Deny,
    /// Run the chain of the default config in this process.
    Run,
}

/// An event the chain answers in this process.
pub struct Local {
    dialect: Dialect,
    event: Option<String>,
    config: PathBuf,
    text: Arc<str>,
}

/// A relay's first steps, before any runtime exists: read the event and,
/// without `-c`, forward it, all by the relay's deadline. `Err` carries
/// what must run in-process (watched from then on by [`start_deadline`]).
pub fn prepare(args: RelayArgs) -> Result<ExitCode, Local> {
    let limit = deadline(&args);
    let until = Instant::now() + limit;
    let text = match read_event(until) {
        Ok(text) => text,
        Err(Failed::Late) => return Ok(late_code(limit, args.unreachable, None)),
        Err(Failed::Because(why)) => {
            return Ok(print(&NativeAnswer::block(&format!(
                "hookhost relay: {why}"
            ))));
        }
    };
    let refuser = Refuser {
        dialect: args.dialect,
        event: args.event.clone(),
        text: Arc::from(text),
    };
    let config = match &args.config {
        Some(config) => config.clone(),
        None => {
            let name = args.event.as_deref();
            let sent = Target::of(&args)
                .and_then(|t| forward(&t, args.dialect, name, &refuser.text, until));
            let policy = args.unreachable;
            match sent {
                Ok(answer) => return Ok(print(&answer)),
                Err(Failed::Late) => return Ok(late_code(limit, policy, Some(&refuser))),
                Err(Failed::Because(why)) => match unreachable(policy, &why, &refuser) {
                    Ok(config) => config,
                    Err(code) => return Ok(code),
                },
            }
        }
    };
    let text = refuser.text.clone();
    start_deadline(until, limit, args.unreachable, refuser);
    Err(Local {
        dialect: args.dialect,
        event: args.event,
        config,
        text,
    })
}

/// `--unreachable`: the exit code, or the config to run in-process.
fn unreachable(policy: Unreachable, why: &str, refuser: &Refuser) -> Result<PathBuf, ExitCode> {
    match policy {
        Unreachable::Allow => {
            if ANSWERED.swap(true, Ordering::SeqCst) {
                loop {
                    std::thread::park();
                }
            }
            tracing::warn!(
                "hookhost relay: {why}; letting the event through (--unreachable allow)"
            );
            Err(ExitCode::SUCCESS)
        }
        Unreachable::Deny => Err(print(&refuser.answer(&format!(
            "hookhost relay: {why}; refusing (--unreachable deny)"
        )))),
        Unreachable::Run => {
            let config = paths::default_config();
            tracing::warn!(
                "hookhost relay: {why}; running {} here for this event (--unreachable run)",
                config.display()
            );
            Ok(config)
        }
    }
}

/// Runs the chain in this process for one event.
pub async fn run_local(local: Local) -> ExitCode {
    let answer = tokio::select! {
        a = answer_here(&local) => a.unwrap_or_else(|why| NativeAnswer::block(&format!("hookhost relay: {why}"))),
        _ = terminated() => NativeAnswer::block("hookhost relay: interrupted"),
    };
    print(&answer)
}

async fn answer_here(local: &Local) -> Result<NativeAnswer, String> {
    let input: Value = serde_json::from_str(&local.text)
        .map_err(|e| format!("the event on stdin is not JSON: {e}"))?;
    let event = ForeignEvent::read(local.dialect, &input, local.event.as_deref())
        .map_err(|e| e.to_string())?
        .with_agent_env(|k| std::env::var(k).ok());
    let config = load(local.dialect, &local.config)?;
    let host = Host::start(config).await;
    let answer = host.answer_foreign(&event).await;
    host.shutdown().await;
    Ok(answer)
}

/// The event on stdin, read to its end (at most [`MAX_EVENT_BYTES`]) by
/// `until`: an agent that never closes stdin gets the deadline's answer.
fn read_event(until: Instant) -> Result<String, Failed> {
    let mut bytes = Vec::new();
    let mut stdin = std::io::stdin().lock();
    let mut chunk = [0u8; 16 * 1024];
    let unreadable =
        |e: std::io::Error| Failed::Because(format!("cannot read the event on stdin: {e}"));
    loop {
        wait_readable(0, until)
            .map_err(unreadable)?
            .ok_or(Failed::Late)?;
        match stdin.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) if (bytes.len() + n) as u64 > MAX_EVENT_BYTES => {
                return Err(Failed::Because(format!(
                    "the event on stdin is over {} MiB",
                    MAX_EVENT_BYTES >> 20
                )));
            }
            Ok(n) => bytes.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(unreadable(e)),
        }
    }
    String::from_utf8(bytes).map_err(|e| {
        Failed::Because(format!(
            "cannot read the event on stdin: it is not UTF-8: {e}"
        ))
    })
}

/// Waits until `fd` has something to read (or its end), by `until`:
/// `Some` when it has, `None` when the time ran out.
fn wait_readable(fd: i32, until: Instant) -> std::io::Result<Option<()>> {
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(None);
        }
        let mut poll = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = left.as_millis().clamp(1, i32::MAX as u128) as i32;
        // SAFETY: one valid pollfd, for the length given.
        match unsafe { libc::poll(&raw mut poll, 1, ms) } {
            0 => {}
            n if n > 0 => return Ok(Some(())),
            _ => {
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }
}

/// Writes the answer as the agent reads a command hook's, and its code.
/// When the deadline has answered already, waits for it to end the
/// process: one answer only.
fn print(answer: &NativeAnswer) -> ExitCode {
    if ANSWERED.swap(true, Ordering::SeqCst) {
        loop {
            std::thread::park();
        }
    }
    write_answer(answer);
    ExitCode::from(u8::try_from(answer.code).unwrap_or(2))
}

fn write_answer(answer: &NativeAnswer) {
    if !answer.stdout.is_empty() {
        outln!("{}", answer.stdout);
    }
    // A hook's own stderr is passed on as it wrote it (the agent quotes it
    // to the model); hookhost's own reasons end in a newline.
    match answer.stderr.as_str() {
        "" => {}
        s if s.ends_with('\n') => eprint!("{s}"),
        s => eprintln!("{s}"),
    }
}

/// A settings file of the dialect, or a hookhost config.
fn load(dialect: Dialect, path: &Path) -> Result<Config, String> {
    if Config::is_settings_file(dialect, path) {
        return Config::import(dialect, path).map_err(|e| e.to_string());
    }
    load_config(path)
}

/// The variables the agent set for this hook run that only it knows
/// ([`Dialect::agent_vars`]), for the daemon to hand to the hooks it runs:
/// an `X-Hookhost-Agent-Env` header holding them as a JSON object, every
/// character past ASCII escaped so that any value fits in one header line.
/// Empty when the agent set none.
fn agent_env_header(dialect: Dialect) -> String {
    let vars: serde_json::Map<String, Value> = dialect
        .agent_vars()
        .filter_map(|k| Some((k.to_string(), Value::from(std::env::var(k).ok()?))))
        .collect();
    if vars.is_empty() {
        return String::new();
    }
    let line = crate::shared::header::ascii_json(&Value::Object(vars));
    format!("X-Hookhost-Agent-Env: {line}\r\n")
}

/// Where the relay sends the event.
enum Target {
    /// The user's daemon, on its Unix socket.
    Socket(PathBuf),
    /// A team's gateway, and the token it knows this caller by.
    Gateway(Gateway, Option<String>),
}

impl Target {
    /// `--connect` (a socket path or a URL), else the default socket. A
    /// URL that does not parse, or a token file that cannot be read, is
    /// an unreachable gateway: `--unreachable` decides.
    fn of(args: &RelayArgs) -> Result<Target, Failed> {
        let Some(connect) = &args.connect else {
            return Ok(Target::Socket(paths::default_socket()));
        };
        if !connect.contains("://") {
            return Ok(Target::Socket(PathBuf::from(connect)));
        }
        let gateway = Gateway::parse(connect).map_err(Failed::Because)?;
        Ok(Target::Gateway(gateway, token(args.token_file.as_deref())?))
    }
}

/// `HOOKHOST_TOKEN`, else the token file's content; neither is no token
/// (a gateway without `--auth` on loopback needs none).
fn token(file: Option<&Path>) -> Result<Option<String>, Failed> {
    if let Some(token) = std::env::var("HOOKHOST_TOKEN")
        .ok()
        .filter(|t| !t.trim().is_empty())
    {
        return Ok(Some(token.trim().to_string()));
    }
    let Some(file) = file else {
        return Ok(None);
    };
    let text = std::fs::read_to_string(file).map_err(|e| {
        Failed::Because(format!("cannot read --token-file {}: {e}", file.display()))
    })?;
    match text.trim() {
        "" => Err(Failed::Because(format!(
            "--token-file {} is empty",
            file.display()
        ))),
        t => Ok(Some(t.to_string())),
    }
}

/// Sends the event to the daemon or the gateway and reads its answer by
/// `until`; `Err` says why there is none.
fn forward(
    target: &Target,
    dialect: Dialect,
    event: Option<&str>,
    text: &str,
    until: Instant,
) -> Result<NativeAnswer, Failed> {
    let mut headers = event.map_or(String::new(), |e| format!("X-Hookhost-Event: {e}\r\n"));
    headers.push_str(&agent_env_header(dialect));
    let path = format!("/relay/{dialect}");
    let request = ("POST", path.as_str());
    let body = match target {
        Target::Socket(socket) => {
            client::request(socket, request, &headers, text.as_bytes(), until)?
        }
        Target::Gateway(gateway, token) => {
            gateway.request(request, &headers, token.as_deref(), text.as_bytes(), until)?
        }
    };
    serde_json::from_slice(&body)
        .map_err(|e| Failed::Because(format!("the hookhost's answer is not readable: {e}")))
}
