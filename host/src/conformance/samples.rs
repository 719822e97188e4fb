//! The sample params each stage is called with: plain (with `meta`),
//! unicode (with a right-to-left override), empty arguments and a 1 MiB
//! argument. These are the inputs real hooks get wrong: an encoding slip,
//! a missing key, a line longer than a default buffer.

use hookhost_protocol::Stage;
use serde_json::{Value, json};

/// The label of the 1 MiB sample, the one robustness check among them.
pub(super) const HUGE: &str = "1 MiB argument";

/// A sample's label (it ends the check's name) and its params.
pub(super) type Sample = (&'static str, Value);

/// The values several stages' samples share.
struct Inputs {
    /// A 1 MiB string.
    big: String,
    /// Accents, CJK, an emoji and U+202E in one command line.
    unicode: &'static str,
    /// The `meta` object of the plain sample.
    meta: Value,
}

impl Inputs {
    fn new() -> Self {
        Inputs {
            big: "a".repeat(1024 * 1024),
            unicode: "echo 'héllo wörld — 你好 🎉 \u{202e}'",
            meta: json!({"agent_id": "conformance", "session_key": "s-1", "turn_id": "t-1", "iteration": 1}),
        }
    }
}

/// Sample params for `stage`, in the order they are checked; the first is
/// the plain one, which later checks reuse as their probe call.
pub(super) fn samples(stage: Stage) -> Vec<Sample> {
    let inputs = Inputs::new();
    match stage {
        Stage::BeforeTool | Stage::ApproveTool => tool_call(inputs),
        Stage::AfterTool => after_tool(inputs),
        Stage::BeforeLlm => before_llm(inputs),
        Stage::Lifecycle => lifecycle(inputs),
        Stage::AfterLlm => after_llm(inputs),
    }
}

fn tool_call(Inputs { big, unicode, meta }: Inputs) -> Vec<Sample> {
    vec![
        (
            "plain",
            json!({"meta": meta, "tool": "shell", "arguments": {"command": "echo hello"}}),
        ),
        (
            "unicode",
            json!({"tool": "shell", "arguments": {"command": unicode}}),
        ),
        (
            "empty arguments",
            json!({"tool": "list_dir", "arguments": {}}),
        ),
        (
            HUGE,
            json!({"tool": "write_file", "arguments": {"path": "big.txt", "content": big}}),
        ),
    ]
}

fn after_tool(Inputs { big, unicode, meta }: Inputs) -> Vec<Sample> {
    vec![
        (
            "plain",
            json!({"meta": meta, "tool": "shell", "arguments": {"command": "echo hello"}, "result": {"for_llm": "hello"}, "duration_ms": 3}),
        ),
        (
            "unicode",
            json!({"tool": "shell", "arguments": {"command": unicode}, "result": {"for_llm": "héllo wörld — 你好 🎉"}}),
        ),
        (
            "empty arguments",
            json!({"tool": "list_dir", "arguments": {}, "result": {"for_llm": "", "is_error": true}}),
        ),
        (
            HUGE,
            json!({"tool": "read_file", "arguments": {"path": "big.txt"}, "result": {"for_llm": big}}),
        ),
    ]
}

fn before_llm(Inputs { big, meta, .. }: Inputs) -> Vec<Sample> {
    vec![
        (
            "plain",
            json!({"meta": meta, "model": "m", "messages": [{"role": "user", "content": "hi"}]}),
        ),
        (
            "unicode",
            json!({"model": "m", "messages": [{"role": "user", "content": "héllo — 你好 🎉"}]}),
        ),
        ("empty arguments", json!({"model": "m", "messages": []})),
        (
            HUGE,
            json!({"model": "m", "messages": [{"role": "user", "content": big}]}),
        ),
    ]
}

fn lifecycle(Inputs { big, unicode, meta }: Inputs) -> Vec<Sample> {
    vec![
        (
            "plain",
            json!({"meta": meta, "event": "session_start", "payload": {"source": "startup"}}),
        ),
        (
            "unicode",
            json!({"event": "user_prompt_submit", "payload": {"prompt": unicode}}),
        ),
        (
            "empty arguments",
            json!({"event": "turn_start", "payload": {}}),
        ),
        (
            HUGE,
            json!({"event": "user_prompt_submit", "payload": {"prompt": big}}),
        ),
    ]
}

fn after_llm(Inputs { big, meta, .. }: Inputs) -> Vec<Sample> {
    vec![
        (
            "plain",
            json!({"meta": meta, "model": "m", "response": {"content": "hello", "finish_reason": "stop"}}),
        ),
        (
            "unicode",
            json!({"model": "m", "response": {"content": "héllo — 你好 🎉"}}),
        ),
        (
            "empty arguments",
            json!({"model": "m", "response": {"content": ""}}),
        ),
        (HUGE, json!({"model": "m", "response": {"content": big}})),
    ]
}

/// The plain sample of `stage`: the call the liveness checks send.
pub(super) fn plain(stage: Stage) -> Value {
    samples(stage).swap_remove(0).1
}

#[cfg(test)]
mod tests {
    use hookhost_protocol::LifecycleParams;
    use hookhost_protocol::params::{AfterLlmParams, AfterToolParams, BeforeLlmParams, ToolCall};
    use serde::Serialize;
    use serde::de::DeserializeOwned;
    use serde_json::Value;

    use super::{Stage, samples};

    /// `params` read as the host's own type for the stage and written back.
    fn as_host_sends<T: DeserializeOwned + Serialize>(params: &Value) -> Value {
        let typed: T = serde_json::from_value(params.clone()).expect("the host's type reads it");
        serde_json::to_value(typed).expect("and writes it")
    }

    /// Every sample is exactly what the host would write for that stage:
    /// read as the host's typed params and written back, it is unchanged
    /// (no key the host would not send, none it would add).
    #[test]
    fn every_sample_is_what_the_host_sends() {
        for stage in Stage::ALL {
            for (label, params) in samples(stage) {
                let sent = match stage {
                    Stage::BeforeTool | Stage::ApproveTool => as_host_sends::<ToolCall>(&params),
                    Stage::AfterTool => as_host_sends::<AfterToolParams>(&params),
                    Stage::BeforeLlm => as_host_sends::<BeforeLlmParams>(&params),
                    Stage::AfterLlm => as_host_sends::<AfterLlmParams>(&params),
                    Stage::Lifecycle => as_host_sends::<LifecycleParams>(&params),
                };
                assert_eq!(sent, params, "{stage}: {label}");
            }
        }
    }
}
