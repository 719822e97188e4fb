//! `redact_secrets`: masks secret-looking tokens (API keys, bearer tokens,
//! private key blocks) in a tool's result before the model or the user sees
//! it, so a key a tool happened to print does not leak into the
//! conversation. The masking itself is [`crate::observe::redact::redact`], shared
//! with the audit log.
//!
//! ```toml
//! [hooks.builtins.redact_secrets]
//! ```

use std::error::Error;
use std::sync::Arc;

use hookhost_protocol::Stage;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{
    BuiltinHook, HookFuture, SettingsError, continue_answer, not_intercepted, parse_config, ready,
};
use crate::observe::redact::redact;

/// The registry name.
pub(crate) const NAME: &str = "redact_secrets";

/// The tool result fields that hold text someone reads.
const FIELDS: [&str; 2] = ["for_llm", "for_user"];

/// The `config` table: no keys yet, but any key is still an error so a
/// typo is not silently ignored.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Settings {}

/// The built hook; it has no settings.
#[derive(Debug)]
pub(crate) struct RedactSecrets;

impl RedactSecrets {
    /// Builds from the `config` table, which must be empty (or absent).
    pub(crate) fn from_config(config: &Value) -> Result<Self, SettingsError> {
        let Settings {} = parse_config(config)?;
        Ok(Self)
    }

    /// The after_tool answer: a merge patch naming only the fields that
    /// changed, so later hooks' and the agent's other fields stay as they
    /// are; `continue` when nothing needed masking.
    fn answer(params: &Value) -> Value {
        let Some(result) = params.get("result") else {
            return continue_answer();
        };
        let mut changed = Map::new();
        for field in FIELDS {
            if let Some(text) = result.get(field).and_then(Value::as_str) {
                let masked = redact(text);
                if masked != text {
                    changed.insert(field.to_string(), Value::String(masked.into_owned()));
                }
            }
        }
        if changed.is_empty() {
            continue_answer()
        } else {
            json!({"action": "modify", "result": {"result": changed}})
        }
    }
}

impl BuiltinHook for RedactSecrets {
    fn intercepts(&self) -> Vec<Stage> {
        vec![Stage::AfterTool]
    }

    fn call<'a>(&'a self, stage: Stage, params: &'a Value) -> HookFuture<'a> {
        ready(match stage {
            Stage::AfterTool => Ok(Self::answer(params)),
            other => Err(not_intercepted(NAME, other)),
        })
    }
}

/// The registry's factory for `redact_secrets`.
pub(crate) fn factory(
    config: &Value,
) -> Result<Arc<dyn BuiltinHook>, Box<dyn Error + Send + Sync>> {
    Ok(Arc::new(RedactSecrets::from_config(config)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hookhost_protocol::{Chain, Decision, OnError, Outcome, decode_result};

    const KEY: &str = "sk-proj-abcdefghijklmnop1234";

    fn hook() -> Arc<dyn BuiltinHook> {
        factory(&json!({})).expect("empty config")
    }

    async fn answer(result: Value) -> Value {
        let params = json!({"tool": "shell", "arguments": {"command": "env"}, "result": result});
        let answer = hook()
            .call(Stage::AfterTool, &params)
            .await
            .expect("answer");
        decode_result(Stage::AfterTool, &answer).expect("answer decodes");
        answer
    }

    #[tokio::test]
    async fn masks_for_llm_and_patches_only_that_field() {
        let got =
            answer(json!({"for_llm": format!("OPENAI_API_KEY={KEY}\nLANG=C"), "for_user": "done"}))
                .await;
        assert_eq!(
            got,
            json!({"action": "modify", "result": {"result": {"for_llm": "OPENAI_API_KEY=[REDACTED]\nLANG=C"}}})
        );
        let Ok(Decision::Modify(patch)) = decode_result(Stage::AfterTool, &got) else {
            panic!("not a modify: {got}");
        };
        assert_eq!(
            Value::Object(patch),
            json!({"result": {"for_llm": "OPENAI_API_KEY=[REDACTED]\nLANG=C"}})
        );
    }

    #[tokio::test]
    async fn masks_for_user_too() {
        let got = answer(json!({
            "for_llm": "Authorization: Bearer abc.def",
            "for_user": "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----",
        }))
        .await;
        assert_eq!(
            got,
            json!({"action": "modify", "result": {"result": {
                "for_llm": "Authorization: Bearer [REDACTED]",
                "for_user": "[REDACTED]",
            }}})
        );
        let got = answer(json!({"for_llm": "clean", "for_user": KEY})).await;
        assert_eq!(
            got,
            json!({"action": "modify", "result": {"result": {"for_user": "[REDACTED]"}}})
        );
    }

    #[tokio::test]
    async fn continues_when_nothing_is_secret() {
        let got = answer(json!({"for_llm": "hello", "for_user": "hi"})).await;
        assert_eq!(got, json!({"action": "continue"}));
        assert_eq!(
            decode_result(Stage::AfterTool, &got),
            Ok(Decision::Continue)
        );
        // Already masked text is not masked again.
        let got = answer(json!({"for_llm": "Bearer [REDACTED] and [REDACTED]"})).await;
        assert_eq!(got, json!({"action": "continue"}));
    }

    #[tokio::test]
    async fn the_patch_applied_by_the_chain_masks_and_keeps_the_rest() {
        let params = json!({
            "tool": "shell",
            "arguments": {"command": "env"},
            "result": {"for_llm": format!("K={KEY}"), "for_user": "ran env", "is_error": true},
        });
        let answer = hook()
            .call(Stage::AfterTool, &params)
            .await
            .expect("answer");
        let mut chain = Chain::new(Stage::AfterTool, params).expect("valid params");
        chain.step(NAME, OnError::Allow, Ok(&answer));
        assert_eq!(
            chain.params()["result"],
            json!({"for_llm": "K=[REDACTED]", "for_user": "ran env", "is_error": true})
        );
        assert!(matches!(
            chain.finish(),
            Outcome::Continue { modified: true, .. }
        ));
    }

    #[tokio::test]
    async fn a_stage_it_does_not_intercept_is_an_error() {
        let err = hook()
            .call(
                Stage::AfterLlm,
                &json!({"model": "m", "response": {"content": KEY}}),
            )
            .await
            .expect_err("not intercepted");
        assert_eq!(err, "redact_secrets does not intercept after_llm");
        assert_eq!(hook().intercepts(), [Stage::AfterTool]);
    }

    #[test]
    fn config_takes_no_keys() {
        assert!(factory(&Value::Null).is_ok());
        let err = factory(&json!({"patterns": []}))
            .err()
            .expect("unknown key")
            .to_string();
        assert!(err.contains("unknown field `patterns`"), "{err}");
    }
}
