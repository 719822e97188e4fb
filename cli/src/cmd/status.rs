//! `hookhost status`: what the user's daemon is doing: its config, each
//! hook's state and figures, and how many events each agent sent it.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde_json::Value;

use super::{client, paths};

/// Show the running daemon's hooks, their state and per-agent call counts.
#[derive(Args)]
#[command(
    after_help = "Asks the daemon (hookhost serve --socket) on its Unix socket. \
Exit 0 with the report, 1 when no daemon answers.\n\nExamples:\n  \
hookhost status\n  hookhost status --json"
)]
pub struct StatusArgs {
    /// The daemon's socket (default `$XDG_RUNTIME_DIR/hookhost/hookhost.sock`).
    #[arg(long, value_name = "SOCKET")]
    connect: Option<PathBuf>,
    /// Print the daemon's answer as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: StatusArgs) -> ExitCode {
    let socket = args.connect.unwrap_or_else(paths::default_socket);
    let status = client::request(&socket, "GET", "/status", "", b"")
        .and_then(|b| serde_json::from_slice::<Value>(&b).map_err(|e| e.to_string()));
    let status = match status {
        Ok(s) => s,
        Err(why) => {
            eprintln!("hookhost: status: {why}");
            eprintln!("start it with: hookhost serve --socket");
            return ExitCode::from(1);
        }
    };
    if args.json {
        outln!("{status:#}");
        return ExitCode::SUCCESS;
    }
    out!("{}", render(&status, &socket));
    untrusted(&status);
    ExitCode::SUCCESS
}

/// Names the daemon's untrusted project hooks. The daemon's report does
/// not carry trust, so its config is read here as `check` reads it,
/// against the same store the daemon reloads from.
fn untrusted(status: &Value) {
    let Some(path) = status["config"].as_str().map(std::path::Path::new) else {
        return;
    };
    let Ok(config) = hookhost::Config::read(path) else {
        return;
    };
    let lines = super::trust::untrusted_lines(&config, path);
    if !lines.is_empty() {
        outln!();
    }
    for line in lines {
        outln!("{line}");
    }
}

/// The report as text: the daemon, its agents, then one line per hook.
fn render(s: &Value, socket: &std::path::Path) -> String {
    let text = |v: &Value| match v {
        Value::String(t) => t.clone(),
        Value::Null => "-".into(),
        other => other.to_string(),
    };
    let mut out = format!(
        "hookhost {} (pid {}) on {}\nconfig  {}\nup      {} s since {}\n\nagents:\n",
        text(&s["version"]),
        text(&s["pid"]),
        socket.display(),
        text(&s["config"]),
        text(&s["uptime_s"]),
        text(&s["started"])
    );
    let agents = s["agents"].as_object().cloned().unwrap_or_default();
    if agents.is_empty() {
        out += "  (no events yet)\n";
    }
    for (name, a) in &agents {
        out += &format!(
            "  {name:<14} {:>8} calls  {:>6} sessions\n",
            text(&a["calls"]),
            text(&a["sessions"])
        );
    }
    out += &format!(
        "\n{:<40} {:<8} {:<9} {:>7} {:>6} {:>8} {:>8}\n",
        "hook", "kind", "breaker", "calls", "errors", "p50 µs", "p99 µs"
    );
    for h in s["hooks"].as_array().into_iter().flatten() {
        out += &format!(
            "{:<40} {:<8} {:<9} {:>7} {:>6} {:>8} {:>8}\n",
            text(&h["hook"]),
            text(&h["kind"]),
            text(&h["breaker"]),
            text(&h["calls"]),
            text(&h["errors"]),
            text(&h["p50_us"]),
            text(&h["p99_us"])
        );
    }
    out
}
