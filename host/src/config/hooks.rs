//! The sections that configure one hook of a persistent or in-process
//! kind: `[hooks.processes.NAME]`, `[hooks.builtins.NAME]`, and the
//! `[hooks.audit]` log. Plain data with serde's strict decoding; what serde
//! cannot check is in [`super::validate`].

use super::read::Kind;
use super::settings::{HookSettings, section};
use super::{Config, HookSpec, validate};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use hookhost_protocol::Stage;
use hookhost_protocol::event::EventPattern;
use serde::Deserialize;
use serde_json::Value;

pub use crate::policy::breaker::BreakerConfig;
pub use crate::policy::quality_gate::QualityGate;
pub use crate::policy::scope::{Scope, ScopeError};

use super::Defaults;
use crate::dialect::Dialect;

/// How a hook process is reached. Only stdio exists today; the key is kept
/// so that PicoClaw configs, which spell it out, load unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Transport {
    /// JSON-RPC over the child's stdin and stdout.
    #[default]
    Stdio,
}

/// `[hooks.processes.NAME]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
pub struct ProcessConfig {
    /// The keys every kind shares (read as the section's own: `deref`).
    #[serde(skip)]
    pub settings: HookSettings,
    /// Always stdio.
    #[serde(default)]
    pub transport: Transport,
    /// argv: the program and its arguments. Never run through a shell.
    pub command: Vec<String>,
    /// Working directory, relative to the config file's folder (in a
    /// PicoClaw config, to the agent's working directory).
    #[serde(default)]
    pub dir: Option<PathBuf>,
    /// Variables set for the hook.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Host variables passed through (besides `PATH`, which always is).
    #[serde(default)]
    pub inherit_env: Vec<String>,
    /// Event kinds to forward: exact kinds, `prefix.*`, or `*`.
    #[serde(default)]
    pub observe: Vec<String>,
    /// Stages to call the hook for.
    #[serde(default)]
    pub intercept: Vec<Stage>,
    /// Speak PicoClaw's variant of the wire to this hook: PascalCase `meta`
    /// keys beside the snake_case ones, `duration` in nanoseconds at
    /// after_tool, and a payload sent with `continue` applied as PicoClaw
    /// applies it. Set for every process hook of a PicoClaw `.json`
    /// config; never read from a file.
    #[serde(skip)]
    pub picoclaw: bool,
}

section!(ProcessConfig);

/// `[hooks.builtins.NAME]`: an in-process hook from the registry.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
pub struct BuiltinConfig {
    /// The keys every kind shares (read as the section's own: `deref`).
    #[serde(skip)]
    pub settings: HookSettings,
    /// The builtin's own settings.
    #[serde(default = "empty_object")]
    pub config: Value,
    /// Narrows the stages the builtin answers.
    #[serde(default)]
    pub intercept: Option<Vec<Stage>>,
}

section!(BuiltinConfig);

impl BuiltinConfig {
    /// A builtin with its own settings `config`, answering every stage it
    /// offers, every other setting at its default; for embedding and tests.
    pub fn new(config: Value) -> Self {
        Self {
            settings: HookSettings::default(),
            config,
            intercept: None,
        }
    }
}

/// What makes two configured process hooks the same process.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SpawnKey {
    /// argv.
    pub command: Vec<String>,
    /// Working directory as configured (resolved by the host).
    pub dir: Option<PathBuf>,
    /// Variables set.
    pub env: BTreeMap<String, String>,
    /// Variables passed through.
    pub inherit_env: Vec<String>,
}

/// `[hooks.audit]`: where the audit log goes (`path` or `url`, one of
/// them) and how many records may wait for it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct AuditConfig {
    /// A JSONL file, relative to the config file's folder.
    #[serde(default)]
    pub path: Option<PathBuf>,
    /// `sqlite://PATH`, `postgres://…`, or a path without a scheme (JSONL);
    /// see [`crate::AuditStore::parse`].
    #[serde(default)]
    pub url: Option<String>,
    /// How many records may wait for the store before new ones are dropped
    /// (and counted); [`crate::AUDIT_QUEUE`] when unset.
    #[serde(default)]
    pub queue: Option<usize>,
}

impl AuditConfig {
    /// A JSONL file at `path`, for an embedder building a config in code.
    pub fn file(path: impl Into<PathBuf>) -> AuditConfig {
        AuditConfig {
            path: Some(path.into()),
            url: None,
            queue: None,
        }
    }
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

pub(super) fn yes() -> bool {
    true
}

/// The dialect of a hook kind written for any agent (a prompt hook, a
/// webhook) when it names none: Claude Code's, the format the field
/// settled on.
pub(super) fn claude_code() -> Dialect {
    Dialect::ClaudeCode
}

impl ProcessConfig {
    /// A hook running `command` that intercepts `intercept`, with every
    /// other setting at its default; handy for embedding and tests.
    pub fn new(command: Vec<String>, intercept: Vec<Stage>) -> Self {
        Self {
            settings: HookSettings::default(),
            transport: Transport::Stdio,
            command,
            dir: None,
            env: BTreeMap::new(),
            inherit_env: Vec::new(),
            observe: Vec::new(),
            intercept,
            picoclaw: false,
        }
    }

    /// The key two hooks must share to run as one process: the same argv,
    /// folder and environment.
    pub fn spawn_key(&self) -> SpawnKey {
        SpawnKey {
            command: self.command.clone(),
            dir: self.dir.clone(),
            env: self.env.clone(),
            inherit_env: self.inherit_env.clone(),
        }
    }

    /// The deadline of a call at `stage`.
    pub fn timeout(&self, stage: Stage, defaults: &Defaults) -> Duration {
        self.timeout_ms
            .map(Duration::from_millis)
            .unwrap_or_else(|| defaults.stage_timeout(stage))
    }

    /// The parsed `observe` list (validated at load, so this cannot fail for
    /// a loaded config; bad entries are skipped otherwise).
    pub fn observe_patterns(&self) -> Vec<EventPattern> {
        self.observe
            .iter()
            .filter_map(|p| EventPattern::parse(p).ok())
            .collect()
    }
}

impl Kind for ProcessConfig {
    const NOUN: &'static str = "hook";

    fn section(config: &mut Config) -> &mut BTreeMap<String, Self> {
        &mut config.processes
    }

    fn spec(&self, name: &str, _: &std::sync::Arc<BTreeMap<String, String>>) -> HookSpec {
        HookSpec::process(name, self)
    }

    fn check(&self, _: &Config, _: &str) -> Result<(), String> {
        validate::process(self).map_err(|e| e.to_string())?;
        validate::gate(self.quality_gate(), Some(&self.intercept)).map_err(|e| e.to_string())
    }

    fn picoclaw(name: &str, raw: &mut Value) {
        super::picoclaw::process(name, raw);
    }

    fn read_by_picoclaw(&mut self) {
        self.picoclaw = true;
    }
}

impl Kind for BuiltinConfig {
    const NOUN: &'static str = "builtin";

    fn section(config: &mut Config) -> &mut BTreeMap<String, Self> {
        &mut config.builtins
    }

    fn spec(&self, name: &str, _: &std::sync::Arc<BTreeMap<String, String>>) -> HookSpec {
        HookSpec::builtin(name, self)
    }

    fn check(&self, _: &Config, _: &str) -> Result<(), String> {
        validate::gate(self.quality_gate(), self.intercept.as_deref()).map_err(|e| e.to_string())
    }

    fn picoclaw(name: &str, raw: &mut Value) {
        super::picoclaw::off_unless_enabled("builtin", name, raw);
    }
}
