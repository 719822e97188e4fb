//! Events an agent lets a hook block, though hookhost's protocol does not
//! wait on them (Claude Code's UserPromptExpansion, PostToolBatch,
//! TaskCreated, TaskCompleted, ConfigChange): a Claude hook moved into
//! hookhost (`install --adopt`) blocks there as it did under Claude Code.
//! At d718375 the block was logged as unused and the relay answered exit 0,
//! so the guard was off.

#![allow(clippy::unwrap_used)]

use hookhost::{Config, Dialect, ForeignEvent, Host};
use hookhost_testkit::scratch;
use serde_json::{Value, json};

/// A host whose one hook is a Claude command hook for `event` running
/// `script` (sh), with `extra` TOML keys.
async fn host(event: &str, script: &str, extra: &str) -> Host {
    let dir = scratch();
    let path = dir.join("hooks.toml");
    let text = format!(
        "[hooks.commands.guard]\ndialect = \"claude-code\"\nevents = [{event:?}]\ncommand = {script:?}\n{extra}"
    );
    std::fs::write(&path, text).unwrap();
    Host::start(Config::load(&path).unwrap()).await
}

/// What the relay answers Claude Code for `event`: exit code and reason.
async fn relay(host: &Host, event: &str, extra: Value) -> (i32, String) {
    let mut input = json!({"session_id": "s", "hook_event_name": event, "cwd": "/p"});
    input
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().cloned().unwrap());
    let event = ForeignEvent::read(Dialect::ClaudeCode, &input, None).unwrap();
    let answer = host.answer_foreign(&event).await;
    (answer.code, answer.stderr)
}

#[tokio::test]
async fn an_exit_2_at_config_change_blocks_it() {
    let h = host(
        "ConfigChange",
        "cat >/dev/null; echo 'settings are managed' >&2; exit 2",
        "",
    )
    .await;
    let extra = json!({"source": "user_settings", "file_path": "/p/.claude/settings.json"});
    assert_eq!(
        relay(&h, "ConfigChange", extra).await,
        (2, "settings are managed".to_string())
    );
    h.shutdown().await;
}

#[tokio::test]
async fn a_json_block_at_each_blockable_open_event_blocks_it() {
    let script = r#"cat >/dev/null; echo '{"decision":"block","reason":"not now"}'"#;
    for event in [
        "UserPromptExpansion",
        "PostToolBatch",
        "TaskCreated",
        "TaskCompleted",
        "ConfigChange",
    ] {
        let h = host(event, script, "").await;
        assert_eq!(
            relay(&h, event, json!({})).await,
            (2, "not now".to_string()),
            "{event}"
        );
        h.shutdown().await;
    }
}

#[tokio::test]
async fn a_failing_guard_that_fails_closed_blocks_and_one_that_warns_does_not() {
    let failing = "cat >/dev/null; exit 1";
    let closed = host("TaskCompleted", failing, "on_error = \"block\"\n").await;
    let (code, reason) = relay(&closed, "TaskCompleted", json!({})).await;
    assert_eq!(code, 2, "{reason}");
    assert!(reason.contains("on_error = block"), "{reason}");
    closed.shutdown().await;
    let open = host("TaskCompleted", failing, "on_error = \"warn\"\n").await;
    assert_eq!(relay(&open, "TaskCompleted", json!({})).await.0, 0);
    open.shutdown().await;
}

#[tokio::test]
async fn a_block_where_claude_code_takes_none_changes_nothing() {
    let script = r#"cat >/dev/null; echo '{"decision":"block","reason":"no"}'"#;
    let h = host("CwdChanged", script, "").await;
    assert_eq!(
        relay(&h, "CwdChanged", json!({"cwd": "/q"})).await,
        (0, String::new())
    );
    h.shutdown().await;
}
