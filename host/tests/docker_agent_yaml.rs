//! docker-agent's agent YAML under `[hooks.import]`: each agent's `hooks:`
//! read as is, one group member per agent and event, merged by
//! docker-agent's rules (every hook runs, deny > ask > allow, contexts
//! join, rewrites pipe, identical definitions run once).

#![allow(clippy::unwrap_used)]

use hookhost::protocol::lifecycle::LifecycleParams;
use hookhost::protocol::params::ToolCall;
use hookhost::{Config, Host, StageOutcome, ToolOutcome};
use hookhost_testkit::{dialect_example, scratch};
use serde_json::{Value, json};

/// An agent file `yaml` and a hooks.toml importing it, in a scratch folder.
fn agent(yaml: &str) -> Result<Config, hookhost::ConfigError> {
    let dir = scratch();
    std::fs::write(dir.join("agent.yaml"), yaml).unwrap();
    let toml = dir.join("hooks.toml");
    std::fs::write(&toml, "[hooks.import]\ndocker-agent = \"agent.yaml\"\n").unwrap();
    // Its hooks run only once trusted (a scratch folder is a project's).
    Config::load(&toml).map(|_| hookhost_testkit::load_trusted(&toml))
}

/// `hooks:` of one agent `root`, written as YAML under `hooks:`.
fn hooks(body: &str) -> String {
    let indented: String = body.lines().map(|l| format!("      {l}\n")).collect();
    format!(
        "agents:\n  root:\n    model: openai/gpt-4o\n    toolsets: [{{type: shell}}]\n    hooks:\n{indented}"
    )
}

fn shell(cmd: &str) -> ToolCall {
    // docker-agent's shell tool takes `cmd`.
    serde_json::from_value(json!({"tool": "shell", "arguments": {"cmd": cmd}})).unwrap()
}

/// A command answering a docker-agent pre_tool_use verdict.
fn verdict(decision: &str, reason: &str) -> String {
    format!(
        r#"echo '{{"hook_specific_output":{{"permission_decision":"{decision}","permission_decision_reason":"{reason}"}}}}'"#
    )
}

/// From docker-agent pkg/config/latest/hooks_test.go TestHooksValidateContracts:
/// a bad hook entry is refused at load, naming the file, the agent and the
/// event; keys outside `hooks:` are the agent's and are not read.
#[test]
fn bad_hook_entries_name_the_file_agent_and_event() {
    let cases = [
        (
            r#"pre_tool_use: [{matcher: "[", hooks: [{type: command, command: "true"}]}]"#,
            "matcher",
        ),
        (
            "turn_start: [{type: command, command: \"true\", on_error: blok}]",
            "on_error must",
        ),
        (
            "turn_start: [{type: command, command: \"true\", timeout: -1}]",
            "timeout must",
        ),
        (
            "stop: [{type: command, command: \"true\", on_error: block}]",
            "not supported",
        ),
        (
            "post_tool_use: [{preempt_yolo: false, hooks: [{type: command, command: \"true\"}]}]",
            "only valid on pre_tool_use",
        ),
        (
            "no_such_event: [{type: command, command: \"true\"}]",
            "no event",
        ),
        (
            "stop: [{type: command, command: \"true\", tiemout: 3}]",
            "tiemout",
        ),
    ];
    for (body, want) in cases {
        let e = agent(&hooks(body)).unwrap_err().to_string();
        assert!(
            e.contains("agent.yaml") && e.contains("agent `root`"),
            "{e}"
        );
        assert!(e.contains(want), "{body}: {e}");
    }
    let ok = agent(&format!(
        "{}\nmetadata: {{author: me}}\nmodels: {{x: 1}}\n",
        hooks("stop: [{type: command, command: \"true\"}]")
    ));
    assert_eq!(ok.unwrap().hook_sets.len(), 1);
}

/// From docker-agent pkg/hooks/dispatch_test.go TestExecutorHasIsGeneric:
/// each event's hooks form their own group; a model hook is listed as
/// skipped (issue 20) rather than vanishing.
#[test]
fn each_agent_and_event_is_one_group_and_model_hooks_are_listed_as_skipped() {
    let yaml = hooks(
        "stop: [{type: command, command: \"true\"}]\n\
         session_start: [{type: command, command: \"true\"}, {type: model, model: a/b, prompt: p}]\n\
         pre_tool_use: [{matcher: shell, hooks: [{type: command, command: \"true\"}]}]",
    );
    let c = agent(&yaml).unwrap();
    let events: Vec<&str> = c.hook_sets.values().map(|s| s.event.as_str()).collect();
    assert_eq!(events, ["stop", "session_start", "pre_tool_use"]);
    assert_eq!(c.skipped.len(), 1);
    assert!(
        c.skipped[0].why.contains("text/template"),
        "{:?}",
        c.skipped
    );
}

/// From docker-agent pkg/hooks/executor.go strongerDecision, as
/// pkg/hooks/pipeline_test.go TestPipelineInvalidRewritePreservesDenyAndInput
/// relies on it: every hook runs (the one after the deny too), deny beats
/// ask and allow, and the deny's own reason is the answer.
#[tokio::test]
async fn every_hook_runs_and_deny_beats_ask_with_its_own_reason() {
    let dir = scratch();
    let mark = dir.join("last-ran");
    let yaml = hooks(&format!(
        "pre_tool_use:\n  - matcher: shell\n    hooks:\n\
         \x20     - {{type: command, command: {ask:?}}}\n\
         \x20     - {{type: command, command: {deny:?}}}\n\
         \x20     - {{type: command, command: {allow:?}}}\n\
         \x20     - {{type: command, command: \"touch {mark}\"}}",
        ask = verdict("ask", "ask-reason"),
        deny = verdict("deny", "deny-reason"),
        allow = verdict("allow", "allow-reason"),
        mark = mark.display(),
    ));
    let host = Host::start(agent(&yaml).unwrap()).await;
    let out = host.before_tool(shell("ls")).await;
    assert!(
        matches!(&out, ToolOutcome::Deny { reason } if reason == "deny-reason"),
        "{out:?}"
    );
    assert!(mark.exists(), "the hook after the deny ran too");
    host.shutdown().await;
}

/// From docker-agent pkg/hooks/pipeline_test.go TestPipelineToolInputPatchesCompose:
/// pre_tool_use rewrites are a pipeline, each hook seeing the previous
/// one's output, and the call keeps the keys nobody rewrote.
#[tokio::test]
async fn rewrites_pipe_from_hook_to_hook() {
    let append = |s: &str| {
        format!(
            r#"jq -c '{{hook_specific_output: {{updated_input: {{cmd: (.tool_input.cmd + "{s}")}}}}}}'"#
        )
    };
    let yaml = hooks(&format!(
        "pre_tool_use:\n  - matcher: shell\n    hooks: [{{type: command, command: {a:?}}}]\n  - matcher: \"*\"\n    hooks: [{{type: command, command: {b:?}}}]",
        a = append(" -l"),
        b = append(" -h"),
    ));
    let host = Host::start(agent(&yaml).unwrap()).await;
    let call: ToolCall =
        serde_json::from_value(json!({"tool": "shell", "arguments": {"cmd": "ls", "cwd": "work"}}))
            .unwrap();
    let ToolOutcome::Continue { call, .. } = host.before_tool(call).await else {
        panic!("not continued")
    };
    assert_eq!(
        Value::Object(call.arguments),
        json!({"cmd": "ls -l -h", "cwd": "work"})
    );
    host.shutdown().await;
}

/// From docker-agent pkg/hooks/dedup_test.go
/// TestExecutorDedupIsPerDispatchAndKeepsFirstMatch and
/// TestHookIdentityIncludesEveryField: a definition listed under two
/// matchers runs once, where its first matching entry puts it; one that
/// differs in any field (here `env`) is another hook.
#[tokio::test]
async fn identical_definitions_run_once_in_first_match_order() {
    let dir = scratch();
    let log = dir.join("log");
    let append = |tag: &str| {
        format!(
            "echo {tag} >> {log}; jq -c '{{hook_specific_output: {{updated_input: {{cmd: (.tool_input.cmd + \"-{tag}\")}}}}}}'",
            log = log.display()
        )
    };
    let (first, second) = (append("first"), append("second"));
    let yaml = hooks(&format!(
        "pre_tool_use:\n\
         \x20 - {{matcher: other, hooks: [{{type: command, command: {second:?}}}]}}\n\
         \x20 - {{matcher: shell, hooks: [{{type: command, command: {first:?}}}]}}\n\
         \x20 - {{matcher: \"*\", hooks: [{{type: command, command: {second:?}}}, {{type: command, command: {first:?}}}, {{type: command, command: {first:?}, env: {{P: x}}}}]}}",
    ));
    let host = Host::start(agent(&yaml).unwrap()).await;
    let ToolOutcome::Continue { call, .. } = host.before_tool(shell("original")).await else {
        panic!("not continued")
    };
    assert_eq!(call.arguments["cmd"], "original-first-second-first");
    let ran = std::fs::read_to_string(&log).unwrap();
    assert_eq!(ran, "first\nsecond\nfirst\n");
    host.shutdown().await;
}

/// From docker-agent pkg/hooks/pipeline_test.go TestNonTransformEventsRemainConcurrent:
/// the hooks of an event that rewrites nothing run at once (each waits
/// for the other to have started), and their contexts join in order.
#[tokio::test]
async fn other_events_run_their_hooks_at_once_and_join_contexts() {
    let dir = scratch();
    let wait = |me: &str, other: &str| {
        let (me, other) = (dir.join(me), dir.join(other));
        format!(
            "touch {me}; i=0; while [ ! -e {other} ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done; [ -e {other} ] && echo '{{\"hook_specific_output\":{{\"additional_context\":\"{tag}\"}}}}'",
            me = me.display(),
            other = other.display(),
            tag = me.file_name().unwrap().to_string_lossy(),
        )
    };
    let yaml = hooks(&format!(
        "user_prompt_submit:\n  - {{type: command, command: {a:?}}}\n  - {{type: command, command: {b:?}}}",
        a = wait("first", "second"),
        b = wait("second", "first"),
    ));
    let host = Host::start(agent(&yaml).unwrap()).await;
    let params: LifecycleParams =
        serde_json::from_value(json!({"event": "user_prompt_submit", "payload": {"prompt": "hi"}}))
            .unwrap();
    let out = host.lifecycle_with(params).await;
    assert_eq!(out.contexts, vec!["first\nsecond".to_string()]);
    host.shutdown().await;
}

/// From docker-agent pkg/hooks/pipeline_test.go
/// TestPipelineFailuresKeepPriorRewriteAndRunRemainingHooks: a hook that
/// fails under `on_error: block` refuses the call, and the hooks after it
/// still run.
#[tokio::test]
async fn a_failing_hook_follows_its_policy_and_the_rest_still_run() {
    let dir = scratch();
    let mark = dir.join("after");
    let yaml = hooks(&format!(
        "pre_tool_use:\n  - matcher: shell\n    hooks:\n\
         \x20     - {{type: command, command: \"exit 1\", on_error: block}}\n\
         \x20     - {{type: command, command: \"touch {}\"}}",
        mark.display()
    ));
    let host = Host::start(agent(&yaml).unwrap()).await;
    let out = host.before_tool(shell("ls")).await;
    assert!(
        matches!(&out, ToolOutcome::Deny { reason } if reason.contains("failed")),
        "{out:?}"
    );
    assert!(mark.exists());
    host.shutdown().await;
}

/// The example agent file: loaded through `agent.toml`, its guard denies
/// rm -rf, asks before git push and lets npm-ci's rewrite through; its
/// model hook is listed as skipped.
#[tokio::test]
async fn the_example_agent_file_decides_as_documented() {
    let dir = dialect_example("docker-agent");
    let config = hookhost_testkit::load_trusted(&dir.join("agent.toml"));
    assert!(config.skipped.iter().any(|s| s.kind == "model"));
    let host = Host::start(config).await;
    let out = host.before_tool(shell("rm -rf /tmp/x")).await;
    assert!(
        matches!(&out, ToolOutcome::Deny { reason } if reason.contains("rm -rf")),
        "{out:?}"
    );
    let out = host.before_tool(shell("git push")).await;
    assert!(matches!(&out, ToolOutcome::Ask { .. }), "{out:?}");
    // The example's hook rewrites and allows, both in its own words.
    let ToolOutcome::Allow { call, .. } = host.before_tool(shell("npm install")).await else {
        panic!("npm install not allowed")
    };
    assert_eq!(call.arguments["cmd"], "npm ci");
    let out = host.before_tool(shell("cat /etc/passwd")).await;
    assert!(matches!(&out, ToolOutcome::Deny { .. }), "{out:?}");
    // Both the pre_tool_use guard (any push) and the tool_guard (a force
    // push) ask; the chain keeps the first asker's reason.
    let out = host
        .before_tool(shell("git push --force origin main"))
        .await;
    assert!(matches!(&out, ToolOutcome::Ask { .. }), "{out:?}");
    let params: LifecycleParams = serde_json::from_value(
        json!({"event": "session_start", "meta": {"cwd": dir}, "payload": {"source": "startup"}}),
    )
    .unwrap();
    let contexts = host.lifecycle_with(params).await.contexts.join("\n");
    assert!(
        contexts.contains(&format!("Working directory: {}", dir.display())),
        "{contexts}"
    );
    assert!(
        contexts.contains("Project rules") && contexts.contains("audited"),
        "{contexts}"
    );
    host.shutdown().await;
}

/// From docker-agent pkg/hooks/builtins/builtins_test.go
/// TestApplyAgentDefaultsPromptFilesDepth and TestAddDateReturnsTodaysDate:
/// `{type: builtin, command: NAME, args: [...]}` runs hookhost's builtin of
/// that name at the event it is listed under (add_date defaults to
/// turn_start, here it is listed at session_start), with docker-agent's
/// args; `max_iterations`' count is its limit.
#[tokio::test]
async fn builtins_run_at_the_event_they_are_listed_under_with_their_args() {
    let dir = scratch();
    std::fs::write(dir.join("PROMPT.md"), "root rules").unwrap();
    let yaml = hooks(
        "session_start:\n  - {type: builtin, command: add_date}\n  - {type: builtin, command: add_prompt_files, args: [\"--depth=1\", PROMPT.md]}\nbefore_llm_call:\n  - {type: builtin, command: max_iterations, args: [\"2\"]}",
    );
    let host = Host::start(agent(&yaml).unwrap()).await;
    let params: LifecycleParams = serde_json::from_value(
        json!({"event": "session_start", "meta": {"cwd": dir}, "payload": {}}),
    )
    .unwrap();
    let out = host.lifecycle_with(params).await;
    let context = out.contexts.join("\n");
    assert!(context.starts_with("Today's date: "), "{context}");
    assert!(context.contains("root rules"), "{context}");
    let llm = |iteration: u64| {
        serde_json::from_value(
            json!({"meta": {"iteration": iteration}, "model": "m", "messages": []}),
        )
        .unwrap()
    };
    let aborted = |o: &StageOutcome<_>| matches!(o, StageOutcome::Abort { .. });
    assert!(
        !aborted(&host.before_llm(llm(2)).await),
        "iteration 2 is within the limit"
    );
    assert!(
        aborted(&host.before_llm(llm(3)).await),
        "iteration 3 is past it"
    );
    host.shutdown().await;
}

/// From docker-agent pkg/hooks/failure_test.go
/// TestStrictHookRejectsWrongEventAndUnsupportedOutput: `strict_output`
/// written in an agent file holds there too; a guard whose output is not
/// one usable JSON object has failed, and a guard's failure refuses. The
/// same guard without it lets the call through.
#[tokio::test]
async fn strict_output_in_an_agent_file_is_honoured() {
    for (strict, refused) in [(true, true), (false, false)] {
        let yaml = hooks(&format!(
            "tool_guard:\n  - matcher: shell\n    hooks:\n      - {{type: command, command: \"echo plain text\", strict_output: {strict}}}"
        ));
        let host = Host::start(agent(&yaml).unwrap()).await;
        let out = host.before_tool(shell("ls")).await;
        assert_eq!(
            matches!(out, ToolOutcome::Deny { .. }),
            refused,
            "strict_output: {strict}: {out:?}"
        );
        host.shutdown().await;
    }
}
