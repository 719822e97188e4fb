//! The sections that configure one hook of a persistent or in-process
//! kind: `[hooks.processes.NAME]`, `[hooks.builtins.NAME]`, and the
//! `[hooks.audit]` log. Plain data with serde's strict decoding; what serde
//! cannot check is in [`super::validate`].

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use hookhost_protocol::event::EventPattern;
use hookhost_protocol::{OnError, Stage};
use serde::Deserialize;
use serde_json::Value;

pub use crate::policy::breaker::BreakerConfig;
pub use crate::policy::quality_gate::QualityGate;
pub use crate::policy::scope::{Scope, ScopeError};

use super::Defaults;
use super::on_error::FailurePolicy;
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
#[serde(deny_unknown_fields)]
pub struct ProcessConfig {
    /// Off switch for one hook.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Lower runs first; ties break by name.
    #[serde(default)]
    pub priority: i64,
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
    /// Overrides the stage default deadline for this hook.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// What a failure of this hook decides (`block`, `warn`, `ignore`, or
    /// their aliases `deny`, `allow`); per stage default when absent.
    #[serde(default)]
    pub on_error: Option<FailurePolicy>,
    /// Regex on the tool name (anchored); the hook is not called for other
    /// tools at the tool stages.
    #[serde(default)]
    pub matcher: Option<String>,
    /// A CEL condition over `stage`, `tool`, `arguments`, `meta`, `model`;
    /// the hook is called only when it is true.
    #[serde(default, rename = "if")]
    pub condition: Option<String>,
    /// `false` turns this hook's breaker off. Unset, it is on unless the
    /// hook fails closed (its policy is deny at a stage it intercepts): an
    /// open breaker would refuse every call for the cool-down, and whoever
    /// can make the hook fail five times could trigger that.
    #[serde(default)]
    pub breaker: Option<bool>,
    /// Overrides `breaker_failures` for this hook.
    #[serde(default)]
    pub breaker_failures: Option<u32>,
    /// Overrides `breaker_window_ms` for this hook.
    #[serde(default)]
    pub breaker_window_ms: Option<u64>,
    /// Overrides `breaker_cooldown_ms` for this hook.
    #[serde(default)]
    pub breaker_cooldown_ms: Option<u64>,
    /// Speak PicoClaw's variant of the wire to this hook: PascalCase `meta`
    /// keys beside the snake_case ones, `duration` in nanoseconds at
    /// after_tool, and a payload sent with `continue` applied as PicoClaw
    /// applies it. Set for every process hook of a PicoClaw `.json`
    /// config; never read from a file.
    #[serde(skip)]
    pub picoclaw: bool,
    /// Who the hook is for: `{ agents, tenants, sessions }` from the call's
    /// `meta`; every call when absent (`policy/scope.rs`).
    #[serde(default)]
    pub scope: Scope,
    /// At `subagent_stop`: `false` makes this hook's block a logged
    /// failure that lets the result through (GoClaw's quality gate);
    /// default `true` when `max_retries` is set.
    #[serde(default)]
    pub block_on_failure: Option<bool>,
    /// At `subagent_stop`: how many of this hook's blocks in a row send
    /// the sub-agent back with the reason as feedback, before the result
    /// is let through with the failure recorded (GoClaw's quality gate).
    #[serde(default)]
    pub max_retries: Option<u32>,
}

/// `[hooks.builtins.NAME]`: an in-process hook from the registry.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BuiltinConfig {
    /// Off switch.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Lower runs first; ties break by name, across process hooks too.
    #[serde(default)]
    pub priority: i64,
    /// The builtin's own settings.
    #[serde(default = "empty_object")]
    pub config: Value,
    /// Narrows the stages the builtin answers.
    #[serde(default)]
    pub intercept: Option<Vec<Stage>>,
    /// Overrides the stage default deadline.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// What a failure decides, as for process hooks.
    #[serde(default)]
    pub on_error: Option<FailurePolicy>,
    /// Regex on the tool name, as for process hooks.
    #[serde(default)]
    pub matcher: Option<String>,
    /// A CEL condition, as for process hooks.
    #[serde(default, rename = "if")]
    pub condition: Option<String>,
    /// `false` turns this hook's breaker off. Unset, it is on unless the
    /// hook fails closed (its policy is deny at a stage it intercepts): an
    /// open breaker would refuse every call for the cool-down, and whoever
    /// can make the hook fail five times could trigger that.
    #[serde(default)]
    pub breaker: Option<bool>,
    /// Overrides `breaker_failures`.
    #[serde(default)]
    pub breaker_failures: Option<u32>,
    /// Overrides `breaker_window_ms`.
    #[serde(default)]
    pub breaker_window_ms: Option<u64>,
    /// Overrides `breaker_cooldown_ms`.
    #[serde(default)]
    pub breaker_cooldown_ms: Option<u64>,
    /// Who the hook is for, as for process hooks.
    #[serde(default)]
    pub scope: Scope,
    /// Its quality gate at `subagent_stop`, as for process hooks.
    #[serde(default)]
    pub block_on_failure: Option<bool>,
    /// Its quality gate's retries, as for process hooks.
    #[serde(default)]
    pub max_retries: Option<u32>,
}

impl BuiltinConfig {
    /// Its breaker overrides.
    pub fn breaker(&self) -> BreakerConfig {
        BreakerConfig {
            enabled: self.breaker,
            breaker_failures: self.breaker_failures,
            breaker_window_ms: self.breaker_window_ms,
            breaker_cooldown_ms: self.breaker_cooldown_ms,
        }
    }

    /// Its quality gate at `subagent_stop`, when it sets either key.
    pub fn quality_gate(&self) -> Option<QualityGate> {
        QualityGate::from_keys(self.block_on_failure, self.max_retries)
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

/// `[hooks.audit]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditConfig {
    /// The JSONL file, relative to the config file's folder.
    pub path: PathBuf,
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
            enabled: true,
            priority: 0,
            transport: Transport::Stdio,
            command,
            dir: None,
            env: BTreeMap::new(),
            inherit_env: Vec::new(),
            observe: Vec::new(),
            intercept,
            timeout_ms: None,
            on_error: None,
            matcher: None,
            condition: None,
            breaker: None,
            breaker_failures: None,
            breaker_window_ms: None,
            breaker_cooldown_ms: None,
            picoclaw: false,
            scope: Scope::default(),
            block_on_failure: None,
            max_retries: None,
        }
    }

    /// Its breaker overrides.
    pub fn breaker(&self) -> BreakerConfig {
        BreakerConfig {
            enabled: self.breaker,
            breaker_failures: self.breaker_failures,
            breaker_window_ms: self.breaker_window_ms,
            breaker_cooldown_ms: self.breaker_cooldown_ms,
        }
    }

    /// Its quality gate at `subagent_stop`, when it sets either key.
    pub fn quality_gate(&self) -> Option<QualityGate> {
        QualityGate::from_keys(self.block_on_failure, self.max_retries)
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

    /// The policy for a failure at `stage`.
    pub fn policy(&self, stage: Stage) -> OnError {
        FailurePolicy::resolve(self.on_error, stage)
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
