//! Prompt hooks (`[hooks.prompts]`) against a fake provider on loopback
//! speaking the real OpenAI and Anthropic APIs: the decision comes from
//! the forced `decide` call, and every way of not getting one (a hang,
//! free text, a malformed call, a 429 past the deadline, a spent cap)
//! refuses under the default policy.

#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use hookhost::protocol::lifecycle::LifecycleEvent;
use hookhost::protocol::params::ToolCall;
use hookhost::{Config, Host, ToolOutcome};
use hookhost_testkit::provider::{Answer, FakeProvider};
use hookhost_testkit::scratch;
use serde_json::{Value, json};

/// A host with one prompt hook `judge` at `provider`'s URL, plus `keys`.
async fn host_with(provider: &FakeProvider, api: &str, keys: &str) -> (Host, std::path::PathBuf) {
    let dir = scratch();
    let base = match api {
        "openai" => format!("{}/v1", provider.url),
        _ => provider.url.clone(),
    };
    let toml = format!(
        "[hooks.prompts.judge]\nprovider = \"{api}\"\nbase_url = \"{base}\"\nmodel = \"m-1\"\n\
         api_key = \"${{env:HOME}}\"\nprompt = \"Deny destructive commands. $ARGUMENTS\"\n{keys}\n"
    );
    std::fs::write(dir.join("hooks.toml"), toml).unwrap();
    let host = Host::start(Config::load(&dir.join("hooks.toml")).unwrap()).await;
    assert!(
        host.start_failures().is_empty(),
        "{:?}",
        host.start_failures()
    );
    (host, dir)
}

const GATE: &str = "events = [\"PreToolUse\"]\nmatcher = \"Bash\"\n";

fn shell(cmd: &str, session: &str) -> ToolCall {
    serde_json::from_value(json!({"tool": "shell", "arguments": {"command": cmd},
        "meta": {"session_key": session}}))
    .unwrap()
}

fn denied(out: ToolOutcome<ToolCall>) -> String {
    match out {
        ToolOutcome::Deny { reason } => reason,
        other => panic!("expected a deny, got {other:?}"),
    }
}

#[tokio::test]
async fn an_openai_model_denies_with_its_reason_through_the_forced_tool_call() {
    let p = FakeProvider::start(vec![Answer::Decide("deny", "wipes the root filesystem")]);
    let (host, _dir) = host_with(&p, "openai", GATE).await;
    let reason = denied(host.before_tool(shell("rm -rf /", "s1")).await);
    assert_eq!(reason, "wipes the root filesystem");
    let reqs = p.requests();
    assert_eq!(reqs.len(), 1);
    let r = &reqs[0];
    assert_eq!(r.path, "/v1/chat/completions");
    let home = std::env::var("HOME").unwrap();
    assert_eq!(
        r.header("authorization"),
        Some(format!("Bearer {home}").as_str())
    );
    assert_eq!(r.body["tool_choice"]["function"]["name"], "decide");
    assert_eq!(
        r.body["tools"][0]["function"]["parameters"]["properties"]["decision"]["enum"],
        json!(["allow", "deny", "ask"])
    );
    let user = r.body["messages"][1]["content"].as_str().unwrap();
    assert!(user.starts_with("Deny destructive commands. {"), "{user}");
    assert!(
        user.contains("\"command\":\"rm -rf /\""),
        "the event in Claude's keys: {user}"
    );
    assert!(user.contains("\"tool_name\":\"Bash\""), "{user}");
    host.shutdown().await;
}

#[tokio::test]
async fn an_anthropic_model_asks_then_allows_and_the_matcher_keeps_it_quiet() {
    let p = FakeProvider::start(vec![
        Answer::Decide("ask", "pushes to main"),
        Answer::Decide("allow", ""),
    ]);
    let (host, _dir) = host_with(&p, "anthropic", GATE).await;
    match host.before_tool(shell("git push origin main", "s1")).await {
        ToolOutcome::Ask { reason, .. } => assert_eq!(reason, "pushes to main"),
        other => panic!("{other:?}"),
    }
    let read: ToolCall =
        serde_json::from_value(json!({"tool": "read_file", "arguments": {"path": "a"}})).unwrap();
    assert!(matches!(
        host.before_tool(read).await,
        ToolOutcome::Continue { .. }
    ));
    assert!(matches!(
        host.before_tool(shell("ls", "s1")).await,
        ToolOutcome::Continue { .. }
    ));
    let reqs = p.requests();
    assert_eq!(
        reqs.len(),
        2,
        "the matcher kept the read_file call from the model"
    );
    assert_eq!(reqs[0].path, "/v1/messages");
    assert_eq!(reqs[0].header("anthropic-version"), Some("2023-06-01"));
    assert!(reqs[0].header("x-api-key").is_some());
    assert_eq!(
        reqs[0].body["tool_choice"],
        json!({"type": "tool", "name": "decide"})
    );
    host.shutdown().await;
}

#[tokio::test]
async fn a_provider_that_hangs_is_a_refusal_at_the_timeout() {
    let p = FakeProvider::start(vec![Answer::Hang]);
    let (host, _dir) = host_with(&p, "openai", &format!("{GATE}timeout_ms = 300\n")).await;
    let t = Instant::now();
    let reason = denied(host.before_tool(shell("ls", "s1")).await);
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    assert!(
        reason.contains("judge") && reason.contains("no answer within"),
        "{reason}"
    );
    let s = &host.stats()[0];
    assert_eq!((s.kind.as_str(), s.timeouts), ("prompt", 1));
    host.shutdown().await;
}

#[tokio::test]
async fn free_text_and_malformed_calls_refuse_unless_on_error_says_otherwise() {
    for bad in [
        Answer::Text("Looks safe to me, allow."),
        Answer::Raw("{\"choices\": [".into()),
        Answer::Decide("maybe", "unsure"),
    ] {
        let p = FakeProvider::start(vec![bad.clone()]);
        let (host, _dir) = host_with(&p, "openai", GATE).await;
        let reason = denied(host.before_tool(shell("ls", "s1")).await);
        assert!(reason.contains("judge"), "{bad:?}: {reason}");
        host.shutdown().await;
        let (host, _dir) = host_with(&p, "openai", &format!("{GATE}on_error = \"warn\"\n")).await;
        let out = host.before_tool(shell("ls", "s1")).await;
        assert!(
            matches!(out, ToolOutcome::Continue { .. }),
            "{bad:?}: {out:?}"
        );
        host.shutdown().await;
    }
}

#[tokio::test]
async fn a_429_is_retried_after_retry_after_when_it_fits_the_deadline() {
    let p = FakeProvider::start(vec![
        Answer::Status(429, Some("1")),
        Answer::Decide("deny", "no"),
    ]);
    let (host, _dir) = host_with(&p, "anthropic", &format!("{GATE}timeout_ms = 5000\n")).await;
    let t = Instant::now();
    assert_eq!(denied(host.before_tool(shell("ls", "s1")).await), "no");
    assert!(
        t.elapsed() >= Duration::from_millis(900),
        "{:?}",
        t.elapsed()
    );
    assert_eq!(p.requests().len(), 2);
    host.shutdown().await;

    let p = FakeProvider::start(vec![Answer::Status(429, Some("30"))]);
    let (host, _dir) = host_with(&p, "anthropic", &format!("{GATE}timeout_ms = 2000\n")).await;
    let t = Instant::now();
    let reason = denied(host.before_tool(shell("ls", "s1")).await);
    assert!(
        t.elapsed() < Duration::from_secs(2),
        "no wait past the deadline"
    );
    assert!(
        reason.contains("429") && reason.contains("Retry-After"),
        "{reason}"
    );
    assert_eq!(p.requests().len(), 1);
    host.shutdown().await;
}

#[tokio::test]
async fn a_session_spend_cap_reached_mid_session_refuses_that_session_only() {
    let p = FakeProvider::start(vec![Answer::Decide("allow", "")]);
    let keys = format!("{GATE}session_token_cap = 200\ncache_ttl_ms = 0\n");
    let (host, _dir) = host_with(&p, "openai", &keys).await;
    for _ in 0..2 {
        let out = host.before_tool(shell("ls", "s1")).await;
        assert!(matches!(out, ToolOutcome::Continue { .. }), "{out:?}");
    }
    let reason = denied(host.before_tool(shell("ls", "s1")).await);
    assert!(
        reason.contains("session spend cap") && reason.contains("240 of 200"),
        "{reason}"
    );
    let out = host.before_tool(shell("ls", "s2")).await;
    assert!(
        matches!(out, ToolOutcome::Continue { .. }),
        "another session: {out:?}"
    );
    assert_eq!(p.requests().len(), 3, "the capped call sent nothing");
    let m = host.stats()[0].model.clone().unwrap();
    assert_eq!(
        (m.requests, m.tokens_in, m.tokens_out, m.capped),
        (3, 300, 60, 1)
    );
    host.shutdown().await;
}

#[tokio::test]
async fn an_identical_evaluation_is_answered_from_the_cache_and_audited_as_such() {
    let p = FakeProvider::start(vec![Answer::Decide("deny", "no")]);
    let (host, dir) = host_with(
        &p,
        "openai",
        &format!("{GATE}\n[hooks.audit]\npath = \"audit.jsonl\"\n"),
    )
    .await;
    for _ in 0..2 {
        assert_eq!(
            denied(host.before_tool(shell("rm -rf /", "s1")).await),
            "no"
        );
    }
    assert_eq!(p.requests().len(), 1);
    assert_eq!(host.stats()[0].model.clone().unwrap().cache_hits, 1);
    host.shutdown().await;
    let text = std::fs::read_to_string(dir.join("audit.jsonl")).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert_eq!(
        (
            &lines[0]["model"],
            &lines[0]["tokens_in"],
            &lines[0]["tokens_out"],
            &lines[0]["cached"]
        ),
        (&json!("m-1"), &json!(100), &json!(20), &json!(false))
    );
    assert_eq!(
        (&lines[1]["cached"], &lines[1]["tokens_in"]),
        (&json!(true), &json!(0))
    );
}

#[tokio::test]
async fn the_concurrency_limit_holds_calls_back_from_the_provider() {
    let p = FakeProvider::start(vec![Answer::Hang]);
    let keys = format!("{GATE}max_concurrency = 1\ntimeout_ms = 500\ncache_ttl_ms = 0\n");
    let (host, _dir) = host_with(&p, "openai", &keys).await;
    let (a, b) = tokio::join!(
        host.before_tool(shell("ls a", "s1")),
        host.before_tool(shell("ls b", "s1"))
    );
    denied(a);
    denied(b);
    assert_eq!(
        p.requests().len(),
        1,
        "the second call waited for the first's permit"
    );
    host.shutdown().await;
}

#[tokio::test]
async fn at_stop_a_block_is_the_next_instruction() {
    let p = FakeProvider::start(vec![Answer::Decide(
        "block",
        "run the tests before stopping",
    )]);
    let keys = "events = [\"Stop\"]\n\"if\" = \"true\"\n";
    let (host, _dir) = host_with(&p, "anthropic", keys).await;
    let out = host
        .lifecycle(LifecycleEvent::Stop, serde_json::Map::new())
        .await;
    assert_eq!(
        out.blocked.as_deref(),
        Some("run the tests before stopping")
    );
    let schema = &p.requests()[0].body["tools"][0]["input_schema"];
    assert_eq!(
        schema["properties"]["decision"]["enum"],
        json!(["allow", "block"])
    );
    host.shutdown().await;
}

#[test]
fn a_prompt_hook_without_matcher_if_or_rule_does_not_load() {
    let dir = scratch();
    let toml = "[hooks.prompts.judge]\nprovider = \"openai\"\nmodel = \"m\"\nprompt = \"p\"\nevents = [\"PreToolUse\"]\n";
    std::fs::write(dir.join("hooks.toml"), toml).unwrap();
    let e = Config::load(&dir.join("hooks.toml"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("prompt hook `judge`") && e.contains("`matcher`, `if` or `rule`"),
        "{e}"
    );
}

/// A prompt hook scoped to one agent is not asked about another's calls
/// (GoClaw's agent scope), so its tokens are never spent on them.
#[tokio::test]
async fn a_scoped_prompt_hook_asks_the_model_only_for_its_agent() {
    let p = FakeProvider::start(vec![Answer::Decide("deny", "not for a1")]);
    let keys = format!("{GATE}scope = {{ agents = [\"a1\"] }}\n");
    let (host, _dir) = host_with(&p, "openai", &keys).await;
    let mut call = shell("ls", "s1");
    call.meta.agent_id = Some("a2".into());
    assert!(matches!(
        host.before_tool(call.clone()).await,
        ToolOutcome::Continue { .. }
    ));
    assert!(p.requests().is_empty());
    call.meta.agent_id = Some("a1".into());
    assert_eq!(denied(host.before_tool(call).await), "not for a1");
    host.shutdown().await;
}

/// GoClaw's `agent` quality-gate evaluator as a prompt hook: the model's
/// block at SubagentStop is feedback for a retry, `max_retries` times, then
/// the result is let through as exhausted.
#[tokio::test]
async fn a_model_reviewer_is_a_quality_gate_at_subagent_stop() {
    use hookhost::GateOutcome;
    use hookhost::protocol::LifecycleParams;
    let p = FakeProvider::start(vec![Answer::Decide("block", "REJECTED: add tests")]);
    let keys =
        "events = [\"SubagentStop\"]\n\"if\" = \"true\"\nmax_retries = 1\ncache_ttl_ms = 0\n";
    let (host, _dir) = host_with(&p, "anthropic", keys).await;
    let finished = || {
        let mut params = LifecycleParams::new(LifecycleEvent::SubagentStop);
        params.meta.session_key = Some("s-1".into());
        params.payload = json!({"agent_id": "sub-1", "last_assistant_message": "done"})
            .as_object()
            .cloned()
            .unwrap();
        params
    };
    let first = host.lifecycle_with(finished()).await;
    assert_eq!(first.blocked.as_deref(), Some("REJECTED: add tests"));
    assert!(
        matches!(first.gate, Some(GateOutcome::Retry { attempt: 1, .. })),
        "{:?}",
        first.gate
    );
    let second = host.lifecycle_with(finished()).await;
    assert!(
        matches!(second.gate, Some(GateOutcome::Exhausted { .. })),
        "{:?}",
        second.gate
    );
    assert_eq!(second.blocked, None, "let through after max_retries");
    host.shutdown().await;
}

/// A prompt hook whose `base_url` names an unset variable stays in the
/// chain and refuses (its policy answers), instead of dropping out and
/// letting every call through.
#[tokio::test]
async fn an_unusable_base_url_refuses_instead_of_leaving_the_chain() {
    let dir = scratch();
    let toml = format!(
        "[hooks.prompts.judge]\nprovider = \"openai\"\nbase_url = \"${{env:HOOKHOST_TEST_UNSET_URL}}\"\n\
         model = \"m\"\nprompt = \"p\"\n{GATE}"
    );
    std::fs::write(dir.join("hooks.toml"), toml).unwrap();
    let host = Host::start(Config::load(&dir.join("hooks.toml")).unwrap()).await;
    let reason = denied(host.before_tool(shell("ls", "s1")).await);
    assert!(reason.contains("HOOKHOST_TEST_UNSET_URL"), "{reason}");
    host.shutdown().await;
}

/// Issue 32: of several `decide` calls the first won, so a model that
/// called "allow" then "deny" allowed. The most restrictive wins.
#[tokio::test]
async fn of_several_decide_calls_the_most_restrictive_wins() {
    let call = |id: &str, decision: &str| {
        json!({"id": id, "type": "function", "function": {"name": "decide",
            "arguments": json!({"decision": decision, "reason": format!("{decision}s")}).to_string()}})
    };
    let answer = json!({"object": "chat.completion", "choices": [{"index": 0,
        "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
        "tool_calls": [call("a", "allow"), call("b", "deny"), call("c", "ask")]}}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20}});
    let p = FakeProvider::start(vec![Answer::Raw(answer.to_string())]);
    let (host, _dir) = host_with(&p, "openai", GATE).await;
    let reason = denied(host.before_tool(shell("rm -rf ~", "s1")).await);
    assert_eq!(reason, "denys");
    host.shutdown().await;
}

/// Issue 32: a `base_url` with credentials (userinfo, `?key=`) showed them
/// in the deny reason the model reads. They are masked everywhere.
#[tokio::test]
async fn credentials_in_base_url_never_reach_the_reason() {
    let p = FakeProvider::start(vec![Answer::Status(500, None)]);
    let dir = scratch();
    let base = p.url.replace("http://", "http://alice:s3cr3tpw@") + "/v1?key=K3Y-SECRET";
    let toml = format!(
        "[hooks.prompts.judge]\nprovider = \"openai\"\nbase_url = \"{base}\"\nmodel = \"m-1\"\n\
         prompt = \"Judge. $ARGUMENTS\"\n{GATE}"
    );
    std::fs::write(dir.join("hooks.toml"), toml).unwrap();
    let host = Host::start(Config::load(&dir.join("hooks.toml")).unwrap()).await;
    let reason = denied(host.before_tool(shell("ls", "s1")).await);
    host.shutdown().await;
    assert!(
        !reason.contains("s3cr3tpw") && !reason.contains("K3Y-SECRET"),
        "{reason}"
    );
    assert!(reason.contains("HTTP 500"), "{reason}");
}

/// Issue 32: prompt hooks had no input cap. An event over
/// `max_input_bytes` is not sent; the call fails and `on_error` (block)
/// refuses.
#[tokio::test]
async fn an_event_over_max_input_bytes_is_not_sent_and_refuses() {
    let p = FakeProvider::start(vec![Answer::Decide("allow", "")]);
    let (host, _dir) = host_with(&p, "openai", &format!("{GATE}max_input_bytes = 2048\n")).await;
    let big = format!("echo {}", "x".repeat(4096));
    let reason = denied(host.before_tool(shell(&big, "s1")).await);
    assert!(reason.contains("max_input_bytes"), "{reason}");
    assert!(p.requests().is_empty(), "nothing was sent");
    let out = host.before_tool(shell("ls", "s1")).await;
    assert!(matches!(out, ToolOutcome::Continue { .. }), "{out:?}");
    host.shutdown().await;
}
