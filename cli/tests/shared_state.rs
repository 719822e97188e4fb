//! Replicas of a gateway sharing their counts through a real Redis
//! (`serve --state redis://`, Debian's redis-server): a stop hook that
//! always blocks is capped by `stop_block_limit` across two replicas
//! taking turns, as one gateway would cap it; with Redis down a stop's
//! block is let go with a message (the agent stops) while a tool call is
//! still refused; once Redis is back the counts are shared again. A
//! prompt hook's session spend, cached decisions and breaker, against a
//! fake model provider on loopback, are shared the same way.

#![allow(clippy::unwrap_used)]

mod common;
#[path = "common/gateway.rs"]
mod gw;
#[path = "common/redis.rs"]
mod redis;

use std::time::Duration;

use hookhost_testkit::provider::{Answer, FakeProvider};
use serde_json::Value;

use gw::{CONFIG, Gateway};
use redis::Redis;

const STOP_GUARD: &str = r#"
[hooks.defaults]
stop_block_limit = 3

[hooks.commands.keep_going]
command = "echo not done yet >&2; exit 2"
dialect = "claude-code"
events = ["Stop"]
"#;

const STOP: &str = r#"{"session_id":"s1","transcript_path":"/t","cwd":"/tmp","hook_event_name":"Stop","stop_hook_active":false}"#;

fn replica(name: &str, state: &str) -> Gateway {
    let config = format!("{CONFIG}\n{STOP_GUARD}");
    let state = state.to_string();
    Gateway::start_with(name, &config, move |dir| {
        std::fs::write(dir.join("tokens"), "# the team\n").unwrap();
        let auth = format!("tokens:{}", dir.join("tokens").display());
        (vec![], vec!["--auth".into(), auth, "--state".into(), state])
    })
}

/// A Stop sent to `gw`: the agent's answer.
fn stop(gw: &Gateway, token: &str) -> Value {
    let (status, _, body) = gw.send("POST", "/hooks/claude-code", Some(token), STOP);
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).unwrap_or(Value::Null)
}

fn blocked(answer: &Value) -> bool {
    answer["decision"] == "block"
}

#[test]
fn two_replicas_cap_a_stop_loop_as_one_and_redis_down_lets_the_agent_stop() {
    let mut store = Redis::start("state");
    let a = replica("state-a", &store.url());
    let b = replica("state-b", &store.url());
    let (ta, tb) = (a.token("acme", "ann"), b.token("acme", "ann"));
    // Turns: a, b, a block (3 in a row, counted together); b's is the
    // fourth, past stop_block_limit = 3, and is let go.
    let mut kept: Vec<bool> = [stop(&a, &ta), stop(&b, &tb), stop(&a, &ta)]
        .iter()
        .map(blocked)
        .collect();
    // The count lives in one hash per session, with an expiry, and names
    // no session id.
    let keys = store.command("KEYS hookhost:session:*");
    assert!(keys.starts_with("*1\r\n"), "{keys}");
    assert!(!keys.contains("s1\r\n"), "{keys}");
    let key = keys.lines().nth(2).unwrap().to_string();
    let ttl = store.command(&format!("TTL {key}"));
    let ttl: i64 = ttl.trim().trim_start_matches(':').parse().unwrap();
    assert!(ttl > 3600 && ttl <= 86_400, "{ttl}");
    kept.push(blocked(&stop(&b, &tb)));
    assert_eq!(kept, [true, true, true, false]);
    // A stop let through ends the loop: nothing is left to keep.
    assert_eq!(store.command("KEYS hookhost:session:*"), "*0\r\n");

    store.stop();
    let answer = stop(&a, &ta);
    assert!(
        !blocked(&answer),
        "a block no replica can count ran on: {answer}"
    );
    let told = answer["systemMessage"].as_str().unwrap_or_default();
    assert!(
        told.contains("shared state") && told.contains("let go"),
        "{answer}"
    );
    // A tool call needs no shared count: still refused by its guard.
    let (status, _, body) = a.send("POST", "/hooks/claude-code", Some(&ta), gw::EVENT);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("acme says no"), "{body}");

    store.restart();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut turns = Vec::new();
    // The first answers after the restart may still find the old
    // connection broken; then the counts are shared again from zero.
    while !blocked(&stop(&b, &tb)) {
        assert!(
            std::time::Instant::now() < deadline,
            "Redis never used again"
        );
    }
    turns.push(blocked(&stop(&a, &ta)));
    turns.push(blocked(&stop(&b, &tb)));
    turns.push(blocked(&stop(&a, &ta)));
    assert_eq!(turns, [true, true, false], "counted across replicas again");
}

/// Two prompt hooks: `judge` with a session cap of 200 tokens (each
/// answer costs 120), and `flaky`, whose model always fails, with a
/// breaker that opens on its first failure and lets calls pass while open.
fn prompts(judge: &FakeProvider, flaky: &FakeProvider) -> String {
    format!(
        r#"
[hooks.prompts.judge]
provider = "openai"
base_url = "{}/v1"
model = "m-1"
prompt = "Judge this call. $ARGUMENTS"
events = ["PreToolUse"]
matcher = "Bash"
session_token_cap = 200

[hooks.prompts.flaky]
provider = "openai"
base_url = "{}/v1"
model = "m-2"
prompt = "Judge this read. $ARGUMENTS"
events = ["PreToolUse"]
matcher = "Read"
on_error = "allow"
breaker = true
breaker_failures = 1
breaker_cooldown_ms = 60000
"#,
        judge.url, flaky.url
    )
}

fn prompt_replica(name: &str, state: &str, config: &str) -> Gateway {
    let state = state.to_string();
    Gateway::start_with(name, config, move |dir| {
        std::fs::write(dir.join("tokens"), "# the team\n").unwrap();
        let auth = format!("tokens:{}", dir.join("tokens").display());
        (vec![], vec!["--auth".into(), auth, "--state".into(), state])
    })
}

/// A Claude Code PreToolUse of `tool` with `input` in `session`, sent to
/// `gw`: the agent's answer.
fn tool_call(gw: &Gateway, token: &str, session: &str, tool: &str, input: &str) -> Value {
    let event = format!(
        r#"{{"session_id":"{session}","transcript_path":"/t","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"{tool}","tool_input":{input}}}"#
    );
    let (status, _, body) = gw.send("POST", "/hooks/claude-code", Some(token), &event);
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).unwrap_or(Value::Null)
}

fn refusal(answer: &Value) -> Option<String> {
    let out = &answer["hookSpecificOutput"];
    (out["permissionDecision"] == "deny").then(|| {
        out["permissionDecisionReason"]
            .as_str()
            .unwrap_or("")
            .to_string()
    })
}

fn breaker_of(gw: &Gateway, token: &str, hook: &str) -> String {
    let (status, _, body) = gw.send("GET", "/status", Some(token), "");
    assert_eq!(status, 200, "{body}");
    let status: Value = serde_json::from_str(&body).unwrap();
    let hooks = status["hooks"].as_array().unwrap();
    let h = hooks.iter().find(|h| h["hook"] == hook).unwrap();
    h["breaker"].as_str().unwrap_or_default().to_string()
}

/// Waits until Redis holds a key matching `pattern` (a write made off the
/// call's path).
fn await_key(store: &Redis, pattern: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while store.command(&format!("KEYS {pattern}")) == "*0\r\n" {
        assert!(
            std::time::Instant::now() < deadline,
            "no {pattern} in Redis"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn two_replicas_share_a_prompt_hooks_spend_cache_and_breaker() {
    let judge = FakeProvider::start(vec![Answer::Decide("allow", "")]);
    let flaky = FakeProvider::start(vec![Answer::Status(500, None)]);
    let mut store = Redis::start("prompts");
    let config = prompts(&judge, &flaky);
    let a = prompt_replica("prompt-a", &store.url(), &config);
    let b = prompt_replica("prompt-b", &store.url(), &config);
    let (ta, tb) = (a.token("acme", "ann"), b.token("acme", "ann"));
    let bash = |n: u32| format!(r#"{{"command":"ls {n}"}}"#);

    // The session cap: a spends 120, b 120 more (240 of 200); a itself
    // has charged only 120, yet refuses the session's next call.
    assert_eq!(refusal(&tool_call(&a, &ta, "s1", "Bash", &bash(1))), None);
    assert_eq!(refusal(&tool_call(&b, &tb, "s1", "Bash", &bash(2))), None);
    let why = refusal(&tool_call(&a, &ta, "s1", "Bash", &bash(3))).unwrap();
    assert!(why.contains("240 of 200"), "{why}");
    assert_eq!(judge.requests().len(), 2, "the capped call asked nothing");
    assert_eq!(refusal(&tool_call(&b, &tb, "s2", "Bash", &bash(3))), None);

    // The cache: a question one replica asked is answered by the other
    // from the store, without asking the model again.
    assert_eq!(refusal(&tool_call(&a, &ta, "s3", "Bash", &bash(9))), None);
    await_key(&store, "hookhost:prompt:*");
    let asked = judge.requests().len();
    assert_eq!(refusal(&tool_call(&b, &tb, "s3", "Bash", &bash(9))), None);
    assert_eq!(judge.requests().len(), asked, "b asked the model again");

    // The breaker: b looks at flaky once (its breaker reads the store),
    // a's call fails and opens a's breaker, which b then follows: b's
    // next read skips the dead model instead of failing on it.
    let read = r#"{"file_path":"/etc/hosts"}"#;
    assert_eq!(breaker_of(&b, &tb, "flaky"), "closed");
    assert_eq!(refusal(&tool_call(&a, &ta, "s4", "Read", read)), None);
    assert_eq!(breaker_of(&a, &ta, "flaky"), "open");
    await_key(&store, "hookhost:breaker:*");
    std::thread::sleep(Duration::from_millis(1100));
    breaker_of(&b, &tb, "flaky"); // the view is old: fetched again
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while breaker_of(&b, &tb, "flaky") != "open" {
        assert!(std::time::Instant::now() < deadline, "b never followed a");
        std::thread::sleep(Duration::from_millis(50));
    }
    let failed = flaky.requests().len();
    assert_eq!(refusal(&tool_call(&b, &tb, "s4", "Read", read)), None);
    assert_eq!(flaky.requests().len(), failed, "b called the dead model");

    // Redis down: the session's spend is unknown, so a capped hook's
    // call is refused (never counted as zero).
    store.stop();
    let why = refusal(&tool_call(&b, &tb, "s5", "Bash", &bash(5))).unwrap();
    assert!(why.contains("spend is unknown"), "{why}");
}
