//! Replicas of a gateway sharing their counts through a real Redis
//! (`serve --state redis://`, Debian's redis-server): a stop hook that
//! always blocks is capped by `stop_block_limit` across two replicas
//! taking turns, as one gateway would cap it; with Redis down a stop's
//! block is let go with a message (the agent stops) while a tool call is
//! still refused; once Redis is back the counts are shared again.

#![allow(clippy::unwrap_used)]

mod common;
#[path = "common/gateway.rs"]
mod gw;
#[path = "common/redis.rs"]
mod redis;

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
