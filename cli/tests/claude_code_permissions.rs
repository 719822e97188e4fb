//! Installing hookhost never answers a permission dialog for the user. The
//! real Claude Code, in its default permission mode and non-interactive
//! (`claude -p`, where a call that needs permission is refused because
//! nobody can be asked), runs one Bash call that needs permission
//! (`touch` in the project) three ways:
//!
//! - without hookhost: refused;
//! - with `hookhost install claude-code` (the relay) and a daemon serving
//!   an empty config: refused the same way, although every PreToolUse and
//!   PermissionRequest went through hookhost;
//! - with a user's own PermissionRequest hook in hookhost's chain that
//!   says `allow`: the call runs, as it would with that hook in Claude's
//!   own settings.
//!
//! And a PreToolUse hook that only rewrites: the rewritten call is what
//! Claude asks permission for, and it is still refused.
//!
//! Before this test, an empty chain answered every PermissionRequest
//! `decision.behavior: "allow"`, and a rewrite was written with
//! `permissionDecision: "allow"`: both calls ran without a prompt.

#![allow(clippy::unwrap_used)]

#[path = "common/claude.rs"]
mod claude;
mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The model asks for `touch <marker>`, the marker named in the prompt.
fn touch(body: &Value) -> (Value, &'static str) {
    let text = body["messages"].to_string();
    let name = text
        .split("MARKER:")
        .nth(1)
        .and_then(|t| {
            t.split(|c: char| !c.is_ascii_alphanumeric() && c != '-')
                .next()
        })
        .map(str::to_string);
    match name {
        Some(n) if claude::has_bash(body) && !claude::answered(body) => {
            claude::bash_call(&format!("touch {n}"))
        }
        _ => claude::done(),
    }
}

/// A HOME, a project, a private runtime folder for the daemon's socket,
/// and hookhost's config folder.
struct Place {
    home: PathBuf,
    project: PathBuf,
    runtime: PathBuf,
    config: PathBuf,
}

fn place() -> Place {
    let dir = common::scratch().canonicalize().unwrap();
    let p = Place {
        home: dir.join("home"),
        project: dir.join("project"),
        runtime: dir.join("run"),
        config: dir.join("home/.config"),
    };
    for d in [&p.home, &p.project, &p.runtime, &p.config] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::set_permissions(&p.runtime, std::fs::Permissions::from_mode(0o700)).unwrap();
    p
}

impl Place {
    /// `hookhost ARGS` as this user would run it.
    fn hookhost(&self) -> Command {
        let mut c = Command::new(common::HOOKHOST);
        c.current_dir(&self.project)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", &self.config)
            .env("XDG_RUNTIME_DIR", &self.runtime);
        c
    }

    fn install(&self) {
        let out = self
            .hookhost()
            .args(["install", "claude-code"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// The daemon on its default socket, serving `hooks` (TOML), until
    /// the returned guard drops.
    fn daemon(&self, hooks: &str) -> Daemon {
        let config = self.config.join("hookhost/hooks.toml");
        std::fs::create_dir_all(config.parent().unwrap()).unwrap();
        std::fs::write(&config, hooks).unwrap();
        let child = self
            .hookhost()
            .args(["serve", "--socket", "--no-watch", "-c"])
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let socket = self.runtime.join("hookhost/hookhost.sock");
        let begun = Instant::now();
        while !socket.exists() && begun.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(socket.exists(), "the daemon made no socket");
        Daemon(child)
    }

    /// Claude asked to touch `marker` in the project: whether the file was
    /// made, and Claude's result.
    fn claude(&self, marker: &str) -> (bool, Value) {
        let (url, _seen) = claude::fake_model(touch);
        let prompt = format!("MARKER:{marker} create it");
        let out = claude::command(&self.project, &self.home, &url, &prompt)
            .env("XDG_CONFIG_HOME", &self.config)
            .env("XDG_RUNTIME_DIR", &self.runtime)
            .output()
            .unwrap();
        (self.project.join(marker).exists(), claude::result(&out))
    }

    /// The daemon's events, from `hookhost status --json`.
    fn status(&self) -> Value {
        let out = self.hookhost().args(["status", "--json"]).output().unwrap();
        serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
    }
}

struct Daemon(Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The command Claude was refused, from its result's permission denials.
fn denied(result: &Value) -> Vec<String> {
    result["permission_denials"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|d| d["tool_input"]["command"].as_str().map(str::to_string))
        .collect()
}

/// A hook script in `dir` printing `answer`.
fn script(dir: &Path, name: &str, answer: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!("#!/bin/sh\ncat >/dev/null\nprintf '%s' '{answer}'\n"),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn with_hookhost_installed_and_no_hooks_claude_code_still_asks_for_permission() {
    let p = place();
    let (made, result) = p.claude("without-hookhost");
    assert!(!made, "Claude ran it without hookhost? {result}");
    assert_eq!(denied(&result), ["touch without-hookhost"], "{result}");

    p.install();
    let _daemon = p.daemon("");
    let (made, result) = p.claude("with-hookhost");
    assert!(!made, "hookhost answered the permission dialog: {result}");
    assert_eq!(denied(&result), ["touch with-hookhost"], "{result}");
    // hookhost was in the loop: install routed PermissionRequest to the
    // relay, and the daemon answered Claude's events.
    let settings = std::fs::read_to_string(p.home.join(".claude/settings.json")).unwrap();
    let settings: Value = serde_json::from_str(&settings).unwrap();
    let entry = settings["hooks"]["PermissionRequest"].to_string();
    assert!(entry.contains("relay --dialect claude-code"), "{entry}");
    let status = p.status();
    let calls = status["agents"]["claude-code"]["calls"]
        .as_u64()
        .unwrap_or(0);
    assert!(calls >= 3, "the daemon answered Claude's events: {status}");
}

#[test]
fn a_users_own_permission_hook_under_hookhost_decides_as_under_claude_code() {
    let p = place();
    let allow = r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}"#;
    let hook = script(&p.home, "allow.sh", allow);
    p.install();
    let hooks = format!(
        "[hooks.commands.approve]\ndialect = \"claude-code\"\nevents = [\"PermissionRequest\"]\ncommand = {:?}\n",
        hook.display().to_string()
    );
    let _daemon = p.daemon(&hooks);
    let (made, result) = p.claude("approved-by-the-hook");
    assert!(made, "the user's own allow was not passed on: {result}");
    assert!(denied(&result).is_empty(), "{result}");
}

#[test]
fn a_rewrite_alone_is_applied_and_claude_code_still_asks_for_permission() {
    let p = place();
    let rewrite = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":"touch rewritten"}}}"#;
    let hook = script(&p.home, "rewrite.sh", rewrite);
    p.install();
    let hooks = format!(
        "[hooks.commands.rewrite]\ndialect = \"claude-code\"\nevents = [\"PreToolUse\"]\ncommand = {:?}\n",
        hook.display().to_string()
    );
    let _daemon = p.daemon(&hooks);
    let (made, result) = p.claude("original");
    assert!(!made && !p.project.join("rewritten").exists(), "{result}");
    assert_eq!(
        denied(&result),
        ["touch rewritten"],
        "the rewrite reached Claude, and its permission check still ran: {result}"
    );
}

/// The same for every agent install routes a permission dialog from:
/// `hookhost relay` with hookhost's chain empty answers a PermissionRequest
/// of Claude Code, Codex, Copilot CLI and docker-agent with nothing (exit
/// 0, no output), so each shows its own dialog; before, each got an allow.
#[test]
fn the_relay_gives_no_decision_at_any_agents_permission_request() {
    let p = place();
    let config = p.config.join("empty.toml");
    std::fs::write(&config, "").unwrap();
    let call = r#""tool_name": "Bash", "tool_input": {"command": "rm -rf ~"}"#;
    let cases = [
        ("claude-code", "PermissionRequest", call.to_string()),
        ("codex", "PermissionRequest", call.to_string()),
        (
            "copilot",
            "permissionRequest",
            r#""toolName": "bash", "toolArgs": "{\"command\":\"rm -rf ~\"}""#.to_string(),
        ),
        ("docker-agent", "permission_request", call.to_string()),
    ];
    for (dialect, event, fields) in cases {
        let input = format!(
            r#"{{"session_id": "s", "cwd": "/p", "hook_event_name": "{event}", {fields}}}"#
        );
        let mut cmd = p.hookhost();
        cmd.args(["relay", "--dialect", dialect, "--event", event, "-c"])
            .arg(&config);
        let (code, stdout, stderr) = common::run_with_stdin(&mut cmd, input.as_bytes());
        assert_eq!(
            (code, stdout.as_str()),
            (0, ""),
            "{dialect} {event}: {stderr}"
        );
    }
}
