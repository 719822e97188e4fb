//! `[hooks.prompts.NAME]`: a hook that asks a language model for its
//! decision (GoClaw's `prompt` handler, Claude Code's `prompt` hooks,
//! docker-agent's `model` hooks), and [`ModelConfig`], the part that says
//! which model and within what bounds.
//!
//! A prompt hook is selected and answered like a command hook of its
//! dialect (the same events, matcher, `if`, permission rule and failure
//! policy), so it becomes a [`CommandConfig`] whose runner is the model
//! instead of a program: see [`PromptConfig::command`].

use super::read::Kind;
use super::settings::{HookSettings, section};
use super::{Config, HookSpec};
use hookhost_protocol::lifecycle::LifecycleEvent;
use serde::Deserialize;
use std::collections::BTreeMap;

use super::command::CommandConfig;
use super::on_error::FailurePolicy;
use crate::dialect::Dialect;
use crate::dialect::spec::Target;

/// Which HTTP API the model is reached through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Provider {
    /// An OpenAI-compatible chat-completions endpoint
    /// (`POST {base_url}/chat/completions`): OpenAI, and the many servers
    /// that speak its API (vLLM, llama.cpp, Ollama, LiteLLM, ...).
    Openai,
    /// The Anthropic Messages API (`POST {base_url}/v1/messages`).
    Anthropic,
}

impl Provider {
    /// The provider's public endpoint, used when `base_url` is absent.
    pub fn default_base_url(self) -> &'static str {
        match self {
            Provider::Openai => "https://api.openai.com/v1",
            Provider::Anthropic => "https://api.anthropic.com",
        }
    }
}

/// Which model answers and within what bounds: what a prompt hook needs
/// beyond the selection keys every command hook has.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ModelConfig {
    /// The API.
    pub provider: Provider,
    /// Where the API is served; may name variables as `${env:NAME}`.
    pub base_url: String,
    /// The model's name at the provider.
    pub model: String,
    /// The API key, usually `${env:NAME}` so it is never written in the
    /// file; read at each call, so a rotated key is picked up.
    pub api_key: Option<String>,
    /// The instruction; `$ARGUMENTS` is replaced by the event's JSON (in
    /// the hook's dialect), which is appended when the prompt lacks it.
    pub prompt: String,
    /// The most tokens the model may write per call.
    pub max_tokens: u32,
    /// Tokens (prompt and answer) one session may spend on this hook;
    /// past it every call fails, decided by `on_error`.
    pub session_token_cap: Option<u64>,
    /// Tokens this hook may spend in the life of the host process.
    pub process_token_cap: Option<u64>,
    /// How long an identical evaluation (same model, prompt and event) is
    /// answered from memory; 0 turns the cache off.
    pub cache_ttl_ms: u64,
    /// Requests in flight to the provider at once, for this hook.
    pub max_concurrency: usize,
    /// The largest event (its JSON, in the hook's dialect) sent to the
    /// model; a larger one is not sent and the call fails, decided by
    /// `on_error` (a guard never judges a cut event). Bounds what one
    /// call can cost.
    pub max_input_bytes: usize,
}

impl ModelConfig {
    /// A model config with the defaults for everything but the model and
    /// the prompt.
    pub fn new(provider: Provider, model: &str, prompt: &str) -> Self {
        Self {
            provider,
            base_url: provider.default_base_url().to_string(),
            model: model.to_string(),
            api_key: None,
            prompt: prompt.to_string(),
            max_tokens: DEFAULT_MAX_TOKENS,
            session_token_cap: None,
            process_token_cap: None,
            cache_ttl_ms: DEFAULT_CACHE_TTL_MS,
            max_concurrency: DEFAULT_CONCURRENCY,
            max_input_bytes: DEFAULT_MAX_INPUT_BYTES,
        }
    }

    /// Claude Code's own `prompt` handlers: the Anthropic API at
    /// `ANTHROPIC_BASE_URL` (its public endpoint when unset) with
    /// `ANTHROPIC_API_KEY`, the handler's `model` or a small fast one, as
    /// Claude Code runs them.
    pub fn claude_code(prompt: &str, model: Option<&str>) -> Self {
        let mut c = Self::new(
            Provider::Anthropic,
            model.unwrap_or(CLAUDE_DEFAULT_MODEL),
            prompt,
        );
        if let Ok(url) = std::env::var("ANTHROPIC_BASE_URL") {
            if !url.trim().is_empty() {
                c.base_url = url;
            }
        }
        c.api_key = Some("${env:ANTHROPIC_API_KEY}".to_string());
        c
    }
}

/// The model Claude Code's `prompt` handlers use when they name none.
pub(super) const CLAUDE_DEFAULT_MODEL: &str = "claude-haiku-4-5";
const DEFAULT_MAX_TOKENS: u32 = 512;
const DEFAULT_CACHE_TTL_MS: u64 = 60_000;
const DEFAULT_CONCURRENCY: usize = 4;
/// The largest event sent to a model by default: 64 KiB of JSON.
const DEFAULT_MAX_INPUT_BYTES: usize = 64 * 1024;
/// A prompt hook's default deadline: a model takes seconds, not the
/// milliseconds a process hook gets.
const DEFAULT_TIMEOUT_MS: u64 = 30_000;

/// `[hooks.prompts.NAME]`: one prompt hook as configured.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
pub struct PromptConfig {
    /// The keys every kind shares (read as the section's own: `deref`).
    #[serde(skip)]
    pub settings: HookSettings,
    /// `openai` or `anthropic`.
    pub provider: Provider,
    /// The API's base URL; the provider's public one when absent.
    #[serde(default)]
    pub base_url: Option<String>,
    /// The model's name at the provider.
    pub model: String,
    /// The API key, usually `${env:NAME}`.
    #[serde(default)]
    pub api_key: Option<String>,
    /// The instruction, with `$ARGUMENTS` where the event goes.
    pub prompt: String,
    /// Whose event names `events` uses and whose event JSON the model
    /// reads; Claude Code's when absent.
    #[serde(default = "super::hooks::claude_code")]
    pub dialect: Dialect,
    /// The dialect's event names the hook runs for.
    pub events: Vec<String>,
    /// A Claude Code permission rule the tool call must match.
    #[serde(default)]
    pub rule: Option<String>,
    /// The most tokens the model may write per call (512).
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// Tokens one session may spend on this hook.
    #[serde(default)]
    pub session_token_cap: Option<u64>,
    /// Tokens this hook may spend in the life of the host process.
    #[serde(default)]
    pub process_token_cap: Option<u64>,
    /// How long an identical evaluation is answered from memory (60 s).
    #[serde(default)]
    pub cache_ttl_ms: Option<u64>,
    /// Requests in flight to the provider at once (4).
    #[serde(default)]
    pub max_concurrency: Option<usize>,
    /// The largest event sent to the model, in bytes of JSON (64 KiB); a
    /// larger one fails the call, decided by `on_error`.
    #[serde(default)]
    pub max_input_bytes: Option<usize>,
}

section!(PromptConfig);

/// Why a `[hooks.prompts]` entry cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PromptConfigError {
    /// Neither `matcher`, `if` nor `rule`: the hook would ask the model
    /// on every call.
    #[error(
        "a prompt hook needs `matcher`, `if` or `rule`, so that it never asks the model on every call by accident"
    )]
    Unfiltered,
    /// An event nobody waits on: the model's answer could not be used.
    #[error("`events`: {0:?} takes no answer, so a model asked there would only spend tokens")]
    NoAnswer(String),
    /// A value that cannot be used.
    #[error("`{0}` {1}")]
    Bad(&'static str, &'static str),
}

impl PromptConfig {
    /// Checks what serde cannot: a filter, and bounds that can hold.
    pub fn validate(&self) -> Result<(), PromptConfigError> {
        if self.matcher.is_none() && self.condition.is_none() && self.rule.is_none() {
            return Err(PromptConfigError::Unfiltered);
        }
        let bad = PromptConfigError::Bad;
        if self.model.trim().is_empty() {
            return Err(bad("model", "is empty"));
        }
        if self.prompt.trim().is_empty() {
            return Err(bad("prompt", "is empty"));
        }
        if self.max_tokens == Some(0) {
            return Err(bad("max_tokens", "must be at least 1"));
        }
        if self.max_input_bytes == Some(0) {
            return Err(bad("max_input_bytes", "must be at least 1"));
        }
        if self.max_concurrency == Some(0) {
            return Err(bad("max_concurrency", "must be at least 1"));
        }
        if self.timeout_ms == Some(0) {
            return Err(bad("timeout_ms", "must be positive"));
        }
        let spec = self.dialect.spec();
        for name in &self.events {
            let observed = match spec.event(name).map(|e| e.target) {
                Some(Target::Lifecycle(n)) => {
                    n.parse::<LifecycleEvent>().is_ok_and(|e| !e.is_request())
                }
                _ => false,
            };
            if observed {
                return Err(PromptConfigError::NoAnswer(name.clone()));
            }
        }
        Ok(())
    }

    /// The model part.
    pub fn model_config(&self) -> ModelConfig {
        let mut m = ModelConfig::new(self.provider, &self.model, &self.prompt);
        if let Some(url) = &self.base_url {
            m.base_url = url.clone();
        }
        m.api_key = self.api_key.clone();
        m.max_tokens = self.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
        m.session_token_cap = self.session_token_cap;
        m.process_token_cap = self.process_token_cap;
        m.cache_ttl_ms = self.cache_ttl_ms.unwrap_or(DEFAULT_CACHE_TTL_MS);
        m.max_concurrency = self.max_concurrency.unwrap_or(DEFAULT_CONCURRENCY);
        m.max_input_bytes = self.max_input_bytes.unwrap_or(DEFAULT_MAX_INPUT_BYTES);
        m
    }

    /// The command hook it runs as: the same selection and failure policy,
    /// the model as its runner.
    pub fn command(&self) -> CommandConfig {
        CommandConfig {
            settings: HookSettings {
                timeout_ms: Some(self.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS)),
                on_error: Some(self.on_error.unwrap_or(FailurePolicy::Block)),
                ..self.settings.clone()
            },
            events: self.events.clone(),
            rule: self.rule.clone(),
            dialect: self.dialect,
            model: Some(Box::new(self.model_config())),
            ..CommandConfig::default()
        }
    }
}

impl Kind for PromptConfig {
    const NOUN: &'static str = "prompt hook";
    const NEEDS: Option<(&'static str, &'static str, bool)> =
        Some(("a prompt hook", "remote", cfg!(feature = "remote")));

    fn section(config: &mut Config) -> &mut BTreeMap<String, Self> {
        &mut config.prompts
    }

    fn spec(&self, name: &str, tool_names: &std::sync::Arc<BTreeMap<String, String>>) -> HookSpec {
        HookSpec::command(name, self.command(), tool_names)
    }

    fn check(&self, config: &Config, name: &str) -> Result<(), String> {
        self.validate().map_err(|e| e.to_string())?;
        self.command().validate().map_err(|e| e.to_string())?;
        if config.commands.contains_key(name) {
            return Err("a command hook has the same name".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::CommandOnError;

    fn parse(toml: &str) -> Result<PromptConfig, String> {
        toml::from_str(toml).map_err(|e| e.to_string())
    }

    const BASE: &str = r#"
provider = "openai"
model = "gpt-4o-mini"
prompt = "Is this safe? $ARGUMENTS"
events = ["PreToolUse"]
"#;

    #[test]
    fn a_filter_is_required() {
        let p = parse(BASE).unwrap();
        assert_eq!(p.validate(), Err(PromptConfigError::Unfiltered));
        let p = parse(&format!("{BASE}matcher = \"Bash\"\n")).unwrap();
        assert_eq!(p.validate(), Ok(()));
        let p = parse(&format!("{BASE}\"if\" = \"tool == 'shell'\"\n")).unwrap();
        assert_eq!(p.validate(), Ok(()));
    }

    #[test]
    fn an_event_that_takes_no_answer_is_refused() {
        let p = parse(&format!("{BASE}matcher = \"Bash\"\n").replace("PreToolUse", "SessionEnd"));
        let e = p.unwrap().validate().unwrap_err();
        assert_eq!(e, PromptConfigError::NoAnswer("SessionEnd".into()));
    }

    #[test]
    fn unknown_keys_and_providers_are_refused() {
        let e = parse(&format!("{BASE}matcher = \"Bash\"\nmax_token = 5\n")).unwrap_err();
        assert!(e.contains("max_token"), "{e}");
        let e = parse(&BASE.replace("openai", "gemini")).unwrap_err();
        assert!(e.contains("gemini"), "{e}");
    }

    #[test]
    fn runs_as_a_fail_closed_command_hook_of_its_dialect() {
        let p = parse(&format!("{BASE}matcher = \"Bash\"\n")).unwrap();
        let c = p.command();
        assert_eq!(c.dialect, Dialect::ClaudeCode);
        assert_eq!(c.on_error, Some(CommandOnError::Block));
        assert_eq!(c.timeout_ms, Some(30_000));
        let m = c.model.unwrap();
        assert_eq!(m.base_url, "https://api.openai.com/v1");
        assert_eq!((m.max_tokens, m.cache_ttl_ms), (512, 60_000));
    }
}
