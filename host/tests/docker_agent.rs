//! docker-agent's newest hook semantics for `[hooks.commands]` hooks of
//! its dialect, driven through the embedding API with real scripts: its
//! gates fail closed, each event takes only what docker-agent's contract
//! lets it take, `strict_output`, `metadata`, the model events' messages
//! and the tool-response rewrite. Each test names the docker-agent test it
//! comes from (docker/docker-agent, `pkg/hooks`).

#![allow(clippy::unwrap_used)]

use hookhost::protocol::lifecycle::{LifecycleEvent, LifecycleParams};
use hookhost::protocol::params::{AfterToolParams, BeforeLlmParams, ToolCall};
use hookhost::{Config, Host, StageOutcome, ToolOutcome};
use hookhost_testkit::{LogSink, dialect_example, scratch};
use serde_json::{Value, json};

/// A host whose one command hook `guard` runs `body` (a `#!/bin/sh`
/// script) with the extra TOML `keys`.
async fn host_with(body: &str, keys: &str) -> Host {
    let dir = scratch();
    let script = dir.join("hook.sh");
    std::fs::write(&script, format!("#!/bin/sh\n{body}\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let toml = format!("[hooks.commands.guard]\ncommand = \"./hook.sh\"\n{keys}\n");
    std::fs::write(dir.join("hooks.toml"), toml).unwrap();
    let host = Host::start(Config::load(&dir.join("hooks.toml")).unwrap()).await;
    assert!(
        host.start_failures().is_empty(),
        "{:?}",
        host.start_failures()
    );
    host
}

fn shell(cmd: &str) -> ToolCall {
    serde_json::from_value(json!({"tool": "shell", "arguments": {"cmd": cmd, "cwd": "work"}}))
        .unwrap()
}

/// A script that breaks the way the command names: docker-agent's
/// failure kinds (a crash, a missing program, bad output, a timeout, a
/// kill).
const BREAKS: &str = r#"input=$(cat)
case "$input" in
  *exit1*) exit 1;;
  *exit127*) exit 127;;
  *malformed*) echo '{"decision":';;
  *blok*) echo '{"decision":"blok"}';;
  *alow*) echo '{"hook_specific_output":{"permission_decision":"alow"}}';;
  *two*) echo '{} {}';;
  *slow*) sleep 5;;
  *killed*) kill -9 $$;;
esac"#;

const FAILURES: [&str; 8] = [
    "exit1",
    "exit127",
    "malformed",
    "blok",
    "alow",
    "two",
    "slow",
    "killed",
];

/// Whether the call ran: an allow, or a deny that names the hook.
fn allowed(out: &ToolOutcome<ToolCall>) -> bool {
    match out {
        ToolOutcome::Continue { .. } => true,
        ToolOutcome::Deny { reason } => {
            assert!(reason.contains("guard"), "{reason}");
            false
        }
        other => panic!("{other:?}"),
    }
}

/// From docker-agent pkg/hooks/failure_test.go TestHookFailurePolicyMatrix
/// (and tool_phases_test.go TestToolGuardFailsClosed,
/// TestToolInputTransformFailurePolicy): a pre_tool_use or tool_guard hook
/// that crashes, is missing, answers what cannot be read, times out or is
/// killed refuses the tool whatever `on_error` says, `ignore` included;
/// a tool_input_transform hook's failure follows `on_error` (warn by
/// default).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gates_fail_closed_whatever_on_error_says_and_transforms_follow_it() {
    for event in ["pre_tool_use", "tool_guard", "tool_input_transform"] {
        for on_error in [
            "",
            "on_error = \"warn\"",
            "on_error = \"ignore\"",
            "on_error = \"block\"",
        ] {
            let keys = format!("events = [\"{event}\"]\ntimeout_ms = 400\n{on_error}");
            let host = host_with(BREAKS, &keys).await;
            let closed = event != "tool_input_transform" || on_error.contains("block");
            for failure in FAILURES {
                let out = host.before_tool(shell(failure)).await;
                assert_eq!(
                    allowed(&out),
                    !closed,
                    "{event} {on_error:?} {failure}: {out:?}"
                );
            }
            // A hook that works still decides.
            assert!(allowed(&host.before_tool(shell("ls")).await));
            host.shutdown().await;
        }
    }
}

/// From docker-agent pkg/hooks/failure_test.go TestHookFailurePolicyMatrix
/// (its before_llm_call rows): a model gate's failure follows `on_error`.
#[tokio::test]
async fn a_before_llm_call_failure_follows_on_error() {
    let request: BeforeLlmParams =
        serde_json::from_value(json!({"model": "m", "messages": []})).unwrap();
    for (on_error, aborts) in [("", false), ("on_error = \"block\"", true)] {
        let host = host_with(
            "exit 1",
            &format!("events = [\"before_llm_call\"]\n{on_error}"),
        )
        .await;
        let out = host.before_llm(request.clone()).await;
        assert_eq!(
            matches!(out, StageOutcome::Abort { .. }),
            aborts,
            "{on_error}: {out:?}"
        );
        host.shutdown().await;
    }
}

/// From docker-agent pkg/hooks/failure_test.go TestHookFailurePolicyMatrix:
/// the example's shell guard is fail closed with no `on_error` at all.
#[test]
fn the_examples_shell_guard_fails_closed_without_on_error() {
    let config = Config::load(&dialect_example("docker-agent").join("hooks.toml")).unwrap();
    let guard = &config.commands["shell_guard"];
    assert_eq!(guard.on_error, None);
    assert_eq!(
        guard.policy(hookhost::protocol::Stage::BeforeTool),
        hookhost::protocol::OnError::Deny
    );
}

/// From docker-agent pkg/hooks/tool_phases_test.go
/// TestToolGuardAggregatesMostRestrictiveVerdict: a guard's allow is
/// advisory and it cannot rewrite the input; its ask reaches the user with
/// its reason and its `metadata`.
#[tokio::test]
async fn a_guard_decides_but_cannot_rewrite_and_its_metadata_reaches_the_prompt() {
    let body = r#"case "$(cat)" in
  *push*) echo '{"hook_specific_output":{"permission_decision":"ask","permission_decision_reason":"unsure","metadata":{"ticket":"T-1"}}}';;
  *) echo '{"hook_specific_output":{"permission_decision":"allow","updated_input":{"cmd":"rewritten"}}}';;
esac"#;
    let host = host_with(body, "events = [\"tool_guard\"]").await;
    match host.before_tool(shell("git push")).await {
        ToolOutcome::Ask { reason, .. } => {
            assert!(
                reason.contains("unsure") && reason.contains("ticket: T-1"),
                "{reason}"
            )
        }
        other => panic!("{other:?}"),
    }
    // The guard's own allow is its verdict; its rewrite is dropped.
    match host.before_tool(shell("ls")).await {
        ToolOutcome::Allow { call, .. } => assert_eq!(call.arguments["cmd"], "ls"),
        other => panic!("{other:?}"),
    }
    host.shutdown().await;
}

/// From docker-agent pkg/hooks/tool_phases_test.go
/// TestToolInputTransformComposesPatchesAndKeepsInputEventName: a
/// transform's `updated_input` is merged over the arguments (keys it
/// leaves out stay), it sees its own event name, and it carries no
/// verdict: its `permission_decision` is ignored.
#[tokio::test]
async fn a_transform_rewrites_by_merge_and_carries_no_verdict() {
    let body = r#"case "$(cat)" in
  *'"hook_event_name":"tool_input_transform"'*) echo '{"hook_specific_output":{"permission_decision":"deny","updated_input":{"cmd":"ls -l"}}}';;
esac"#;
    let host = host_with(body, "events = [\"tool_input_transform\"]").await;
    match host.before_tool(shell("original")).await {
        ToolOutcome::Continue { call, .. } => assert_eq!(
            Value::Object(call.arguments),
            json!({"cmd": "ls -l", "cwd": "work"})
        ),
        other => panic!("{other:?}"),
    }
    host.shutdown().await;
}

fn stop() -> LifecycleParams {
    LifecycleParams::new(LifecycleEvent::Stop)
}

/// From docker-agent pkg/hooks/failure_test.go TestUnsupportedBlockOutputsWarn:
/// docker-agent's stop cannot be blocked, so exit 2, `decision: "block"`,
/// `continue: false` and a deny are ignored (with a warning), never obeyed.
#[tokio::test]
async fn a_stop_hook_cannot_block() {
    for answer in [
        "echo no >&2; exit 2",
        r#"echo '{"decision":"block","reason":"keep going"}'"#,
        r#"echo '{"continue":false}'"#,
        r#"echo '{"hook_specific_output":{"permission_decision":"deny"}}'"#,
    ] {
        let host = host_with(&format!("cat >/dev/null\n{answer}"), "events = [\"stop\"]").await;
        assert_eq!(host.lifecycle_with(stop()).await.blocked, None, "{answer}");
        host.shutdown().await;
    }
}

/// From docker-agent pkg/hooks/contracts_test.go
/// TestEventContractsDoNotSurfaceUnusedContext: context at post_tool_use
/// (JSON or plain text) is not surfaced, since docker-agent drops it there.
#[tokio::test]
async fn post_tool_use_context_is_not_surfaced() {
    let result: AfterToolParams = serde_json::from_value(
        json!({"tool": "shell", "arguments": {"cmd": "npm test"}, "result": {"for_llm": "3 failing"}}),
    )
    .unwrap();
    for answer in [
        r#"echo '{"hook_specific_output":{"additional_context":"fix them"}}'"#,
        "echo fix them",
    ] {
        let host = host_with(
            &format!("cat >/dev/null\n{answer}"),
            "events = [\"post_tool_use\"]",
        )
        .await;
        match host.after_tool(result.clone()).await {
            StageOutcome::Continue { contexts, .. } => assert!(contexts.is_empty(), "{contexts:?}"),
            other => panic!("{other:?}"),
        }
        host.shutdown().await;
    }
}

/// From docker-agent pkg/hooks/failure_test.go
/// TestStrictHookRejectsWrongEventAndUnsupportedOutput: under
/// `strict_output`, a guard answering for another event or asking for a
/// rewrite it cannot make has failed, and a guard's failure refuses.
#[tokio::test]
async fn a_strict_guard_with_an_unusable_answer_refuses() {
    for answer in [
        r#"{"hook_specific_output":{"hook_event_name":"stop"}}"#,
        r#"{"hook_specific_output":{"updated_input":{"cmd":"rewrite"}}}"#,
        r#"{"unknown_field":false}"#,
        "plain text",
    ] {
        let keys = "events = [\"tool_guard\"]\nstrict_output = true";
        let host = host_with(&format!("cat >/dev/null\necho '{answer}'"), keys).await;
        assert!(!allowed(&host.before_tool(shell("ls")).await), "{answer}");
        host.shutdown().await;
    }
}

/// From docker-agent pkg/hooks/pipeline_test.go TestPipelineMessagesCompose:
/// a before_llm_call hook reads the messages (docker-agent's shape) on
/// stdin and its `updated_messages` is the request sent to the model.
#[tokio::test]
async fn before_llm_call_reads_and_rewrites_the_messages() {
    let body =
        r#"jq -c '{hook_specific_output: {updated_messages: [.messages[] | .content += "-a"]}}'"#;
    let host = host_with(body, "events = [\"before_llm_call\"]").await;
    let request: BeforeLlmParams = serde_json::from_value(json!({"model": "m",
        "messages": [{"role": "system", "content": "be terse"}, {"role": "user", "content": "original"}]}))
    .unwrap();
    match host.before_llm(request).await {
        StageOutcome::Continue { params, .. } => {
            let got = serde_json::to_value(&params.messages).unwrap();
            assert_eq!(got[1]["content"], "original-a", "{got}");
            assert_eq!(got[0]["role"], "system", "{got}");
        }
        other => panic!("{other:?}"),
    }
    host.shutdown().await;
}

/// From docker-agent pkg/hooks/pipeline_test.go (commit
/// 7c1086deac12941d6a372d814d4d8a7f8ff039f9)
/// TestPipelineToolResponseComposesAndPreservesEmptyRewrite: a
/// tool_response_transform hook reads the tool's output as text in
/// `tool_response` (`assert.Equal(t, "first", in.ToolResponse)`), its
/// `updated_tool_response` replaces the result the model reads, and an
/// empty one clears it.
#[tokio::test]
async fn tool_response_transform_rewrites_the_result() {
    let body = r#"case "$(jq -r .tool_response)" in
  secret*) echo '{"hook_specific_output":{"updated_tool_response":"[redacted]"}}';;
  *) echo '{"hook_specific_output":{"updated_tool_response":""}}';;
esac"#;
    let host = host_with(body, "events = [\"tool_response_transform\"]").await;
    for (output, want) in [("secret sk-123", "[redacted]"), ("noise", "")] {
        let result: AfterToolParams = serde_json::from_value(
            json!({"tool": "shell", "arguments": {"cmd": "env"}, "result": {"for_llm": output}}),
        )
        .unwrap();
        match host.after_tool(result).await {
            StageOutcome::Continue { params, .. } => assert_eq!(params.result.for_llm, want),
            other => panic!("{other:?}"),
        }
    }
    host.shutdown().await;
}

/// From docker-agent pkg/runtime/toolexec/hooks_input.go (commit
/// dbda8ff894eda4878fcb95b017e3498e6e6494c1) NewPostToolHooksInput and
/// pkg/hooks/types.go (ac8cf1908ff915e45352f65f38eb292f73f08c8c)
/// `Input.ToolResponse` ("the tool's textual output", `res.Output`) and
/// `ToolError bool json:"tool_error,omitempty"`: post_tool_use reads the
/// output as text, and `tool_error` only when the call failed.
#[tokio::test]
async fn post_tool_use_reads_the_output_as_text_and_tool_error_only_on_failure() {
    let dir = scratch();
    let seen = dir.join("seen.jsonl");
    let body = format!("cat >> '{}'; echo >> '{}'", seen.display(), seen.display());
    let host = host_with(&body, "events = [\"post_tool_use\"]").await;
    for (text, failed) in [("  3 failing\n", false), ("boom", true)] {
        let result: AfterToolParams = serde_json::from_value(json!({"tool": "shell",
            "arguments": {"cmd": "npm test"}, "result": {"for_llm": text, "is_error": failed}}))
        .unwrap();
        host.after_tool(result).await;
    }
    host.shutdown().await;
    let lines: Vec<Value> = std::fs::read_to_string(&seen)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["tool_response"], "  3 failing\n", "{}", lines[0]);
    assert!(lines[0].get("tool_error").is_none(), "{}", lines[0]);
    assert_eq!(lines[1]["tool_response"], "boom");
    assert_eq!(lines[1]["tool_error"], true);
}

/// From docker-agent pkg/hooks/pipeline_test.go (commit
/// 7c1086deac12941d6a372d814d4d8a7f8ff039f9) TestPipelineMessagesCompose
/// (its `empty` hook) and pipeline.go rewrittenInput (`if
/// len(out.UpdatedMessages) == 0 { return input, false }`): an empty
/// `updated_messages` is no rewrite, never a request with no messages.
#[tokio::test]
async fn an_empty_updated_messages_is_no_rewrite() {
    let body = r#"cat >/dev/null; echo '{"hook_specific_output":{"updated_messages":[]}}'"#;
    let host = host_with(body, "events = [\"before_llm_call\"]").await;
    let request: BeforeLlmParams = serde_json::from_value(json!({"model": "m",
        "messages": [{"role": "user", "content": "original-a-b"}]}))
    .unwrap();
    match host.before_llm(request).await {
        StageOutcome::Continue { params, .. } => {
            let got = serde_json::to_value(&params.messages).unwrap();
            assert_eq!(got, json!([{"role": "user", "content": "original-a-b"}]));
        }
        other => panic!("{other:?}"),
    }
    host.shutdown().await;
}

/// A host whose hook `guard` runs `./gone.sh` for `event`, a program
/// removed once the config is loaded: it cannot start.
async fn host_that_cannot_start(event: &str, on_error: &str) -> Host {
    let dir = scratch();
    let script = dir.join("gone.sh");
    std::fs::write(&script, "#!/bin/sh\nexit 0\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let toml = format!(
        "[hooks.commands.guard]\nargs = [\"./gone.sh\"]\nevents = [\"{event}\"]\n{on_error}\n"
    );
    std::fs::write(dir.join("hooks.toml"), toml).unwrap();
    let host = Host::start(Config::load(&dir.join("hooks.toml")).unwrap()).await;
    std::fs::remove_file(&script).unwrap();
    host
}

/// From docker-agent pkg/hooks/tool_phases_test.go (commit
/// 7717bee63d8874e50c6d588197f6847e51610e12)
/// TestToolInputTransformFailurePolicy ("error default warn", "error
/// ignore", "error block") and failure_test.go (7c1086de)
/// TestHookFailurePolicyMatrix (its "execution" rows): a
/// tool_input_transform hook that cannot start follows `on_error`, warn
/// by default, so the call goes on; `block` refuses; the gates refuse
/// whatever it says.
#[tokio::test]
async fn a_hook_that_cannot_start_follows_on_error_except_at_the_gates() {
    for (event, on_error, runs) in [
        ("tool_input_transform", "", true),
        ("tool_input_transform", "on_error = \"warn\"", true),
        ("tool_input_transform", "on_error = \"ignore\"", true),
        ("tool_input_transform", "on_error = \"block\"", false),
        ("pre_tool_use", "", false),
        ("tool_guard", "on_error = \"ignore\"", false),
    ] {
        let host = host_that_cannot_start(event, on_error).await;
        let out = host.before_tool(shell("ls")).await;
        assert_eq!(allowed(&out), runs, "{event} {on_error:?}: {out:?}");
        host.shutdown().await;
    }
}

/// From docker-agent pkg/hooks/failure_test.go (commit
/// 7c1086deac12941d6a372d814d4d8a7f8ff039f9) TestHookFailurePolicyMatrix
/// (`case policy == "ignore": assert.Empty(t, result.SystemMessage)`)
/// and executor.go aggregate, which logs nothing for a failure under
/// `ignore`: such a failure, however the hook broke (it cannot start,
/// exits 1, answers what cannot be read), logs no warning; under `warn`
/// it does.
#[tokio::test]
async fn on_error_ignore_fails_quietly() {
    for (on_error, quiet) in [("on_error = \"ignore\"", true), ("", false)] {
        let log = LogSink::start();
        let host = host_that_cannot_start("tool_input_transform", on_error).await;
        host.before_tool(shell("ls")).await;
        host.shutdown().await;
        let keys = format!("events = [\"tool_input_transform\"]\n{on_error}");
        let host = host_with(BREAKS, &keys).await;
        for failure in ["exit1", "malformed"] {
            host.before_tool(shell(failure)).await;
        }
        host.shutdown().await;
        let warnings = log.warnings();
        assert_eq!(warnings.is_empty(), quiet, "{on_error:?}: {warnings:#?}");
    }
}

/// From docker-agent pkg/hooks/failure_test.go (commit
/// 7c1086deac12941d6a372d814d4d8a7f8ff039f9) TestStrictHookOutputProtocol
/// and protocol.go validateOutput (`strict && !c.CanBlock && ...`,
/// `... does not support additional_context`): under `strict_output` an
/// answer an observe-only event cannot use is a failure of the hook
/// (docker-agent's runHook marks it failed), not an answer ignored.
#[tokio::test]
async fn a_strict_hook_at_an_observing_event_fails_on_output_it_cannot_use() {
    let answers = [
        r#"{"decision":"block","reason":"no"}"#,
        r#"{"hook_specific_output":{"additional_context":"x"}}"#,
        r#"{"unknown_field":false}"#,
        "plain text",
    ];
    for event in [
        "stop",
        "session_end",
        "turn_end",
        "notification",
        "after_compaction",
    ] {
        for answer in answers {
            let log = LogSink::start();
            let keys = format!("events = [\"{event}\"]\nstrict_output = true");
            let host = host_with(&format!("cat >/dev/null\necho '{answer}'"), &keys).await;
            let params: LifecycleParams =
                serde_json::from_value(json!({"event": event, "payload": {}})).unwrap();
            let outcome = host.lifecycle_with(params).await;
            host.shutdown().await;
            assert_eq!(outcome.blocked, None, "{event} {answer}");
            let warnings = log.warnings().join("\n");
            assert!(
                warnings.contains("command hook failed") && warnings.contains("strict_output"),
                "{event} {answer}: {warnings}"
            );
            assert!(
                !warnings.contains("ignored"),
                "{event} {answer}: {warnings}"
            );
        }
    }
}

/// docker-agent's event contracts (pkg/hooks/events/contracts.go at
/// 7c1086deac12941d6a372d814d4d8a7f8ff039f9), as the capabilities its
/// strict_output check reads: `(name, can_block, permission, rewrite,
/// context, metadata, summary)`, `rewrite` being `i` (tool input), `r`
/// (tool response), `m` (messages) or `-`.
const CONTRACTS: [(&str, bool, bool, char, bool, bool, bool); 28] = [
    ("pre_tool_use", true, true, 'i', false, false, false),
    ("post_tool_use", true, false, '-', false, false, false),
    ("permission_request", true, true, '-', false, true, false),
    ("session_start", false, false, '-', true, false, false),
    ("user_prompt_submit", true, false, '-', true, false, false),
    (
        "user_steering_messages_submit",
        true,
        false,
        '-',
        true,
        false,
        false,
    ),
    ("user_followup_submit", true, false, '-', true, false, false),
    ("turn_start", false, false, '-', true, false, false),
    ("turn_end", false, false, '-', false, false, false),
    ("before_llm_call", true, false, 'm', false, false, false),
    ("after_llm_call", false, false, '-', false, false, false),
    ("session_end", false, false, '-', false, false, false),
    ("pre_compact", true, false, '-', true, false, false),
    ("subagent_stop", false, false, '-', false, false, false),
    ("on_user_input", false, false, '-', false, false, false),
    ("stop", false, false, '-', false, false, false),
    ("notification", false, false, '-', false, false, false),
    ("on_error", false, false, '-', false, false, false),
    ("on_max_iterations", false, false, '-', false, false, false),
    ("on_agent_switch", false, false, '-', false, false, false),
    ("on_session_resume", false, false, '-', false, false, false),
    (
        "on_tool_approval_decision",
        false,
        false,
        '-',
        false,
        false,
        false,
    ),
    ("before_compaction", true, false, '-', false, false, true),
    ("after_compaction", false, false, '-', false, false, false),
    (
        "tool_response_transform",
        false,
        false,
        'r',
        false,
        false,
        false,
    ),
    (
        "tool_input_transform",
        true,
        false,
        'i',
        false,
        false,
        false,
    ),
    ("tool_guard", true, true, '-', false, true, false),
    ("worktree_create", true, false, '-', true, false, false),
];

/// Sends `event` (docker-agent's name) to `host` the way an agent
/// embedding hookhost announces it.
async fn dispatch(host: &Host, event: &str) {
    let call = shell("ls");
    let after: AfterToolParams = serde_json::from_value(
        json!({"tool": "shell", "arguments": {"cmd": "ls"}, "result": {"for_llm": "out"}}),
    )
    .unwrap();
    match event {
        "pre_tool_use" | "tool_guard" | "tool_input_transform" => {
            host.before_tool(call).await;
        }
        "post_tool_use" | "tool_response_transform" => {
            host.after_tool(after).await;
        }
        "permission_request" => {
            host.approve_tool(call).await;
        }
        "before_llm_call" => {
            let request = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});
            host.before_llm(serde_json::from_value(request).unwrap())
                .await;
        }
        "after_llm_call" => {
            let response = json!({"model": "m", "response": {"content": "hi"}});
            host.after_llm(serde_json::from_value(response).unwrap())
                .await;
        }
        other => {
            // A follow-up reaches hookhost as the turn's user_prompt_submit.
            let name = if other == "user_followup_submit" {
                "user_prompt_submit"
            } else {
                other
            };
            let payload = json!({"prompt": "hi", "trigger": "manual"});
            let payload = payload.as_object().cloned().unwrap();
            host.lifecycle_named(name, Default::default(), payload)
                .await
                .unwrap();
        }
    }
}

/// From docker-agent pkg/hooks/contracts_test.go (commit
/// 7c1086deac12941d6a372d814d4d8a7f8ff039f9)
/// TestStrictOutputContractCapabilities: for each of its 28 events and 7
/// outputs (a block, a permission decision, an input rewrite, a response
/// rewrite, context, metadata, a summary), a `strict_output` hook fails
/// exactly when the event's contract does not take that output: 196
/// pairs, run as command hooks through the embedding API.
#[tokio::test]
async fn strict_output_contract_capabilities() {
    let outputs: [(&str, &str); 7] = [
        ("block", r#"{"decision":"block"}"#),
        (
            "permission",
            r#"{"hook_specific_output":{"permission_decision":"deny"}}"#,
        ),
        ("input", r#"{"hook_specific_output":{"updated_input":{}}}"#),
        (
            "response",
            r#"{"hook_specific_output":{"updated_tool_response":""}}"#,
        ),
        (
            "context",
            r#"{"hook_specific_output":{"hook_event_name":"EVENT","additional_context":"context"}}"#,
        ),
        ("metadata", r#"{"hook_specific_output":{"metadata":{}}}"#),
        (
            "summary",
            r#"{"hook_specific_output":{"summary":"summary"}}"#,
        ),
    ];
    let mut wrong = Vec::new();
    for (event, block, permission, rewrite, context, metadata, summary) in CONTRACTS {
        for (name, output) in outputs {
            let allowed = match name {
                "block" => block,
                "permission" => permission,
                "input" => rewrite == 'i',
                "response" => rewrite == 'r',
                "context" => context,
                "metadata" => metadata,
                _ => summary,
            };
            let log = LogSink::start();
            let answer = output.replace("EVENT", event);
            let keys = format!("events = [\"{event}\"]\nstrict_output = true");
            let host = host_with(&format!("cat >/dev/null\necho '{answer}'"), &keys).await;
            dispatch(&host, event).await;
            host.shutdown().await;
            let failed = log
                .warnings()
                .iter()
                .any(|l| l.contains("command hook failed") && l.contains("strict_output"));
            if failed == allowed {
                wrong.push(format!(
                    "{event} × {name}: allowed {allowed}, failed {failed}"
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of 196 pairs wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
