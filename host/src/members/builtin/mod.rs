//! In-process builtin hooks.
//!
//! A builtin answers a stage exactly as a process hook would on the wire:
//! it gets the stage's params object and returns the stage's result object.
//! That is what lets the chain treat both kinds alike (same decoding, same
//! legality checks, same merge patches, same `on_error` policies, one
//! ordering by priority then name) while a builtin costs no process, no
//! pipe and no serialization round trip.
//!
//! Builtins are configured as `[hooks.builtins.NAME]` with a free-form
//! `config = {...}` table, so each one is built by name through a
//! [`BuiltinRegistry`] that turns that table into a ready hook. The
//! registry starts with the shipped builtins ([`deny_tools`],
//! [`redact_secrets`], [`max_iterations`], and docker-agent's context
//! builtins in [`context`]); an embedder registers its own.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use hookhost_protocol::Stage;
use hookhost_protocol::action::type_name;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

pub(crate) mod context;
pub(crate) mod deny_tools;
pub(crate) mod max_iterations;
pub(crate) mod redact_secrets;

/// The future a builtin returns: the stage's result object in protocol
/// shape, or an error text (a hook failure, handled by the hook's
/// `on_error` policy). Boxed so the trait stays object safe and builtins of
/// different types sit in one chain.
pub type HookFuture<'a> = Pin<Box<dyn Future<Output = Result<Value, String>> + Send + 'a>>;

/// An in-process hook. It answers exactly like a process hook would on the
/// wire (same result objects), so the chain treats both kinds alike.
pub trait BuiltinHook: Send + Sync + 'static {
    /// Stages it answers, so the chain calls it only where it has
    /// something to say (the in-process counterpart of a hello's
    /// `intercept`).
    fn intercepts(&self) -> Vec<Stage>;

    /// Answers one call. `params` is the stage's params object as the chain
    /// has it now (earlier hooks' patches applied).
    fn call<'a>(&'a self, stage: Stage, params: &'a Value) -> HookFuture<'a>;
}

/// Builds a builtin from its `config = {...}` table (as JSON). The error is
/// any error type (`"text".into()` works too); its message should name the
/// bad key, so a config error points at what to fix. The registry passes
/// it on as [`BuiltinError::Config`].
pub type BuiltinFactory = Arc<
    dyn Fn(&Value) -> Result<Arc<dyn BuiltinHook>, Box<dyn std::error::Error + Send + Sync>>
        + Send
        + Sync,
>;

/// Why [`BuiltinRegistry::build`] could not build a builtin.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuiltinError {
    /// No factory of that name; the message lists the known ones.
    #[error("unknown builtin `{name}` (known: {known})")]
    Unknown {
        /// The name asked for.
        name: String,
        /// The registered names, comma-separated, or `none`.
        known: String,
    },
    /// The factory refused the `config` table; its message, unchanged.
    #[error("{0}")]
    Config(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// What is wrong with a shipped builtin's `config` table; the message
/// names the key.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SettingsError {
    /// `config` is not a table.
    #[error("`config` must be a table, got {0}")]
    NotATable(&'static str),
    /// Serde refused it (unknown key, wrong type, missing key).
    #[error("`config`: {0}")]
    Decode(#[source] serde_json::Error),
    /// A key whose value is out of range, with what it must be.
    #[error("`config.{key}` {must}")]
    Key {
        /// The key.
        key: &'static str,
        /// `must be at least 1`, ...
        must: &'static str,
    },
    /// A tool-name pattern that does not compile (anchored).
    #[error("`config.tools[{index}]`: invalid regex `{pattern}`: {source}")]
    Regex {
        /// Its place in `tools`.
        index: usize,
        /// As written.
        pattern: String,
        /// The regex crate's error.
        source: regex::Error,
    },
}

/// The builtins a host can build by name. Kept as a value (not a global)
/// so an embedder can add its own or leave the shipped ones out, and so
/// tests do not share state.
#[derive(Clone, Default)]
pub struct BuiltinRegistry {
    /// Factories by name; a `BTreeMap` so names come out sorted.
    factories: BTreeMap<String, BuiltinFactory>,
}

impl BuiltinRegistry {
    /// A registry with no builtins, for embedders that want only their own.
    pub fn empty() -> Self {
        Self::default()
    }

    /// The shipped builtins: `deny_tools`, `max_iterations`,
    /// `redact_secrets` and docker-agent's eight context builtins
    /// (`add_date`, `add_git_status`, ...); what a config
    /// can name without any embedder code.
    pub fn with_defaults() -> Self {
        let mut registry = Self::empty();
        registry.register(deny_tools::NAME, Arc::new(deny_tools::factory));
        registry.register(max_iterations::NAME, Arc::new(max_iterations::factory));
        registry.register(redact_secrets::NAME, Arc::new(redact_secrets::factory));
        context::register(&mut registry);
        registry
    }

    /// Adds or replaces one (embedders register their own; replacing lets
    /// an embedder swap a shipped builtin for its own version).
    pub fn register(&mut self, name: impl Into<String>, factory: BuiltinFactory) {
        self.factories.insert(name.into(), factory);
    }

    /// Whether `name` can be built, so config loading can reject an unknown
    /// builtin before anything starts.
    pub fn contains(&self, name: &str) -> bool {
        self.factories.contains_key(name)
    }

    /// Sorted names, for error messages ("known: deny_tools,
    /// max_iterations, redact_secrets").
    pub fn names(&self) -> Vec<String> {
        self.factories.keys().cloned().collect()
    }

    /// Builds `name` from `config`. Errors: an unknown name (the message
    /// lists the known ones) or the factory's error, passed on unchanged.
    pub fn build(&self, name: &str, config: &Value) -> Result<Arc<dyn BuiltinHook>, BuiltinError> {
        match self.factories.get(name) {
            Some(factory) => factory(config).map_err(BuiltinError::Config),
            None => {
                let known = self.names();
                let known = if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                };
                Err(BuiltinError::Unknown {
                    name: name.to_string(),
                    known,
                })
            }
        }
    }
}

impl fmt::Debug for BuiltinRegistry {
    /// Lists the names only: factories are closures with nothing to print,
    /// but a config that holds a registry still wants to be `Debug`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.factories.keys()).finish()
    }
}

/// Decodes a builtin's `config` table into its settings type. A missing
/// table (`null`) reads as `{}`, so a builtin whose keys are all optional
/// needs no `config =` line. Serde's messages name the bad key (unknown
/// keys are errors through `deny_unknown_fields` on each settings type).
pub(crate) fn parse_config<T: DeserializeOwned>(config: &Value) -> Result<T, SettingsError> {
    let empty = Value::Object(serde_json::Map::new());
    let config = match config {
        Value::Null => &empty,
        Value::Object(_) => config,
        other => return Err(SettingsError::NotATable(type_name(other))),
    };
    T::deserialize(config).map_err(SettingsError::Decode)
}

/// The `config` table for a builtin written in a docker-agent agent file
/// as `{type: builtin, command: NAME, args: [...]}` under `event`:
/// `max_iterations`' count becomes `max`, a context builtin answers the
/// event it is listed under, and any other builtin gets its `args` as
/// written (none: no table).
pub(crate) fn docker_agent_config(name: &str, args: &[String], event: &str) -> Value {
    if name == max_iterations::NAME
        && let [n] = args
        && let Ok(max) = n.trim().parse::<u64>()
    {
        return json!({"max": max});
    }
    let mut config = serde_json::Map::new();
    if !args.is_empty() {
        config.insert("args".into(), json!(args));
    }
    if context::NAMES.contains(&name) {
        config.insert("events".into(), json!([event]));
    }
    if config.is_empty() {
        Value::Null
    } else {
        Value::Object(config)
    }
}

/// `{"action":"continue"}`, the answer of a builtin with nothing to do.
pub(crate) fn continue_answer() -> Value {
    json!({"action": "continue"})
}

/// The error for a call at a stage the builtin does not intercept: the
/// chain should never make one, and answering anything would hide that
/// bug (and `continue` is not even a legal approve_tool answer).
pub(crate) fn not_intercepted(name: &str, stage: Stage) -> String {
    format!("{name} does not intercept {stage}")
}

/// A ready future for builtins whose work is synchronous.
pub(crate) fn ready<'a>(answer: Result<Value, String>) -> HookFuture<'a> {
    Box::pin(std::future::ready(answer))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A builtin that always continues, to tell a registered factory from
    /// a shipped one.
    struct Nop;

    impl BuiltinHook for Nop {
        fn intercepts(&self) -> Vec<Stage> {
            vec![Stage::AfterLlm]
        }
        fn call<'a>(&'a self, _stage: Stage, _params: &'a Value) -> HookFuture<'a> {
            ready(Ok(continue_answer()))
        }
    }

    fn nop_factory() -> BuiltinFactory {
        Arc::new(|_config: &Value| Ok(Arc::new(Nop) as Arc<dyn BuiltinHook>))
    }

    #[test]
    fn with_defaults_has_the_shipped_builtins() {
        let registry = BuiltinRegistry::with_defaults();
        let shipped = [
            "add_date",
            "add_directory_listing",
            "add_environment_info",
            "add_git_diff",
            "add_git_status",
            "add_prompt_files",
            "add_recent_commits",
            "add_user_info",
            "deny_tools",
            "max_iterations",
            "redact_secrets",
        ];
        assert_eq!(registry.names(), shipped);
        for name in shipped {
            assert!(registry.contains(name), "{name}");
        }
        assert!(!registry.contains("nope"));
        assert!(BuiltinRegistry::empty().names().is_empty());
    }

    #[test]
    fn build_of_an_unknown_name_lists_the_known_ones() {
        let err = BuiltinRegistry::with_defaults()
            .build("deny_tool", &json!({}))
            .err()
            .expect("unknown name must fail");
        assert_eq!(
            err.to_string(),
            "unknown builtin `deny_tool` (known: add_date, add_directory_listing, \
             add_environment_info, add_git_diff, add_git_status, add_prompt_files, \
             add_recent_commits, add_user_info, deny_tools, max_iterations, redact_secrets)"
        );
        let err = BuiltinRegistry::empty()
            .build("x", &json!({}))
            .err()
            .expect("empty registry must fail");
        assert_eq!(err.to_string(), "unknown builtin `x` (known: none)");
    }

    #[test]
    fn build_passes_the_config_and_its_error_through() {
        let registry = BuiltinRegistry::with_defaults();
        let hook = registry
            .build("max_iterations", &json!({"max": 3}))
            .expect("valid config");
        assert_eq!(hook.intercepts(), [Stage::BeforeLlm, Stage::BeforeTool]);
        let err = registry
            .build("max_iterations", &json!({"max": 3, "min": 1}))
            .err()
            .expect("unknown key must fail")
            .to_string();
        assert!(err.contains("unknown field `min`"), "{err}");
    }

    #[tokio::test]
    async fn register_adds_and_replaces() {
        let mut registry = BuiltinRegistry::empty();
        registry.register("redact_secrets", Arc::new(redact_secrets::factory));
        registry.register("deny_tools", Arc::new(deny_tools::factory));
        registry.register("mine", nop_factory());
        assert_eq!(registry.names(), ["deny_tools", "mine", "redact_secrets"]);

        // deny_tools without `tools` is a config error; the replacement
        // accepts anything and answers continue even for a denied name.
        assert!(registry.build("deny_tools", &json!({})).is_err());
        registry.register("deny_tools", nop_factory());
        assert_eq!(registry.names().len(), 3);
        let hook = registry
            .build("deny_tools", &json!({}))
            .expect("replacement builds");
        assert_eq!(hook.intercepts(), [Stage::AfterLlm]);
        let params = json!({"tool": "shell"});
        let answer = hook.call(Stage::AfterLlm, &params).await;
        assert_eq!(answer, Ok(continue_answer()));
    }

    #[test]
    fn parse_config_reads_null_as_empty_and_rejects_non_tables() {
        #[derive(serde::Deserialize, Debug, PartialEq)]
        #[serde(deny_unknown_fields)]
        struct Settings {
            #[serde(default)]
            n: u32,
        }
        let parse = |v: Value| parse_config::<Settings>(&v).map_err(|e| e.to_string());
        assert_eq!(parse(Value::Null), Ok(Settings { n: 0 }));
        assert_eq!(parse(json!({"n": 2})), Ok(Settings { n: 2 }));
        assert_eq!(
            parse(json!([1])),
            Err("`config` must be a table, got an array".to_string())
        );
        let err = parse(json!({"m": 1})).expect_err("unknown key");
        assert!(err.contains("unknown field `m`"), "{err}");
    }

    #[test]
    fn debug_lists_the_names() {
        let mut registry = BuiltinRegistry::empty();
        registry.register("redact_secrets", Arc::new(redact_secrets::factory));
        registry.register("deny_tools", Arc::new(deny_tools::factory));
        assert_eq!(
            format!("{registry:?}"),
            r#"{"deny_tools", "redact_secrets"}"#
        );
    }
}
