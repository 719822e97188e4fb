//! Chain policies with real hook processes: filters, the circuit breaker,
//! the chain budget, the audit log, builtins in the chain, reload and
//! process sharing.

#![allow(clippy::unwrap_used)]

use hookhost_testkit as common;

use std::collections::HashSet;
use std::time::{Duration, Instant};

use hookhost::BuiltinConfig;
use hookhost::protocol::Stage;
use hookhost::{FailurePolicy, Host, ToolOutcome};
use serde_json::{Value, json};

use common::{config, hook, scratch, tool_call};

fn builtin(priority: i64, config: Value) -> BuiltinConfig {
    serde_json::from_value(json!({"priority": priority, "config": config})).unwrap()
}

fn stat(host: &Host, name: &str) -> hookhost::HookStats {
    host.stats().into_iter().find(|s| s.hook == name).unwrap()
}

const DENY: &str = r#"{"action":"deny_tool","reason":"denied by the test hook"}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_matcher_is_anchored_and_a_filtered_hook_costs_no_tool_call() {
    let mut h = hook(&["--answer", DENY], &[Stage::BeforeTool]);
    h.matcher = Some("Edit".into());
    let host = Host::start(config(vec![("edit_guard", h)])).await;
    let out = host.before_tool(tool_call("NotebookEdit", json!({}))).await;
    assert!(matches!(out, ToolOutcome::Continue { .. }), "{out:?}");
    let s = stat(&host, "edit_guard");
    assert_eq!(
        (s.calls, s.filtered),
        (0, 1),
        "NotebookEdit must not reach the hook"
    );
    let out = host.before_tool(tool_call("Edit", json!({}))).await;
    assert!(matches!(out, ToolOutcome::Deny { .. }), "{out:?}");
    assert_eq!(stat(&host, "edit_guard").calls, 1);
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cel_condition_true_false_and_evaluation_error() {
    let mut long = hook(&["--answer", DENY], &[Stage::BeforeTool]);
    long.condition = Some(r#"tool == "shell" && size(arguments.command) > 10"#.into());
    let mut broken = hook(&["--answer", DENY], &[Stage::BeforeTool]);
    broken.condition = Some("arguments.missing == 1".into());
    let host = Host::start(config(vec![("long", long), ("broken", broken)])).await;

    let out = host
        .before_tool(tool_call("shell", json!({"command": "ls"})))
        .await;
    assert!(
        matches!(out, ToolOutcome::Continue { .. }),
        "short command: {out:?}"
    );
    let out = host
        .before_tool(tool_call(
            "shell",
            json!({"command": "find / -name '*.rs'"}),
        ))
        .await;
    assert!(
        matches!(out, ToolOutcome::Deny { .. }),
        "long command: {out:?}"
    );

    let (long, broken) = (stat(&host, "long"), stat(&host, "broken"));
    assert_eq!((long.calls, long.filtered), (1, 1));
    // The broken condition (first by name) skipped its hook both times:
    // counted, logged, never called.
    assert_eq!((broken.calls, broken.filter_errors), (0, 2));
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_breaker_opens_on_five_timeouts_but_not_on_five_denies() {
    let mut slow = hook(&["--sleep-ms", "2000"], &[Stage::BeforeTool]);
    slow.timeout_ms = Some(50);
    let denier = hook(&["--answer", DENY], &[Stage::BeforeTool]);
    let host = Host::start(config(vec![("slow", slow)])).await;
    for _ in 0..5 {
        host.before_tool(tool_call("t", json!({}))).await;
    }
    assert_eq!(stat(&host, "slow").breaker, "open");
    let begun = Instant::now();
    let out = host.before_tool(tool_call("t", json!({}))).await;
    assert!(
        begun.elapsed() < Duration::from_millis(40),
        "an open breaker must not wait for the hook"
    );
    assert!(
        matches!(out, ToolOutcome::Continue { .. }),
        "allow policy: {out:?}"
    );
    let s = stat(&host, "slow");
    assert_eq!((s.calls, s.timeouts, s.breaker_skips), (5, 5, 1));
    host.shutdown().await;

    let host = Host::start(config(vec![("denier", denier)])).await;
    for _ in 0..6 {
        let out = host.before_tool(tool_call("t", json!({}))).await;
        assert!(matches!(out, ToolOutcome::Deny { .. }), "{out:?}");
    }
    let s = stat(&host, "denier");
    assert_eq!((s.calls, s.breaker.to_string()), (6, "closed".to_string()));
    host.shutdown().await;
}

/// An agent that gives up on a call (drops its future) while that call is
/// the breaker's one trial must not leave the breaker waiting forever for
/// the trial's result: that would switch the hook off for good.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trial_call_dropped_by_the_agent_does_not_wedge_the_breaker() {
    let mut h = hook(&["--delay-from-args"], &[Stage::BeforeTool]);
    h.timeout_ms = Some(300);
    h.on_error = Some(FailurePolicy::Block);
    // A fail-closed hook has no breaker unless asked for one.
    h.breaker = Some(true);
    h.breaker_failures = Some(1);
    h.breaker_cooldown_ms = Some(100);
    let host = Host::start(config(vec![("h", h)])).await;
    let slow = || tool_call("t", json!({"delay_ms": 1000}));
    let out = host.before_tool(slow()).await;
    assert!(matches!(out, ToolOutcome::Deny { .. }), "{out:?}");
    assert_eq!(stat(&host, "h").breaker, "open");
    tokio::time::sleep(Duration::from_millis(150)).await;
    let dropped = tokio::time::timeout(Duration::from_millis(50), host.before_tool(slow())).await;
    assert!(dropped.is_err(), "the trial was given up on mid-call");
    tokio::time::sleep(Duration::from_millis(150)).await;
    let out = host
        .before_tool(tool_call("t", json!({"delay_ms": 0})))
        .await;
    assert!(
        matches!(out, ToolOutcome::Continue { .. }),
        "a new trial reaches the hook: {out:?}"
    );
    assert_eq!(stat(&host, "h").breaker, "closed");
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_half_open_breaker_recovers_after_a_good_trial_and_reopens_after_a_bad_one() {
    let mut flaky = hook(&["--fail-first", "3"], &[Stage::BeforeTool]);
    flaky.on_error = Some(FailurePolicy::Block);
    flaky.breaker = Some(true);
    flaky.breaker_failures = Some(2);
    flaky.breaker_cooldown_ms = Some(200);
    let host = Host::start(config(vec![("flaky", flaky)])).await;
    for _ in 0..2 {
        let out = host.before_tool(tool_call("t", json!({}))).await;
        assert!(matches!(out, ToolOutcome::Deny { .. }), "{out:?}");
    }
    assert_eq!(stat(&host, "flaky").breaker, "open");
    let out = host.before_tool(tool_call("t", json!({}))).await;
    let ToolOutcome::Deny { reason } = out else {
        panic!("{out:?}")
    };
    assert!(reason.contains("circuit breaker open"), "{reason}");

    tokio::time::sleep(Duration::from_millis(250)).await;
    assert_eq!(stat(&host, "flaky").breaker, "half_open");
    // The trial is the hook's third call, which it still fails: re-opened.
    host.before_tool(tool_call("t", json!({}))).await;
    assert_eq!(stat(&host, "flaky").breaker, "open");

    tokio::time::sleep(Duration::from_millis(250)).await;
    let out = host.before_tool(tool_call("t", json!({}))).await;
    assert!(
        matches!(out, ToolOutcome::Continue { .. }),
        "the fourth call succeeds: {out:?}"
    );
    assert_eq!(stat(&host, "flaky").breaker, "closed");
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spent_chain_budget_skips_the_remaining_hooks_with_their_policies() {
    let mut first = hook(&["--sleep-ms", "200"], &[Stage::BeforeTool]);
    first.priority = 1;
    let mut second = hook(&["--sleep-ms", "200"], &[Stage::BeforeTool]);
    second.priority = 2;
    let mut third = hook(&[], &[Stage::BeforeTool]);
    third.priority = 3;
    third.on_error = Some(FailurePolicy::Block);
    let mut c = config(vec![("first", first), ("second", second), ("third", third)]);
    c.defaults.chain_budget_ms = 300;
    let host = Host::start(c).await;
    let begun = Instant::now();
    let (outcome, trace) = host
        .run_stage_traced(Stage::BeforeTool, json!({"tool": "t"}))
        .await
        .unwrap();
    let took = begun.elapsed();
    assert!(
        took < Duration::from_millis(450),
        "the budget bounds the chain: {took:?}"
    );
    let names: Vec<&str> = trace.iter().map(|t| t.hook.as_str()).collect();
    assert_eq!(names, ["first", "second", "third"]);
    assert!(
        trace[1]
            .answer
            .as_ref()
            .unwrap_err()
            .to_string()
            .contains("no answer within"),
        "{:?}",
        trace[1].answer
    );
    assert!(
        trace[2]
            .answer
            .as_ref()
            .unwrap_err()
            .to_string()
            .contains("chain budget of 300 ms"),
        "{:?}",
        trace[2].answer
    );
    assert_eq!(
        outcome.to_wire(Stage::BeforeTool)["action"],
        "deny_tool",
        "third's deny policy decides"
    );
    assert_eq!(stat(&host, "third").budget_skips, 1);
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_audit_log_is_complete_after_shutdown_under_1000_concurrent_calls() {
    let dir = scratch();
    let mut c = config(vec![
        ("a", hook(&[], &[Stage::BeforeTool])),
        (
            "b",
            hook(
                &[
                    "--answer",
                    r#"{"action":"deny_tool","reason":"token sk-abcdefghijklmnopqrstuvwx"}"#,
                ],
                &[Stage::BeforeTool],
            ),
        ),
    ]);
    c.audit = Some(hookhost::AuditConfig::file(dir.join("audit.jsonl")));
    let host = Host::start(c).await;
    let mut tasks = Vec::new();
    for i in 0..1000 {
        let h = host.clone();
        tasks.push(tokio::spawn(async move {
            h.before_tool(tool_call("t", json!({"i": i}))).await
        }));
    }
    for t in tasks {
        assert!(matches!(t.await.unwrap(), ToolOutcome::Deny { .. }));
    }
    host.shutdown().await;
    let text = std::fs::read_to_string(dir.join("audit.jsonl")).unwrap();
    let records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        records.len(),
        2000,
        "one record per hook execution, none lost"
    );
    let mut requests = HashSet::new();
    for r in &records {
        for key in [
            "ts",
            "hook",
            "stage",
            "request_id",
            "duration_us",
            "outcome",
        ] {
            assert!(r.get(key).is_some(), "{key} missing in {r}");
        }
        assert_eq!(r["stage"], "before_tool");
        requests.insert(r["request_id"].as_str().unwrap().to_string());
        if r["hook"] == "b" {
            assert_eq!(r["outcome"], "deny_tool");
            assert_eq!(
                r["reason"], "token [REDACTED]",
                "secrets never reach the audit file"
            );
        } else {
            assert_eq!(r["outcome"], "continue");
        }
    }
    assert_eq!(requests.len(), 1000, "one request id per stage run");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_builtin_takes_its_place_between_two_process_hooks() {
    let mut before = hook(&[], &[Stage::BeforeTool]);
    before.priority = 10;
    let mut after = hook(&[], &[Stage::BeforeTool]);
    after.priority = 30;
    let mut c = config(vec![("p_before", before), ("p_after", after)]);
    c.builtins.insert(
        "deny_tools".into(),
        builtin(20, json!({"tools": ["curl|wget"]})),
    );
    let host = Host::start(c).await;

    let (_, trace) = host
        .run_stage_traced(Stage::BeforeTool, json!({"tool": "ls"}))
        .await
        .unwrap();
    let order: Vec<&str> = trace.iter().map(|t| t.hook.as_str()).collect();
    assert_eq!(order, ["p_before", "deny_tools", "p_after"]);

    let (outcome, trace) = host
        .run_stage_traced(Stage::BeforeTool, json!({"tool": "curl"}))
        .await
        .unwrap();
    let order: Vec<&str> = trace.iter().map(|t| t.hook.as_str()).collect();
    assert_eq!(
        order,
        ["p_before", "deny_tools"],
        "the denial stops the chain"
    );
    assert_eq!(outcome.to_wire(Stage::BeforeTool)["action"], "deny_tool");
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reload_keeps_an_unchanged_hooks_process_and_restarts_changed_ones() {
    let dir = scratch();
    let pid_of = |host: &Host, name: &str| pid(host, name);
    let c1 = config(vec![
        ("keep", hook(&[], &[Stage::BeforeTool])),
        (
            "change",
            hook(&["--name", "v1", "--delay-from-args"], &[Stage::BeforeTool]),
        ),
        (
            "drop",
            hook(
                &["--pid-file", dir.join("drop.pid").to_str().unwrap()],
                &[Stage::BeforeTool],
            ),
        ),
    ]);
    let host = Host::start(c1).await;
    let (keep1, change1) = (
        pid_of(&host, "keep").unwrap(),
        pid_of(&host, "change").unwrap(),
    );
    let drop_pid: i32 = std::fs::read_to_string(dir.join("drop.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();

    // A call in flight on the old chain completes on the old processes.
    let h = host.clone();
    let in_flight = tokio::spawn(async move {
        h.before_tool(tool_call("t", json!({"delay_ms": 300})))
            .await
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let c2 = config(vec![
        ("keep", hook(&[], &[Stage::BeforeTool])),
        ("change", hook(&["--name", "v2"], &[Stage::BeforeTool])),
        ("added", hook(&[], &[Stage::BeforeTool])),
    ]);
    let report = host.reload(c2).await;
    let out = in_flight.await.unwrap();
    assert!(
        matches!(out, ToolOutcome::Continue { .. }),
        "the in-flight call completed: {out:?}"
    );
    assert_eq!(report.unchanged, ["keep"]);
    assert_eq!(report.changed, ["added", "change"]);
    assert_eq!(report.removed, ["drop"]);
    assert_eq!(
        pid_of(&host, "keep"),
        Some(keep1),
        "an unchanged hook keeps its process"
    );
    assert_ne!(pid_of(&host, "change"), Some(change1));
    let gone = |pid: i32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| {
                s.rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z')
            })
            .unwrap_or(true)
    };
    assert!(gone(drop_pid), "a removed hook's process is stopped");
    assert!(
        gone(change1 as i32),
        "a changed hook's old process is stopped"
    );
    let out = host.before_tool(tool_call("t", json!({}))).await;
    assert!(matches!(out, ToolOutcome::Continue { .. }));
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identical_hooks_share_one_process() {
    let mut a = hook(&["--echo-args"], &[Stage::BeforeTool]);
    a.priority = 1;
    let mut b = hook(&["--echo-args"], &[Stage::BeforeTool]);
    b.priority = 2;
    let host = Host::start(config(vec![("a", a), ("b", b)])).await;
    let pa = pid(&host, "a");
    assert!(pa.is_some());
    assert_eq!(pa, pid(&host, "b"));
    let pids: std::collections::BTreeSet<_> = host.hooks().iter().map(|h| h.pid).collect();
    assert_eq!(pids.len(), 1, "one process for both: {pids:?}");
    let (_, trace) = host
        .run_stage_traced(
            Stage::BeforeTool,
            json!({"tool": "t", "arguments": {"x": 1}}),
        )
        .await
        .unwrap();
    assert_eq!(
        trace.len(),
        2,
        "both configured hooks still run in the chain"
    );
    host.shutdown().await;
}

/// The process id of hook `name`, while it is up.
fn pid(host: &Host, name: &str) -> Option<u32> {
    host.hooks().into_iter().find(|h| h.name == name)?.pid
}
