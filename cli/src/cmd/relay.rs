//! `hookhost relay`: stand in for a command hook of agent D. Reads one
//! event on stdin exactly as D sends it, runs it through the whole chain,
//! and answers exactly as D expects (stdout JSON, exit code, stderr).
//!
//! Anything that goes wrong (an unreadable event, a config that does not
//! load, a signal) answers exit 2 with the reason on stderr: the one
//! refusal every dialect reads the same. A relay in front of a guard must
//! never let a call through because the relay itself broke.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use hookhost::{Config, Dialect, ForeignEvent, Host, NativeAnswer};
use serde_json::Value;

use super::terminated;

/// The largest event read from stdin.
const MAX_EVENT_BYTES: u64 = 16 * 1024 * 1024;

/// Answer one hook event of another agent, in that agent's own format.
#[derive(Args)]
#[command(after_help = "Examples:\n  \
echo \"$EVENT\" | hookhost relay --dialect claude-code -c .claude/settings.json\n  \
hookhost relay --dialect copilot --event preToolUse -c hooks.toml < event.json\n\n\
-c names a hookhost config (hooks.toml, which may import settings files of any dialect) \
or directly one settings file of dialect D. Exit 0 with the answer on stdout, or exit 2 \
with a reason on stderr: a refusal in every dialect.")]
pub struct RelayArgs {
    /// The agent's dialect: claude-code, codex, gemini-cli, cursor, copilot
    /// or docker-agent.
    #[arg(long)]
    dialect: Dialect,
    /// A hookhost config, or one settings file of the dialect.
    #[arg(short = 'c', long = "config")]
    config: PathBuf,
    /// The native event name, for payloads that do not carry one (Copilot
    /// CLI's camelCase events).
    #[arg(long)]
    event: Option<String>,
}

pub async fn run(args: RelayArgs) -> ExitCode {
    let answer = tokio::select! {
        a = relay(&args) => a.unwrap_or_else(|why| NativeAnswer::block(&format!("hookhost relay: {why}"))),
        _ = terminated() => NativeAnswer::block("hookhost relay: interrupted"),
    };
    if !answer.stdout.is_empty() {
        println!("{}", answer.stdout);
    }
    if !answer.stderr.is_empty() {
        eprintln!("{}", answer.stderr);
    }
    ExitCode::from(u8::try_from(answer.code).unwrap_or(2))
}

async fn relay(args: &RelayArgs) -> Result<NativeAnswer, String> {
    let mut text = String::new();
    std::io::stdin()
        .take(MAX_EVENT_BYTES)
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read the event on stdin: {e}"))?;
    let input: Value =
        serde_json::from_str(&text).map_err(|e| format!("the event on stdin is not JSON: {e}"))?;
    let event = ForeignEvent::read(args.dialect, &input, args.event.as_deref())
        .map_err(|e| e.to_string())?;
    let config = load(args.dialect, &args.config)?;
    let host = Host::start(config).await;
    let answer = host.answer_foreign(&event).await;
    host.shutdown().await;
    Ok(answer)
}

/// A settings file of the dialect, or a hookhost config.
fn load(dialect: Dialect, path: &Path) -> Result<Config, String> {
    if Config::is_settings_file(dialect, path) {
        return Config::import(dialect, path).map_err(|e| e.to_string());
    }
    super::load_config(path)
}
