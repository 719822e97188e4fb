//! `hookhost status`: what the user's daemon is doing: its config, each
//! hook's state and figures, and how many events each agent sent it.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;
use serde_json::Value;

use crate::shared::{client, paths};

/// Show the running daemon's hooks, their state and per-agent call counts.
#[derive(Args)]
#[command(
    after_help = "Asks the daemon (hookhost serve --socket) on its Unix socket, and refuses one \
that does not run as your user. Warns when the port `hookhost install --via http` pointed an \
agent at is held by another user's process. Exit 0 with the report, 1 when no daemon answers.\n\nExamples:\n  \
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

/// How long `status` waits for a daemon that is stopped, full or silent.
const STATUS_WAIT: Duration = Duration::from_secs(10);

pub fn run(args: StatusArgs) -> ExitCode {
    warn_port_holders();
    let socket = args.connect.unwrap_or_else(paths::default_socket);
    let until = Instant::now() + STATUS_WAIT;
    let status = match client::request(&socket, ("GET", "/status"), "", b"", until) {
        Ok(b) => serde_json::from_slice::<Value>(&b).map_err(|e| e.to_string()),
        Err(client::Failed::Late) => Err(format!(
            "the hookhost at {} gave no status within {} s",
            socket.display(),
            STATUS_WAIT.as_secs()
        )),
        Err(client::Failed::Because(why)) => Err(why),
    };
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

/// Warns on stderr when the port `install --via http` pointed the agent
/// at is listened on by a socket of another user. The kernel records each
/// socket's owner in `/proc/net/tcp` and `/proc/net/tcp6` (the `uid`
/// column), which no process can forge: a listener of another uid on that
/// port would receive the agent's events (the token keeps it from calling
/// the daemon, not from answering the agent).
fn warn_port_holders() {
    let Ok(text) = std::fs::read_to_string(paths::http_listen_file()) else {
        return;
    };
    let addr = text.trim();
    let Some(port) = addr.rsplit(':').next().and_then(|p| p.parse::<u16>().ok()) else {
        return;
    };
    let me = paths::my_uid();
    let mut others: Vec<u32> = ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .flat_map(|table| listeners(&table, port))
        .filter(|uid| *uid != me)
        .collect();
    others.sort_unstable();
    others.dedup();
    for uid in others {
        eprintln!(
            "hookhost: status: WARNING: port {port} ({addr}, where `hookhost install --via http` \
             pointed your agent) is held by a process of uid {uid}, not yours (uid {me}): it \
             receives your hooks' events and may answer them. Stop it, or reinstall with \
             `--via relay`"
        );
    }
}

/// The uids of the listening sockets on `port` in a `/proc/net/tcp*` table.
fn listeners(table: &str, port: u16) -> Vec<u32> {
    const LISTEN: &str = "0A";
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let local_port = f.get(1)?.rsplit(':').next()?;
            let listening = *f.get(3)? == LISTEN;
            let on_port = u16::from_str_radix(local_port, 16).ok()? == port;
            (listening && on_port).then(|| f.get(7)?.parse().ok())?
        })
        .collect()
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
    let mut out = format!(
        "hookhost {} (pid {}) on {}\nconfig  {}\nup      {} s since {}\n\nagents:\n",
        text(&s["version"]),
        text(&s["pid"]),
        socket.display(),
        text(&s["config"]),
        text(&s["uptime_s"]),
        text(&s["started"])
    );
    out += &policy_lines(&s["policy"]);
    out += &audit_line(&s["audit"]);
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

/// A status value as shown: text as is, `-` for null.
fn text(v: &Value) -> String {
    match v {
        Value::String(t) => t.clone(),
        Value::Null => "-".into(),
        other => other.to_string(),
    }
}

/// The audit log's line: what reached the store, what waits, and what a
/// full queue dropped or a failing store lost (nothing without a log).
fn audit_line(a: &Value) -> String {
    if !a.is_object() {
        return String::new();
    }
    format!(
        "audit   {} written, {} of {} queued, {} dropped, {} lost\n",
        text(&a["written"]),
        text(&a["queued"]),
        text(&a["capacity"]),
        text(&a["dropped"]),
        text(&a["lost"])
    )
}

/// The signed policy's lines (`serve --policy`): the bundle in force,
/// where it comes from, when it was last checked and loaded, and the last
/// refusal; nothing for a daemon that serves a config file.
fn policy_lines(p: &Value) -> String {
    if !p.is_object() {
        return String::new();
    }
    let mut out = match p["version"].is_null() {
        true => "policy  none loaded yet: every refusable event is refused\n".to_string(),
        false => format!(
            "policy  version {} sha256 {}\n",
            text(&p["version"]),
            text(&p["digest"])
        ),
    };
    out += &format!(
        "        from {}, checked {}, loaded {}\n",
        text(&p["source"]),
        text(&p["checked"]),
        text(&p["loaded"])
    );
    if let Some(e) = p["error"].as_str() {
        out += &format!("        last refused: {e}\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listeners_are_read_from_the_kernel_table() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
   0: 0100007F:1B9E 00000000:0000 0A 00000000:00000000 00:00000000 00000000 65534        0 1 1 0\n\
   1: 0100007F:1B9E 0100007F:9C40 01 00000000:00000000 00:00000000 00000000  1000        0 2 1 0\n\
   2: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 3 1 0\n";
        assert_eq!(listeners(table, 7070), [65534]);
        assert_eq!(listeners(table, 22), [0]);
        assert!(listeners(table, 80).is_empty());
    }

    #[test]
    fn the_audit_line_says_what_waits_and_what_was_dropped() {
        let a = serde_json::json!({"written": 12, "queued": 3, "capacity": 65536, "dropped": 2, "lost": 0});
        assert_eq!(
            audit_line(&a),
            "audit   12 written, 3 of 65536 queued, 2 dropped, 0 lost\n"
        );
        assert_eq!(audit_line(&Value::Null), "");
    }
}
