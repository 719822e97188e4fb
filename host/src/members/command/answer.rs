//! What a command hook's [`Reply`] means at each stage, as the protocol
//! result a process hook would answer there, so the chain treats both
//! kinds alike.
//!
//! A rewrite becomes a merge patch against the input the hook saw (a
//! whole new input, Claude Code's `updatedInput`, implies deleting what it
//! left out), in canonical argument keys, so two hooks that each rewrite
//! one field compose instead of racing. What a stage cannot take (a block
//! of an event that cannot be blocked, a summary outside compaction) is
//! logged and ignored; an answer the dialect forbids (`ask` in Codex) is
//! an error.

use hookhost_protocol::Stage;
use hookhost_protocol::lifecycle::LifecycleEvent;
use serde_json::{Map, Value, json};

use crate::dialect::Dialect;
use crate::dialect::messages;
use crate::dialect::reply::{Permission, Reply};
use crate::dialect::spec::{Event, Rewrite, Spec, Target};
use crate::dialect::tools;
use crate::members::neutral;

/// The longest tail of output quoted in an error or a log line.
pub(super) const LOG_TAIL: usize = 500;

/// The last `max` bytes of a text, on a char boundary, for error reports.
pub(super) fn tail(text: &str, max: usize) -> &str {
    let text = text.trim();
    if text.len() <= max {
        return text;
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

/// `reason`, then each `metadata` entry as `key: value` on a line of its
/// own, so the user deciding sees what the hook noted.
fn with_metadata(reason: String, reply: &Reply) -> String {
    let Some(m) = reply.metadata.as_ref().filter(|m| !m.is_empty()) else {
        return reason;
    };
    let notes: Vec<String> = m
        .iter()
        .map(|(k, v)| format!("{k}: {}", v.as_str().unwrap_or_default()))
        .collect();
    format!("{reason}\n{}", notes.join("\n"))
}

/// One answer being translated: who answered, in which dialect, at which
/// event, having seen which arguments.
pub(super) struct Answering<'a> {
    pub(super) name: &'a str,
    pub(super) spec: &'static Spec,
    pub(super) event: &'static Event,
    /// The canonical tool name of a tool-stage call.
    pub(super) tool: &'a str,
    /// The arguments the hook saw, in the dialect's keys.
    pub(super) seen: Map<String, Value>,
    /// The agent's own arguments, in its keys.
    pub(super) original: Option<&'a Map<String, Value>>,
    /// The stop payload's `loop_count`, when there is one.
    pub(super) loop_count: Option<u64>,
    pub(super) loop_limit: Option<u32>,
}

/// The reasons a hook gave, and only those: a hook that stops, refuses or
/// asks without saying why gets no reason of hookhost's making, so its
/// agent shows what it shows for a hook that gave none (Gemini CLI's "No
/// reason provided"). The log names the hook.
impl Answering<'_> {
    fn halt(&self, r: &Option<String>) -> String {
        r.clone().unwrap_or_default()
    }

    fn refusal(&self, r: &Option<String>) -> String {
        r.clone().unwrap_or_default()
    }

    fn ask_reason(&self, reply: &Reply) -> String {
        let reason = reply.permission_reason.clone().unwrap_or_default();
        with_metadata(reason, reply)
    }

    /// A refusal's reason, with the answer's `metadata` (docker-agent's
    /// notes for the approval prompt) after it.
    fn refusal_with_metadata(&self, r: &Option<String>, reply: &Reply) -> String {
        with_metadata(self.refusal(r), reply)
    }

    /// Maps the answer to the stage's protocol result.
    pub(super) fn answer(&self, reply: Reply) -> Result<Value, String> {
        if let Some(msg) = reply.system_message.as_deref() {
            tracing::info!(hook = %self.name, event = self.event.native, "command hook system message: {msg}");
        }
        match self.event.target {
            Target::Lifecycle(name) => Ok(self.lifecycle(name, reply)),
            Target::Stage(Stage::BeforeTool) => self.before_tool(reply),
            Target::Stage(Stage::AfterTool) => Ok(self.after_tool(reply)),
            Target::Stage(Stage::ApproveTool) => Ok(self.approve_tool(&reply)),
            Target::Stage(_) => self.model_stage(&reply),
        }
    }

    fn before_tool(&self, reply: Reply) -> Result<Value, String> {
        if let Some(r) = &reply.halt {
            return Ok(json!({"action": "abort_turn", "reason": self.halt(r)}));
        }
        if let Some(r) = reply.refusal() {
            let reason = self.refusal_with_metadata(&r, &reply);
            return Ok(json!({"action": "deny_tool", "reason": reason}));
        }
        self.log_metadata(&reply);
        let mut out = Map::new();
        if reply.permission == Some(Permission::Ask) {
            if !self.spec.ask {
                return Err(format!(
                    "`ask` is not an answer {} takes at {}",
                    self.spec.dialect, self.event.native
                ));
            }
            out.insert("action".into(), Value::from("ask"));
            out.insert("reason".into(), Value::from(self.ask_reason(&reply)));
        } else if reply.permission == Some(Permission::Allow) {
            // The hook's own allow, passed on as the agent would take it.
            out.insert("action".into(), Value::from("allow"));
            if let Some(reason) = &reply.permission_reason {
                out.insert("reason".into(), Value::from(reason.as_str()));
            }
            if let Some(patch) = reply.updated_input.as_ref().and_then(|u| self.patch(u)) {
                out.insert("call".into(), json!({"arguments": patch}));
            }
        } else if let Some(patch) = reply.updated_input.as_ref().and_then(|u| self.patch(u)) {
            out.insert("action".into(), Value::from("modify"));
            out.insert("call".into(), json!({"arguments": patch}));
        } else {
            out.insert("action".into(), Value::from("continue"));
        }
        if let Some(ctx) = reply.additional_context {
            out.insert("additional_context".into(), Value::from(ctx));
        }
        Ok(Value::Object(out))
    }

    /// The merge patch a rewrite implies, in canonical keys; `None` when it
    /// changes nothing.
    fn patch(&self, updated: &Map<String, Value>) -> Option<Value> {
        let mut patch = Map::new();
        if self.spec.rewrite == Rewrite::Replace {
            for k in self.seen.keys().filter(|k| !updated.contains_key(*k)) {
                patch.insert(k.clone(), Value::Null);
            }
        }
        for (k, v) in updated {
            if self.seen.get(k) != Some(v) {
                patch.insert(k.clone(), v.clone());
            }
        }
        if patch.is_empty() {
            return None;
        }
        let patch = tools::args_from_native(self.spec.dialect, self.tool, &patch, self.original);
        Some(Value::Object(patch))
    }

    /// After the tool: a block replaces the result with the feedback
    /// (Claude Code's and Codex's PostToolUse `decision: "block"`).
    fn after_tool(&self, reply: Reply) -> Value {
        let mut out = Map::new();
        if let Some(r) = &reply.halt {
            return json!({"action": "abort_turn", "reason": self.halt(r)});
        }
        if let Some(r) = reply.refusal() {
            out.insert("action".into(), Value::from("modify"));
            let feedback = self.refusal(&r);
            // The patch covers the params, whose `result` is the output.
            out.insert(
                "result".into(),
                json!({"result": {"for_llm": feedback, "is_error": true}}),
            );
        } else if let Some(text) = reply.updated_tool_response {
            // docker-agent's tool_response_transform: the result's text.
            out.insert("action".into(), Value::from("modify"));
            out.insert("result".into(), json!({"result": {"for_llm": text}}));
        } else {
            out.insert("action".into(), Value::from("continue"));
        }
        if let Some(ctx) = reply.additional_context {
            out.insert("additional_context".into(), Value::from(ctx));
        }
        Value::Object(out)
    }

    /// `metadata` on an answer that neither refuses nor asks has no prompt
    /// to go to: it is logged, for the audit trail.
    fn log_metadata(&self, reply: &Reply) {
        if let Some(m) = reply.metadata.as_ref().filter(|m| !m.is_empty()) {
            let notes = Value::Object(m.clone());
            tracing::info!(hook = %self.name, event = self.event.native, "command hook metadata: {notes}");
        }
    }

    fn approve_tool(&self, reply: &Reply) -> Value {
        if let Some(r) = &reply.halt {
            json!({"approved": false, "reason": self.halt(r)})
        } else if let Some(r) = reply.refusal() {
            json!({"approved": false, "reason": self.refusal_with_metadata(&r, reply)})
        } else if reply.permission == Some(Permission::Ask) {
            json!({"approved": false, "reason": self.ask_reason(reply)})
        } else if reply.permission == Some(Permission::Allow) {
            json!({"approved": true, "reason": reply.permission_reason})
        } else {
            // No decision: the agent shows its own prompt, as without hooks.
            self.log_metadata(reply);
            neutral()
        }
    }

    /// A model call's answer: a block ends the turn (`abort_turn`);
    /// Gemini CLI's `continue: false` stops the agent (`hard_abort`), as
    /// Gemini CLI tells the two apart (docker-agent ends the turn).
    fn model_stage(&self, reply: &Reply) -> Result<Value, String> {
        if let Some(r) = &reply.halt {
            let action = match self.spec.dialect {
                Dialect::GeminiCli => "hard_abort",
                _ => "abort_turn",
            };
            Ok(json!({"action": action, "reason": self.halt(r)}))
        } else if let Some(r) = reply.refusal() {
            Ok(json!({"action": "abort_turn", "reason": self.refusal(&r)}))
        } else if let Some(m) = reply.updated_messages.as_ref().filter(|m| !m.is_empty()) {
            // docker-agent's before_llm_call rewrite: the whole new list
            // (an empty one is no rewrite, as docker-agent reads it).
            let messages = messages::from_docker(m)?;
            Ok(json!({"action": "modify", "request": {"messages": messages}}))
        } else {
            Ok(json!({"action": "continue"}))
        }
    }
}

impl Answering<'_> {
    /// The block a lifecycle answer asks for: `continue: false`, a block or
    /// deny, or (at stop) Cursor's follow-up message; `None` past the
    /// hook's `loop_limit` of consecutive stop blocks.
    fn lifecycle_block(&self, name: &str, reply: &Reply) -> Option<String> {
        let stop = name == "stop" || name == "subagent_stop";
        let block = match &reply.halt {
            // At stop a block keeps the agent going: `continue: false`
            // (stop it) is the opposite, so it lets the stop happen, and
            // its own keys reach the agent beside the verdict.
            Some(_) if stop => None,
            // Cursor reads only `followup_message` at stop.
            None if stop && self.spec.dialect == Dialect::Cursor => None,
            Some(r) => Some(self.halt(r)),
            None => reply.refusal().map(|r| self.refusal(&r)),
        };
        let followup = stop.then(|| reply.followup.clone()).flatten();
        let block = block.or(followup)?;
        let over = match (self.loop_limit, self.loop_count) {
            (Some(limit), Some(count)) => count >= u64::from(limit),
            _ => false,
        };
        if over {
            tracing::warn!(hook = %self.name, event = self.event.native, "command hook blocked {name} again past its loop_limit; going on");
            return None;
        }
        Some(block)
    }

    /// A lifecycle event: block where the event can be blocked, and
    /// context, a system message or a summary where it takes them.
    fn lifecycle(&self, name: &str, reply: Reply) -> Value {
        let ev: Option<LifecycleEvent> = name.parse().ok();
        let mut out = Map::new();
        let block = self.lifecycle_block(name, &reply);
        let blocking = match (block, ev) {
            (Some(reason), Some(ev)) if ev.can_block() => {
                out.insert("action".into(), Value::from("block"));
                out.insert("reason".into(), Value::from(reason));
                true
            }
            (Some(reason), _) => {
                tracing::info!(hook = %self.name, event = name, "command hook asked to block {name}, which cannot be blocked; going on ({reason})");
                false
            }
            (None, _) => false,
        };
        if !blocking {
            out.insert("action".into(), Value::from("continue"));
        }
        if let Some(ev) = ev {
            self.lifecycle_extras(&mut out, ev, reply, blocking);
        }
        Value::Object(out)
    }

    /// Context, system message and summary of a lifecycle answer, each where
    /// the event takes it and is not blocked.
    fn lifecycle_extras(
        &self,
        out: &mut Map<String, Value>,
        ev: LifecycleEvent,
        reply: Reply,
        blocking: bool,
    ) {
        let (hook, event) = (self.name, ev.as_str());
        if let Some(ctx) = reply.additional_context {
            if ev.takes_context() && !blocking {
                out.insert("additional_context".into(), Value::from(ctx));
            } else {
                tracing::debug!(
                    hook,
                    event,
                    "command hook output is not context at {event}; ignored: {}",
                    tail(&ctx, LOG_TAIL)
                );
            }
        }
        if let Some(msg) = reply.system_message {
            out.insert("system_message".into(), Value::from(msg));
        }
        if let Some(summary) = reply.summary {
            if ev.takes_summary() && !blocking {
                out.insert("summary".into(), Value::from(summary));
            } else {
                tracing::debug!(
                    hook,
                    event,
                    "command hook answered a summary, which {event} does not take; ignored"
                );
            }
        }
        if reply.permission == Some(Permission::Ask) {
            tracing::debug!(
                hook,
                event,
                "command hook answered `ask` at a lifecycle event; ignored"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::Dialect;

    fn answering(d: Dialect, native: &str, seen: Value) -> Answering<'static> {
        let spec = d.spec();
        Answering {
            name: "h",
            spec,
            event: spec.event(native).expect("known event"),
            tool: "shell",
            seen: seen.as_object().cloned().unwrap_or_default(),
            original: None,
            loop_count: None,
            loop_limit: None,
        }
    }

    fn reply(v: Value) -> Reply {
        Reply::from_json(&v).expect("readable")
    }

    #[test]
    fn ask_is_its_own_answer_except_where_the_dialect_refuses_it() {
        let a = answering(
            Dialect::ClaudeCode,
            "PreToolUse",
            json!({"command": "git push"}),
        );
        let ask = a.answer(reply(json!({"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "pushes"}})));
        assert_eq!(ask, Ok(json!({"action": "ask", "reason": "pushes"})));
        let a = answering(Dialect::Codex, "PreToolUse", json!({}));
        let refused = a.answer(reply(
            json!({"hookSpecificOutput": {"permissionDecision": "ask"}}),
        ));
        assert!(refused.is_err_and(|e| e.contains("codex")));
    }

    #[test]
    fn a_whole_new_input_becomes_the_patch_it_implies_in_canonical_keys() {
        let seen = json!({"command": "npm install", "description": "deps", "timeout": 5});
        let a = answering(Dialect::ClaudeCode, "PreToolUse", seen);
        let r = a.answer(reply(
            json!({"hookSpecificOutput": {"permissionDecision": "allow",
            "updatedInput": {"command": "npm ci", "timeout": 5}}}),
        ));
        assert_eq!(
            r,
            Ok(
                json!({"action": "allow", "call": {"arguments": {"command": "npm ci", "description": null}}})
            )
        );
        // docker-agent merges, in the agent's own keys.
        let a = answering(
            Dialect::DockerAgent,
            "pre_tool_use",
            json!({"cmd": "npm install", "x": 1}),
        );
        let r = a.answer(reply(
            json!({"hook_specific_output": {"updated_input": {"cmd": "npm ci"}}}),
        ));
        assert_eq!(
            r,
            Ok(json!({"action": "modify", "call": {"arguments": {"cmd": "npm ci"}}}))
        );
        // Gemini CLI runs a hook's `tool_input` as the whole new arguments
        // (0.61.0's scheduler builds the call from it alone, whatever its
        // docs say about a merge): the keys it leaves out are gone.
        let a = answering(
            Dialect::GeminiCli,
            "BeforeTool",
            json!({"command": "npm install", "description": "deps"}),
        );
        let r = a.answer(reply(
            json!({"decision": "allow", "hookSpecificOutput": {"tool_input": {"command": "npm ci"}}}),
        ));
        // Its own `decision: "allow"` is kept with the rewrite.
        assert_eq!(
            r,
            Ok(
                json!({"action": "allow", "call": {"arguments": {"command": "npm ci", "description": null}}})
            )
        );
        // A rewrite that changes nothing is no rewrite.
        let a = answering(Dialect::GeminiCli, "BeforeTool", json!({"command": "ls"}));
        let r = a.answer(reply(
            json!({"hookSpecificOutput": {"tool_input": {"command": "ls"}}}),
        ));
        assert_eq!(r, Ok(json!({"action": "continue"})));
    }

    #[test]
    fn after_tool_keeps_context_and_a_block_replaces_the_result() {
        let a = answering(Dialect::ClaudeCode, "PostToolUse", json!({}));
        let r = a.answer(reply(json!({"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "3 tests failed"}})));
        assert_eq!(
            r,
            Ok(json!({"action": "continue", "additional_context": "3 tests failed"}))
        );
        let r = a.answer(reply(json!({"decision": "block", "reason": "lint first"})));
        assert_eq!(
            r,
            Ok(
                json!({"action": "modify", "result": {"result": {"for_llm": "lint first", "is_error": true}}})
            )
        );
    }

    #[test]
    fn stop_blocks_carry_the_next_instruction_up_to_the_loop_limit() {
        let a = answering(Dialect::ClaudeCode, "Stop", json!({}));
        let r = a.answer(reply(
            json!({"decision": "block", "reason": "run the tests"}),
        ));
        assert_eq!(r, Ok(json!({"action": "block", "reason": "run the tests"})));
        let mut a = answering(Dialect::Cursor, "stop", json!({}));
        let r = a.answer(reply(json!({"followup_message": "fix the lint"})));
        assert_eq!(r, Ok(json!({"action": "block", "reason": "fix the lint"})));
        a.loop_limit = Some(2);
        a.loop_count = Some(2);
        let r = a.answer(reply(json!({"followup_message": "again"})));
        assert_eq!(r, Ok(json!({"action": "continue"})));
    }
}
