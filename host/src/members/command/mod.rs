//! Command hooks: the one-shot scripts of Claude Code and docker-agent,
//! run unchanged as members of hookhost's chain.
//!
//! Such a script is spawned once per event, reads the event as JSON on
//! stdin, and answers with its exit code and output: exit 2 blocks with
//! stderr as the reason, exit 0 with a JSON object on stdout decides in
//! detail, exit 0 with plain text adds context. [`CommandHook`] maps the
//! exit codes; the translations in both directions are in `io` (input,
//! reading the answer) and `answer` (what it means at each stage), so the
//! chain sees the same result shapes a process hook would answer.
//!
//! Each run (`run`) gets the isolation of a process hook: a clean
//! environment (`PATH`, `inherit_env`, `env`), its own process group, and a
//! deadline after which the whole group is killed.

mod answer;
mod io;
mod run;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use hookhost_protocol::Stage;
use serde_json::Value;
use tokio::time::Instant;

use crate::config::{CommandConfig, CommandConfigError, CommandOnError, stage_event_name};
use crate::error::CallError;
use crate::policy::filter::{Filter, FilterVerdict};
use answer::{LOG_TAIL, answer, neutral, tail};
use io::Reply;
use run::{Finished, Program};

#[cfg(test)]
pub(crate) use run::OUTPUT_CAP;

/// A command hook ready to run: its config resolved once (program, folder,
/// matcher), so each call only spawns.
#[derive(Debug)]
pub struct CommandHook {
    name: Arc<str>,
    program: Program,
    events: Vec<String>,
    matcher: Filter,
    on_error: Option<CommandOnError>,
}

/// How the script ended, for error reports.
fn describe_status(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        (None, None) => "an unknown exit status".to_string(),
    }
}

impl CommandHook {
    /// Resolves a config, checking it first. `base_dir` (the config file's
    /// folder) resolves a relative `working_dir`, and is the working
    /// directory when none is set. A relative program path in `args` that
    /// contains a slash is resolved against the working directory; a bare
    /// name is looked up on `PATH`.
    pub fn new(
        name: &str,
        config: &CommandConfig,
        base_dir: &Path,
    ) -> Result<CommandHook, CommandConfigError> {
        config.validate()?;
        let matcher = Filter::new(config.matcher.as_deref(), None)?;
        let dir = match &config.working_dir {
            Some(d) => base_dir.join(d),
            None => base_dir.to_path_buf(),
        };
        let (program, args) = match (&config.command, &config.args) {
            (Some(command), _) => (
                PathBuf::from("/bin/sh"),
                vec!["-c".to_string(), command.clone()],
            ),
            (None, Some(argv)) => argv_program(argv, &dir),
            (None, None) => return Err(CommandConfigError::NoCommand),
        };
        Ok(CommandHook {
            name: name.into(),
            program: Program {
                program,
                args,
                dir,
                env: config.env.clone(),
                inherit_env: config.inherit_env.clone(),
                timeout: config.timeout(),
            },
            events: config.events.clone(),
            matcher,
            on_error: config.on_error,
        })
    }

    /// Whether this hook runs for that lifecycle event (request or not), so
    /// the host can skip building an input nobody reads.
    pub fn handles(&self, event: &str) -> bool {
        self.events.iter().any(|e| e == event)
    }

    /// The docker-agent event name this call is for, when the hook runs for
    /// it; `None` means answer neutrally without spawning.
    fn event_for(&self, stage: Stage, params: &Value) -> Option<String> {
        let name = match stage {
            Stage::Lifecycle => params.get("event").and_then(Value::as_str)?,
            other => stage_event_name(other)?,
        };
        self.handles(name).then(|| name.to_string())
    }

    /// Runs the command for one chain call and answers in the stage's
    /// protocol shape, as a process hook would, so the chain treats both
    /// kinds alike. The `matcher` is applied here at the tool stages: a
    /// tool it does not match gets the neutral answer without a spawn.
    ///
    /// The run ends at `deadline` or after the configured `timeout`,
    /// whichever is first. A spawn failure, a timeout, an exit other than 0
    /// or 2, or an answer that cannot be read is a [`CallError`], which the
    /// chain resolves with [`CommandConfig::policy`]: never a silent allow.
    pub async fn call(
        &self,
        stage: Stage,
        params: &Value,
        deadline: Instant,
    ) -> Result<Value, CallError> {
        let Some(event) = self.event_for(stage, params) else {
            return Ok(neutral(stage));
        };
        if self.matcher.evaluate(stage, params) == FilterVerdict::Skip {
            return Ok(neutral(stage));
        }
        let input = io::input(&self.program.dir, stage, &event, params);
        let result = self.program.run(&input, deadline).await.and_then(|done| {
            let reply = match done.status.code() {
                Some(0) => Reply::from_stdout(&done.stdout).map_err(|e| {
                    CallError::Protocol(format!("command hook `{}`: {e}", self.name))
                })?,
                Some(2) => Reply::blocked(&done.stderr),
                _ => return Err(self.exit_error(&done)),
            };
            Ok(answer(&self.name, stage, &event, reply))
        });
        if let Err(e) = &result {
            self.log_failure(&event, e);
        }
        result
    }

    /// Runs the command for a lifecycle event nobody waits on (session_end,
    /// stop, ...). Its output is read and logged, never used: the event has
    /// already happened. A failure is logged as `on_error` says.
    pub async fn notify(&self, event: &str, payload: &Value) {
        if !self.handles(event) {
            return;
        }
        let input = io::notice(&self.program.dir, event, payload);
        match self
            .program
            .run(&input, Instant::now() + self.program.timeout)
            .await
        {
            Ok(done) => match done.status.code() {
                Some(0) | Some(2) => tracing::debug!(
                    hook = %self.name,
                    event,
                    status = %describe_status(done.status),
                    stdout = %tail(&done.stdout.text(), LOG_TAIL),
                    stderr = %tail(&done.stderr.text(), LOG_TAIL),
                    "command hook ran for an event that takes no answer; its output is not used"
                ),
                _ => self.log_failure(event, &self.exit_error(&done)),
            },
            Err(e) => self.log_failure(event, &e),
        }
    }

    fn exit_error(&self, done: &Finished) -> CallError {
        let stderr = done.stderr.text();
        let stderr = tail(&stderr, LOG_TAIL);
        let mut text = describe_status(done.status);
        if !stderr.is_empty() {
            text.push_str("; stderr: ");
            text.push_str(stderr);
        }
        CallError::Crashed(text)
    }

    /// Logs a failure: at debug level under `ignore`, except a spawn
    /// failure, which is always a warning (the gate never ran, which is
    /// never a silent allow); at warn level otherwise.
    fn log_failure(&self, event: &str, error: &CallError) {
        let quiet = self.on_error.is_some_and(CommandOnError::is_quiet)
            && !matches!(error, CallError::Unavailable(_));
        if quiet {
            tracing::debug!(hook = %self.name, event, "command hook failed: {error}");
        } else {
            tracing::warn!(hook = %self.name, event, "command hook failed: {error}");
        }
    }
}

/// The program and arguments of an argv: a relative path with a slash is
/// resolved against the working directory.
fn argv_program(argv: &[String], dir: &Path) -> (PathBuf, Vec<String>) {
    let first = argv.first().cloned().unwrap_or_default();
    let p = Path::new(&first);
    let program = if p.is_relative() && first.contains('/') {
        dir.join(p)
    } else {
        p.to_path_buf()
    };
    (program, argv.get(1..).unwrap_or_default().to_vec())
}

#[cfg(test)]
mod tests {
    use super::io::Permission;
    use super::run::Captured;
    use super::*;
    use serde_json::json;

    fn parse(v: Value) -> Reply {
        Reply::from_json(&v).expect("readable answer")
    }

    #[test]
    fn snake_and_camel_case_read_the_same() {
        let snake = parse(json!({
            "continue": false, "stop_reason": "s", "system_message": "m",
            "hook_specific_output": {"permission_decision": "deny",
                "permission_decision_reason": "r", "updated_input": {"a": 1},
                "additional_context": "c"}
        }));
        let camel = parse(json!({
            "continue": false, "stopReason": "s", "systemMessage": "m",
            "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                "permissionDecisionReason": "r", "updatedInput": {"a": 1},
                "additionalContext": "c"}
        }));
        assert_eq!(snake, camel);
        assert_eq!(snake.halt, Some(Some("s".into())));
        assert_eq!(snake.permission, Some(Permission::Deny));
        assert_eq!(snake.permission_reason.as_deref(), Some("r"));
        assert_eq!(snake.additional_context.as_deref(), Some("c"));
    }

    #[test]
    fn unreadable_answers_are_errors() {
        for bad in [
            json!({"continue": "no"}),
            json!({"decision": "maybe"}),
            json!({"hook_specific_output": {"permission_decision": "perhaps"}}),
            json!({"hook_specific_output": "deny"}),
            json!({"updated_input": [1]}),
            json!([1]),
        ] {
            assert!(Reply::from_json(&bad).is_err(), "{bad}");
        }
        let cut = Captured {
            bytes: b"{\"decision\": \"blo".to_vec(),
            dropped: 10,
        };
        assert!(Reply::from_stdout(&cut).unwrap_err().contains("cut"));
    }

    #[test]
    fn before_tool_mapping() {
        let a = |v: Value| answer("h", Stage::BeforeTool, "pre_tool_use", parse(v));
        assert_eq!(a(json!({})), json!({"action": "continue"}));
        assert_eq!(
            a(json!({"decision": "block", "reason": "no"})),
            json!({"action": "deny_tool", "reason": "no"})
        );
        assert_eq!(
            a(json!({"continue": false, "stopReason": "halt"})),
            json!({"action": "abort_turn", "reason": "halt"})
        );
        assert_eq!(
            a(
                json!({"hook_specific_output": {"permission_decision": "allow",
                "updated_input": {"cmd": "ls -h"}}})
            ),
            json!({"action": "modify", "call": {"arguments": {"cmd": "ls -h"}}})
        );
        let ask = a(json!({"hookSpecificOutput": {"permissionDecision": "ask"}}));
        assert_eq!(ask["action"], "deny_tool");
        assert!(
            ask["reason"]
                .as_str()
                .is_some_and(|r| r.contains("approval"))
        );
        assert_eq!(
            answer(
                "h",
                Stage::BeforeTool,
                "pre_tool_use",
                Reply::blocked(&Captured {
                    bytes: b"grep is slow\n".to_vec(),
                    dropped: 0
                })
            ),
            json!({"action": "deny_tool", "reason": "grep is slow"})
        );
        assert_eq!(
            a(json!({"decision": "block"}))["reason"],
            "blocked by command hook `h`"
        );
    }

    #[test]
    fn approve_tool_mapping() {
        let a = |v: Value| answer("h", Stage::ApproveTool, "permission_request", parse(v));
        assert_eq!(a(json!({})), json!({"approved": true}));
        assert_eq!(
            a(json!({"hook_specific_output": {"permission_decision": "allow"}})),
            json!({"approved": true})
        );
        assert_eq!(
            a(
                json!({"hook_specific_output": {"permission_decision": "deny",
                "permission_decision_reason": "nope"}})
            ),
            json!({"approved": false, "reason": "nope"})
        );
        assert_eq!(
            a(json!({"hookSpecificOutput": {"decision": {"behavior": "deny", "message": "m"}}})),
            json!({"approved": false, "reason": "m"})
        );
        let ask = a(
            json!({"hook_specific_output": {"permission_decision": "ask",
            "permission_decision_reason": "human please"}}),
        );
        assert_eq!(ask["approved"], false);
        assert!(
            ask["reason"]
                .as_str()
                .is_some_and(|r| r.contains("human please"))
        );
    }

    #[test]
    fn intercept_stages_abort_on_block() {
        for (stage, event) in [
            (Stage::AfterTool, "post_tool_use"),
            (Stage::BeforeLlm, "before_llm_call"),
            (Stage::AfterLlm, "after_llm_call"),
        ] {
            let a = |v: Value| answer("h", stage, event, parse(v));
            assert_eq!(
                a(json!({"decision": "block", "reason": "r"})),
                json!({"action": "abort_turn", "reason": "r"})
            );
            assert_eq!(
                a(json!({"continue": false, "stop_reason": "s"})),
                json!({"action": "abort_turn", "reason": "s"})
            );
            assert_eq!(
                a(json!({"additional_context": "c", "updated_input": {"x": 1}})),
                json!({"action": "continue"})
            );
        }
    }

    #[test]
    fn lifecycle_mapping() {
        let a = |event: &str, v: Value| answer("h", Stage::Lifecycle, event, parse(v));
        assert_eq!(
            a(
                "user_prompt_submit",
                json!({"decision": "block", "reason": "no"})
            ),
            json!({"action": "block", "reason": "no"})
        );
        assert_eq!(
            a(
                "session_start",
                json!({"decision": "block", "reason": "no"})
            ),
            json!({"action": "continue"})
        );
        assert_eq!(
            a(
                "session_start",
                json!({"hook_specific_output": {"additional_context": "c"},
                "system_message": "m"})
            ),
            json!({"action": "continue", "additional_context": "c", "system_message": "m"})
        );
        assert_eq!(
            a(
                "before_compaction",
                json!({"additional_context": "c",
                "hookSpecificOutput": {"summary": "short"}})
            ),
            json!({"action": "continue", "summary": "short"})
        );
        assert_eq!(
            a(
                "before_compaction",
                json!({"hook_specific_output": {"permission_decision": "deny"}})
            ),
            json!({"action": "block", "reason": "blocked by command hook `h`"})
        );
        let text = Reply::from_stdout(&Captured {
            bytes: b"  hello context\n".to_vec(),
            dropped: 0,
        })
        .expect("plain text");
        assert_eq!(
            answer("h", Stage::Lifecycle, "session_start", text),
            json!({"action": "continue", "additional_context": "hello context"})
        );
    }

    #[test]
    fn input_is_docker_agent_shaped() {
        let i = io::input(
            Path::new("/tmp"),
            Stage::BeforeTool,
            "pre_tool_use",
            &json!({"meta": {"session_key": "s1"}, "tool": "shell",
                "arguments": {"cmd": "ls"}, "tool_call_id": "t1"}),
        );
        assert_eq!(
            i,
            json!({"session_id": "s1", "cwd": "/tmp", "hook_event_name": "pre_tool_use",
                "tool_name": "shell", "tool_use_id": "t1", "tool_input": {"cmd": "ls"}})
        );
        let i = io::input(
            Path::new("/tmp"),
            Stage::AfterTool,
            "post_tool_use",
            &json!({"tool": "shell", "result": {"for_llm": "out", "is_error": true}}),
        );
        assert_eq!(i["tool_response"]["for_llm"], "out");
        assert_eq!(i["tool_error"], true);
        assert_eq!(i["session_id"], "");
        let i = io::input(
            Path::new("/tmp"),
            Stage::AfterLlm,
            "after_llm_call",
            &json!({"model": "m", "response": {"content": "hi"}}),
        );
        assert_eq!(i["stop_response"], "hi");
        let i = io::input(
            Path::new("/tmp"),
            Stage::Lifecycle,
            "pre_compact",
            &json!({"event": "pre_compact", "payload": {"trigger": "auto", "cwd": "/evil"}}),
        );
        assert_eq!(i["source"], "auto");
        assert_eq!(i["cwd"], "/tmp");
        assert_eq!(i["hook_event_name"], "pre_compact");
    }

    #[test]
    fn tail_keeps_the_end_on_a_char_boundary() {
        assert_eq!(tail("  abc  ", 10), "abc");
        assert_eq!(tail("aé", 1), "");
        assert_eq!(tail("abcdef", 3), "def");
    }
}
