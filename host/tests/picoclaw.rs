//! PicoClaw's hooks under a PicoClaw config, unchanged: PicoClaw's own
//! README example hook and a hook that answers as PicoClaw's Go test helper
//! does (examples/picoclaw_compat/), run by `python3` from a `.json`
//! config written as a PicoClaw user writes it. Each test names the
//! PicoClaw test it comes from.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use hookhost::protocol::Stage;
use hookhost::protocol::event::RuntimeEvent;
use hookhost::{Config, Host};
use hookhost_protocol::Outcome;
use hookhost_testkit::scratch;
use serde_json::{Value, json};

/// The examples folder as a PicoClaw user writes it in `dir`: relative to
/// the agent's working directory (cargo runs this test in `host/`), which
/// is not the config file's folder.
const EXAMPLES: &str = "../examples/picoclaw_compat";

/// Writes `hooks` as a PicoClaw config in a fresh folder and loads it.
fn load(hooks: Value) -> Config {
    let path = scratch().join("config.json");
    let file = json!({"agents": {"defaults": {"model": "gpt-4o-mini"}}, "hooks": hooks});
    std::fs::write(&path, serde_json::to_vec_pretty(&file).unwrap()).unwrap();
    let mut config = Config::load(&path).unwrap();
    config.defaults.shutdown_grace_ms = 500;
    config
}

/// The Go test helper's twin in `mode`.
fn helper(mode: &str, event_log: Option<&Path>, observe: &[&str], intercept: &[&str]) -> Value {
    let mut env = json!({"PICOCLAW_HOOK_HELPER": "1", "PICOCLAW_HOOK_MODE": mode});
    if let Some(log) = event_log {
        env["PICOCLAW_HOOK_EVENT_LOG"] = json!(log);
    }
    json!({
        "enabled": true, "transport": "stdio",
        "command": ["python3", "ipc_helper.py"], "dir": EXAMPLES,
        "env": env, "observe": observe, "intercept": intercept,
    })
}

fn params_of(outcome: Outcome) -> Value {
    match outcome {
        Outcome::Continue { params, .. } => params,
        other => panic!("expected continue, got {other:?}"),
    }
}

fn event(host: &Host, kind: &str) -> RuntimeEvent {
    serde_json::from_value(json!({
        "id": host.next_event_id(), "kind": kind, "time": "2026-01-01T00:00:00Z",
        "source": {"component": "agent", "name": "main"}, "payload": {"tool": "echo_text"}
    }))
    .unwrap()
}

/// Waits (3 s at most) until `path` holds `text`; its content.
async fn wait_for(path: &Path, text: &str) -> String {
    for _ in 0..150 {
        let content = std::fs::read_to_string(path).unwrap_or_default();
        if content.contains(text) {
            return content;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!(
        "{text:?} never reached {}: {:?}",
        path.display(),
        std::fs::read_to_string(path)
    );
}

/// From PicoClaw pkg/agent/hook_process_test.go
/// TestAgentLoop_MountProcessHook_LLMAndObserver: the helper in rewrite
/// mode, configured with `before_llm` only, rewrites the model before the
/// call and the content after it (PicoClaw's `llm` mode is both stages),
/// and observes `turn_end` by its short name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_helper_rewrites_both_llm_stages_and_observes_turn_end_by_its_short_name() {
    let log = scratch().join("events.log");
    let host = Host::start(load(json!({"processes": {
        "ipc-llm": helper("rewrite", Some(&log), &["turn_end"], &["before_llm"]),
    }})))
    .await;
    assert!(
        host.start_failures().is_empty(),
        "{:?}",
        host.start_failures()
    );
    let request =
        json!({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hello"}]});
    let sent = params_of(host.run_stage(Stage::BeforeLlm, request).await.unwrap());
    assert_eq!(sent["model"], "process-model");
    assert!(sent["meta"].get("SessionKey").is_none(), "{sent}");
    let response = json!({"model": "process-model", "response": {"content": "provider content"}});
    let got = params_of(host.run_stage(Stage::AfterLlm, response).await.unwrap());
    assert_eq!(got["response"]["content"], "provider content|ipc");
    host.emit(event(&host, "agent.turn.start"));
    host.emit(event(&host, "agent.turn.end"));
    assert_eq!(wait_for(&log, "agent.turn.end").await, "agent.turn.end\n");
    host.shutdown().await;
}

/// From PicoClaw pkg/agent/hook_process_test.go
/// TestAgentLoop_MountProcessHook_ToolRewrite: configured with
/// `before_tool` only, the helper sets `text` before the tool runs and
/// prefixes its result after, so the model sees `ipc:ipc`; the whole
/// params object it sends back loses nothing (PascalCase meta and
/// `duration` do not leak into the agent's params).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_helper_rewrites_the_call_and_its_result() {
    let host = Host::start(load(json!({"processes": {
        "ipc-tool": helper("rewrite", None, &[], &["before_tool"]),
    }})))
    .await;
    assert!(
        host.start_failures().is_empty(),
        "{:?}",
        host.start_failures()
    );
    let call = json!({"tool": "echo_text", "arguments": {"text": "hi"}, "meta": {"session_key": "session-1"}});
    let call = params_of(host.run_stage(Stage::BeforeTool, call).await.unwrap());
    assert_eq!(call["arguments"]["text"], "ipc");
    let text = call["arguments"]["text"].clone();
    let result = json!({"tool": "echo_text", "arguments": call["arguments"], "meta": call["meta"],
                        "result": {"for_llm": text}, "duration_ms": 3});
    let got = params_of(host.run_stage(Stage::AfterTool, result).await.unwrap());
    assert_eq!(got["result"]["for_llm"], "ipc:ipc");
    assert_eq!(got["meta"], json!({"session_key": "session-1"}));
    assert!(got.get("duration").is_none(), "{got}");
    host.shutdown().await;
}

/// From PicoClaw pkg/agent/hook_process_test.go
/// TestAgentLoop_MountProcessHook_ApprovalDeny: the helper in deny mode
/// refuses the tool with its reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_helper_in_deny_mode_refuses_the_tool_with_its_reason() {
    let host = Host::start(load(json!({"processes": {
        "ipc-approval": helper("deny", None, &[], &["approve_tool"]),
    }})))
    .await;
    assert!(
        host.start_failures().is_empty(),
        "{:?}",
        host.start_failures()
    );
    let outcome = host
        .run_stage(
            Stage::ApproveTool,
            json!({"tool": "blocked_tool", "arguments": {}}),
        )
        .await
        .unwrap();
    let wire = outcome.to_wire(Stage::ApproveTool);
    assert_eq!(
        wire,
        json!({"approved": false, "reason": "blocked by ipc hook"})
    );
    host.shutdown().await;
}

/// PicoClaw's README "Python Process-Hook Example", pasted unchanged, with
/// its README config: hello, every tool stage and the observed events
/// arrive (events by PicoClaw's short names), the hook receives what
/// PicoClaw sends (hello modes, PascalCase meta, `duration` in ns), and
/// its answers let the tool run. From PicoClaw
/// docs/architecture/hooks/README.md ("How To Confirm It Received Hooks")
/// and pkg/agent/hook_process.go (hello params, after_tool for `tool`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn picoclaws_readme_hook_runs_unchanged() {
    let log = scratch().join("review-gate.log");
    let host = Host::start(load(
        json!({"enabled": true, "processes": {"py_review_gate": {
            "enabled": true, "priority": 100, "transport": "stdio",
            "command": ["python3", "picoclaw_review_gate.py"], "dir": EXAMPLES,
            "observe": ["tool_exec_start", "tool_exec_end", "tool_exec_skipped"],
            "intercept": ["before_tool", "approve_tool"],
            "env": {"PICOCLAW_HOOK_LOG_FILE": log},
        }}}),
    ))
    .await;
    assert!(
        host.start_failures().is_empty(),
        "{:?}",
        host.start_failures()
    );
    let call = json!({"tool": "echo_text", "arguments": {"text": "hello"},
                      "meta": {"session_key": "session-1", "turn_id": "t1", "iteration": 1}});
    let before = host
        .run_stage(Stage::BeforeTool, call.clone())
        .await
        .unwrap();
    assert_eq!(params_of(before), call);
    let approval = host
        .run_stage(Stage::ApproveTool, call.clone())
        .await
        .unwrap();
    assert_eq!(
        approval.to_wire(Stage::ApproveTool),
        json!({"approved": true})
    );
    let mut result = call.clone();
    result["result"] = json!({"for_llm": "hello"});
    result["duration_ms"] = json!(7);
    let after = host
        .run_stage(Stage::AfterTool, result.clone())
        .await
        .unwrap();
    assert_eq!(params_of(after), result);
    host.emit(event(&host, "agent.tool.exec_start"));
    host.emit(event(&host, "agent.turn.start"));
    host.emit(event(&host, "agent.tool.exec_end"));
    wait_for(&log, r#""kind": "agent.tool.exec_end""#).await;
    host.shutdown().await;
    let lines: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let inbound = |method: &str| -> Vec<&Value> {
        let is = |l: &&Value| l["direction"] == "in" && l["method"] == method;
        lines.iter().filter(is).map(|l| &l["params"]).collect()
    };
    assert_eq!(
        inbound("hook.hello")[0]["modes"],
        json!(["observe", "tool", "approve"])
    );
    let tool_call = inbound("hook.before_tool")[0];
    assert_eq!(tool_call["meta"]["SessionKey"], "session-1");
    assert_eq!(tool_call["meta"]["Iteration"], 1);
    assert_eq!(tool_call["meta"]["AgentID"], "");
    assert_eq!(inbound("hook.after_tool")[0]["duration"], 7_000_000);
    let kinds: Vec<&Value> = inbound("hook.runtime_event")
        .iter()
        .map(|e| &e["kind"])
        .collect();
    assert_eq!(
        kinds,
        [
            &json!("agent.tool.exec_start"),
            &json!("agent.tool.exec_end")
        ]
    );
    assert_eq!(
        inbound("hook.runtime_event")[0]["source"]["component"],
        "agent"
    );
    let errors = lines.iter().filter(|l| !l["error"].is_null()).count();
    assert_eq!(errors, 0, "{lines:?}");
}

/// From PicoClaw pkg/agent/hooks_test.go TestHookManager_SortsInProcessBeforeProcess
/// (and its docs' "Execution Order"): under a PicoClaw config a builtin
/// runs before a process hook of a lower priority; PicoClaw's Go builtin
/// `audit` is skipped, not a failure.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn builtins_run_before_process_hooks_and_go_builtins_are_skipped() {
    let host = Host::start(load(json!({
        "processes": {"ipc-tool": helper("rewrite", None, &[], &["before_tool"])},
        "builtins": {
            "deny_tools": {"enabled": true, "priority": 100, "config": {"tools": ["echo_text"]}},
            "audit": {"enabled": true, "priority": 5, "config": {"label": "audit"}},
        },
    })))
    .await;
    assert!(
        host.start_failures().is_empty(),
        "{:?}",
        host.start_failures()
    );
    let order: Vec<String> = host.hooks().into_iter().map(|h| h.name).collect();
    assert_eq!(order, ["deny_tools", "ipc-tool"]);
    let outcome = host
        .run_stage(
            Stage::BeforeTool,
            json!({"tool": "echo_text", "arguments": {}}),
        )
        .await
        .unwrap();
    assert!(matches!(outcome, Outcome::DenyTool { .. }), "{outcome:?}");
    host.shutdown().await;
}

/// From PicoClaw pkg/agent/hook_process_test.go
/// TestAgentLoop_MountProcessHook_IsolationSupportsRelativeDirAndCommand
/// (and pkg/agent/hook_mount.go, which starts the process when the agent
/// mounts it): a relative `dir` and a `./program` are the working
/// directory's, and a program that is not there is that hook's start
/// failure, answered by its policy, not a load error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relative_dir_and_program_are_found_at_spawn() {
    let folder = scratch();
    let script = folder.join("hook-helper");
    std::fs::copy(PathBuf::from(EXAMPLES).join("ipc_helper.py"), &script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let cwd = std::env::current_dir().unwrap();
    let up: PathBuf = cwd.components().skip(1).map(|_| "..").collect();
    let relative = up.join(folder.strip_prefix("/").unwrap());
    let mut found = helper("rewrite", None, &[], &["before_llm"]);
    found["command"] = json!(["./hook-helper"]);
    found["dir"] = json!(relative);
    let mut missing = found.clone();
    missing["command"] = json!(["./not-there"]);
    missing["intercept"] = json!(["approve_tool"]);
    let host = Host::start(load(
        json!({"processes": {"ipc-relative": found, "gone": missing}}),
    ))
    .await;
    let failed: Vec<String> = host.start_failures().into_iter().map(|f| f.hook).collect();
    assert_eq!(failed, ["gone"]);
    let sent = params_of(
        host.run_stage(Stage::BeforeLlm, json!({"model": "m"}))
            .await
            .unwrap(),
    );
    assert_eq!(sent["model"], "process-model");
    let approval = host
        .run_stage(Stage::ApproveTool, json!({"tool": "x"}))
        .await
        .unwrap();
    assert_eq!(approval.to_wire(Stage::ApproveTool)["approved"], false);
    host.shutdown().await;
}

/// Runs the helper in `mode` at before_llm (configured as PicoClaw users
/// do, `intercept: ["before_llm"]`) on `request`; what reaches the model.
async fn before_llm(mode: &str, request: Value) -> Value {
    let host = Host::start(load(json!({"processes": {
        "llm-hook": helper(mode, None, &[], &["before_llm"]),
    }})))
    .await;
    assert!(
        host.start_failures().is_empty(),
        "{:?}",
        host.start_failures()
    );
    let sent = params_of(host.run_stage(Stage::BeforeLlm, request).await.unwrap());
    host.shutdown().await;
    sent
}

/// The request of PicoClaw's before_llm tests: a system message (with
/// its `system_parts`), a user message, one MCP tool.
fn llm_request(model: &str) -> Value {
    json!({"model": model,
        "messages": [
            {"role": "system", "content": "original system",
             "system_parts": [{"type": "text", "text": "original system", "cache_control": {"type": "ephemeral"}}],
             "reasoning_content": ""},
            {"role": "user", "content": "hello"}],
        "tools": [{"type": "function", "function": {"name": "mcp_github_create_issue",
            "description": "create issue", "parameters": {"type": "object"}}}]})
}

/// From PicoClaw pkg/agent/hooks_test.go (commit b954e6b8dc26dca2e7b460320ebf845d06bccdc6)
/// TestHookManager_BeforeLLMControlsSystemPromptMutation: a before_llm
/// hook may change the model but not the system prompt; PicoClaw puts the
/// messages back (hooks.go applyBeforeLLMControls) and keeps the model.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn before_llm_controls_system_prompt_mutation() {
    let request = llm_request("original-model");
    let got = before_llm("rewrite-system", request.clone()).await;
    assert_eq!(got["model"], "changed-model");
    assert_eq!(got["messages"], request["messages"]);
    assert_eq!(got["messages"][0]["content"], "original system");
    assert_eq!(got["messages"][1]["content"], "hello");
}

/// From PicoClaw pkg/agent/hooks_test.go (commit b954e6b8dc26dca2e7b460320ebf845d06bccdc6)
/// TestHookManager_BeforeLLMAllowsNonSystemMessageMutation: a message
/// appended after the system prompt is kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn before_llm_allows_non_system_message_mutation() {
    let got = before_llm("append-user", llm_request("model")).await;
    let messages = got["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "{got}");
    assert_eq!(
        messages[2],
        json!({"role": "user", "content": "extra user context"})
    );
}

/// From PicoClaw pkg/agent/hooks_test.go (commit b954e6b8dc26dca2e7b460320ebf845d06bccdc6)
/// TestHookManager_BeforeLLMAllowsJSONRoundTripNonSystemMessageMutation:
/// a hook that writes the system message back without its empty fields
/// (as Go's `omitempty` does) has not changed it; its appended message
/// is kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn before_llm_allows_json_round_trip_non_system_message_mutation() {
    let got = before_llm("json-append-user", llm_request("model")).await;
    let messages = got["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "{got}");
    assert_eq!(messages[2]["content"], "json extra user context");
}

/// From PicoClaw pkg/agent/hooks_test.go (commit b954e6b8dc26dca2e7b460320ebf845d06bccdc6)
/// TestHookManager_BeforeLLMControlsToolDefinitionMutation: a rewritten
/// tool description and an added tool are undone; the model change is
/// kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn before_llm_controls_tool_definition_mutation() {
    let request = llm_request("original-model");
    let got = before_llm("rewrite-tool", request.clone()).await;
    assert_eq!(got["model"], "changed-model");
    assert_eq!(got["tools"], request["tools"]);
    assert_eq!(got["tools"][0]["function"]["description"], "create issue");
}

/// PicoClaw leaves a hook off unless its config says `"enabled": true`
/// (Go's zero value); a PicoClaw file read by hookhost does the same, for
/// process hooks and builtins, while TOML keeps its default of on.
#[test]
fn a_hook_without_enabled_is_off_in_a_picoclaw_config() {
    let mut unsaid = helper("rewrite", None, &[], &["before_tool"]);
    unsaid.as_object_mut().unwrap().remove("enabled");
    let config = load(json!({"processes": {"unsaid": unsaid,
        "said": helper("rewrite", None, &[], &["before_tool"])},
        "builtins": {"deny_tools": {"config": {"tools": ["echo_text"]}}}}));
    assert!(!config.processes["unsaid"].enabled);
    assert!(config.processes["said"].enabled);
    assert!(!config.builtins["deny_tools"].enabled);

    let dir = scratch();
    let toml = dir.join("hooks.toml");
    std::fs::write(
        &toml,
        "[hooks.builtins.deny_tools]\nconfig = { tools = [\"echo_text\"] }\n",
    )
    .unwrap();
    let config = Config::load(&toml).unwrap();
    assert!(config.builtins["deny_tools"].enabled);
}
