//! docker-agent's chat messages ↔ hookhost's: docker-agent carries text in
//! `content` and a list of parts in `multi_content`; hookhost (spec §5.2)
//! has one `content` that is either. Every other key (`role`,
//! `tool_calls`, `tool_call_id`, ...) is spelled the same and kept.

use serde_json::{Map, Value};

/// hookhost's messages as a docker-agent hook reads them at
/// before_llm_call.
pub(crate) fn to_docker(messages: &[Value]) -> Vec<Value> {
    messages.iter().map(one_to_docker).collect()
}

fn one_to_docker(m: &Value) -> Value {
    let Some(obj) = m.as_object() else {
        return m.clone();
    };
    let mut out: Map<String, Value> = obj.clone();
    match obj.get("content") {
        Some(Value::Array(parts)) => {
            out.insert("content".into(), Value::from(""));
            out.insert("multi_content".into(), Value::Array(parts.clone()));
        }
        Some(Value::String(_)) => {}
        _ => {
            out.insert("content".into(), Value::from(""));
        }
    }
    Value::Object(out)
}

/// A docker-agent hook's `updated_messages` as hookhost's messages: parts
/// in `multi_content` become the `content` list when there is no text.
/// An entry that is not an object, or has no `role`, is an error: the
/// model must never be sent a message the agent cannot read.
pub(crate) fn from_docker(messages: &[Value]) -> Result<Vec<Value>, String> {
    messages
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let obj = m
                .as_object()
                .filter(|o| o.get("role").is_some_and(Value::is_string))
                .ok_or_else(|| format!("`updated_messages[{i}]` is not a message with a `role`"))?;
            let mut out = obj.clone();
            let parts = out.remove("multi_content");
            let text = out.get("content").and_then(Value::as_str).unwrap_or("");
            if let (Some(Value::Array(parts)), true) = (parts, text.is_empty()) {
                out.insert("content".into(), Value::Array(parts));
            }
            Ok(Value::Object(out))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parts_travel_as_multi_content_and_come_back_as_content() {
        let ours = vec![
            json!({"role": "user", "content": [{"type": "text", "text": "hi"}]}),
            json!({"role": "assistant", "tool_calls": [{"id": "c1"}]}),
        ];
        let theirs = to_docker(&ours);
        assert_eq!(theirs[0]["content"], "");
        assert_eq!(theirs[0]["multi_content"][0]["text"], "hi");
        assert_eq!(theirs[1]["content"], "");
        let back = from_docker(&theirs).expect("messages");
        assert_eq!(back[0], ours[0]);
        assert_eq!(back[1]["tool_calls"], ours[1]["tool_calls"]);
        assert!(from_docker(&[json!("text")]).is_err());
        assert!(from_docker(&[json!({"content": "x"})]).is_err());
    }
}
