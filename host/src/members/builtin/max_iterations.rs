//! `max_iterations`: ends a turn whose model/tool loop runs past a limit,
//! so a model stuck calling tools in circles cannot burn tokens and time
//! without end.
//!
//! ```toml
//! [hooks.builtins.max_iterations]
//! config = { max = 25 }
//! ```

use std::error::Error;
use std::sync::Arc;

use hookhost_protocol::Stage;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{
    BuiltinHook, HookFuture, SettingsError, continue_answer, not_intercepted, parse_config, ready,
};

/// The registry name, also the prefix of the abort reason.
pub(crate) const NAME: &str = "max_iterations";

/// The `config` table as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Settings {
    /// The last iteration allowed to run.
    max: u64,
}

/// The built hook.
#[derive(Debug)]
pub(crate) struct MaxIterations {
    /// The last iteration allowed to run; at least 1.
    max: u64,
}

impl MaxIterations {
    /// Builds from the `config` table. `max` is required and at least 1,
    /// since a limit of 0 would abort every turn before its first step.
    pub(crate) fn from_config(config: &Value) -> Result<Self, SettingsError> {
        let settings: Settings = parse_config(config)?;
        if settings.max == 0 {
            return Err(SettingsError::Key {
                key: "max",
                must: "must be at least 1",
            });
        }
        Ok(Self { max: settings.max })
    }

    /// `abort_turn` once `meta.iteration` exceeds the limit. Params without
    /// an integer iteration continue: an agent that does not count
    /// iterations is not limited by this hook.
    fn answer(&self, params: &Value) -> Value {
        let iteration = params
            .get("meta")
            .and_then(|meta| meta.get("iteration"))
            .and_then(Value::as_u64);
        match iteration {
            Some(i) if i > self.max => json!({
                "action": "abort_turn",
                "reason": format!("{NAME}: iteration {i} exceeds the limit of {}", self.max),
            }),
            _ => continue_answer(),
        }
    }
}

impl BuiltinHook for MaxIterations {
    fn intercepts(&self) -> Vec<Stage> {
        vec![Stage::BeforeLlm, Stage::BeforeTool]
    }

    fn call<'a>(&'a self, stage: Stage, params: &'a Value) -> HookFuture<'a> {
        ready(match stage {
            Stage::BeforeLlm | Stage::BeforeTool => Ok(self.answer(params)),
            other => Err(not_intercepted(NAME, other)),
        })
    }
}

/// The registry's factory for `max_iterations`.
pub(crate) fn factory(
    config: &Value,
) -> Result<Arc<dyn BuiltinHook>, Box<dyn Error + Send + Sync>> {
    Ok(Arc::new(MaxIterations::from_config(config)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hookhost_protocol::{Decision, decode_result};

    fn limit(max: u64) -> Arc<dyn BuiltinHook> {
        factory(&json!({"max": max})).expect("valid config")
    }

    /// Params for `stage` with `meta` set as given (or left out).
    fn params(stage: Stage, meta: Option<Value>) -> Value {
        let mut p = match stage {
            Stage::BeforeLlm => json!({"model": "m", "messages": []}),
            _ => json!({"tool": "shell", "arguments": {}}),
        };
        if let Some(meta) = meta {
            p["meta"] = meta;
        }
        p
    }

    async fn answer(hook: &Arc<dyn BuiltinHook>, stage: Stage, meta: Option<Value>) -> Value {
        let params = params(stage, meta);
        let answer = hook.call(stage, &params).await.expect("answer");
        decode_result(stage, &answer).expect("answer decodes");
        answer
    }

    #[tokio::test]
    async fn aborts_the_turn_past_the_limit_at_both_stages() {
        let hook = limit(3);
        assert_eq!(hook.intercepts(), [Stage::BeforeLlm, Stage::BeforeTool]);
        for stage in [Stage::BeforeLlm, Stage::BeforeTool] {
            let got = answer(&hook, stage, Some(json!({"turn_id": "t", "iteration": 4}))).await;
            let reason = "max_iterations: iteration 4 exceeds the limit of 3";
            assert_eq!(got, json!({"action": "abort_turn", "reason": reason}));
            assert_eq!(
                decode_result(stage, &got),
                Ok(Decision::Abort {
                    hard: false,
                    reason: Some(reason.to_string())
                })
            );
        }
    }

    #[tokio::test]
    async fn continues_up_to_and_at_the_limit() {
        let hook = limit(3);
        for stage in [Stage::BeforeLlm, Stage::BeforeTool] {
            for i in [0, 1, 3] {
                let got = answer(&hook, stage, Some(json!({"iteration": i}))).await;
                assert_eq!(got, json!({"action": "continue"}), "{stage} iteration {i}");
                assert_eq!(decode_result(stage, &got), Ok(Decision::Continue));
            }
        }
        let got = answer(&limit(1), Stage::BeforeTool, Some(json!({"iteration": 2}))).await;
        assert_eq!(got["action"], "abort_turn");
    }

    #[tokio::test]
    async fn continues_without_meta_or_iteration() {
        let hook = limit(1);
        for stage in [Stage::BeforeLlm, Stage::BeforeTool] {
            assert_eq!(
                answer(&hook, stage, None).await,
                json!({"action": "continue"})
            );
            assert_eq!(
                answer(&hook, stage, Some(json!({"turn_id": "t"}))).await,
                json!({"action": "continue"})
            );
        }
    }

    #[tokio::test]
    async fn a_stage_it_does_not_intercept_is_an_error() {
        let err = limit(1)
            .call(Stage::AfterTool, &json!({"meta": {"iteration": 9}}))
            .await
            .expect_err("not intercepted");
        assert_eq!(err, "max_iterations does not intercept after_tool");
    }

    #[test]
    fn max_is_required_and_at_least_one() {
        let err = factory(&json!({})).err().expect("missing max").to_string();
        assert!(err.contains("missing field `max`"), "{err}");
        let err = factory(&Value::Null)
            .err()
            .expect("missing max")
            .to_string();
        assert!(err.contains("missing field `max`"), "{err}");
        assert_eq!(
            factory(&json!({"max": 0}))
                .err()
                .expect("zero max")
                .to_string(),
            "`config.max` must be at least 1"
        );
        let err = factory(&json!({"max": -2}))
            .err()
            .expect("negative max")
            .to_string();
        assert!(err.contains("invalid value"), "{err}");
        let err = factory(&json!({"max": "5"}))
            .err()
            .expect("string max")
            .to_string();
        assert!(err.contains("invalid type"), "{err}");
    }

    #[test]
    fn an_unknown_key_is_named() {
        let err = factory(&json!({"max": 5, "maximum": 6}))
            .err()
            .expect("unknown key")
            .to_string();
        assert!(err.contains("unknown field `maximum`"), "{err}");
    }
}
