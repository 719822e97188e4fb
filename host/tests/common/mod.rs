//! Helpers shared by the integration tests that drive real hook processes
//! (the `hookhost-test-hook` binary).

#![allow(dead_code, clippy::unwrap_used)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

use hookhost::protocol::Stage;
use hookhost::protocol::params::ToolCall;
use hookhost::{Config, ProcessConfig};
use serde_json::Value;

/// The misbehaving test hook.
pub const BIN: &str = env!("CARGO_BIN_EXE_hookhost-test-hook");

/// A process hook running the test hook with `args`.
pub fn hook(args: &[&str], intercept: &[Stage]) -> ProcessConfig {
    let mut command = vec![BIN.to_string()];
    command.extend(args.iter().map(|s| s.to_string()));
    ProcessConfig::new(command, intercept.to_vec())
}

/// A config of `hooks`, with a short shutdown grace so tests end quickly.
pub fn config(hooks: Vec<(&str, ProcessConfig)>) -> Config {
    let mut c = Config::empty(std::env::temp_dir());
    c.defaults.hello_timeout_ms = 3000;
    c.defaults.shutdown_grace_ms = 500;
    for (name, h) in hooks {
        c.processes.insert(name.to_string(), h);
    }
    c
}

/// A tool call with object arguments.
pub fn tool_call(tool: &str, arguments: Value) -> ToolCall {
    ToolCall {
        tool: tool.into(),
        arguments: arguments.as_object().cloned().unwrap_or_default(),
        ..ToolCall::default()
    }
}

/// A fresh scratch folder for pid, event and audit files.
pub fn scratch() -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "hookhost-test-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Alive and not a zombie (a zombie is dead, only not yet reaped by init).
pub fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z') && !state.starts_with('X')
        }
        Err(_) => false,
    }
}

/// Replaces what lies between `<!-- BEGIN name -->` and `<!-- END name -->`
/// in `text` with `body`; `None` when the markers are missing.
pub fn replace_block(text: &str, name: &str, body: &str) -> Option<String> {
    let begin = format!("<!-- BEGIN {name} -->\n");
    let end = format!("<!-- END {name} -->");
    let from = text.find(&begin)? + begin.len();
    let to = from + text[from..].find(&end)?;
    Some(format!(
        "{}{}\n{}",
        &text[..from],
        body.trim_end(),
        &text[to..]
    ))
}

/// With `HOOKHOST_WRITE_RELIABILITY=1`, replaces block `name` of
/// RELIABILITY.md with `body`; whether it did.
pub fn write_reliability(name: &str, body: &str) -> bool {
    if std::env::var("HOOKHOST_WRITE_RELIABILITY").as_deref() != Ok("1") {
        return false;
    }
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../RELIABILITY.md");
    let text = std::fs::read_to_string(path).unwrap();
    let text = replace_block(&text, name, body)
        .unwrap_or_else(|| panic!("RELIABILITY.md has no {name} block"));
    std::fs::write(path, text).unwrap();
    true
}

/// `hookhost serve -c CONFIG --listen 127.0.0.1:0 EXTRA...`, and the
/// address from the one line it prints once bound.
pub fn serve_listen(config: &std::path::Path, extra: &[&str]) -> (std::process::Child, String) {
    serve_listen_under(&[], config, extra)
}

/// [`serve_listen`], run through `wrapper` (for example `prlimit ...`).
pub fn serve_listen_under(
    wrapper: &[&str],
    config: &std::path::Path,
    extra: &[&str],
) -> (std::process::Child, String) {
    use std::io::BufRead;
    use std::process::{Command, Stdio};
    let hookhost = env!("CARGO_BIN_EXE_hookhost");
    let (program, args) = match wrapper.split_first() {
        Some((program, args)) => (*program, [args, &[hookhost]].concat()),
        None => (hookhost, vec![]),
    };
    let mut child = Command::new(program)
        .args(args)
        .args(["serve", "--listen", "127.0.0.1:0", "-c"])
        .arg(config)
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening on ws://")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string();
    (child, addr)
}
