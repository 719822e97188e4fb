//! `deny_tools`: denies tool calls whose tool name matches a configured
//! regex, so an operator can switch whole tools off with a config line
//! instead of writing a hook process.
//!
//! ```toml
//! [hooks.builtins.deny_tools]
//! config = { tools = ["shell", "web_.*"], reason = "no shell or web here" }
//! ```

use std::error::Error;
use std::sync::Arc;

use hookhost_protocol::Stage;
use regex::Regex;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{
    BuiltinHook, HookFuture, SettingsError, continue_answer, not_intercepted, parse_config, ready,
};

/// The registry name, also the prefix of the default denial reason.
pub(crate) const NAME: &str = "deny_tools";

/// The `config` table as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Settings {
    /// Regexes over the tool name, each anchored at both ends.
    tools: Vec<String>,
    /// The reason given to the model instead of the generated one.
    #[serde(default)]
    reason: Option<String>,
}

/// One configured pattern: the text as written (for the reason) and its
/// anchored compiled form (for matching).
#[derive(Debug)]
struct Rule {
    /// The pattern as the config has it.
    pattern: String,
    /// `^(?:pattern)$`.
    regex: Regex,
}

/// The built hook: a list of anchored regexes and an optional fixed reason.
#[derive(Debug)]
pub(crate) struct DenyTools {
    /// In config order; the first match names the pattern in the reason.
    rules: Vec<Rule>,
    /// The configured reason, if any.
    reason: Option<String>,
}

impl DenyTools {
    /// Builds from the `config` table. Errors name the bad key or the
    /// regex that does not compile, so the operator knows what to fix.
    pub(crate) fn from_config(config: &Value) -> Result<Self, SettingsError> {
        let settings: Settings = parse_config(config)?;
        if settings.tools.is_empty() {
            return Err(SettingsError::Key {
                key: "tools",
                must: "must list at least one tool name regex",
            });
        }
        let mut rules = Vec::with_capacity(settings.tools.len());
        for (i, pattern) in settings.tools.into_iter().enumerate() {
            // Compiling the pattern on its own first rejects text such as
            // `a)|(b`, which would compile once wrapped but escape the
            // anchors.
            let anchored = Regex::new(&pattern)
                .and_then(|_| Regex::new(&format!("^(?:{pattern})$")))
                .map_err(|source| SettingsError::Regex {
                    index: i,
                    pattern: pattern.clone(),
                    source,
                })?;
            rules.push(Rule {
                pattern,
                regex: anchored,
            });
        }
        Ok(Self {
            rules,
            reason: settings.reason,
        })
    }

    /// The before_tool answer for `params`. A params object without a
    /// string `tool` is an error rather than a continue: a deny list that
    /// cannot see the tool name must not wave the call through silently;
    /// the hook's `on_error` policy decides instead.
    fn answer(&self, params: &Value) -> Result<Value, String> {
        let Some(tool) = params.get("tool").and_then(Value::as_str) else {
            return Err(format!("{NAME}: before_tool params have no string `tool`"));
        };
        let Some(rule) = self.rules.iter().find(|r| r.regex.is_match(tool)) else {
            return Ok(continue_answer());
        };
        let reason = match &self.reason {
            Some(reason) => reason.clone(),
            None => format!("{NAME}: tool `{tool}` matches `{}`", rule.pattern),
        };
        Ok(json!({"action": "deny_tool", "reason": reason}))
    }
}

impl BuiltinHook for DenyTools {
    fn intercepts(&self) -> Vec<Stage> {
        vec![Stage::BeforeTool]
    }

    fn call<'a>(&'a self, stage: Stage, params: &'a Value) -> HookFuture<'a> {
        ready(match stage {
            Stage::BeforeTool => self.answer(params),
            other => Err(not_intercepted(NAME, other)),
        })
    }
}

/// The registry's factory for `deny_tools`.
pub(crate) fn factory(
    config: &Value,
) -> Result<Arc<dyn BuiltinHook>, Box<dyn Error + Send + Sync>> {
    Ok(Arc::new(DenyTools::from_config(config)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hookhost_protocol::{Decision, decode_result};

    fn build(config: Value) -> Arc<dyn BuiltinHook> {
        factory(&config).expect("valid config")
    }

    fn config_error(config: Value) -> String {
        factory(&config)
            .err()
            .expect("config must be rejected")
            .to_string()
    }

    async fn answer(hook: &Arc<dyn BuiltinHook>, tool: &str) -> Value {
        let params = json!({"tool": tool, "arguments": {"command": "ls"}});
        let answer = hook.call(Stage::BeforeTool, &params).await.expect("answer");
        decode_result(Stage::BeforeTool, &answer).expect("answer decodes");
        answer
    }

    #[tokio::test]
    async fn denies_a_matching_tool_with_the_generated_reason() {
        let hook = build(json!({"tools": ["shell", "web_.*"]}));
        assert_eq!(hook.intercepts(), [Stage::BeforeTool]);
        let got = answer(&hook, "web_fetch").await;
        assert_eq!(
            got,
            json!({"action": "deny_tool", "reason": "deny_tools: tool `web_fetch` matches `web_.*`"})
        );
        assert_eq!(
            decode_result(Stage::BeforeTool, &got),
            Ok(Decision::DenyTool(Some(
                "deny_tools: tool `web_fetch` matches `web_.*`".to_string()
            )))
        );
        assert_eq!(
            answer(&hook, "shell").await["reason"],
            "deny_tools: tool `shell` matches `shell`"
        );
    }

    #[tokio::test]
    async fn uses_the_configured_reason() {
        let hook = build(json!({"tools": ["shell"], "reason": "no shell here"}));
        assert_eq!(
            answer(&hook, "shell").await,
            json!({"action": "deny_tool", "reason": "no shell here"})
        );
    }

    #[tokio::test]
    async fn continues_for_a_tool_no_pattern_matches() {
        let hook = build(json!({"tools": ["shell", "web_.*"]}));
        let got = answer(&hook, "read_file").await;
        assert_eq!(got, json!({"action": "continue"}));
        assert_eq!(
            decode_result(Stage::BeforeTool, &got),
            Ok(Decision::Continue)
        );
    }

    #[tokio::test]
    async fn patterns_are_anchored_at_both_ends() {
        let hook = build(json!({"tools": ["Edit"]}));
        assert_eq!(answer(&hook, "Edit").await["action"], "deny_tool");
        assert_eq!(answer(&hook, "NotebookEdit").await["action"], "continue");
        assert_eq!(answer(&hook, "EditFile").await["action"], "continue");

        // An alternation stays inside the anchors.
        let hook = build(json!({"tools": ["Edit|Write"]}));
        assert_eq!(answer(&hook, "Write").await["action"], "deny_tool");
        assert_eq!(answer(&hook, "NotebookEdit").await["action"], "continue");
        assert_eq!(answer(&hook, "WriteFile").await["action"], "continue");
    }

    #[tokio::test]
    async fn params_without_a_tool_name_are_a_hook_failure() {
        let hook = build(json!({"tools": ["shell"]}));
        let err = hook
            .call(Stage::BeforeTool, &json!({"arguments": {}}))
            .await
            .expect_err("no tool name");
        assert_eq!(err, "deny_tools: before_tool params have no string `tool`");
    }

    #[tokio::test]
    async fn a_stage_it_does_not_intercept_is_an_error() {
        let hook = build(json!({"tools": ["shell"]}));
        let err = hook
            .call(Stage::ApproveTool, &json!({"tool": "shell"}))
            .await
            .expect_err("not intercepted");
        assert_eq!(err, "deny_tools does not intercept approve_tool");
    }

    #[test]
    fn an_unknown_key_is_named() {
        let err = config_error(json!({"tools": ["shell"], "tool": "x"}));
        assert!(err.contains("unknown field `tool`"), "{err}");
    }

    #[test]
    fn tools_is_required_and_non_empty() {
        let err = config_error(json!({"reason": "x"}));
        assert!(err.contains("missing field `tools`"), "{err}");
        let err = config_error(Value::Null);
        assert!(err.contains("missing field `tools`"), "{err}");
        assert_eq!(
            config_error(json!({"tools": []})),
            "`config.tools` must list at least one tool name regex"
        );
        let err = config_error(json!({"tools": "shell"}));
        assert!(err.contains("invalid type"), "{err}");
    }

    #[test]
    fn an_invalid_regex_is_named() {
        let err = config_error(json!({"tools": ["shell", "web_(", "x"]}));
        assert!(
            err.starts_with("`config.tools[1]`: invalid regex `web_(`: "),
            "{err}"
        );
    }

    #[test]
    fn a_pattern_that_would_escape_the_anchors_is_rejected() {
        let err = config_error(json!({"tools": ["a)|(b"]}));
        assert!(
            err.starts_with("`config.tools[0]`: invalid regex `a)|(b`: "),
            "{err}"
        );
    }
}
