//! A first run, as someone who just installed hookhost and read nothing:
//! `hookhost serve --socket` with no config anywhere starts, answers every
//! agent as no hook decided (never an allow of its own) and says where the
//! config goes; `hookhost init` writes one that `hookhost check` accepts,
//! never overwrites one, and names the agents whose own hooks
//! `hookhost install AGENT --adopt` would bring in. Each test has its own
//! HOME and runtime folder, and no XDG_CONFIG_HOME.

#![allow(clippy::unwrap_used)]

mod common;

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A user with nothing set up: a HOME and a private runtime folder.
struct User {
    home: PathBuf,
    runtime: PathBuf,
}

impl User {
    fn new() -> User {
        let dir = common::scratch().canonicalize().unwrap();
        let user = User {
            home: dir.join("home"),
            runtime: dir.join("run"),
        };
        std::fs::create_dir_all(&user.home).unwrap();
        std::fs::create_dir_all(&user.runtime).unwrap();
        std::fs::set_permissions(&user.runtime, std::fs::Permissions::from_mode(0o700)).unwrap();
        user
    }

    /// `hookhost` with only PATH, HOME and XDG_RUNTIME_DIR set.
    fn hookhost(&self, args: &[&str]) -> Command {
        let mut c = Command::new(common::HOOKHOST);
        c.args(args)
            .current_dir(&self.home)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("XDG_RUNTIME_DIR", &self.runtime);
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.hookhost(args).stdin(Stdio::null()).output().unwrap()
    }

    /// The config the daemon reads when given no `-c`.
    fn default_config(&self) -> PathBuf {
        self.home.join(".config/hookhost/hooks.toml")
    }
}

/// A running `hookhost serve --socket`, killed when dropped.
struct Daemon(Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `hookhost serve --socket`, once it says it listens; and what it said
/// on stderr until then (a note about the config comes before that line).
fn serve(user: &User) -> (Daemon, String) {
    let log = user.home.join("serve.err");
    let mut child = user
        .hookhost(&["serve", "--socket"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.starts_with("listening on unix:"), "{line:?}");
    (Daemon(child), std::fs::read_to_string(&log).unwrap())
}

/// One tool call and one permission request (where the agent has one),
/// as each agent sends them to its command hook.
const EVENTS: [(&str, &str, &str); 7] = [
    (
        "claude-code",
        "PreToolUse",
        r#"{"session_id":"s","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"touch x"}}"#,
    ),
    (
        "claude-code",
        "PermissionRequest",
        r#"{"session_id":"s","cwd":"/tmp","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"touch x"}}"#,
    ),
    (
        "codex",
        "PreToolUse",
        r#"{"session_id":"s","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"touch x"}}"#,
    ),
    (
        "codex",
        "PermissionRequest",
        r#"{"session_id":"s","cwd":"/tmp","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"touch x"}}"#,
    ),
    (
        "gemini-cli",
        "BeforeTool",
        r#"{"session_id":"s","cwd":"/tmp","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"touch x"}}"#,
    ),
    (
        "cursor",
        "beforeShellExecution",
        r#"{"conversation_id":"c","hook_event_name":"beforeShellExecution","command":"touch x","cwd":"/tmp"}"#,
    ),
    (
        "copilot",
        "preToolUse",
        r#"{"timestamp":1,"cwd":"/tmp","toolName":"bash","toolArgs":"{\"command\":\"touch x\"}"}"#,
    ),
];

/// `hookhost relay` for one event, through the daemon on the default
/// socket (`--unreachable deny`: no daemon would be a refusal, not this).
fn relay(user: &User, dialect: &str, event: &str, input: &str) -> (i32, String, String) {
    let mut cmd = user.hookhost(&["relay", "--dialect", dialect, "--event", event]);
    common::run_with_stdin(&mut cmd, input.as_bytes())
}

#[test]
fn serve_with_no_config_answers_every_agent_as_no_hook_decided_and_says_where_the_config_goes() {
    let user = User::new();
    let (_daemon, note) = serve(&user);
    let config = user.default_config();
    assert!(
        note.contains(&config.display().to_string()) && note.contains("hookhost init"),
        "stderr must name the config path and `hookhost init`: {note}"
    );
    for (dialect, event, input) in EVENTS {
        let (code, stdout, stderr) = relay(&user, dialect, event, input);
        // What each agent reads as "the hook has no opinion": exit 0 and
        // nothing on stdout; above all no allow, which would skip the
        // agent's own permission prompt.
        assert_eq!(
            (code, stdout.trim()),
            (0, ""),
            "{dialect} {event}: {stderr}"
        );
    }
    // The daemon took the answers: with it gone, a relay refuses.
    drop(_daemon);
    let (code, _, _) = relay(&user, EVENTS[0].0, EVENTS[0].1, EVENTS[0].2);
    assert_eq!(code, 2, "without a daemon the relay refuses (fail closed)");
}

#[test]
fn a_config_written_after_the_daemon_started_is_loaded_without_a_restart() {
    let user = User::new();
    let (_daemon, _) = serve(&user);
    let config = user.default_config();
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(
        &config,
        "[hooks.builtins.deny_tools]\nconfig = { tools = [\"shell\"], reason = \"no shell\" }\n",
    )
    .unwrap();
    let (dialect, event, input) = EVENTS[0];
    let begun = Instant::now();
    loop {
        let (code, stdout, stderr) = relay(&user, dialect, event, input);
        if stdout.contains("\"deny\"") {
            assert!(stdout.contains("no shell"), "{stdout}");
            break;
        }
        assert_eq!((code, stdout.trim()), (0, ""), "{stderr}");
        assert!(
            begun.elapsed() < Duration::from_secs(10),
            "the daemon never loaded the config it was told to watch for"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn an_explicit_config_that_does_not_exist_is_still_an_error() {
    let user = User::new();
    let missing = user.home.join("nope.toml");
    let out = user.run(&["serve", "--socket", "-c", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("nope.toml"), "{stderr}");
    assert!(!user.runtime.join("hookhost/hookhost.sock").exists());
}

#[test]
fn init_writes_a_config_that_check_accepts_and_serve_then_reads() {
    let user = User::new();
    let out = user.run(&["init"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let config = user.default_config();
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(text.contains("# [hooks.processes.guard]"), "{text}");
    let checked = user.run(&["check", "-c", config.to_str().unwrap()]);
    assert!(
        checked.status.success(),
        "{}",
        String::from_utf8_lossy(&checked.stderr)
    );
    // With the file there, serve reads it and has nothing to say about it.
    let (_daemon, note) = serve(&user);
    assert!(!note.contains("no config"), "{note}");
}

#[test]
fn init_never_overwrites_a_config_unless_forced_and_then_keeps_a_backup() {
    let user = User::new();
    let config = user.default_config();
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    let mine = "[hooks.builtins.redact_secrets]\n";
    std::fs::write(&config, mine).unwrap();
    let out = user.run(&["init"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--force"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&config).unwrap(), mine);

    let forced = user.run(&["init", "--force"]);
    assert!(forced.status.success());
    assert_ne!(std::fs::read_to_string(&config).unwrap(), mine);
    assert_eq!(backups(config.parent().unwrap()), vec![mine.to_string()]);
}

/// The contents of the backups install and init leave in `dir`.
fn backups(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".bak"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect()
}

#[test]
fn init_names_each_agent_with_hooks_of_its_own_and_the_command_that_adopts_them() {
    let user = User::new();
    // Claude Code: one hook of the user's and hookhost's own relay entry.
    let claude = user.home.join(".claude/settings.json");
    std::fs::create_dir_all(claude.parent().unwrap()).unwrap();
    std::fs::write(
        &claude,
        r#"{"hooks":{"PreToolUse":[
            {"matcher":"Bash","hooks":[{"type":"command","command":"~/bin/no-force-push.sh"}]},
            {"hooks":[{"type":"command","command":"hookhost relay --dialect claude-code"}]}]}}"#,
    )
    .unwrap();
    // Codex: only hookhost's entry, nothing to adopt.
    let codex = user.home.join(".codex/hooks.json");
    std::fs::create_dir_all(codex.parent().unwrap()).unwrap();
    std::fs::write(
        &codex,
        r#"{"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"hookhost relay --dialect codex"}]}]}}"#,
    )
    .unwrap();
    let out = user.run(&["init"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains(&format!("{} (1)", claude.display())),
        "one hook of the user's, hookhost's own entry not counted: {stdout}"
    );
    assert!(
        stdout
            .lines()
            .any(|l| l.trim() == "hookhost install claude-code --adopt"),
        "{stdout}"
    );
    assert!(!stdout.contains("codex"), "{stdout}");
    // Offered, not done: the agent's file is as it was.
    assert!(
        std::fs::read_to_string(&claude)
            .unwrap()
            .contains("no-force-push")
    );
    assert!(!user.home.join(".config/hookhost/adopted").exists());
}
