//! Repository trust under the embedding API: a repository's
//! `.claude/settings.json` (or its adopted-hooks file) names commands that
//! would touch a marker file. Nothing runs until the user approved the
//! exact command; a changed command is untrusted again at the next
//! reload; an untrusted guard that fails closed refuses, naming the hook
//! and `hookhost trust`.
//!
//! At d718375 every imported hook ran: the first test's marker existed
//! before any approval (there was no trust to give).

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use hookhost::protocol::params::ToolCall;
use hookhost::trust::{TrustStore, TrustedHook};
use hookhost::{Config, Host, ToolOutcome};
use hookhost_testkit::scratch;
use serde_json::json;

fn shell_call(command: &str) -> ToolCall {
    serde_json::from_value(json!({"tool": "shell", "arguments": {"command": command}})).unwrap()
}

/// A repository whose `.claude/settings.json` runs `command` before
/// every Bash call, with `extra` keys on the handler; and a hooks.toml
/// beside it importing that file. Returns (hooks.toml, settings file).
fn repo(dir: &Path, command: &str, extra: serde_json::Value) -> (PathBuf, PathBuf) {
    let settings = dir.join("repo/.claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    write_settings(&settings, command, extra);
    let config = dir.join("hooks.toml");
    let path = serde_json::to_string(&settings.display().to_string()).unwrap();
    std::fs::write(&config, format!("[hooks.import]\nclaude-code = {path}\n")).unwrap();
    (config, settings)
}

fn write_settings(settings: &Path, command: &str, extra: serde_json::Value) {
    let mut handler = json!({"type": "command", "command": command});
    if let (Some(h), Some(e)) = (handler.as_object_mut(), extra.as_object()) {
        h.extend(e.clone());
    }
    let body = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [handler]}]}});
    std::fs::write(settings, body.to_string()).unwrap();
}

/// `store` with every project hook of `config` approved, as `hookhost
/// trust approve --all` does.
fn approve_all(config: &Config, store: &mut TrustStore) {
    for h in config.project_hooks() {
        let hash = h.source.trust.fingerprint().unwrap();
        store.approve(hash, TrustedHook::new(h.source, h.hook));
    }
}

#[tokio::test]
async fn a_repositorys_command_runs_only_after_approval_and_not_once_changed() {
    let dir = scratch();
    let marker = dir.join("marker");
    let (path, settings) = repo(&dir, &format!("touch '{}'", marker.display()), json!({}));
    let mut store = TrustStore::in_memory();
    let config = Config::load_with_trust(&path, &store).unwrap();
    assert_eq!(config.project_hooks().len(), 1);
    let host = Host::start(config.clone()).await;
    let out = host.before_tool(shell_call("ls")).await;
    assert!(
        matches!(out, ToolOutcome::Continue { .. }),
        "a fail-open hook is skipped: {out:?}"
    );
    assert!(!marker.exists(), "an untrusted command ran");

    approve_all(&config, &mut store);
    let trusted = Config::load_with_trust(&path, &store).unwrap();
    let report = host.reload(trusted).await;
    assert_eq!(report.changed.len(), 1, "{report:?}");
    let _ = host.before_tool(shell_call("ls")).await;
    assert!(marker.exists(), "the approved command did not run");

    let changed = dir.join("changed");
    write_settings(
        &settings,
        &format!("touch '{}'", changed.display()),
        json!({}),
    );
    let pulled = Config::load_with_trust(&path, &store).unwrap();
    assert!(pulled.project_hooks()[0].source.trust.is_untrusted());
    host.reload(pulled).await;
    let _ = host.before_tool(shell_call("ls")).await;
    assert!(!changed.exists(), "a changed command ran without approval");
    host.shutdown().await;
}

#[tokio::test]
async fn an_untrusted_guard_that_fails_closed_refuses_naming_the_hook_and_hookhost_trust() {
    let dir = scratch();
    let marker = dir.join("marker");
    let (path, settings) = repo(
        &dir,
        &format!("touch '{}'", marker.display()),
        json!({"onFailure": "block"}),
    );
    let config = Config::load_with_trust(&path, &TrustStore::in_memory()).unwrap();
    let host = Host::start(config).await;
    let reason = match host.before_tool(shell_call("rm -rf ~")).await {
        ToolOutcome::Deny { reason } => reason,
        other => panic!("an untrusted fail-closed guard must refuse: {other:?}"),
    };
    assert!(reason.contains("not trusted"), "{reason}");
    assert!(reason.contains("hookhost trust"), "{reason}");
    assert!(reason.contains(&settings.display().to_string()), "{reason}");
    let info = host.hooks();
    assert!(
        matches!(&info[0].status, hookhost::HookStatus::Down(why) if why.contains("not trusted")),
        "{:?}",
        info[0].status
    );
    host.shutdown().await;
    assert!(!marker.exists(), "an untrusted command ran");
}

#[tokio::test]
async fn the_users_own_hookhost_config_still_runs_its_commands() {
    // [hooks.commands] are the user's own config, not a project's file:
    // they need no approval.
    let dir = scratch();
    let marker = dir.join("marker");
    let config = dir.join("hooks.toml");
    std::fs::write(
        &config,
        format!(
            "[hooks.commands.mine]\ncommand = \"touch '{}'\"\nevents = [\"pre_tool_use\"]\n",
            marker.display()
        ),
    )
    .unwrap();
    let config = Config::load_with_trust(&config, &TrustStore::in_memory()).unwrap();
    assert!(config.project_hooks().is_empty());
    let host = Host::start(config).await;
    let _ = host.before_tool(shell_call("ls")).await;
    host.shutdown().await;
    assert!(marker.exists());
}

/// The agent's answer names an untrusted hook that was due and skipped, so
/// the user sees why it did not run (and how to trust it): a system
/// message beside whatever the chain decided.
#[tokio::test]
async fn the_agents_answer_names_an_untrusted_hook_it_skipped() {
    let dir = scratch();
    let marker = dir.join("marker");
    let (path, _) = repo(&dir, &format!("touch '{}'", marker.display()), json!({}));
    let config = Config::load_with_trust(&path, &TrustStore::in_memory()).unwrap();
    let host = Host::start(config).await;
    let input = json!({"session_id": "s", "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": "ls"}});
    let event = hookhost::ForeignEvent::read(hookhost::Dialect::ClaudeCode, &input, None).unwrap();
    let answer = host.answer_foreign(&event).await;
    assert_eq!(answer.code, 0, "{answer:?}");
    let v: serde_json::Value = serde_json::from_str(&answer.stdout).unwrap();
    let message = v["systemMessage"].as_str().unwrap_or_default();
    assert!(
        message.contains("is not trusted") && message.contains("hookhost trust"),
        "{answer:?}"
    );
    assert!(v.get("hookSpecificOutput").is_none(), "no decision: {v}");
    assert!(!marker.exists(), "an untrusted command ran");
    host.shutdown().await;
}
