//! A hook written for an agent, run by hookhost for that agent's own event
//! (`hookhost relay`), reads what the agent would have sent it and has its
//! whole answer reach the agent: nothing invented, dropped or inverted
//! (spec/dialects.md §2, §7). Each test failed at 6c5714b: the reason of a
//! PostToolUse block arrived empty, a Stop hook's `continue: false` became
//! a block (keep going), `systemMessage`, `suppressOutput` and Gemini's
//! own keys were dropped, the hook read hookhost's translation of the
//! event (`tool_response` rebuilt, keys added and lost), and VS Code's
//! Stop block was refused as unreadable.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use hookhost::{Config, Dialect, ForeignEvent, Host};
use hookhost_testkit::scratch;
use serde_json::{Value, json};

/// A hook that keeps what it read in `seen.json` and answers `answer`.
fn hook(dir: &Path, name: &str, dialect: &str, event: &str, answer: &str) -> String {
    let answer_file = dir.join(format!("{name}.answer"));
    std::fs::write(&answer_file, answer).unwrap();
    let seen = dir.join(format!("{name}.seen.json"));
    let script = format!("cat > {}; cat {}", seen.display(), answer_file.display());
    format!(
        "[hooks.commands.{name}]\ndialect = {dialect:?}\nevents = [{event:?}]\ncommand = {script:?}\n"
    )
}

async fn host(dir: &Path, config: &str) -> Host {
    let path = dir.join("hooks.toml");
    std::fs::write(&path, config).unwrap();
    Host::start(Config::load(&path).unwrap()).await
}

/// The relay's answer to `input` from agent `d`: exit code, stdout as
/// JSON (`{}` when empty), stderr.
async fn answer(h: &Host, d: Dialect, input: &Value) -> (i32, Value, String) {
    let event = ForeignEvent::read(d, input, None).unwrap();
    let a = h.answer_foreign(&event).await;
    let out = match a.stdout.as_str() {
        "" => json!({}),
        s => serde_json::from_str(s).unwrap(),
    };
    (a.code, out, a.stderr)
}

fn seen(dir: &Path, name: &str) -> Value {
    let path: PathBuf = dir.join(format!("{name}.seen.json"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn claude_bash(event: &str) -> Value {
    json!({
        "session_id": "s1", "transcript_path": "/t.jsonl", "cwd": "/p",
        "permission_mode": "acceptEdits", "hook_event_name": event,
        "tool_name": "Bash", "tool_input": {"command": "ls", "description": "list"},
        "tool_use_id": "toolu_1",
    })
}

#[tokio::test]
async fn a_post_tool_use_block_reaches_claude_with_its_reason_and_its_message() {
    let dir = scratch();
    let answer_text = r#"{"decision":"block","reason":"lint failed","systemMessage":"ran eslint","suppressOutput":true}"#;
    let h = host(
        &dir,
        &hook(&dir, "lint", "claude-code", "PostToolUse", answer_text),
    )
    .await;
    let mut input = claude_bash("PostToolUse");
    input["tool_response"] = json!({"stdout": "a", "stderr": "", "interrupted": false});
    let (code, out, _) = answer(&h, Dialect::ClaudeCode, &input).await;
    assert_eq!(code, 0);
    assert_eq!(
        out,
        json!({"decision": "block", "reason": "lint failed", "systemMessage": "ran eslint", "suppressOutput": true})
    );
    // It read the event exactly as Claude Code sent it.
    assert_eq!(seen(&dir, "lint"), input);
    h.shutdown().await;
}

#[tokio::test]
async fn a_stop_hooks_continue_false_stops_the_agent_and_a_block_keeps_it_going() {
    let dir = scratch();
    let stop = r#"{"continue":false,"stopReason":"budget spent"}"#;
    let h = host(&dir, &hook(&dir, "halt", "claude-code", "Stop", stop)).await;
    let input = json!({"session_id": "s1", "cwd": "/p", "hook_event_name": "Stop", "stop_hook_active": false});
    let (code, out, _) = answer(&h, Dialect::ClaudeCode, &input).await;
    assert_eq!(code, 0);
    assert_eq!(
        out,
        json!({"continue": false, "stopReason": "budget spent"})
    );
    // hookhost's own stop count is not in what the hook read.
    assert_eq!(seen(&dir, "halt"), input);
    h.shutdown().await;

    let block = r#"{"decision":"block","reason":"tests still fail"}"#;
    let h = host(&dir, &hook(&dir, "more", "claude-code", "Stop", block)).await;
    let (_, out, _) = answer(&h, Dialect::ClaudeCode, &input).await;
    assert_eq!(
        out,
        json!({"decision": "block", "reason": "tests still fail"})
    );
    h.shutdown().await;
}

#[tokio::test]
async fn gemini_after_agent_stop_is_not_a_retry_and_its_own_keys_reach_it() {
    let dir = scratch();
    let stop =
        r#"{"continue":false,"stopReason":"enough","hookSpecificOutput":{"clearContext":true}}"#;
    let h = host(&dir, &hook(&dir, "halt", "gemini-cli", "AfterAgent", stop)).await;
    let input = json!({"session_id": "s1", "cwd": "/p", "hook_event_name": "AfterAgent",
        "timestamp": "2026-11-27T00:00:00Z", "prompt": "hi", "prompt_response": "done",
        "stop_hook_active": false});
    let (code, out, _) = answer(&h, Dialect::GeminiCli, &input).await;
    assert_eq!(code, 0);
    assert_eq!(
        out,
        json!({"continue": false, "stopReason": "enough",
            "hookSpecificOutput": {"hookEventName": "AfterAgent", "clearContext": true}})
    );
    h.shutdown().await;
}

#[tokio::test]
async fn gemini_model_hooks_block_the_call_rewrite_it_and_speak_in_plain_text() {
    let dir = scratch();
    let request =
        json!({"model": "gemini-2.5-pro", "messages": [{"role": "user", "content": "hi"}]});
    let input = json!({"session_id": "s1", "cwd": "/p", "hook_event_name": "BeforeModel",
        "timestamp": "2026-11-27T00:00:00Z", "llm_request": request});

    let block = r#"{"decision":"block","reason":"over budget"}"#;
    let h = host(&dir, &hook(&dir, "b", "gemini-cli", "BeforeModel", block)).await;
    let (_, out, _) = answer(&h, Dialect::GeminiCli, &input).await;
    // A block of the model call, not a stop of the agent.
    assert_eq!(out, json!({"decision": "block", "reason": "over budget"}));
    assert_eq!(seen(&dir, "b"), input);
    h.shutdown().await;

    let rewrite = json!({"hookSpecificOutput": {"hookEventName": "BeforeModel",
        "llm_request": {"messages": [{"role": "user", "content": "hello"}]}}});
    let h = host(
        &dir,
        &hook(&dir, "r", "gemini-cli", "BeforeModel", &rewrite.to_string()),
    )
    .await;
    let (_, out, _) = answer(&h, Dialect::GeminiCli, &input).await;
    assert_eq!(out, rewrite);
    h.shutdown().await;

    let h = host(
        &dir,
        &hook(
            &dir,
            "p",
            "gemini-cli",
            "BeforeModel",
            "remember the budget",
        ),
    )
    .await;
    let (_, out, _) = answer(&h, Dialect::GeminiCli, &input).await;
    assert_eq!(out, json!({"systemMessage": "remember the budget"}));
    h.shutdown().await;
}

#[tokio::test]
async fn a_rewrite_by_an_earlier_hook_is_all_a_later_hook_reads_differently() {
    let dir = scratch();
    let first = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":"ls -la","description":"list"}}}"#;
    let config = format!(
        "{}priority = 1\n{}priority = 2\n",
        hook(&dir, "a_rewrite", "claude-code", "PreToolUse", first),
        hook(
            &dir,
            "b_reader",
            "claude-code",
            "PreToolUse",
            r#"{"systemMessage":"checked"}"#
        ),
    );
    let h = host(&dir, &config).await;
    let input = claude_bash("PreToolUse");
    let (_, out, _) = answer(&h, Dialect::ClaudeCode, &input).await;
    let mut expected = input.clone();
    expected["tool_input"]["command"] = json!("ls -la");
    assert_eq!(seen(&dir, "b_reader"), expected);
    assert_eq!(out["systemMessage"], "checked");
    assert_eq!(
        out["hookSpecificOutput"]["updatedInput"],
        expected["tool_input"]
    );
    h.shutdown().await;
}

#[tokio::test]
async fn a_hook_of_another_dialect_reads_the_translation_and_is_still_heard() {
    let dir = scratch();
    let h = host(
        &dir,
        &hook(
            &dir,
            "g",
            "gemini-cli",
            "BeforeTool",
            r#"{"systemMessage":"seen by a Gemini hook","hookSpecificOutput":{"clearContext":true}}"#,
        ),
    )
    .await;
    let (_, out, _) = answer(&h, Dialect::ClaudeCode, &claude_bash("PreToolUse")).await;
    // Its message reaches the user; its Gemini-only key means nothing to
    // Claude Code and is not passed on.
    assert_eq!(out, json!({"systemMessage": "seen by a Gemini hook"}));
    let read = seen(&dir, "g");
    assert_eq!(read["hook_event_name"], "BeforeTool");
    assert_eq!(read["tool_name"], "run_shell_command");
    h.shutdown().await;
}

#[tokio::test]
async fn vs_codes_stop_block_in_hook_specific_output_keeps_the_agent_going() {
    let dir = scratch();
    let block = r#"{"hookSpecificOutput":{"hookEventName":"Stop","decision":"block","reason":"run the tests"}}"#;
    let h = host(&dir, &hook(&dir, "v", "copilot", "Stop", block)).await;
    let input = json!({"session_id": "s1", "cwd": "/p", "hook_event_name": "Stop",
        "timestamp": 1_764_201_600_000_u64, "stop_hook_active": false});
    let (code, out, _) = answer(&h, Dialect::Copilot, &input).await;
    assert_eq!(code, 0);
    assert_eq!(out["decision"], "block");
    assert_eq!(out["reason"], "run the tests");
    h.shutdown().await;
}

#[tokio::test]
async fn an_event_nobody_waits_on_is_read_as_sent_and_its_message_reaches_the_user() {
    let dir = scratch();
    let h = host(
        &dir,
        &hook(
            &dir,
            "i",
            "codex",
            "Interrupt",
            r#"{"systemMessage":"watch the tide"}"#,
        ),
    )
    .await;
    let input = json!({"session_id": "s1", "turn_id": "t9", "model": "gpt-5", "cwd": "/p",
        "transcript_path": null, "hook_event_name": "Interrupt", "reason": "user"});
    let (code, out, _) = answer(&h, Dialect::Codex, &input).await;
    assert_eq!((code, out), (0, json!({"systemMessage": "watch the tide"})));
    assert_eq!(seen(&dir, "i"), input);
    h.shutdown().await;
}

#[tokio::test]
async fn codex_answers_its_schemas_refuse_are_set_aside_as_codex_sets_them_aside() {
    let dir = scratch();
    let reserved = r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedPermissions":[]}}}"#;
    let h = host(
        &dir,
        &hook(&dir, "p", "codex", "PermissionRequest", reserved),
    )
    .await;
    let mut input = claude_bash("PermissionRequest");
    input["turn_id"] = json!("t1");
    let (code, out, _) = answer(&h, Dialect::Codex, &input).await;
    // No decision: Codex asks its user, as it does for that answer.
    assert_eq!((code, out), (0, json!({})));
    h.shutdown().await;

    let block = r#"{"decision":"block","reason":"no compaction"}"#;
    let h = host(&dir, &hook(&dir, "c", "codex", "PreCompact", block)).await;
    let input = json!({"session_id": "s1", "cwd": "/p", "hook_event_name": "PreCompact", "trigger": "auto"});
    let (_, out, _) = answer(&h, Dialect::Codex, &input).await;
    assert_eq!(out, json!({}));
    h.shutdown().await;

    let stop = r#"{"continue":false,"stopReason":"not now"}"#;
    let h = host(&dir, &hook(&dir, "c2", "codex", "PreCompact", stop)).await;
    let (_, out, _) = answer(&h, Dialect::Codex, &input).await;
    assert_eq!(out, json!({"continue": false, "stopReason": "not now"}));
    h.shutdown().await;
}

#[tokio::test]
async fn codex_subagent_start_takes_context_and_no_block() {
    let dir = scratch();
    let answer_text = r#"{"continue":false,"stopReason":"skip","hookSpecificOutput":{"hookEventName":"SubagentStart","additionalContext":"child context"}}"#;
    let h = host(
        &dir,
        &hook(&dir, "s", "codex", "SubagentStart", answer_text),
    )
    .await;
    let input = json!({"session_id": "s1", "cwd": "/p", "hook_event_name": "SubagentStart",
        "agent_id": "a1", "agent_type": "worker"});
    let (code, out, _) = answer(&h, Dialect::Codex, &input).await;
    assert_eq!(code, 0);
    assert!(out.get("decision").is_none(), "{out}");
    assert_eq!(
        out["hookSpecificOutput"]["additionalContext"],
        "child context"
    );
    h.shutdown().await;
}

#[tokio::test]
async fn claude_hooks_own_stop_approval_input_and_plain_context_reach_claude_as_written() {
    let dir = scratch();
    let input = json!({"session_id": "s1", "cwd": "/p", "hook_event_name": "UserPromptSubmit", "prompt": "hi"});
    let stop = r#"{"continue":false,"stopReason":"not now"}"#;
    let h = host(
        &dir,
        &hook(&dir, "u", "claude-code", "UserPromptSubmit", stop),
    )
    .await;
    let (_, out, _) = answer(&h, Dialect::ClaudeCode, &input).await;
    // A stop, not a block of the prompt.
    assert_eq!(out, json!({"continue": false, "stopReason": "not now"}));
    h.shutdown().await;

    let plain = "remember the style guide";
    let h = host(
        &dir,
        &hook(&dir, "p", "claude-code", "UserPromptSubmit", plain),
    )
    .await;
    let event = ForeignEvent::read(Dialect::ClaudeCode, &input, None).unwrap();
    let a = h.answer_foreign(&event).await;
    assert_eq!((a.code, a.stdout.as_str()), (0, plain));
    h.shutdown().await;

    let allow = r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":{"command":"ls -la"}}}}"#;
    let h = host(
        &dir,
        &hook(&dir, "a", "claude-code", "PermissionRequest", allow),
    )
    .await;
    let (_, out, _) = answer(&h, Dialect::ClaudeCode, &claude_bash("PermissionRequest")).await;
    assert_eq!(
        out["hookSpecificOutput"]["decision"],
        json!({"behavior": "allow", "updatedInput": {"command": "ls -la"}})
    );
    h.shutdown().await;
}

#[tokio::test]
async fn gemini_runs_read_as_gemini_reads_them_and_their_answers_merge_as_it_merges_them() {
    let dir = scratch();
    let bt = json!({"session_id": "s1", "cwd": "/p", "hook_event_name": "BeforeTool",
        "timestamp": "2026-11-27T00:00:00Z", "tool_name": "run_shell_command",
        "tool_input": {"command": "ls"}});
    let script = |code: i32, text: &str| {
        format!(
            "[hooks.commands.g{code}]\ndialect = \"gemini-cli\"\nevents = [\"BeforeTool\"]\ncommand = \"cat >/dev/null; echo '{text}' >&2; exit {code}\"\n"
        )
    };
    // Exit 1 with text: a warning for the user, the call goes on; passed
    // on as the failure it is (Gemini shows it and counts the hook failed).
    let h = host(&dir, &script(1, "lint is slow")).await;
    let (code, _, stderr) = answer(&h, Dialect::GeminiCli, &bt).await;
    assert_eq!((code, stderr.as_str()), (1, "lint is slow\n"));
    h.shutdown().await;
    // Exit 3 with text: a refusal (hookhost made it a failure, let through),
    // passed on as the exit-code refusal it is.
    let h = host(&dir, &script(3, "not here")).await;
    let (code, _, stderr) = answer(&h, Dialect::GeminiCli, &bt).await;
    assert_eq!((code, stderr.as_str()), (2, "not here\n"));
    h.shutdown().await;
    // Exit 2 with JSON: Gemini uses the JSON (here an allow) and counts
    // the hook failed; the relay answers the same JSON with a failing
    // exit, which Gemini reads the same way.
    let h = host(&dir, &script(2, "{\\\"decision\\\":\\\"allow\\\"}")).await;
    let (code, out, stderr) = answer(&h, Dialect::GeminiCli, &bt).await;
    assert_eq!((code, stderr.as_str()), (1, ""));
    assert_eq!(out, json!({"decision": "allow"}));
    h.shutdown().await;

    let sel = json!({"session_id": "s1", "cwd": "/p", "hook_event_name": "BeforeToolSelection",
        "timestamp": "2026-11-27T00:00:00Z", "llm_request": {"model": "m", "messages": []}});
    let tc = |mode: &str, names: &str| {
        format!(
            r#"{{"hookSpecificOutput":{{"hookEventName":"BeforeToolSelection","toolConfig":{{"mode":"{mode}","allowedFunctionNames":[{names}]}}}}}}"#
        )
    };
    let config = format!(
        "{}priority = 1\n{}priority = 2\n",
        hook(
            &dir,
            "a",
            "gemini-cli",
            "BeforeToolSelection",
            &tc("AUTO", "\"tool2\"")
        ),
        hook(
            &dir,
            "b",
            "gemini-cli",
            "BeforeToolSelection",
            &tc("ANY", "\"tool1\"")
        ),
    );
    let h = host(&dir, &config).await;
    let (_, out, _) = answer(&h, Dialect::GeminiCli, &sel).await;
    assert_eq!(
        out["hookSpecificOutput"]["toolConfig"],
        json!({"mode": "ANY", "allowedFunctionNames": ["tool1", "tool2"]})
    );
    h.shutdown().await;
}

#[tokio::test]
async fn copilot_and_cursor_answers_mean_what_their_agents_read() {
    let dir = scratch();
    let allow = r#"{"behavior":"allow","message":"fine"}"#;
    let h = host(
        &dir,
        &hook(&dir, "c", "copilot", "permissionRequest", allow),
    )
    .await;
    let input = json!({"sessionId": "s1", "timestamp": 1_764_201_600_000_u64, "cwd": "/p",
        "toolName": "bash", "toolArgs": "{\"command\":\"ls\"}"});
    let event = ForeignEvent::read(Dialect::Copilot, &input, Some("permissionRequest")).unwrap();
    let a = h.answer_foreign(&event).await;
    let out: Value = serde_json::from_str(&a.stdout).unwrap();
    assert_eq!(out["behavior"], "allow");
    h.shutdown().await;

    let deny = r#"{"permission":"deny","user_message":"nope"}"#;
    let h = host(&dir, &hook(&dir, "s", "cursor", "stop", deny)).await;
    let input = json!({"conversation_id": "c1", "generation_id": "g1", "hook_event_name": "stop",
        "status": "completed", "loop_count": 0, "workspace_roots": ["/p"]});
    let (_, out, _) = answer(&h, Dialect::Cursor, &input).await;
    // Cursor reads only followup_message at stop: no continuation invented.
    assert!(out.get("followup_message").is_none(), "{out}");
    h.shutdown().await;
}

#[tokio::test]
async fn every_own_hook_runs_as_the_agent_runs_them_and_their_reasons_are_joined() {
    let dir = scratch();
    let config = format!(
        "{}priority = 1\n{}priority = 2\n",
        hook(
            &dir,
            "a",
            "codex",
            "Stop",
            r#"{"decision":"block","reason":"first"}"#
        ),
        hook(
            &dir,
            "b",
            "codex",
            "Stop",
            r#"{"decision":"block","reason":"second"}"#
        ),
    );
    let h = host(&dir, &config).await;
    let input = json!({"session_id": "s1", "turn_id": "t1", "cwd": "/p",
        "hook_event_name": "Stop", "stop_hook_active": false});
    let (_, out, _) = answer(&h, Dialect::Codex, &input).await;
    assert_eq!(out, json!({"decision": "block", "reason": "first\nsecond"}));
    // The second ran though the first had decided.
    assert_eq!(seen(&dir, "b"), input);
    h.shutdown().await;
}

#[tokio::test]
async fn an_own_hooks_exit_2_and_its_stop_reach_claude_as_the_hook_gave_them() {
    let dir = scratch();
    let script = "[hooks.commands.e]\ndialect = \"claude-code\"\nevents = [\"PreToolUse\"]\ncommand = \"cat >/dev/null; echo 'not that' >&2; exit 2\"\n";
    let h = host(&dir, script).await;
    let event = ForeignEvent::read(Dialect::ClaudeCode, &claude_bash("PreToolUse"), None).unwrap();
    let a = h.answer_foreign(&event).await;
    assert_eq!(
        (a.code, a.stdout.as_str(), a.stderr.as_str()),
        (2, "", "not that\n")
    );
    h.shutdown().await;

    let stop = r#"{"continue":false,"stopReason":"enough"}"#;
    let h = host(&dir, &hook(&dir, "s", "claude-code", "PreToolUse", stop)).await;
    let (_, out, _) = answer(&h, Dialect::ClaudeCode, &claude_bash("PreToolUse")).await;
    assert_eq!(out, json!({"continue": false, "stopReason": "enough"}));
    h.shutdown().await;
}

#[tokio::test]
async fn a_folder_name_never_runs_as_a_command_in_a_shell_hook() {
    let dir = scratch();
    let evil = dir.join("proj; touch pwned");
    std::fs::create_dir_all(&evil).unwrap();
    std::fs::create_dir_all(dir.join(".gemini")).unwrap();
    let settings = json!({"hooks": {"BeforeTool": [{"hooks": [{"type": "command",
        "command": "cat >/dev/null; ls $GEMINI_PROJECT_DIR >/dev/null 2>&1; exit 0"}]}]}});
    let file = dir.join(".gemini/settings.json");
    std::fs::write(&file, settings.to_string()).unwrap();
    let config = format!(
        "[hooks.import]\ngemini-cli = {:?}\n",
        file.display().to_string()
    );
    let path = dir.join("hooks.toml");
    std::fs::write(&path, config).unwrap();
    // The project's hook, approved: it runs.
    let h = Host::start(hookhost_testkit::load_trusted(&path)).await;
    let input = json!({"session_id": "s1", "cwd": evil, "hook_event_name": "BeforeTool",
        "timestamp": "2026-11-27T00:00:00Z", "tool_name": "run_shell_command",
        "tool_input": {"command": "ls"}});
    answer(&h, Dialect::GeminiCli, &input).await;
    assert!(!evil.join("pwned").exists() && !dir.join("pwned").exists());
    h.shutdown().await;
}

/// Copilot CLI's permissionRequest, run through the relay by `config`:
/// the answer's `behavior` and `message`.
async fn copilot_permission(dir: &Path, config: &str) -> (Value, Value) {
    let h = host(dir, config).await;
    let input = json!({"sessionId": "s1", "timestamp": 1_764_201_600_000_u64, "cwd": "/p",
        "toolName": "bash", "toolArgs": "{\"command\":\"ls\"}"});
    let event = ForeignEvent::read(Dialect::Copilot, &input, Some("permissionRequest")).unwrap();
    let a = h.answer_foreign(&event).await;
    h.shutdown().await;
    let out: Value = serde_json::from_str(&a.stdout).unwrap();
    (out["behavior"].clone(), out["message"].clone())
}

#[tokio::test]
async fn a_later_copilot_allow_overturns_its_own_hooks_deny_and_nothing_else() {
    let dir = scratch();
    let copilot = |name: &str, answer: &str, priority: u32| {
        let h = hook(&dir, name, "copilot", "permissionRequest", answer);
        format!("{h}priority = {priority}\n")
    };
    let deny = r#"{"behavior":"deny","message":"first says no"}"#;
    let allow = r#"{"behavior":"allow"}"#;
    // Copilot merges its hooks' answers in order: the later allow wins,
    // the earlier message stays.
    let audit = dir.join("audit.jsonl");
    let own = format!(
        "[hooks.audit]\npath = {:?}\n\n{}{}",
        audit.display().to_string(),
        copilot("a", deny, 1),
        copilot("b", allow, 2)
    );
    let got = copilot_permission(&dir, &own).await;
    assert_eq!(got, (json!("allow"), json!("first says no")));
    // Both calls are in the audit log, the one heard after the verdict
    // with what it answered.
    let records: Vec<Value> = std::fs::read_to_string(&audit)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let heard: Vec<(&str, &str)> = records
        .iter()
        .map(|r| (r["hook"].as_str().unwrap(), r["outcome"].as_str().unwrap()))
        .collect();
    assert_eq!(heard, [("a", "refused"), ("b", "approved")]);

    // A refusal by a hook of another kind is hookhost's, and stands.
    let guard = r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"the team's guard"}}}"#;
    let guard = hook(&dir, "g", "claude-code", "PermissionRequest", guard);
    let config = format!("{guard}priority = 1\n{}", copilot("b", allow, 2));
    let got = copilot_permission(&dir, &config).await;
    assert_eq!(got, (json!("deny"), json!("the team's guard")));

    // So it does when such a hook is still to be asked after the own deny.
    let silent = hook(&dir, "q", "claude-code", "PermissionRequest", "{}");
    let config = format!(
        "{}{silent}priority = 2\n{}",
        copilot("a", deny, 1),
        copilot("b", allow, 3)
    );
    let got = copilot_permission(&dir, &config).await;
    assert_eq!(got.0, json!("deny"));

    // And a refusal for a failure is hookhost's policy, not an answer.
    let failing = "[hooks.commands.f]\ndialect = \"copilot\"\nevents = [\"permissionRequest\"]\ncommand = \"cat >/dev/null; exit 1\"\npriority = 1\n";
    let config = format!("{failing}{}", copilot("b", allow, 2));
    let got = copilot_permission(&dir, &config).await;
    assert_eq!(got.0, json!("deny"));
}
