//! The host against real child processes (the `hookhost-test-hook` binary
//! misbehaving on request): ordering, chaining, short-circuits, approvals,
//! garbage on the wire, hangs, crashes, shutdown and isolation.

#![allow(clippy::unwrap_used)]

use hookhost_testkit as common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use hookhost::protocol::Stage;
use hookhost::protocol::event::RuntimeEvent;
use hookhost::protocol::params::{AfterLlmParams, LlmResponse, ToolCall};
use hookhost::{
    Approval, FailurePolicy, HookStats, Host, ProcessConfig, StageOutcome, ToolOutcome,
};
use hookhost_protocol::OnError;
use serde_json::json;

use common::{LogSink, config, hook, scratch, tool_call};

fn read_pid(path: &PathBuf) -> i32 {
    for _ in 0..200 {
        if let Ok(s) = std::fs::read_to_string(path)
            && let Ok(pid) = s.trim().parse()
        {
            return pid;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("no pid in {}", path.display());
}

fn kill9(pid: i32) {
    // SAFETY: sending a signal to a test-owned process.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_answered_out_of_order_reach_their_callers() {
    let host = Host::start(config(vec![(
        "slow",
        hook(&["--delay-from-args", "--echo-args"], &[Stage::BeforeTool]),
    )]))
    .await;
    assert!(host.start_failures().is_empty());
    let h1 = host.clone();
    let slow = tokio::spawn(async move {
        let out = h1
            .before_tool(tool_call("t", json!({"delay_ms": 400, "tag": "slow"})))
            .await;
        (out, Instant::now())
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let fast = host
        .before_tool(tool_call("t", json!({"delay_ms": 0, "tag": "fast"})))
        .await;
    let fast_done = Instant::now();
    let (slow, slow_done) = slow.await.unwrap();
    assert!(
        fast_done < slow_done,
        "the fast answer must not wait for the slow one"
    );
    let seen = |o: &ToolOutcome<ToolCall>| match o {
        ToolOutcome::Continue { call: c, .. } => c.arguments["seen"]["tag"].clone(),
        other => panic!("unexpected {other:?}"),
    };
    assert_eq!(seen(&fast), json!("fast"));
    assert_eq!(seen(&slow), json!("slow"));
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modify_chains_across_two_hooks() {
    let mut first = hook(
        &[
            "--answer",
            r#"{"action":"modify","call":{"arguments":{"command":"ls -h","human":true}}}"#,
        ],
        &[Stage::BeforeTool],
    );
    first.priority = 1;
    let mut second = hook(&["--echo-args"], &[Stage::BeforeTool]);
    second.priority = 2;
    // Names sort the other way round, so priority must win.
    let host = Host::start(config(vec![("z_first", first), ("a_second", second)])).await;
    let out = host
        .before_tool(tool_call("shell", json!({"command": "ls", "cwd": "/tmp"})))
        .await;
    let ToolOutcome::Continue { call, .. } = out else {
        panic!("{out:?}")
    };
    assert_eq!(call.arguments["command"], "ls -h");
    assert_eq!(
        call.arguments["cwd"], "/tmp",
        "a patch must not zero what it does not name"
    );
    assert_eq!(
        call.arguments["seen"],
        json!({"command": "ls -h", "cwd": "/tmp", "human": true}),
        "the second hook must see the first hook's patch"
    );
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_short_circuit_stops_the_chain() {
    let cases = [
        (r#"{"action":"deny_tool","reason":"no rm"}"#, "deny"),
        (
            r#"{"action":"respond","result":{"for_llm":"cached"}}"#,
            "respond",
        ),
        (r#"{"action":"abort_turn","reason":"stop here"}"#, "abort"),
        (r#"{"action":"hard_abort","reason":"stop all"}"#, "hard"),
    ];
    for (answer, kind) in cases {
        let mut decider = hook(&["--answer", answer], &[Stage::BeforeTool]);
        decider.priority = 1;
        let mut later = hook(&[], &[Stage::BeforeTool]);
        later.priority = 2;
        let host = Host::start(config(vec![("decider", decider), ("later", later)])).await;
        let out = host
            .before_tool(tool_call("shell", json!({"command": "rm -rf /"})))
            .await;
        match (kind, &out) {
            ("deny", ToolOutcome::Deny { reason }) => assert_eq!(reason, "no rm"),
            ("respond", ToolOutcome::Respond(r)) => assert_eq!(r.for_llm, "cached"),
            (
                "abort",
                ToolOutcome::Abort {
                    hard: false,
                    reason,
                },
            ) => assert_eq!(reason, "stop here"),
            ("hard", ToolOutcome::Abort { hard: true, reason }) => assert_eq!(reason, "stop all"),
            _ => panic!("{kind}: unexpected {out:?}"),
        }
        let later = stats_of(&host, "later");
        assert_eq!(later.calls, 0, "{kind}: later hook was called");
        host.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_need_everyone_and_the_first_refusal_gives_the_reason() {
    let yes = || hook(&["--answer", r#"{"approved":true}"#], &[Stage::ApproveTool]);
    let no = |why: &str| {
        hook(
            &[
                "--answer",
                &json!({"approved": false, "reason": why}).to_string(),
            ],
            &[Stage::ApproveTool],
        )
    };
    let host = Host::start(config(vec![("a", yes()), ("b", yes())])).await;
    assert_eq!(
        host.approve_tool(tool_call("ls", json!({}))).await,
        Approval::Approved
    );
    host.shutdown().await;

    let host = Host::start(config(vec![
        ("a", yes()),
        ("b", no("b says no")),
        ("c", no("c says no")),
    ]))
    .await;
    assert_eq!(
        host.approve_tool(tool_call("ls", json!({}))).await,
        Approval::Refused {
            reason: "b says no".into()
        }
    );
    assert_eq!(stats_of(&host, "c").calls, 0);
    host.shutdown().await;

    // `{}` is not a refusal but a protocol error; approve_tool fails closed
    // by default, with a reason that says what went wrong.
    let host = Host::start(config(vec![(
        "empty",
        hook(&["--answer", "{}"], &[Stage::ApproveTool]),
    )]))
    .await;
    let Approval::Refused { reason } = host.approve_tool(tool_call("ls", json!({}))).await else {
        panic!("an empty approval must not approve")
    };
    assert!(reason.contains("missing field `approved`"), "{reason}");
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_on_stdout_never_takes_the_connection_down() {
    let mut c = config(vec![
        (
            "noisy",
            hook(&["--noise", "--echo-args"], &[Stage::BeforeTool]),
        ),
        ("unknown_id", hook(&["--unknown-id"], &[Stage::BeforeTool])),
        (
            "huge",
            hook(&["--huge-line", "3000000"], &[Stage::BeforeTool]),
        ),
    ]);
    c.defaults.max_line_bytes = 1024 * 1024;
    let host = Host::start(c).await;
    for i in 0..3 {
        let out = host.before_tool(tool_call("t", json!({"i": i}))).await;
        let ToolOutcome::Continue { call, .. } = out else {
            panic!("{out:?}")
        };
        assert_eq!(call.arguments["seen"]["i"], json!(i));
    }
    for m in host.stats() {
        assert_eq!(m.errors, 0, "hook {} failed a call", m.hook);
    }
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_that_never_answers_hello_is_reported_and_the_others_run() {
    let mut c = config(vec![
        ("silent", hook(&["--no-hello"], &[Stage::BeforeTool])),
        ("ok", hook(&["--echo-args"], &[Stage::BeforeTool])),
    ]);
    c.defaults.hello_timeout_ms = 300;
    let begun = Instant::now();
    let host = Host::start(c).await;
    assert!(
        begun.elapsed() < Duration::from_secs(2),
        "start must not hang on a silent hook"
    );
    let failures = host.start_failures();
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0].hook, "silent");
    assert!(
        failures[0]
            .error
            .to_string()
            .contains("no answer to hook.hello within 300 ms"),
        "{}",
        failures[0].error
    );
    assert!(
        failures[0]
            .error
            .to_string()
            .contains("test hook test starting"),
        "stderr tail missing: {}",
        failures[0].error
    );
    let out = host.before_tool(tool_call("t", json!({"x": 1}))).await;
    let ToolOutcome::Continue { call, .. } = out else {
        panic!("{out:?}")
    };
    assert_eq!(call.arguments["seen"]["x"], 1);
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fail_closed_guard_that_cannot_start_still_denies() {
    let mut guard = hook(&["--no-hello"], &[Stage::BeforeTool]);
    guard.on_error = Some(FailurePolicy::Block);
    let mut c = config(vec![("guard", guard)]);
    c.defaults.hello_timeout_ms = 200;
    let host = Host::start(c).await;
    let out = host
        .before_tool(tool_call("shell", json!({"command": "ls"})))
        .await;
    let ToolOutcome::Deny { reason } = out else {
        panic!("{out:?}")
    };
    assert!(
        reason.starts_with("hook `guard` failed (on_error = deny)"),
        "{reason}"
    );
    host.shutdown().await;
}

/// `on_error = "ignore"` on a process hook is `warn` without the warning:
/// the call goes on, and the failure is logged at debug level only (it
/// was a config error on a process hook before one vocabulary for every
/// kind). `warn`, and its alias `allow`, log it as a warning.
#[tokio::test]
async fn a_process_hook_under_ignore_fails_quietly() {
    for (word, quiet) in [("ignore", true), ("warn", false), ("allow", false)] {
        let log = LogSink::start();
        let mut slow = hook(&["--sleep-ms", "3000"], &[Stage::BeforeTool]);
        slow.timeout_ms = Some(200);
        slow.on_error = FailurePolicy::parse(word);
        let host = Host::start(config(vec![("slow", slow)])).await;
        let out = host.before_tool(tool_call("t", json!({}))).await;
        assert!(
            matches!(out, ToolOutcome::Continue { .. }),
            "{word}: {out:?}"
        );
        host.shutdown().await;
        let failed = log.lines("hook failed");
        assert_eq!(failed.len(), 1, "{word}: {failed:#?}");
        assert_eq!(failed[0].contains(" WARN "), !quiet, "{word}: {failed:#?}");
        assert_eq!(failed[0].contains(" DEBUG "), quiet, "{word}: {failed:#?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_past_its_timeout_returns_on_time_with_the_policy_applied() {
    for policy in [OnError::Allow, OnError::Deny] {
        let mut slow = hook(&["--sleep-ms", "3000"], &[Stage::BeforeTool]);
        slow.timeout_ms = Some(200);
        slow.on_error = Some(policy.into());
        let host = Host::start(config(vec![("slow", slow)])).await;
        let begun = Instant::now();
        let out = host.before_tool(tool_call("t", json!({}))).await;
        let took = begun.elapsed();
        assert!(took < Duration::from_millis(300), "{policy}: took {took:?}");
        match (policy, out) {
            (OnError::Allow, ToolOutcome::Continue { call: c, .. }) => assert_eq!(c.tool, "t"),
            (OnError::Deny, ToolOutcome::Deny { reason }) => {
                assert!(reason.contains("no answer within 200 ms"), "{reason}")
            }
            (p, other) => panic!("{p}: unexpected {other:?}"),
        }
        assert_eq!(host.stats()[0].timeouts, 1);
        host.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_killed_mid_call_resolves_pending_calls_and_restarts() {
    let dir = scratch();
    let pid_file = dir.join("pid");
    let mut h = hook(
        &[
            "--delay-from-args",
            "--pid-file",
            pid_file.to_str().unwrap(),
        ],
        &[Stage::BeforeTool],
    );
    h.on_error = Some(FailurePolicy::Block);
    let host = Host::start(config(vec![("victim", h)])).await;
    let first_pid = read_pid(&pid_file);
    std::fs::remove_file(&pid_file).unwrap();
    let h1 = host.clone();
    let pending = tokio::spawn(async move {
        h1.before_tool(tool_call("t", json!({"delay_ms": 3000})))
            .await
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let killed_at = Instant::now();
    kill9(first_pid);
    let out = pending.await.unwrap();
    assert!(
        killed_at.elapsed() < Duration::from_millis(500),
        "pending call waited {:?}",
        killed_at.elapsed()
    );
    let ToolOutcome::Deny { reason } = out else {
        panic!("{out:?}")
    };
    assert!(reason.contains("exited"), "{reason}");
    // The next call waits for the restart instead of failing.
    let out = host
        .before_tool(tool_call("t", json!({"delay_ms": 0})))
        .await;
    assert!(matches!(out, ToolOutcome::Continue { .. }), "{out:?}");
    let second_pid = read_pid(&pid_file);
    assert_ne!(first_pid, second_pid);
    assert_eq!(stats_of(&host, "victim").restarts, 1);
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_leaves_no_process_behind_grandchildren_included() {
    let dir = scratch();
    let (pid_file, gc_file) = (dir.join("pid"), dir.join("grandchild"));
    let host = Host::start(config(vec![(
        "parent",
        hook(
            &[
                "--pid-file",
                pid_file.to_str().unwrap(),
                "--grandchild",
                gc_file.to_str().unwrap(),
            ],
            &[Stage::BeforeTool],
        ),
    )]))
    .await;
    let (pid, gc) = (read_pid(&pid_file), read_pid(&gc_file));
    assert!(common::alive(pid) && common::alive(gc));
    host.shutdown().await;
    for _ in 0..100 {
        if !common::alive(pid) && !common::alive(gc) {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!(
        "still alive after shutdown: hook {} grandchild {}",
        common::alive(pid),
        common::alive(gc)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn picoclaw_style_hooks_work_unchanged() {
    let full_call =
        r#"{"action":"modify","call":{"tool":"ls","arguments":{"path":"/tmp","human":true}}}"#;
    let host = Host::start(config(vec![(
        "pico",
        hook(
            &["--no-declare", "--answer", full_call],
            &[Stage::BeforeTool],
        ),
    )]))
    .await;
    let out = host
        .before_tool(tool_call("ls", json!({"path": "/tmp"})))
        .await;
    let ToolOutcome::Continue { call, .. } = out else {
        panic!("{out:?}")
    };
    assert_eq!(call.arguments["human"], true);
    host.shutdown().await;

    let content =
        r#"{"action":"modify","response":{"model":"m","response":{"content":"rewritten"}}}"#;
    let host = Host::start(config(vec![(
        "pico",
        hook(&["--no-declare", "--answer", content], &[Stage::AfterLlm]),
    )]))
    .await;
    let params = AfterLlmParams {
        model: "m".into(),
        response: LlmResponse {
            content: "original".into(),
            finish_reason: Some("stop".into()),
            ..LlmResponse::default()
        },
        ..AfterLlmParams::default()
    };
    let StageOutcome::Continue { params: p, .. } = host.after_llm(params).await else {
        panic!("aborted")
    };
    assert_eq!(p.response.content, "rewritten");
    assert_eq!(p.response.finish_reason.as_deref(), Some("stop"));
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_narrows_what_a_hook_declares_and_never_widens_it() {
    // Declares only before_tool; config asks for before_tool and approve_tool.
    let h = hook(
        &[
            "--intercept",
            "before_tool",
            "--answer",
            r#"{"approved":false}"#,
        ],
        &[Stage::BeforeTool, Stage::ApproveTool],
    );
    let host = Host::start(config(vec![("narrow", h)])).await;
    assert_eq!(host.hooks()[0].stages, [Stage::BeforeTool]);
    // Not asked, so no refusal; and no approval either: the agent decides.
    assert_eq!(
        host.approve_tool(tool_call("ls", json!({}))).await,
        Approval::Undecided
    );
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runtime_events_reach_observers_in_order() {
    let dir = scratch();
    let events = dir.join("events");
    let mut h = hook(
        &[
            "--events-file",
            events.to_str().unwrap(),
            "--observe",
            "agent.*",
        ],
        &[],
    );
    h.observe = vec!["*".into()];
    let host = Host::start(config(vec![("watcher", h)])).await;
    for i in 0..200 {
        let kind = if i % 2 == 0 {
            format!("agent.step.{i}")
        } else {
            format!("other.{i}")
        };
        host.emit(RuntimeEvent {
            id: host.next_event_id(),
            kind,
            time: "2026-11-22T00:00:00Z".into(),
            source: None,
            scope: None,
            severity: None,
            payload: json!({"i": i}),
            extra: Default::default(),
        });
    }
    let want: Vec<String> = (0..200)
        .step_by(2)
        .map(|i| format!("agent.step.{i}"))
        .collect();
    let mut got = Vec::new();
    for _ in 0..300 {
        got = std::fs::read_to_string(&events)
            .unwrap_or_default()
            .lines()
            .map(String::from)
            .collect();
        if got.len() >= want.len() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(got, want, "the hook declared agent.* only, in emit order");
    assert_eq!(host.stats()[0].dropped_events, 0);
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_that_keeps_crashing_is_marked_failed_and_skipped_fast() {
    let mut h = hook(&["--crash-on-call"], &[Stage::BeforeTool]);
    h.on_error = Some(FailurePolicy::Block);
    let mut c = config(vec![("crashy", h)]);
    c.defaults.max_restarts = 2;
    let host = Host::start(c).await;
    for _ in 0..2 {
        let out = host.before_tool(tool_call("t", json!({}))).await;
        let ToolOutcome::Deny { reason } = out else {
            panic!("{out:?}")
        };
        assert!(reason.contains("exited (exit status: 3)"), "{reason}");
    }
    // Now marked failed: the policy answers at once, without waiting for
    // the call's 5 s deadline.
    let begun = Instant::now();
    let out = host.before_tool(tool_call("t", json!({}))).await;
    assert!(
        begun.elapsed() < Duration::from_millis(100),
        "{:?}",
        begun.elapsed()
    );
    let ToolOutcome::Deny { reason } = out else {
        panic!("{out:?}")
    };
    assert!(reason.contains("crashed 2 times"), "{reason}");
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_host_stops_its_hooks() {
    let dir = scratch();
    let pid_file = dir.join("pid");
    let host = Host::start(config(vec![(
        "dropped",
        hook(
            &["--pid-file", pid_file.to_str().unwrap()],
            &[Stage::BeforeTool],
        ),
    )]))
    .await;
    let pid = read_pid(&pid_file);
    drop(host);
    for _ in 0..200 {
        if !common::alive(pid) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("hook {pid} outlived its dropped host");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn emit_never_blocks_and_counts_what_a_stalled_observer_misses() {
    let mut h = hook(&["--stall-stdin"], &[]);
    h.observe = vec!["*".into()];
    let mut c = config(vec![("stalled", h)]);
    c.defaults.event_queue = 8;
    c.defaults.observer_timeout_ms = 50;
    let host = Host::start(c).await;
    let payload = json!({"blob": "x".repeat(4096)});
    let begun = Instant::now();
    for i in 0..2000 {
        host.emit(RuntimeEvent {
            id: format!("e{i}"),
            kind: "agent.tick".into(),
            time: "2026-11-22T00:00:00Z".into(),
            source: None,
            scope: None,
            severity: None,
            payload: payload.clone(),
            extra: Default::default(),
        });
    }
    // 2000 events of 4 KiB into a hook that reads nothing: the pipe, the
    // write queue and the event queue all fill, yet emit returns at once.
    assert!(
        begun.elapsed() < Duration::from_secs(2),
        "emit blocked: {:?}",
        begun.elapsed()
    );
    // About 1000 fit in the write queue, the event queue and the pipe.
    let dropped = host.stats()[0].dropped_events;
    assert!(dropped > 500, "only {dropped} drops counted");
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_that_dies_at_start_is_reported_at_once_with_its_status() {
    let mut c = config(vec![(
        "broken",
        ProcessConfig::new(
            vec![
                "sh".into(),
                "-c".into(),
                "echo 'ImportError: no module named x' >&2; exit 7".into(),
            ],
            vec![Stage::BeforeTool],
        ),
    )]);
    c.defaults.hello_timeout_ms = 10_000;
    let begun = Instant::now();
    let host = Host::start(c).await;
    assert!(
        begun.elapsed() < Duration::from_secs(2),
        "waited {:?}",
        begun.elapsed()
    );
    let f = &host.start_failures()[0];
    assert!(
        f.error
            .to_string()
            .contains("exited during the handshake (exit status: 7)"),
        "{}",
        f.error
    );
    assert!(
        f.error
            .to_string()
            .contains("ImportError: no module named x"),
        "{}",
        f.error
    );
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_inherits_no_descriptor_but_stdin_stdout_and_stderr() {
    // A descriptor the embedding process left open without O_CLOEXEC.
    // SAFETY: dup of our own stderr; closed at the end.
    let leaked = unsafe { libc::dup(2) };
    assert!(leaked > 2);
    let dir = scratch();
    let fd_file = dir.join("fds");
    let host = Host::start(config(vec![(
        "fds",
        hook(
            &["--fd-file", fd_file.to_str().unwrap()],
            &[Stage::BeforeTool],
        ),
    )]))
    .await;
    assert!(host.start_failures().is_empty());
    let listed = std::fs::read_to_string(&fd_file).unwrap();
    assert_eq!(listed, "0 1 2", "the hook sees only its standard streams");
    // The same, seen from outside the hook, as an auditor would check it.
    let pid = host.hooks()[0].pid.unwrap();
    let mut fds: Vec<u32> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().to_str()?.parse().ok())
        .collect();
    fds.sort_unstable();
    assert_eq!(fds, [0, 1, 2], "/proc/{pid}/fd of the hook");
    host.shutdown().await;
    // SAFETY: closing the descriptor dup'ed above.
    unsafe {
        libc::close(leaked);
    }
}

/// Spec section 11: an event emitted before `shutdown` is delivered, not
/// dropped, even when shutdown follows at once. Twenty times over, each a
/// fresh host and a hook that appends each event it gets to a file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_emitted_just_before_shutdown_is_delivered() {
    let dir = scratch();
    let mut lost = Vec::new();
    for run in 0..20 {
        let events = dir.join(format!("events-{run}"));
        let h = hook(&["--events-file", events.to_str().unwrap()], &[]);
        let mut h = h;
        h.observe = vec!["*".into()];
        let host = Host::start(config(vec![("watcher", h)])).await;
        host.emit(RuntimeEvent {
            id: host.next_event_id(),
            kind: format!("agent.run.{run}"),
            time: "2026-11-22T00:00:00Z".into(),
            source: None,
            scope: None,
            severity: None,
            payload: json!({}),
            extra: Default::default(),
        });
        host.shutdown().await;
        let got = std::fs::read_to_string(&events).unwrap_or_default();
        if got.trim() != format!("agent.run.{run}") {
            lost.push((run, got));
        }
    }
    assert!(lost.is_empty(), "events lost at shutdown: {lost:?}");
}

/// The figures of hook `name`.
fn stats_of(host: &Host, name: &str) -> HookStats {
    host.stats().into_iter().find(|s| s.hook == name).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ask_reaches_the_agent_with_the_final_call_and_the_contexts() {
    let mut asker = hook(
        &[
            "--answer",
            r#"{"action":"ask","reason":"this deletes files","additional_context":"build/ is generated"}"#,
        ],
        &[Stage::BeforeTool],
    );
    asker.priority = 1;
    let mut rewriter = hook(&["--echo-args"], &[Stage::BeforeTool]);
    rewriter.priority = 2;
    let host = Host::start(config(vec![("asker", asker), ("rewriter", rewriter)])).await;
    let out = host
        .before_tool(tool_call("shell", json!({"command": "rm -rf build"})))
        .await;
    let ToolOutcome::Ask {
        call,
        reason,
        contexts,
    } = out
    else {
        panic!("expected an ask: {out:?}")
    };
    assert_eq!(reason, "this deletes files");
    assert_eq!(contexts, ["build/ is generated"]);
    // The later hook's patch applies: the user is asked about the call
    // that would run.
    assert_eq!(call.arguments["seen"]["command"], "rm -rf build");
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_later_deny_wins_over_an_ask() {
    let mut asker = hook(&["--answer", r#"{"action":"ask"}"#], &[Stage::BeforeTool]);
    asker.priority = 1;
    let mut gate = hook(
        &["--answer", r#"{"action":"deny_tool","reason":"no rm"}"#],
        &[Stage::BeforeTool],
    );
    gate.priority = 2;
    let host = Host::start(config(vec![("asker", asker), ("gate", gate)])).await;
    let out = host
        .before_tool(tool_call("shell", json!({"command": "rm -rf /"})))
        .await;
    assert_eq!(
        out,
        ToolOutcome::Deny {
            reason: "no rm".into()
        }
    );
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_tool_contexts_reach_the_agent_in_chain_order() {
    let mut first = hook(
        &["--answer", r#"{"additional_context":"one"}"#],
        &[Stage::AfterTool],
    );
    first.priority = 1;
    let mut second = hook(
        &[
            "--answer",
            r#"{"action":"modify","result":{"result":{"for_llm":"[redacted]"}},"additional_context":"two"}"#,
        ],
        &[Stage::AfterTool],
    );
    second.priority = 2;
    let host = Host::start(config(vec![("first", first), ("second", second)])).await;
    let params = hookhost::protocol::params::AfterToolParams {
        tool: "shell".into(),
        result: hookhost::protocol::params::ToolResult::text("API_KEY=x"),
        ..Default::default()
    };
    let StageOutcome::Continue { params, contexts } = host.after_tool(params).await else {
        panic!("expected continue")
    };
    assert_eq!(params.result.for_llm, "[redacted]");
    assert_eq!(contexts, ["one", "two"]);
    host.shutdown().await;
}
