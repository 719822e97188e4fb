//! Criterion benches for hookhost: `cargo bench -p hookhost`.
//!
//! Groups:
//!
//! - `merge_patch`: applying a `modify` patch to before_tool params;
//! - `envelope`: encoding a before_tool request, decoding a response line;
//! - `round_trip`: one before_tool through [`Host`] to one Rust SDK hook
//!   that answers continue;
//! - `chain`: the same through 1, 2, 5 and 10 such hooks, each its own
//!   process;
//! - `emit`: what [`Host::emit`] costs its caller with one observing hook.
//!
//! The Rust SDK hook is this very binary: started with [`HOOK_FLAG`] as its
//! first argument it serves the hook protocol on stdio instead of running
//! benches. So the hook is always built, with the same profile, by the same
//! `cargo bench` that runs it, and its path is `std::env::current_exe()`.
//!
//! Speed targets belong here, never in timed unit tests.

use std::collections::HashSet;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{BatchSize, BenchmarkId, Criterion};
use hookhost::protocol::envelope::{Message, Request, Version};
use hookhost::protocol::event::RuntimeEvent;
use hookhost::protocol::merge_patch::apply_merge_patch;
use hookhost::protocol::params::{ToolCall, ToolResult};
use hookhost::protocol::stage::method;
use hookhost::protocol::{Id, Stage};
use hookhost::{Config, Host, ProcessConfig, ToolOutcome};
use hookhost_sdk::{Hook, ToolVerdict};
use serde_json::{Map, Value, json};
use tokio::runtime::Runtime;

/// The first argument that turns this binary into the bench hook.
const HOOK_FLAG: &str = "--hookhost-bench-hook";

/// A before_tool call with this tool name is a probe: the bench hook
/// answers it with how many runtime events it has handled so far.
const PROBE_TOOL: &str = "hookhost_bench.events_seen";

/// What the bench hook observes, and the kind `emit` sends.
const EVENT_PATTERN: &str = "bench.*";
const EVENT_KIND: &str = "bench.tick";

/// The most events `emit` queues before waiting for the hook to catch up;
/// well under the default `event_queue` (1024), so none is ever dropped
/// and every emit takes the normal path.
const EMIT_CHUNK: u64 = 512;

/// The Rust SDK hook the host benches drive: continue at before_tool,
/// count runtime events.
#[derive(Default)]
struct BenchHook {
    events: AtomicU64,
}

impl Hook for BenchHook {
    fn intercepts(&self) -> Vec<Stage> {
        vec![Stage::BeforeTool]
    }

    fn observes(&self) -> Vec<String> {
        vec![EVENT_PATTERN.into()]
    }

    async fn before_tool(&self, call: ToolCall) -> ToolVerdict {
        if call.tool == PROBE_TOOL {
            let seen = self.events.load(Ordering::SeqCst);
            return ToolVerdict::respond(ToolResult::text(seen.to_string()));
        }
        ToolVerdict::Continue
    }

    async fn on_event(&self, _event: RuntimeEvent) {
        self.events.fetch_add(1, Ordering::SeqCst);
    }
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some(HOOK_FLAG) {
        if let Err(e) = hookhost_sdk::run(BenchHook::default()) {
            eprintln!("bench hook: {e}");
            std::process::exit(1);
        }
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    merge_patch(&mut c);
    envelope(&mut c);
    round_trip(&mut c);
    chain(&mut c);
    emit(&mut c);
    c.final_summary();
}

/// A realistic before_tool params object, about 300 bytes as JSON.
fn params() -> Value {
    json!({
        "meta": {
            "agent_id": "agent-7",
            "session_key": "sess-2f9c41d0",
            "turn_id": "turn-0042",
            "iteration": 3,
            "source": "agent.loop"
        },
        "tool": "shell",
        "arguments": {
            "command": "ls -la /home/user/hookhost/target",
            "cwd": "/home/user/hookhost",
            "timeout_ms": 30000
        },
        "tool_call_id": "call_8Xk2pQ7v",
        "channel": "cli",
        "chat_id": "chat-1"
    })
}

fn tool_call() -> ToolCall {
    serde_json::from_value(params()).expect("the bench params are a valid ToolCall")
}

fn merge_patch(c: &mut Criterion) {
    let target = params();
    // What a hook rewriting one argument sends.
    let one_arg = json!({"arguments": {"command": "ls -lah /home/user/hookhost/target"}});
    // What a PicoClaw hook sends: the whole call back, one argument changed.
    let mut full_object = params();
    full_object["arguments"]["command"] = json!("ls -lah /home/user/hookhost/target");
    let mut group = c.benchmark_group("merge_patch");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for (name, patch) in [("one_argument", &one_arg), ("full_object", &full_object)] {
        group.bench_function(name, |b| {
            b.iter_batched(
                || target.clone(),
                |mut t| {
                    apply_merge_patch(&mut t, black_box(patch));
                    t
                },
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

fn envelope(c: &mut Criterion) {
    let request = Message::Request(Request {
        jsonrpc: Version,
        id: Id::Number(42),
        method: method::BEFORE_TOOL.into(),
        params: Some(params()),
    });
    let continue_line = br#"{"jsonrpc":"2.0","id":42,"result":{"action":"continue"}}"#;
    let modify_line = br#"{"jsonrpc":"2.0","id":42,"result":{"action":"modify","call":{"arguments":{"command":"ls -lah /home/user/hookhost/target"}}}}"#;
    let size = serde_json::to_vec(&params()).map_or(0, |v| v.len());
    assert!(
        (250..=350).contains(&size),
        "the params are {size} bytes, not ~300"
    );
    let mut group = c.benchmark_group("envelope");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    group.bench_function("encode_request", |b| {
        b.iter(|| black_box(&request).encode())
    });
    for (name, line) in [
        ("decode_response_continue", &continue_line[..]),
        ("decode_response_modify", &modify_line[..]),
    ] {
        group.bench_function(name, |b| b.iter(|| Message::decode(black_box(line))));
    }
    group.finish();
}

/// One tokio runtime for a group's hosts and hooks.
fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// The bench hook as chain member number `member`.
fn sdk_hook(member: usize) -> ProcessConfig {
    let exe = std::env::current_exe()
        .expect("the bench binary's own path")
        .into_os_string()
        .into_string()
        .expect("a UTF-8 path to the bench binary");
    let mut hook = ProcessConfig::new(vec![exe, HOOK_FLAG.into()], vec![Stage::BeforeTool]);
    // Hooks with the same command, folder and environment share one
    // process; a distinct variable gives each member its own.
    hook.env
        .insert("HOOKHOST_BENCH_MEMBER".into(), member.to_string());
    hook.observe = vec![EVENT_PATTERN.into()];
    hook
}

/// Starts a host with `hooks` bench hooks, each its own process, and
/// checks that a before_tool call goes through them all with continue.
fn start_host(rt: &Runtime, hooks: usize) -> Host {
    let mut config = Config::empty(std::env::temp_dir());
    config.defaults.shutdown_grace_ms = 500;
    for member in 0..hooks {
        config
            .processes
            .insert(format!("bench_{member:02}"), sdk_hook(member));
    }
    let host = rt.block_on(Host::start(config));
    let failures = host.start_failures();
    assert!(
        failures.is_empty(),
        "bench hooks failed to start: {failures:?}"
    );
    let pids: HashSet<u32> = host.hooks().into_iter().filter_map(|h| h.pid).collect();
    assert_eq!(pids.len(), hooks, "each bench hook must be its own process");
    match rt.block_on(host.before_tool(tool_call())) {
        ToolOutcome::Continue { .. } => {}
        other => panic!("the bench hooks should answer continue, got {other:?}"),
    }
    host
}

/// Checks that every hook was called and none failed, then shuts down.
fn stop_host(rt: &Runtime, host: Host) {
    for s in host.stats() {
        assert!(
            s.calls > 0 && s.errors == 0 && s.dropped_events == 0,
            "hook {} had calls {}, errors {}, dropped events {}",
            s.hook,
            s.calls,
            s.errors,
            s.dropped_events
        );
    }
    rt.block_on(host.shutdown());
}

fn round_trip(c: &mut Criterion) {
    let rt = runtime();
    let host = start_host(&rt, 1);
    let call = tool_call();
    let mut group = c.benchmark_group("round_trip");
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    group.bench_function("before_tool", |b| {
        b.to_async(&rt).iter_batched(
            || call.clone(),
            |call| host.before_tool(call),
            BatchSize::SmallInput,
        )
    });
    group.finish();
    stop_host(&rt, host);
}

fn chain(c: &mut Criterion) {
    let rt = runtime();
    let call = tool_call();
    let mut group = c.benchmark_group("chain");
    // Ten hooks take about a millisecond a call; 50 samples fit in 4 s.
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .sample_size(50);
    for hooks in [1, 2, 5, 10] {
        let host = start_host(&rt, hooks);
        group.bench_with_input(BenchmarkId::from_parameter(hooks), &hooks, |b, _| {
            b.to_async(&rt).iter_batched(
                || call.clone(),
                |call| host.before_tool(call),
                BatchSize::SmallInput,
            )
        });
        stop_host(&rt, host);
    }
    group.finish();
}

/// Waits until the hook has handled `target` events, asking it with probe
/// calls through the same host.
async fn wait_until_seen(host: &Host, target: u64) {
    let probe = ToolCall {
        tool: PROBE_TOOL.into(),
        ..ToolCall::default()
    };
    loop {
        match host.before_tool(probe.clone()).await {
            ToolOutcome::Respond(r) => {
                let seen: u64 = r.for_llm.parse().expect("the probe answers a count");
                let dropped: u64 = host.stats().iter().map(|s| s.dropped_events).sum();
                // A dropped event would never arrive; stop_host reports it.
                if seen + dropped >= target {
                    return;
                }
            }
            other => panic!("the probe should be answered with a count, got {other:?}"),
        }
        tokio::time::sleep(Duration::from_micros(200)).await;
    }
}

fn emit(c: &mut Criterion) {
    let rt = runtime();
    let host = start_host(&rt, 1);
    let event = RuntimeEvent {
        id: "evt-bench-1".into(),
        kind: EVENT_KIND.into(),
        time: "2026-01-01T00:00:00Z".into(),
        source: Some("hookhost-bench".into()),
        scope: None,
        severity: None,
        payload: json!({"tool": "shell", "duration_ms": 12, "exit_code": 0}),
        extra: Map::new(),
    };
    let mut emitted = 0u64;
    let mut group = c.benchmark_group("emit");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    group.bench_function("one_observer", |b| {
        b.iter_custom(|iters| {
            // Only the emit calls are timed. Between chunks the hook catches
            // up, so the queue never fills and no event takes the drop path.
            let mut timed = Duration::ZERO;
            let mut left = iters;
            while left > 0 {
                let chunk = left.min(EMIT_CHUNK);
                let events: Vec<RuntimeEvent> = (0..chunk).map(|_| event.clone()).collect();
                let start = Instant::now();
                for e in events {
                    host.emit(black_box(e));
                }
                timed += start.elapsed();
                emitted += chunk;
                left -= chunk;
                rt.block_on(wait_until_seen(&host, emitted));
            }
            timed
        })
    });
    group.finish();
    stop_host(&rt, host);
}
