//! GoClaw's quality gates at `subagent_stop`: a failing gate's reason goes
//! back to the sub-agent as feedback, at most `max_retries` times, then
//! the result is let through with the failure recorded; the embedding API
//! says which happened (`LifecycleOutcome::gate`).

#![allow(clippy::unwrap_used)]

use hookhost_testkit as common;

use std::path::Path;

use hookhost::protocol::LifecycleParams;
use hookhost::protocol::lifecycle::LifecycleEvent;
use hookhost::protocol::meta::Meta;
use hookhost::{Config, GateOutcome, Host, LifecycleOutcome};
use serde_json::json;

use common::scratch;

/// The gate: fails (exit 2, the feedback on stderr, Claude Code's rule)
/// when the sub-agent's last message still says TODO.
const GATE: &str =
    r#"grep -q TODO && { echo 'Output still has a TODO: finish it.' >&2; exit 2; }; exit 0"#;

/// A config whose command hook `review` is a quality gate with `keys`.
fn config(dir: &Path, keys: &str, extra: &str) -> Config {
    let text = format!(
        "[hooks.commands.review]\ndialect = \"claude-code\"\nevents = [\"SubagentStop\"]\ncommand = {GATE:?}\n{keys}\n{extra}"
    );
    Config::parse(&text, false, &dir.join("hooks.toml"), dir.to_path_buf()).unwrap()
}

/// A sub-agent's result at subagent_stop.
async fn finished(host: &Host, agent: &str, message: &str) -> LifecycleOutcome {
    let mut params = LifecycleParams::new(LifecycleEvent::SubagentStop);
    params.meta = Meta {
        session_key: Some("s-1".into()),
        ..Meta::default()
    };
    params.payload =
        json!({"agent_id": agent, "agent_type": "coder", "last_assistant_message": message})
            .as_object()
            .cloned()
            .unwrap();
    host.lifecycle_with(params).await
}

fn retry(attempt: u32, max_retries: u32) -> Option<GateOutcome> {
    Some(GateOutcome::Retry {
        hook: "review".into(),
        feedback: "Output still has a TODO: finish it.".into(),
        attempt,
        max_retries,
    })
}

const FEEDBACK: &str = "Output still has a TODO: finish it.";

/// From GoClaw docs/hooks-quality-gates "Hook Config Fields"
/// (`block_on_failure: true`, `max_retries: 2`) and "Command Evaluator"
/// (stderr becomes the feedback shown to the agent on retry): blocked
/// attempts 1 and 2 are sent back with the feedback, the 3rd is let
/// through as exhausted, and a pass in between starts the count afresh.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_gate_is_retried_max_retries_times_then_let_through() {
    let dir = scratch();
    let host = Host::start(config(&dir, "max_retries = 2", "")).await;
    let first = finished(&host, "sub-1", "draft with TODO").await;
    assert_eq!(first.gate, retry(1, 2));
    assert_eq!(first.blocked.as_deref(), Some(FEEDBACK));
    assert_eq!(finished(&host, "sub-1", "TODO").await.gate, retry(2, 2));
    // A pass resets the count.
    let pass = finished(&host, "sub-1", "all done").await;
    assert_eq!((pass.gate, pass.blocked), (Some(GateOutcome::Passed), None));
    assert_eq!(finished(&host, "sub-1", "TODO").await.gate, retry(1, 2));
    assert_eq!(finished(&host, "sub-1", "TODO").await.gate, retry(2, 2));
    // Another sub-agent of the session is counted apart.
    assert_eq!(finished(&host, "sub-2", "TODO").await.gate, retry(1, 2));
    let third = finished(&host, "sub-1", "TODO").await;
    assert_eq!(
        third.gate,
        Some(GateOutcome::Exhausted {
            hook: "review".into(),
            feedback: FEEDBACK.into(),
            attempts: 3,
        })
    );
    assert_eq!(third.blocked, None, "the result is let through");
    // Exhausted starts afresh for that sub-agent's next result.
    assert_eq!(finished(&host, "sub-1", "TODO").await.gate, retry(1, 2));
    host.shutdown().await;
}

/// From GoClaw docs/hooks-quality-gates "Non-blocking audit"
/// (`block_on_failure: false`: failure is logged, execution continues):
/// the result passes, the failure is reported, and a later gate still
/// judges the result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gate_that_does_not_block_on_failure_fails_open_and_the_chain_goes_on() {
    let dir = scratch();
    let marker = dir.join("later-ran");
    let later = format!(
        "[hooks.commands.later]\ndialect = \"claude-code\"\nevents = [\"SubagentStop\"]\npriority = 5\ncommand = \"cat > /dev/null; touch '{}'\"\n",
        marker.display()
    );
    let host = Host::start(config(&dir, "block_on_failure = false", &later)).await;
    let out = finished(&host, "sub-1", "TODO").await;
    assert_eq!(
        out.gate,
        Some(GateOutcome::FailedOpen {
            hook: "review".into(),
            feedback: FEEDBACK.into(),
        })
    );
    assert_eq!(out.blocked, None);
    assert!(marker.exists(), "the later hook did not run");
    host.shutdown().await;
}

/// From GoClaw docs/hooks-quality-gates "Common Issues" (infinite retry
/// loop: cap max_retries): the host-wide `stop_block_limit` (spec §5.9)
/// caps a gate whose `max_retries` is higher; the override ends the
/// retries as exhausted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_block_limit_caps_a_gate_with_more_retries() {
    let dir = scratch();
    let host = Host::start(config(
        &dir,
        "max_retries = 5",
        "[hooks.defaults]\nstop_block_limit = 2\n",
    ))
    .await;
    assert_eq!(finished(&host, "sub-1", "TODO").await.gate, retry(1, 5));
    assert_eq!(finished(&host, "sub-1", "TODO").await.gate, retry(2, 5));
    let capped = finished(&host, "sub-1", "TODO").await;
    assert_eq!(capped.blocked, None);
    assert_eq!(
        capped.gate,
        Some(GateOutcome::Exhausted {
            hook: "review".into(),
            feedback: FEEDBACK.into(),
            attempts: 3,
        })
    );
    assert_eq!(finished(&host, "sub-1", "TODO").await.gate, retry(1, 5));
    host.shutdown().await;
}

/// A hook with neither key is no quality gate: its block at
/// subagent_stop keeps the sub-agent going as before (no `gate`), and the
/// gate keys on a hook that never runs at subagent_stop are a load error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_hooks_that_set_the_keys_are_gates() {
    let dir = scratch();
    let host = Host::start(config(&dir, "", "")).await;
    let out = finished(&host, "sub-1", "TODO").await;
    assert_eq!((out.gate, out.blocked.as_deref()), (None, Some(FEEDBACK)));
    host.shutdown().await;
    let text =
        "[hooks.commands.c]\ncommand = \"true\"\nevents = [\"pre_tool_use\"]\nmax_retries = 2\n";
    let err = Config::parse(text, false, &dir.join("h.toml"), dir.clone()).unwrap_err();
    assert!(
        err.to_string().contains("apply at subagent_stop only"),
        "{err}"
    );
}
