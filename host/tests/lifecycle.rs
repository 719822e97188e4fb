//! Lifecycle events and command hooks in one chain with process hooks.

#![allow(clippy::unwrap_used)]

use hookhost_testkit as common;

use std::path::Path;

use hookhost::CommandConfig;
use hookhost::protocol::Stage;
use hookhost::protocol::lifecycle::LifecycleEvent;
use hookhost::{Host, ToolOutcome};
use serde_json::{Map, Value, json};

use common::{config, hook, scratch, tool_call};

fn script(dir: &Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    let mut perms = std::fs::metadata(&path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&path, perms).unwrap();
    path.to_string_lossy().into_owned()
}

fn command_hook(args: Vec<String>, events: &[&str], priority: i64) -> CommandConfig {
    serde_json::from_value(json!({
        "args": args,
        "events": events,
        "priority": priority,
        "timeout": 5,
    }))
    .unwrap()
}

fn payload(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contexts_from_process_and_command_hooks_arrive_in_chain_order() {
    let dir = scratch();
    let mut first = hook(
        &[
            "--answer",
            r#"{"action":"continue","additional_context":"from the process hook"}"#,
        ],
        &[Stage::Lifecycle],
    );
    first.priority = 1;
    let mut c = config(vec![("first", first)]);
    let plain = script(
        &dir,
        "ctx.sh",
        "cat > /dev/null; echo 'from the command hook'",
    );
    c.commands.insert(
        "second".into(),
        command_hook(vec![plain], &["session_start"], 2),
    );
    let host = Host::start(c).await;
    let out = host
        .lifecycle(
            LifecycleEvent::SessionStart,
            payload(json!({"source": "startup"})),
        )
        .await;
    assert_eq!(out.blocked, None);
    assert_eq!(
        out.contexts,
        ["from the process hook", "from the command hook"]
    );
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocking_event_is_blocked_by_a_command_hooks_exit_2() {
    let dir = scratch();
    let mut c = config(vec![]);
    let gate = script(
        &dir,
        "gate.sh",
        r#"input=$(cat); case "$input" in *password*) echo "no secrets in prompts" >&2; exit 2;; esac; exit 0"#,
    );
    c.commands.insert(
        "gate".into(),
        command_hook(vec![gate], &["user_prompt_submit"], 0),
    );
    let host = Host::start(c).await;
    let out = host
        .lifecycle(
            LifecycleEvent::UserPromptSubmit,
            payload(json!({"prompt": "my password is hunter2"})),
        )
        .await;
    assert_eq!(out.blocked.as_deref(), Some("no secrets in prompts"));
    let out = host
        .lifecycle(
            LifecycleEvent::UserPromptSubmit,
            payload(json!({"prompt": "hello"})),
        )
        .await;
    assert_eq!(out.blocked, None);
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claude_code_validator_denies_grep_in_the_chain() {
    let dir = scratch();
    let mut c = config(vec![]);
    let validator = script(
        &dir,
        "validate.sh",
        r#"input=$(cat); case "$input" in *'"command":"grep'*) echo "use rg instead of grep" >&2; exit 2;; esac; exit 0"#,
    );
    let mut cfg = command_hook(vec![validator], &["pre_tool_use"], 0);
    cfg.matcher = Some("Bash|shell".into());
    c.commands.insert("validator".into(), cfg);
    let host = Host::start(c).await;
    let out = host
        .before_tool(tool_call("shell", json!({"command": "grep -r x ."})))
        .await;
    let ToolOutcome::Deny { reason } = out else {
        panic!("{out:?}")
    };
    assert_eq!(reason, "use rg instead of grep");
    let out = host
        .before_tool(tool_call("read_file", json!({"command": "grep"})))
        .await;
    assert!(
        matches!(out, ToolOutcome::Continue { .. }),
        "the matcher skips other tools: {out:?}"
    );
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn non_request_events_reach_observers_as_runtime_events_and_commands_run() {
    let dir = scratch();
    let events = dir.join("events");
    let mut watcher = hook(&["--events-file", events.to_str().unwrap()], &[]);
    watcher.observe = vec!["lifecycle.*".into()];
    let mut c = config(vec![("watcher", watcher)]);
    let marker = dir.join("ended");
    let ender = script(&dir, "end.sh", &format!("cat > {}", marker.display()));
    c.commands.insert(
        "ender".into(),
        command_hook(vec![ender], &["session_end"], 0),
    );
    let host = Host::start(c).await;
    let out = host
        .lifecycle(
            LifecycleEvent::SessionEnd,
            payload(json!({"reason": "logout"})),
        )
        .await;
    assert_eq!(out.blocked, None);
    let input: Value = serde_json::from_str(&std::fs::read_to_string(&marker).unwrap()).unwrap();
    assert_eq!(input["hook_event_name"], "session_end");
    assert_eq!(input["reason"], "logout");
    for _ in 0..200 {
        if std::fs::read_to_string(&events)
            .unwrap_or_default()
            .contains("lifecycle.session_end")
        {
            host.shutdown().await;
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("the observer never saw lifecycle.session_end");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_hook_takes_no_step_for_a_request_event_it_does_not_list() {
    let dir = scratch();
    let mut c = config(vec![]);
    let marker = dir.join("ran");
    let starter = script(&dir, "start.sh", &format!("cat > {}", marker.display()));
    c.commands.insert(
        "starter".into(),
        command_hook(vec![starter], &["session_start"], 0),
    );
    let host = Host::start(c).await;
    let (_, trace) = host
        .run_stage_traced(
            Stage::Lifecycle,
            json!({"event": "user_prompt_submit", "payload": {"prompt": "hi"}}),
        )
        .await
        .unwrap();
    assert!(trace.is_empty(), "{trace:?}");
    assert_eq!(host.stats()[0].calls, 0);
    assert!(!marker.exists(), "the command ran");
    host.shutdown().await;
}

/// The stop params of session `session`.
fn stop_in(session: &str) -> hookhost::protocol::LifecycleParams {
    let mut p = hookhost::protocol::LifecycleParams::new(LifecycleEvent::Stop);
    p.meta.session_key = Some(session.into());
    p
}

/// The `(stop_hook_active, loop_count)` of every stop call the hook got.
fn stop_members(calls: &Path) -> Vec<(bool, u64)> {
    std::fs::read_to_string(calls)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|p| p["event"] == "stop")
        .map(|p| {
            let payload = &p["payload"];
            (
                payload["stop_hook_active"].as_bool().unwrap(),
                payload["loop_count"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocked_stops_are_counted_per_session_and_capped() {
    let dir = scratch();
    let calls = dir.join("calls");
    let judge = hook(
        &[
            "--answer",
            r#"{"action":"block","reason":"the tests still fail: fix them"}"#,
            "--calls-file",
            calls.to_str().unwrap(),
        ],
        &[Stage::Lifecycle],
    );
    let mut c = config(vec![("judge", judge)]);
    c.defaults.stop_block_limit = 2;
    let host = Host::start(c).await;
    let next = "the tests still fail: fix them";
    // Two blocks in a row are the agent's next instructions; the third
    // would pass the limit and is overridden, which resets the count.
    for want in [Some(next), Some(next), None, Some(next)] {
        let out = host.lifecycle_with(stop_in("s1")).await;
        assert_eq!(out.blocked.as_deref(), want);
    }
    // Another session counts on its own.
    assert!(host.lifecycle_with(stop_in("s2")).await.blocked.is_some());
    // A new prompt in s1 starts its count afresh.
    let mut prompt = hookhost::protocol::LifecycleParams::new(LifecycleEvent::UserPromptSubmit);
    prompt.meta.session_key = Some("s1".into());
    host.lifecycle_with(prompt).await;
    assert!(host.lifecycle_with(stop_in("s1")).await.blocked.is_some());
    assert_eq!(
        stop_members(&calls),
        [
            (false, 0),
            (true, 1),
            (true, 2),
            (false, 0),
            (false, 0),
            (false, 0)
        ]
    );
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_and_an_agents_own_event_reach_observers() {
    let dir = scratch();
    let events = dir.join("events");
    let mut watcher = hook(&["--events-file", events.to_str().unwrap()], &[]);
    watcher.observe = vec!["lifecycle.*".into()];
    let host = Host::start(config(vec![("watcher", watcher)])).await;
    assert_eq!(host.lifecycle_with(stop_in("s")).await.blocked, None);
    let meta = hookhost::protocol::meta::Meta::default();
    let out = host
        .lifecycle_named("cwd_changed", meta.clone(), payload(json!({"cwd": "/w"})))
        .await
        .unwrap();
    assert_eq!(out.blocked, None);
    let err = host
        .lifecycle_named("CwdChanged", meta, Map::new())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("snake_case"), "{err}");
    for _ in 0..200 {
        let seen = std::fs::read_to_string(&events).unwrap_or_default();
        if seen.contains("lifecycle.stop") && seen.contains("lifecycle.cwd_changed") {
            assert!(!seen.contains("CwdChanged"), "{seen}");
            host.shutdown().await;
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("the observer never saw lifecycle.stop and lifecycle.cwd_changed");
}
