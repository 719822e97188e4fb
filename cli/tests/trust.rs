//! Repository trust through the binary, against a scratch HOME: a
//! repository's `.claude/settings.json`, or the hooks `install --adopt
//! --scope project` kept in it, name a command that would touch a marker
//! file. `hookhost relay -c` (the chain as the daemon runs it) runs
//! nothing until `hookhost trust approve`; `check` names the untrusted
//! hook; a changed command is untrusted again; a revoked one stops; the
//! user's own settings folders need no approval; a store others can write
//! trusts nothing. Then `uninstall` after `--adopt` gives the agent's file
//! its hooks back.
//!
//! At d718375 the first test fails at its first check: the relay ran the
//! repository's command (the marker existed) with no approval, and
//! `hookhost trust` did not exist.

#![allow(clippy::unwrap_used)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

/// A scratch HOME, and a repository outside it.
struct Scratch {
    home: PathBuf,
    repo: PathBuf,
}

fn scratch() -> Scratch {
    let dir = common::scratch().canonicalize().unwrap();
    let (home, repo) = (dir.join("home"), dir.join("repo"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&repo).unwrap();
    Scratch { home, repo }
}

impl Scratch {
    /// `hookhost ARGS` in the repository, with only PATH and this HOME,
    /// `input` on stdin.
    fn run_with(&self, args: &[&str], input: &str) -> Output {
        use std::io::Write;
        use std::process::Stdio;
        let mut child = Command::new(common::HOOKHOST)
            .args(args)
            .current_dir(&self.repo)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
        child.wait_with_output().unwrap()
    }

    /// `hookhost ARGS`, which must succeed; its stdout.
    fn ok(&self, args: &[&str]) -> String {
        common::succeeded(args, &self.run_with(args, ""))
    }

    fn config(&self) -> PathBuf {
        self.home.join(".config/hookhost/hooks.toml")
    }

    fn store(&self) -> PathBuf {
        self.home.join(".config/hookhost/trusted.json")
    }

    /// A hooks.toml importing `files` for Claude Code.
    fn import(&self, files: &[&Path]) {
        let list: Vec<String> = files
            .iter()
            .map(|f| serde_json::to_string(&f.display().to_string()).unwrap())
            .collect();
        let config = self.config();
        std::fs::create_dir_all(config.parent().unwrap()).unwrap();
        let body = format!("[hooks.import]\nclaude-code = [{}]\n", list.join(", "));
        std::fs::write(config, body).unwrap();
    }

    /// A Bash PreToolUse event relayed through the chain of the config,
    /// in process; the relay's output.
    fn relay(&self, agent: &str) -> Output {
        let event = json!({"session_id": "s1", "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": {"command": "ls"},
            "cwd": self.repo, "transcript_path": "/dev/null"});
        let c = self.config();
        self.run_with(
            &["relay", "--dialect", agent, "-c", c.to_str().unwrap()],
            &event.to_string(),
        )
    }

    /// What the relays wrote to their log (`~/.local/state/hookhost/relay.log`):
    /// a relay tells the agent only its answer.
    fn relay_log(&self) -> String {
        std::fs::read_to_string(self.home.join(".local/state/hookhost/relay.log"))
            .unwrap_or_default()
    }

    fn trust(&self, args: &[&str]) -> String {
        let c = self.config();
        let all = [&["trust", "-c", c.to_str().unwrap()], args].concat();
        self.ok(&all)
    }
}

/// A Claude settings file running `command` before every Bash call.
fn settings(path: &Path, command: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let body = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": command}]}]}});
    std::fs::write(path, body.to_string()).unwrap();
}

fn touch(marker: &Path) -> String {
    format!("touch '{}'", marker.display())
}

/// The 12-digit fingerprint on the listing's line for `what`.
fn fingerprint_of(listing: &str, what: &str) -> String {
    let line = listing
        .lines()
        .find(|l| l.contains(what))
        .unwrap_or_else(|| panic!("no line for {what} in:\n{listing}"));
    line.split_whitespace().nth(1).unwrap().to_string()
}

#[test]
fn opening_a_repository_runs_nothing_until_hookhost_trust_approves() {
    let s = scratch();
    let marker = s.repo.join("marker");
    let file = s.repo.join(".claude/settings.json");
    settings(&file, &touch(&marker));
    s.import(&[&file]);

    s.relay("claude-code");
    assert!(!marker.exists(), "the repository's command ran untrusted");
    let log = s.relay_log();
    assert!(log.contains("not trusted"), "{log}");

    let listing = s.trust(&[]);
    assert!(listing.contains("UNTRUSTED"), "{listing}");
    let hash = fingerprint_of(&listing, "UNTRUSTED");
    assert_eq!(hash.len(), 12, "{listing}");
    let c = s.config();
    let check = s.run_with(&["check", "-c", c.to_str().unwrap()], "");
    let said = String::from_utf8_lossy(&check.stdout);
    assert_eq!(check.status.code(), Some(1), "{said}");
    assert!(
        said.contains("UNTRUSTED hook `import-001-claude-code-PreToolUse`"),
        "{said}"
    );
    assert!(said.contains(&hash), "{said}");

    let approved = s.trust(&["approve", &hash]);
    assert!(approved.contains(&touch(&marker)), "{approved}");
    let mode = std::fs::metadata(s.store()).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    s.relay("claude-code");
    assert!(marker.exists(), "the approved command did not run");
    assert!(s.trust(&["list"]).contains("trusted"));

    // A pull changes the command: untrusted again, not run.
    let pulled = s.repo.join("pulled");
    settings(&file, &touch(&pulled));
    s.relay("claude-code");
    assert!(!pulled.exists(), "a changed command ran without approval");

    // Back to the approved command, then revoked: it stops running.
    settings(&file, &touch(&marker));
    std::fs::remove_file(&marker).unwrap();
    let revoked = s.trust(&["revoke", &hash]);
    assert!(revoked.contains("revoked"), "{revoked}");
    s.relay("claude-code");
    assert!(!marker.exists(), "a revoked command ran");
}

#[test]
fn the_users_own_settings_need_no_approval() {
    let s = scratch();
    let marker = s.repo.join("marker");
    let file = s.home.join(".claude/settings.json");
    settings(&file, &touch(&marker));
    s.import(&[&file]);
    s.relay("claude-code");
    assert!(marker.exists(), "the user's own hook did not run");
    assert!(s.trust(&[]).contains("nothing needs trust"));
}

#[test]
fn a_clone_inside_the_users_folders_is_still_a_project() {
    let s = scratch();
    let marker = s.repo.join("marker");
    let clone = s.home.join(".config/some-tool");
    std::fs::create_dir_all(clone.join(".git")).unwrap();
    let file = clone.join(".claude/settings.json");
    settings(&file, &touch(&marker));
    s.import(&[&file]);
    s.relay("claude-code");
    assert!(!marker.exists(), "a git clone's command ran untrusted");
}

#[test]
fn a_store_others_can_write_trusts_nothing() {
    let s = scratch();
    let marker = s.repo.join("marker");
    let file = s.repo.join(".claude/settings.json");
    settings(&file, &touch(&marker));
    s.import(&[&file]);
    s.trust(&["approve", "--all"]);
    std::fs::set_permissions(s.store(), std::fs::Permissions::from_mode(0o666)).unwrap();
    s.relay("claude-code");
    assert!(!marker.exists(), "a world-writable store was believed");
    let log = s.relay_log();
    assert!(log.contains("can be written by others"), "{log}");
    let refused = s.run_with(
        &[
            "trust",
            "-c",
            s.config().to_str().unwrap(),
            "approve",
            "--all",
        ],
        "",
    );
    assert_eq!(
        refused.status.code(),
        Some(2),
        "approve must not write over it"
    );
}

#[test]
fn adopted_project_hooks_need_trust_too() {
    let s = scratch();
    let marker = s.repo.join("marker");
    let codex = s.repo.join(".codex/hooks.json");
    std::fs::create_dir_all(codex.parent().unwrap()).unwrap();
    let hooks = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": touch(&marker)}]}]}});
    std::fs::write(&codex, hooks.to_string()).unwrap();
    let c = s.config();
    let repo = s.repo.to_str().unwrap();
    let c = c.to_str().unwrap();
    s.ok(&[
        "install",
        "codex",
        "--scope",
        "project",
        "--project",
        repo,
        "--adopt",
        "-c",
        c,
    ]);
    let adopted = s.repo.join(".codex/hookhost-adopted.json");
    assert!(adopted.exists());
    s.relay("codex");
    assert!(!marker.exists(), "an adopted project hook ran untrusted");
    let listing = s.trust(&[]);
    assert!(listing.contains("hookhost-adopted.json"), "{listing}");
    s.trust(&["approve", "--all"]);
    s.relay("codex");
    assert!(marker.exists(), "the approved adopted hook did not run");
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `uninstall` after `install --adopt` gives the agent's file its hooks
/// back and takes the import out; at d718375 it left them in the adopted
/// file, run by nothing, with a note.
#[test]
fn uninstall_after_adopt_gives_the_hooks_back() {
    for agent in ["claude-code", "codex", "gemini-cli", "cursor"] {
        let s = scratch();
        let (rel, original) = match agent {
            "cursor" => (
                ".cursor/hooks.json",
                json!({"version": 1, "hooks": {"beforeShellExecution": [{"command": "/opt/guard.sh"}],
                    "stop": [{"command": "/opt/notify"}]}}),
            ),
            _ => {
                let (rel, pre) = match agent {
                    "claude-code" => (".claude/settings.json", "PreToolUse"),
                    "codex" => (".codex/hooks.json", "PreToolUse"),
                    _ => (".gemini/settings.json", "BeforeTool"),
                };
                let body = json!({"theme": "dark", "hooks": {pre: [{"matcher": "Bash|run_shell_command",
                    "hooks": [{"type": "command", "command": "/opt/guard.sh", "timeout": 5}]}]}});
                (rel, body)
            }
        };
        let file = s.repo.join(rel);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, serde_json::to_string_pretty(&original).unwrap()).unwrap();
        let c = s.config();
        let (c, repo) = (c.to_str().unwrap(), s.repo.to_str().unwrap());
        let place = ["--scope", "project", "--project", repo, "-c", c];
        let mut install = vec!["install", agent, "--adopt"];
        if agent == "claude-code" {
            install.extend(["--via", "relay"]);
        }
        s.ok(&[&install[..], &place[..]].concat());
        assert_ne!(read(&file), original, "{agent}: adopted");
        assert!(
            std::fs::read_to_string(s.config())
                .unwrap()
                .contains("hookhost-adopted")
        );
        let out = s.ok(&[&["uninstall", agent][..], &place[..]].concat());
        assert!(out.contains("are back"), "{agent}: {out}");
        assert_eq!(read(&file), original, "{agent}: the file's hooks are back");
        let toml = std::fs::read_to_string(s.config()).unwrap();
        assert!(!toml.contains("hookhost-adopted"), "{agent}: {toml}");
        let adopted = file.parent().unwrap().join("hookhost-adopted.json");
        assert!(!adopted.exists(), "{agent}: the adopted file is gone");
    }
}

#[test]
fn uninstall_keep_adopted_leaves_them_with_a_note() {
    let s = scratch();
    let file = s.repo.join(".codex/hooks.json");
    let original =
        json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/opt/n"}]}]}});
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, original.to_string()).unwrap();
    let c = s.config();
    let (c, repo) = (c.to_str().unwrap(), s.repo.to_str().unwrap());
    let place = ["--scope", "project", "--project", repo, "-c", c];
    s.ok(&[&["install", "codex", "--adopt"][..], &place[..]].concat());
    let out = s.ok(&[&["uninstall", "codex", "--keep-adopted"][..], &place[..]].concat());
    assert!(out.contains("no longer run"), "{out}");
    assert!(s.repo.join(".codex/hookhost-adopted.json").exists());
}
