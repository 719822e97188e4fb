//! What one of an event's own hooks hands the next own hook: the agent's
//! input as the hooks before it left it. By default that is the agent's
//! input with each key an earlier hook of the chain rewrote written anew
//! from the chain's params (hookhost composes rewrites: an addition, see
//! spec/dialects.md §7). Gemini CLI's hooks see two things otherwise, and
//! for its hooks its behaviour wins (`hookRunner.ts`, 0.61.0):
//! - a hook that did not exit 0 hands nothing on, though its answer still
//!   counts in the agent's answer;
//! - in a sequential group (`sequential: true` on any definition the
//!   event matches) each hook gets the input as `applyHookOutputToInput`
//!   changes it after each hook that succeeded: its context appended to
//!   the prompt at BeforeAgent, its `llm_request` merged over the request
//!   at BeforeModel, its `tool_input` merged over the arguments at
//!   BeforeTool.

use serde_json::{Map, Value};

use super::reply::Reply;

/// What the event's own hooks hand on beyond the chain's params.
#[derive(Debug, Default)]
pub(crate) struct Handoff {
    /// Gemini CLI runs the event's hooks as a sequential group.
    pub(crate) sequential: bool,
    /// What the last own hook that answered left, once it differs from
    /// what the chain's params alone would hand on.
    last: Option<Left>,
}

/// The input the next own hook starts from, and the agent's input as the
/// chain's params read just after the hook that left it: a key that reads
/// otherwise later was rewritten by a hook after it, and is written anew.
#[derive(Debug)]
struct Left {
    input: Value,
    params: Value,
}

impl Handoff {
    /// Where the next own hook's input starts, and the reading of the
    /// params it is measured against; `None`: from the agent's input,
    /// against the chain's first params.
    pub(crate) fn start(&self) -> Option<(&Value, &Value)> {
        self.last.as_ref().map(|l| (&l.input, &l.params))
    }

    /// Whether an own hook's `reply` changes what is handed on beyond the
    /// chain's params (else nothing needs recording).
    pub(crate) fn follows(&self, reply: &Reply) -> bool {
        self.sequential || reply.failed || self.last.is_some()
    }

    /// Records what an own hook of native `event` hands on: it got
    /// `handed`, and the agent's input read `before` from the chain's
    /// params when it ran and `after` once its answer was applied.
    pub(crate) fn record(
        &mut self,
        event: &str,
        handed: &Value,
        reply: &Reply,
        before: &Value,
        after: Value,
    ) {
        let input = if reply.failed {
            handed.clone()
        } else if self.sequential {
            sequential_input(event, handed, reply)
        } else {
            let mut next = handed.clone();
            rewrite(&mut next, before, &after);
            next
        };
        self.last = Some(Left {
            input,
            params: after,
        });
    }
}

/// Writes into `input` each of its keys that reads otherwise in `after`
/// than in `before`: what the chain's hooks rewrote in between. Only keys
/// the agent sends: what hookhost adds to the params for its own policies
/// (a stop's `loop_count`) is not the agent's.
pub(crate) fn rewrite(input: &mut Value, before: &Value, after: &Value) {
    let (Some(out), Value::Object(after)) = (input.as_object_mut(), after) else {
        return;
    };
    for (k, v) in after {
        if out.contains_key(k) && before.get(k) != Some(v) {
            out.insert(k.clone(), v.clone());
        }
    }
}

/// Gemini CLI's `applyHookOutputToInput`: the input after `reply`, a hook
/// that succeeded, for the next hook of a sequential group.
fn sequential_input(event: &str, input: &Value, reply: &Reply) -> Value {
    let mut next = input.clone();
    let Some(out) = next.as_object_mut() else {
        return next;
    };
    match event {
        "BeforeAgent" => {
            let ctx = reply.additional_context.as_deref();
            if let (Some(ctx), Some(Value::String(prompt))) = (ctx, out.get_mut("prompt")) {
                prompt.push_str("\n\n");
                prompt.push_str(ctx);
            }
        }
        "BeforeModel" => {
            if let Some(Value::Object(part)) = reply.native_specific.get("llm_request") {
                merge_over(out, "llm_request", part);
            }
        }
        "BeforeTool" => {
            if let Some(part) = &reply.updated_input {
                merge_over(out, "tool_input", part);
            }
        }
        _ => {}
    }
    next
}

/// `input[key] = {...input[key], ...part}`, where the agent sends `key`.
fn merge_over(input: &mut Map<String, Value>, key: &str, part: &Map<String, Value>) {
    let Some(current) = input.get_mut(key) else {
        return;
    };
    let mut merged = current.as_object().cloned().unwrap_or_default();
    merged.extend(part.iter().map(|(k, v)| (k.clone(), v.clone())));
    *current = Value::Object(merged);
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn sequential(event: &str, input: Value, reply: Reply) -> Value {
        let mut handoff = Handoff {
            sequential: true,
            ..Handoff::default()
        };
        handoff.record(event, &input, &reply, &input, input.clone());
        handoff.start().expect("recorded").0.clone()
    }

    #[test]
    fn a_sequential_group_hands_on_the_prompt_with_the_context_appended() {
        let reply = Reply {
            additional_context: Some("Context from hook 1".into()),
            ..Reply::default()
        };
        let next = sequential("BeforeAgent", json!({"prompt": "Original prompt"}), reply);
        assert_eq!(next["prompt"], "Original prompt\n\nContext from hook 1");
    }

    #[test]
    fn a_sequential_group_hands_on_the_llm_request_merged_over() {
        let mut reply = Reply::default();
        let part = json!({"temperature": 0.7, "model": "m2"});
        reply.native_specific.insert("llm_request".into(), part);
        let input = json!({"llm_request": {"model": "m1", "messages": []}});
        let next = sequential("BeforeModel", input, reply);
        let merged = json!({"model": "m2", "messages": [], "temperature": 0.7});
        assert_eq!(next["llm_request"], merged);
    }

    #[test]
    fn a_sequential_group_changes_nothing_the_agent_did_not_send_or_after_a_failure() {
        let reply = Reply {
            additional_context: Some("c".into()),
            updated_input: json!({"command": "x"}).as_object().cloned(),
            ..Reply::default()
        };
        let no_prompt = sequential("BeforeAgent", json!({"session_id": "s"}), reply.clone());
        assert_eq!(no_prompt, json!({"session_id": "s"}));
        let failed = Reply {
            failed: true,
            ..reply
        };
        let input = json!({"tool_input": {"command": "ls"}});
        assert_eq!(sequential("BeforeTool", input.clone(), failed), input);
    }
}
