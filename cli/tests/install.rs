//! `hookhost install AGENT` and `hookhost uninstall AGENT` against
//! scratch HOME and project folders: what they write is read back by
//! hookhost's own importer (as `[hooks.import]` and `hookhost relay -c`
//! read these files) and by the relay's event reader; merging, idempotence,
//! backups, dry runs, uninstall and `--adopt` are checked on the files. The
//! real Claude Code then runs in a project install wrote, with no hookhost
//! listening: the fail-closed setting is what stops its tool call.

#![allow(clippy::unwrap_used)]

#[path = "common/claude.rs"]
mod claude;
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use hookhost::{CommandOnError, Config, Dialect, ForeignEvent};
use serde_json::{Value, json};

/// A scratch HOME and project.
struct Scratch {
    home: PathBuf,
    project: PathBuf,
}

fn scratch() -> Scratch {
    let dir = common::scratch().canonicalize().unwrap();
    let (home, project) = (dir.join("home"), dir.join("project"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    Scratch { home, project }
}

impl Scratch {
    /// `hookhost ARGS` in the project, with only PATH and this HOME.
    fn run(&self, args: &[&str]) -> Output {
        Command::new(common::HOOKHOST)
            .args(args)
            .current_dir(&self.project)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .output()
            .unwrap()
    }

    /// `hookhost ARGS`, which must succeed; its stdout.
    fn ok(&self, args: &[&str]) -> String {
        common::succeeded(args, &self.run(args))
    }

    /// The settings file each agent reads, by scope, as its docs give them.
    fn settings(&self, agent: &str, scope: &str) -> PathBuf {
        let base = if scope == "user" {
            &self.home
        } else {
            &self.project
        };
        let rel = match (agent, scope) {
            ("claude-code", _) => ".claude/settings.json",
            ("codex", _) => ".codex/hooks.json",
            ("gemini-cli", _) => ".gemini/settings.json",
            ("cursor", _) => ".cursor/hooks.json",
            ("copilot", "user") => ".copilot/hooks/hookhost.json",
            _ => ".github/hooks/hookhost.json",
        };
        base.join(rel)
    }

    fn config(&self) -> PathBuf {
        self.home.join(".config/hookhost/hooks.toml")
    }
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn write(path: &Path, value: &Value) -> String {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let text = serde_json::to_string_pretty(value).unwrap() + "\n";
    std::fs::write(path, &text).unwrap();
    text
}

/// The files beside `path` whose names start with its own: it and its
/// backups.
fn siblings(path: &Path) -> Vec<String> {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let mut found: Vec<String> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&name))
        .collect();
    found.sort();
    found
}

/// The backup an install names on its line about `path`.
fn backup_named(stdout: &str, path: &Path) -> PathBuf {
    let line = stdout
        .lines()
        .find(|l| l.starts_with(&format!("{}:", path.display())))
        .unwrap_or_else(|| panic!("no line about {}: {stdout}", path.display()));
    let at = line
        .find("(backup: ")
        .unwrap_or_else(|| panic!("no backup: {line}"));
    PathBuf::from(line[at + 9..].trim_end_matches(')'))
}

/// The words of a command install wrote (it quotes only with '…').
fn words(command: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = command.trim();
    while !rest.is_empty() {
        let (word, tail) = match rest.strip_prefix('\'') {
            Some(quoted) => quoted.split_once('\'').unwrap(),
            None => rest.split_once(' ').unwrap_or((rest, "")),
        };
        out.push(word.to_string());
        rest = tail.trim_start();
    }
    out
}

/// An event as its agent might send it: the keys every dialect reads.
fn sample(name: Option<&str>) -> Value {
    let mut v = json!({"session_id": "s1", "sessionId": "s1", "cwd": "/tmp",
        "tool_name": "Bash", "tool_input": {"command": "ls"}, "toolName": "bash",
        "toolArgs": "{\"command\":\"ls\"}", "command": "ls", "file_path": "a",
        "llm_request": {"messages": []}});
    if let Some(name) = name {
        v["hook_event_name"] = json!(name);
    }
    v
}

/// How many events install routes per agent: every native event, less
/// Claude's WorktreeCreate/WorktreeRemove (a hook there replaces git's
/// worktree creation) and Copilot's VS Code spellings.
const AGENTS: [(&str, usize); 5] = [
    ("claude-code", 29),
    ("codex", 13),
    ("gemini-cli", 11),
    ("cursor", 21),
    ("copilot", 13),
];

#[test]
fn every_agent_installs_and_uninstalls_at_both_scopes() {
    for (agent, events) in AGENTS {
        for scope in ["user", "project"] {
            let s = scratch();
            let file = s.settings(agent, scope);
            let out = s.ok(&["install", agent, "--scope", scope]);
            assert!(out.contains(&format!("routed {events} events")), "{out}");
            check_routes(agent, &file, events);
            let out = s.ok(&["uninstall", agent, "--scope", scope]);
            assert!(
                out.contains(&format!("removed hookhost from {events} events")),
                "{out}"
            );
            assert!(!file.exists(), "{agent} {scope}: {out}");
        }
    }
}

/// Reads `file` back as hookhost's importer and relay would: one hook per
/// event, each running this hookhost's relay for the agent (or, for
/// Claude Code, posting to its route), each event readable by the relay
/// as the entry invokes it.
fn check_routes(agent: &str, file: &Path, events: usize) {
    let dialect: Dialect = agent.parse().unwrap();
    let config = Config::import(dialect, file).unwrap_or_else(|e| panic!("{agent}: {e}"));
    assert_eq!(
        config.commands.len(),
        events,
        "{agent}: {:?}",
        config.commands.keys()
    );
    assert!(config.skipped.is_empty(), "{agent}: {:?}", config.skipped);
    let exe = Path::new(common::HOOKHOST).canonicalize().unwrap();
    for hook in config.commands.values() {
        let event = hook.source.as_ref().unwrap().event.clone();
        assert!(!event.starts_with("Worktree"), "{agent}: {event}");
        if let Some(url) = &hook.url {
            assert_eq!(url, "http://127.0.0.1:7070/hooks/claude-code");
            continue;
        }
        let w = words(hook.command.as_deref().unwrap());
        assert_eq!(Path::new(&w[0]), exe, "{agent} {event}: {w:?}");
        assert_eq!(w[1..4], ["relay", "--dialect", agent], "{agent} {event}");
        let flag = w
            .iter()
            .position(|x| x == "--event")
            .map(|i| w[i + 1].as_str());
        // Copilot CLI's payload does not name the event: the entry must.
        let named = agent != "copilot";
        assert_eq!(flag, (!named).then_some(event.as_str()), "{agent} {event}");
        let input = sample(named.then_some(event.as_str()));
        let read = ForeignEvent::read(dialect, &input, flag)
            .unwrap_or_else(|e| panic!("{agent} {event}: {e}"));
        assert_eq!(read.name(), event);
    }
}

#[test]
fn install_merges_with_the_file_and_uninstall_gives_it_back() {
    let s = scratch();
    let file = s.settings("claude-code", "project");
    let mine = json!({"type": "command", "command": "/opt/guard.sh", "timeout": 5});
    let original = json!({"model": "opus",
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [mine]}]},
        "permissions": {"allow": ["Bash(ls)"]}});
    let text = write(&file, &original);
    s.ok(&["install", "claude-code", "--scope", "project"]);
    let now = read(&file);
    let keys: Vec<&String> = now.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["model", "hooks", "permissions"]);
    assert_eq!(now["permissions"], original["permissions"]);
    let pre = now["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(pre.len(), 2, "{pre:?}");
    assert_eq!(pre[0], original["hooks"]["PreToolUse"][0]);
    assert_eq!(pre[1]["matcher"], "*");
    let relay = pre[1]["hooks"][0]["command"].as_str().unwrap();
    assert!(relay.contains(" relay --dialect claude-code "), "{relay}");
    // hookhost's importer sees the user's hook first, then hookhost's.
    let config = Config::import(Dialect::ClaudeCode, &file).unwrap();
    let first = config.commands.values().next().unwrap();
    assert_eq!(first.command.as_deref(), Some("/opt/guard.sh"));
    s.ok(&["uninstall", "claude-code", "--scope", "project"]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
}

#[test]
fn a_second_install_changes_nothing_and_a_changed_one_updates_in_place() {
    let s = scratch();
    let file = s.settings("claude-code", "user");
    write(&file, &json!({"hooks": {}}));
    s.ok(&["install", "claude-code"]);
    let first = std::fs::read(&file).unwrap();
    let files = siblings(&file);
    assert_eq!(files.len(), 2, "{files:?}");
    let out = s.ok(&["install", "claude-code"]);
    assert!(
        out.contains("already installed here; nothing changed"),
        "{out}"
    );
    assert_eq!(std::fs::read(&file).unwrap(), first);
    assert_eq!(siblings(&file), files, "no new backup");
    let out = s.ok(&["install", "claude-code", "--via", "http"]);
    assert!(out.contains("(0 added, 29 updated"), "{out}");
    let pre = &read(&file)["hooks"]["PreToolUse"];
    assert_eq!(pre.as_array().unwrap().len(), 1, "{pre}");
    assert_eq!(pre[0]["hooks"][0]["type"], "http");
}

/// Every agent, Claude Code included, is routed through the relay unless
/// `--via http` is asked for: an HTTP hook cannot tell who answers it.
#[test]
fn install_defaults_to_the_relay_for_every_agent() {
    let s = scratch();
    let file = s.settings("claude-code", "user");
    let out = s.ok(&["install", "claude-code"]);
    assert!(
        out.contains("now keep running: hookhost serve --socket"),
        "{out}"
    );
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(!text.contains("\"http\""), "{text}");
    for (_, list) in read(&file)["hooks"].as_object().unwrap() {
        let h = &list[0]["hooks"][0];
        assert_eq!(h["type"], "command", "{h}");
    }
    assert!(!s.home.join(".config/hookhost/http-token").exists());
}

/// `--via http`: the daemon's per-user token is created (64 hex digits,
/// mode 0600 from its creation) and sent as an `Authorization` header by
/// every entry; the settings file holding it is 0600 even when it was
/// 0644; a second install reuses the token. Project scope is refused
/// (its settings are often committed).
#[test]
fn with_http_the_users_token_is_wired_in_and_kept_private() {
    use std::os::unix::fs::PermissionsExt;
    let s = scratch();
    let file = s.settings("claude-code", "user");
    let token_file = s.home.join(".config/hookhost/http-token");
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let out = s.ok(&["install", "claude-code", "--via", "http", "--dry-run"]);
    assert!(out.contains("<the token install creates>"), "{out}");
    assert!(!token_file.exists(), "a dry run creates nothing");
    write(&file, &json!({"model": "opus"}));
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    s.ok(&["install", "claude-code", "--via", "http"]);
    assert_eq!(mode(&token_file), 0o600);
    assert_eq!(mode(&file), 0o600, "the settings hold the token");
    let token = std::fs::read_to_string(&token_file)
        .unwrap()
        .trim()
        .to_string();
    assert!(token.len() == 64 && token.chars().all(|c| c.is_ascii_hexdigit()));
    let want = format!("Bearer {token}");
    for (event, list) in read(&file)["hooks"].as_object().unwrap() {
        let h = &list[0]["hooks"][0];
        assert_eq!(h["headers"]["Authorization"], want.as_str(), "{event}: {h}");
    }
    assert_eq!(
        std::fs::read_to_string(s.home.join(".config/hookhost/http-listen")).unwrap(),
        "127.0.0.1:7070\n"
    );
    let out = s.ok(&["install", "claude-code", "--via", "http"]);
    assert!(
        out.contains("nothing changed"),
        "the token is reused: {out}"
    );
    let out = s.run(&[
        "install",
        "claude-code",
        "--via",
        "http",
        "--scope",
        "project",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("often committed"), "{err}");
}

/// A repository that links its agent folder (or settings file) to the
/// user's own must not have install copy the user's settings into it.
#[test]
fn a_symlinked_project_settings_path_is_refused() {
    let s = scratch();
    let mine = s.settings("codex", "user");
    let text = write(
        &mine,
        &json!({"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": "/home/me/private-hook --key s3cret"}]}]}}),
    );
    std::os::unix::fs::symlink(mine.parent().unwrap(), s.project.join(".codex")).unwrap();
    let out = s.run(&["install", "codex", "--scope", "project"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(".codex is a symbolic link"), "{err}");
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), text);
    assert_eq!(siblings(&mine).len(), 1, "nothing written beside it");

    std::fs::remove_file(s.project.join(".codex")).unwrap();
    std::fs::create_dir(s.project.join(".codex")).unwrap();
    let file = s.settings("codex", "project");
    std::os::unix::fs::symlink(&mine, &file).unwrap();
    let out = s.run(&["install", "codex", "--scope", "project"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("hooks.json is a symbolic link"), "{err}");
    let out = s.run(&["uninstall", "codex", "--scope", "project"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), text);
}

#[test]
fn the_backup_holds_the_file_as_it_was() {
    let s = scratch();
    let file = s.settings("gemini-cli", "project");
    let text = write(
        &file,
        &json!({"theme": "dark", "hooks": {"BeforeTool": []}}),
    );
    let out = s.ok(&["install", "gemini-cli", "--scope", "project"]);
    let backup = backup_named(&out, &file);
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), text);
    assert!(!backup.to_string_lossy().ends_with(".json"), "{backup:?}");
}

#[test]
fn a_dry_run_prints_the_diff_and_writes_nothing() {
    let s = scratch();
    let file = s.settings("cursor", "project");
    let out = s.ok(&["install", "cursor", "--scope", "project", "--dry-run"]);
    assert!(!file.exists());
    assert!(
        out.contains(&format!("--- /dev/null\n+++ {}\n", file.display())),
        "{out}"
    );
    assert!(out.contains("+  \"version\": 1,"), "{out}");
    assert!(out.contains("\"failClosed\": true"), "{out}");
    let text = write(&file, &json!({"version": 1, "hooks": {}}));
    let out = s.ok(&["install", "cursor", "--scope", "project", "--dry-run"]);
    assert!(
        out.contains(&format!("--- {0}\n+++ {0}\n", file.display())),
        "{out}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    assert_eq!(siblings(&file).len(), 1);
    s.ok(&["install", "cursor", "--scope", "project"]);
    let installed = std::fs::read_to_string(&file).unwrap();
    let out = s.ok(&["uninstall", "cursor", "--scope", "project", "--dry-run"]);
    // Only hookhost's entries were there: the file goes.
    assert!(out.contains("+++ /dev/null"), "{out}");
    assert!(out.contains("-        \"failClosed\": true"), "{out}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), installed);
}

#[test]
fn uninstall_removes_only_hookhosts_entries() {
    let s = scratch();
    let file = s.settings("cursor", "user");
    let hand = format!(
        "{} relay --dialect cursor -c /etc/mine.toml",
        common::HOOKHOST
    );
    let original = json!({"version": 1, "hooks": {
        "preToolUse": [{"command": "/opt/guard.sh", "failClosed": true}],
        "stop": [{"command": hand}]}});
    let text = write(&file, &original);
    s.ok(&["install", "cursor"]);
    assert_eq!(
        read(&file)["hooks"]["preToolUse"].as_array().unwrap().len(),
        2
    );
    assert_eq!(read(&file)["hooks"]["stop"][0]["command"], hand);
    let out = s.ok(&["uninstall", "cursor"]);
    assert!(out.contains("removed hookhost from 21 events"), "{out}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    let out = s.ok(&["uninstall", "cursor"]);
    assert!(
        out.contains("no hookhost entries; nothing changed"),
        "{out}"
    );
}

/// Where hookhost can refuse (but not at stop), an unreachable hookhost
/// refuses: Claude Code's onFailure, Cursor's failClosed and the relay's
/// `--unreachable deny`; hookhost's importer reads both settings as
/// failing closed. `--no-fail-closed` sets none of it.
#[test]
fn install_fails_closed_where_hookhost_can_refuse() {
    // Claude Code's open events a hook may block fail closed too, but
    // TaskCompleted, whose block keeps the agent at work, as stop's does.
    let closed = [
        "UserPromptSubmit",
        "UserPromptExpansion",
        "PreToolUse",
        "PermissionRequest",
        "PostToolUse",
        "PostToolUseFailure",
        "PostToolBatch",
        "SubagentStart",
        "TaskCreated",
        "ConfigChange",
        "PreCompact",
    ];
    let s = scratch();
    let file = s.settings("claude-code", "user");
    s.ok(&["install", "claude-code", "--via", "relay"]);
    let hooks = read(&file)["hooks"].clone();
    for (event, list) in hooks.as_object().unwrap() {
        let h = &list[0]["hooks"][0];
        let shut = closed.contains(&event.as_str());
        assert_eq!(h["onFailure"] == "block", shut, "{event}: {h}");
        let deny = h["command"]
            .as_str()
            .unwrap()
            .ends_with("--unreachable deny");
        assert_eq!(deny, shut, "{event}: {h}");
    }
    let config = Config::import(Dialect::ClaudeCode, &file).unwrap();
    let blocking = config
        .commands
        .values()
        .filter(|c| c.on_error == Some(CommandOnError::Block))
        .count();
    assert_eq!(blocking, closed.len());
    s.ok(&[
        "install",
        "claude-code",
        "--via",
        "relay",
        "--no-fail-closed",
    ]);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        !text.contains("onFailure") && !text.contains("deny"),
        "{text}"
    );
    let cursor = s.settings("cursor", "user");
    s.ok(&["install", "cursor"]);
    let entry = &read(&cursor)["hooks"]["beforeShellExecution"][0];
    assert_eq!(entry["failClosed"], true, "{entry}");
    assert_eq!(read(&cursor)["hooks"]["stop"][0].get("failClosed"), None);
}

#[test]
fn adopt_moves_the_users_hooks_into_hookhosts_chain() {
    let s = scratch();
    let file = s.settings("claude-code", "user");
    let guard = json!({"type": "command", "command": "/opt/guard.sh", "timeout": 5});
    // HOME is passed now, so a hook under `~` moves; its script reads a key
    // hookhost does not pass, which is named. A command that reads one
    // itself stays with the agent.
    let tilde = json!({"type": "command", "command": "python3 ~/.claude/hooks/x.py"});
    let script = s.home.join(".claude/hooks/x.py");
    std::fs::create_dir_all(script.parent().unwrap()).unwrap();
    std::fs::write(
        &script,
        "import os\nos.environ['OPENAI_API_KEY']\nos.getenv('HOME')\n",
    )
    .unwrap();
    let secret = json!({"type": "command", "command": "curl -H \"$SLACK_TOKEN\" https://x"});
    let prompt = json!({"type": "prompt", "prompt": "is this fine?"});
    write(
        &file,
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [guard, tilde, secret, prompt]}],
            "Notification": [{"hooks": [{"type": "command", "command": "/opt/notify"}]}]},
            "theme": "dark"}),
    );
    std::fs::create_dir_all(s.config().parent().unwrap()).unwrap();
    std::fs::write(s.config(), "# my hooks\n[hooks]\nenabled = true\n").unwrap();
    let out = s.ok(&["install", "claude-code", "--adopt"]);
    let adopted = s
        .home
        .join(".config/hookhost/adopted/claude-code-user.json");
    assert!(out.contains("holds 3 adopted hooks"), "{out}");
    assert!(
        out.contains("`curl -H \"$SLACK_TOKEN\" https://x`: it uses $SLACK_TOKEN, which hookhost does not pass"),
        "{out}"
    );
    let note = format!(
        "note: PreToolUse `python3 ~/.claude/hooks/x.py` reads $OPENAI_API_KEY (in {}), which hookhost does not pass",
        script.display()
    );
    assert!(out.contains(&note), "{out}");
    assert!(
        out.contains("`is this fine?`: hookhost does not run `prompt` hooks"),
        "{out}"
    );
    let moved = read(&adopted);
    assert_eq!(moved["hooks"]["PreToolUse"][0]["matcher"], "Bash");
    assert_eq!(
        moved["hooks"]["PreToolUse"][0]["hooks"],
        json!([guard, tilde])
    );
    let now = read(&file);
    assert_eq!(now["theme"], "dark");
    assert_eq!(
        now["hooks"]["PreToolUse"][0]["hooks"],
        json!([secret, prompt])
    );
    assert_eq!(now["hooks"]["Notification"].as_array().unwrap().len(), 1);
    let toml = std::fs::read_to_string(s.config()).unwrap();
    assert!(
        toml.starts_with("# my hooks\n[hooks]\nenabled = true\n"),
        "{toml}"
    );
    let config = Config::load(&s.config()).unwrap();
    let from = |c: &&hookhost::CommandConfig| c.source.as_ref().unwrap().file == adopted;
    let mut commands: Vec<_> = config.commands.values().filter(from).collect();
    commands.sort_by_key(|c| c.command.clone());
    assert_eq!(commands.len(), 3);
    assert_eq!(commands[0].command.as_deref(), Some("/opt/guard.sh"));
    assert_eq!(commands[0].timeout_ms, Some(5000));
    assert_eq!(commands[1].command.as_deref(), Some("/opt/notify"));
    // `hookhost check` names the variable the adopted script will not get.
    let check = s.run(&["check", "-c", s.config().to_str().unwrap()]);
    let text = String::from_utf8_lossy(&check.stdout);
    assert_eq!(check.status.code(), Some(0), "{text}");
    let line = text
        .lines()
        .find(|l| l.starts_with("ENV hook `import-"))
        .unwrap_or_default();
    assert!(
        line.contains(&format!(
            "reads $OPENAI_API_KEY (in {}), which it will not get",
            script.display()
        )),
        "{text}"
    );
    let again = s.ok(&["install", "claude-code", "--adopt"]);
    assert!(again.contains("no hooks to adopt"), "{again}");
    assert!(again.contains("nothing changed"), "{again}");
}

/// A hook under an event install does not route stays with the agent:
/// moved into hookhost it would never run. Codex's UserInstructions hook
/// replaces the user's own instructions (Codex after 0.169.0, which reads
/// the file all the same: cli/tests/codex.rs).
#[test]
fn adopt_leaves_hooks_of_events_install_does_not_route() {
    let s = scratch();
    let file = s.settings("codex", "user");
    let guard = json!({"type": "command", "command": "/opt/guard.sh"});
    let instructions = json!([{"hooks": [{"type": "command", "command": "/opt/instructions.sh"}]}]);
    write(
        &file,
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [guard]}],
            "UserInstructions": instructions}}),
    );
    let out = s.ok(&["install", "codex", "--adopt"]);
    assert!(out.contains("holds 1 adopted hooks"), "{out}");
    assert!(out.contains("routed 13 events"), "{out}");
    assert!(
        out.contains("UserInstructions `/opt/instructions.sh`: hookhost install does not route UserInstructions"),
        "{out}"
    );
    let adopted = s.home.join(".config/hookhost/adopted/codex-user.json");
    let moved = read(&adopted);
    assert_eq!(moved["hooks"]["PreToolUse"][0]["hooks"], json!([guard]));
    assert_eq!(moved["hooks"].get("UserInstructions"), None, "{moved}");
    assert_eq!(read(&file)["hooks"]["UserInstructions"], instructions);
}

/// A project's hooks are adopted into a file in the project, so hookhost
/// runs them in the project folder, as Copilot did: a relative `cwd` and
/// script keep their meaning.
#[test]
fn adopt_keeps_a_projects_hooks_in_the_project() {
    let s = scratch();
    let mine = s.project.join(".github/hooks/mine.json");
    let guard = json!({"type": "command", "bash": "./scripts/guard.sh", "cwd": "."});
    write(
        &mine,
        &json!({"version": 1, "hooks": {"preToolUse": [guard]}}),
    );
    let config = s.project.join("hooks.toml");
    let c = config.to_str().unwrap();
    s.ok(&[
        "install", "copilot", "--scope", "project", "--adopt", "-c", c,
    ]);
    let adopted = s.project.join(".github/hookhost-adopted.json");
    assert_eq!(
        read(&adopted),
        json!({"version": 1, "hooks": {"preToolUse": [guard]}})
    );
    assert_eq!(read(&mine), json!({"version": 1}));
    let loaded = Config::load(&config).unwrap();
    let hook = loaded.commands.values().next().unwrap();
    assert_eq!(hook.command.as_deref(), Some("./scripts/guard.sh"));
    assert_eq!(hook.working_dir.as_deref(), Some(s.project.as_path()));
}

#[test]
fn install_refuses_a_config_that_imports_the_file_it_writes() {
    let s = scratch();
    let file = s.settings("claude-code", "user");
    let text = write(
        &file,
        &json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/opt/x"}]}]}}),
    );
    std::fs::create_dir_all(s.config().parent().unwrap()).unwrap();
    std::fs::write(
        s.config(),
        "[hooks.import]\nclaude-code = \"~/.claude/settings.json\"\n",
    )
    .unwrap();
    let out = s.run(&["install", "claude-code"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("would call itself"), "{err}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
}

#[test]
fn install_says_what_it_cannot_do() {
    let s = scratch();
    let no = |args: &[&str], why: &str| {
        let out = s.run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(why), "{args:?}: {err}");
    };
    no(
        &["install", "docker-agent"],
        "no settings file install can edit",
    );
    no(
        &["install", "codex", "--via", "http"],
        "runs only command hooks",
    );
    no(
        &["install", "codex", "--url", "http://x:1"],
        "--url goes with --via http",
    );
    no(
        &["install", "cursor", "--project", "."],
        "--project goes with --scope project",
    );
    let file = s.settings("gemini-cli", "user");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "{\n  // a comment\n  \"hooks\": {}\n}\n").unwrap();
    no(&["install", "gemini-cli"], "not plain JSON");
}

// The real Claude Code in a project `install` wrote, with nothing
// listening at the hook URL.

/// The model asks to create the marker file named in the prompt.
fn touch_marker(body: &Value) -> (Value, &'static str) {
    let text = body["messages"].to_string();
    let marker = text
        .split("MARKER:")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .map(|m| {
            m.trim_end_matches(|c: char| !c.is_ascii_alphanumeric())
                .to_string()
        });
    match marker {
        Some(m) if claude::has_bash(body) && !claude::answered(body) => {
            claude::bash_call(&format!("touch {m}"))
        }
        _ => claude::done(),
    }
}

/// A loopback URL nothing listens on.
fn dead_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    format!("http://{}", listener.local_addr().unwrap())
}

/// What Claude did in a project install wrote, with hookhost down.
struct Run {
    /// Whether the marker file was created: the tool ran.
    created: bool,
    /// Claude's JSON result.
    result: Value,
    /// How many requests reached the model.
    requests: usize,
    /// The tool results the model saw.
    tool_results: Vec<Value>,
}

/// Installs (HTTP hooks, user scope) for a fresh project (with `extra` flags), lets `edit` change
/// the settings written, runs Claude there asking for the marker.
fn claude_with_hookhost_down(extra: &[&str], edit: fn(&mut Value)) -> Run {
    let s = scratch();
    let url = dead_url();
    let install = ["install", "claude-code", "--via", "http", "--url", &url];
    s.ok(&[&install[..], extra].concat());
    let file = s.settings("claude-code", "user");
    let mut settings = read(&file);
    edit(&mut settings);
    write(&file, &settings);
    let marker = s.project.join("marker");
    let (model, seen) = claude::fake_model(touch_marker);
    let prompt = format!("MARKER:{} create it", marker.display());
    let out = claude::run(&s.project, &s.home, &model, &prompt);
    let requests = seen.lock().unwrap().len();
    Run {
        created: marker.exists(),
        result: claude::result(&out),
        requests,
        tool_results: claude::tool_results(&seen),
    }
}

/// As installed, a hookhost that cannot be reached refuses the session at
/// its first gate, the prompt: the model is never asked, nothing runs.
#[test]
fn claude_code_refuses_the_prompt_when_hookhost_is_down() {
    let run = claude_with_hookhost_down(&[], |_| {});
    assert!(!run.created, "the tool ran: {}", run.result);
    assert_eq!(run.requests, 0, "{}", run.result);
    let said = run.result["result"].as_str().unwrap_or_default();
    assert!(
        said.contains("UserPromptSubmit operation blocked by hook"),
        "{}",
        run.result
    );
    assert!(said.contains("onFailure is \"block\""), "{}", run.result);
}

/// The tool gate on its own (the prompt's and the batch's entries set to fail open): the
/// model asks for the Bash call, and PreToolUse's `onFailure: "block"`
/// refuses it.
#[test]
fn claude_code_refuses_the_tool_when_hookhost_is_down() {
    let run = claude_with_hookhost_down(&[], |settings| {
        // The prompt's gate and the batch's (which would end the turn
        // before the model sees the refusal) set to fail open.
        for event in ["UserPromptSubmit", "PostToolBatch"] {
            let entry = &mut settings["hooks"][event][0]["hooks"][0];
            entry.as_object_mut().unwrap().remove("onFailure");
        }
    });
    assert!(!run.created, "the tool ran: {}", run.result);
    let sent = run
        .tool_results
        .first()
        .unwrap_or_else(|| panic!("the model saw no tool result: {}", run.result));
    assert_eq!(sent["is_error"], true, "{sent}");
    let text = sent["content"].to_string();
    assert!(text.contains("onFailure"), "{sent}");
    let denied = run.result["permission_denials"].to_string();
    assert!(denied.contains("touch "), "{}", run.result);
}

/// Without the setting the same dead hookhost lets the call through:
/// the fail-closed setting is what closed the gates above.
#[test]
fn without_fail_closed_claude_code_runs_the_tool_when_hookhost_is_down() {
    let run = claude_with_hookhost_down(&["--no-fail-closed"], |_| {});
    assert!(run.created, "the tool did not run: {}", run.result);
    assert!(
        run.tool_results.iter().all(|r| r["is_error"] != true),
        "{:?}",
        run.tool_results
    );
}
