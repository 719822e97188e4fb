//! One configured hook of any kind, as the host runs it: a [`HookSpec`]
//! is its name, the settings every kind shares and the [`Backend`] that
//! answers it. Every config section converts into one ([`Config::hooks`]);
//! the chain builds one member from one spec, and a reload keeps a member
//! whose spec is equal.
//!
//! A new kind of hook is a section (its file here, decoded strictly), one
//! `Backend` arm, and its own folder under `members/`.

use std::collections::BTreeMap;
use std::sync::Arc;

use hookhost_protocol::Stage;

use super::Config;
use super::command::CommandConfig;
use super::hooks::{BuiltinConfig, ProcessConfig};
use super::import::HookSetConfig;
use super::on_error::FailurePolicy;
use super::read::Kind;
use super::remote::RemoteConfig;
use super::settings::HookSettings;

/// What runs a hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum HookKind {
    /// A long-lived process spoken to over stdio.
    Process,
    /// A hook served over WebSocket or HTTP.
    Remote,
    /// An in-process builtin.
    Builtin,
    /// A one-shot command spawned per call.
    Command,
    /// A language model asked per call.
    Prompt,
    /// A webhook: the event POSTed per call to an SSRF-guarded URL.
    Webhook,
    /// A docker-agent hook group: one agent file's hooks for one event.
    HookSet,
}

impl HookKind {
    /// The name used in configs, stats and the audit log.
    pub fn as_str(self) -> &'static str {
        match self {
            HookKind::Process => "process",
            HookKind::Remote => "remote",
            HookKind::Builtin => "builtin",
            HookKind::Command => "command",
            HookKind::Prompt => "prompt",
            HookKind::Webhook => "webhook",
            HookKind::HookSet => "hook_set",
        }
    }
}

/// One hook, whatever its kind.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct HookSpec {
    /// The configured name; unique across every kind.
    pub name: String,
    /// What it runs with: the section's shared keys (a docker-agent group's
    /// are derived from its event).
    pub settings: HookSettings,
    /// What answers its calls.
    pub backend: Backend,
}

/// What answers a hook's calls. Each holds its section as written, whose
/// own keys (and, for a command hook, its dialect's reading of the shared
/// ones) its runner reads.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Backend {
    /// A long-lived process on stdio; hooks with the same command, folder
    /// and environment share one.
    Process(Box<ProcessConfig>),
    /// A hook service over WebSocket or HTTP.
    Remote(Box<RemoteConfig>),
    /// An in-process hook from the registry.
    Builtin(Box<BuiltinConfig>),
    /// One run per call in an agent's hook format: a program spawned, a
    /// URL posted to (a webhook) or a model asked (a prompt hook), with
    /// the `[hooks.tool_names]` it translates by.
    Command {
        /// The hook as configured (webhooks and prompt hooks as the
        /// command hooks they describe).
        config: Box<CommandConfig>,
        /// `[hooks.tool_names]`, shared by every command hook of a config.
        tool_names: Arc<BTreeMap<String, String>>,
    },
    /// A docker-agent agent file's hooks for one event, run as one member
    /// by docker-agent's merge rules.
    HookSet {
        /// The group.
        config: Box<HookSetConfig>,
        /// `[hooks.tool_names]`.
        tool_names: Arc<BTreeMap<String, String>>,
    },
}

impl Backend {
    /// Its kind, as `hookhost check`, `status`, the stats and the audit
    /// log name it: the one place a kind is told from its backend.
    pub fn kind(&self) -> HookKind {
        match self {
            Backend::Process(_) => HookKind::Process,
            Backend::Remote(_) => HookKind::Remote,
            Backend::Builtin(_) => HookKind::Builtin,
            Backend::Command { config, .. } if config.model.is_some() => HookKind::Prompt,
            Backend::Command { config, .. } if config.url.is_some() => HookKind::Webhook,
            Backend::Command { .. } => HookKind::Command,
            Backend::HookSet { .. } => HookKind::HookSet,
        }
    }

    /// The stages its config asks for (`intercept`, a command hook's
    /// events); `None` for every stage what answers it offers.
    pub(crate) fn intercept(&self) -> Option<Vec<Stage>> {
        match self {
            Backend::Process(p) => Some(p.intercept.clone()),
            Backend::Remote(r) => Some(r.intercept.clone()),
            Backend::Builtin(b) => b.intercept.clone(),
            Backend::Command { config, .. } => Some(config.stages()),
            Backend::HookSet { .. } => None,
        }
    }

    /// Whether `matcher` is the chain's anchored regex on the tool name:
    /// for every kind but a command hook, whose runner reads it by its
    /// dialect's rules, and a group, whose entries carry their own.
    pub(crate) fn filters_by_matcher(&self) -> bool {
        !matches!(self, Backend::Command { .. } | Backend::HookSet { .. })
    }

    /// The stages at which a failure refuses whatever `on_error` says: a
    /// command hook's fail-closed events (docker-agent's guards), a group's
    /// every stage when its event fails closed.
    pub(crate) fn fail_closed(&self, stages: &[Stage]) -> Vec<Stage> {
        match self {
            Backend::Command { config, .. } => config.fail_closed_stages(),
            Backend::HookSet { config, .. } if group_fails_closed(&config.event) => stages.to_vec(),
            _ => Vec::new(),
        }
    }
}

/// Whether a docker-agent event fails closed: its own rule, or the stage's
/// default (refuse at approve_tool).
pub(crate) fn group_fails_closed(event: &str) -> bool {
    let Some(e) = crate::dialect::Dialect::DockerAgent.spec().event(event) else {
        return false;
    };
    let by_default = match e.target {
        crate::dialect::spec::Target::Stage(s) => {
            FailurePolicy::resolve(None, s) == hookhost_protocol::OnError::Deny
        }
        _ => false,
    };
    e.fails_closed() || by_default
}

impl HookSpec {
    /// A spec of `settings` answered by `backend`; a kind's section file
    /// may build its own with it, beside the section.
    pub(super) fn of(name: &str, settings: &HookSettings, backend: Backend) -> HookSpec {
        HookSpec {
            name: name.to_string(),
            settings: settings.clone(),
            backend,
        }
    }

    /// A process hook.
    pub fn process(name: &str, config: &ProcessConfig) -> HookSpec {
        HookSpec::of(name, config, Backend::Process(Box::new(config.clone())))
    }

    /// A remote hook.
    pub fn remote(name: &str, config: &RemoteConfig) -> HookSpec {
        HookSpec::of(name, config, Backend::Remote(Box::new(config.clone())))
    }

    /// A builtin.
    pub fn builtin(name: &str, config: &BuiltinConfig) -> HookSpec {
        HookSpec::of(name, config, Backend::Builtin(Box::new(config.clone())))
    }

    /// A command hook (or the command hook a webhook or prompt hook runs
    /// as), translating tool names by `tool_names`.
    pub fn command(
        name: &str,
        config: CommandConfig,
        tool_names: &Arc<BTreeMap<String, String>>,
    ) -> HookSpec {
        let settings = config.settings.clone();
        let backend = Backend::Command {
            config: Box::new(config),
            tool_names: tool_names.clone(),
        };
        HookSpec::of(name, &settings, backend)
    }

    /// A docker-agent hook group. Its settings follow from its event: a
    /// group that runs past its deadline fails closed where docker-agent's
    /// event does (pre_tool_use, tool_guard, permission_request) and goes
    /// on elsewhere, as its hooks would one by one; no breaker (its hooks
    /// have theirs).
    pub fn hook_set(
        name: &str,
        config: &HookSetConfig,
        tool_names: &Arc<BTreeMap<String, String>>,
    ) -> HookSpec {
        let on_error = match group_fails_closed(&config.event) {
            true => FailurePolicy::Block,
            false => FailurePolicy::Warn,
        };
        let settings = HookSettings {
            priority: config.priority,
            on_error: Some(on_error),
            breaker: Some(false),
            ..HookSettings::default()
        };
        let backend = Backend::HookSet {
            config: Box::new(config.clone()),
            tool_names: tool_names.clone(),
        };
        HookSpec::of(name, &settings, backend)
    }
}

impl Config {
    /// Every enabled hook of the config as the chain runs it, in config
    /// order (processes, builtins, remotes, commands, prompt hooks,
    /// webhooks, docker-agent groups). None when `[hooks] enabled` is off.
    pub fn hooks(&self) -> Vec<HookSpec> {
        if !self.enabled {
            return Vec::new();
        }
        let tool_names = Arc::new(self.tool_names.clone());
        let tn = &tool_names;
        let sections = [
            specs(&self.processes, tn),
            specs(&self.builtins, tn),
            #[cfg(feature = "remote")]
            specs(&self.remotes, tn),
            specs(&self.commands, tn),
            specs(&self.prompts, tn),
            specs(&self.webhooks, tn),
        ];
        let groups = self
            .hook_sets
            .iter()
            .map(|(n, c)| HookSpec::hook_set(n, c, &tool_names));
        sections
            .into_iter()
            .flatten()
            .filter(|h| h.settings.enabled)
            .chain(groups)
            .collect()
    }
}

/// One section's hooks as specs, by name.
fn specs<T: Kind>(
    section: &BTreeMap<String, T>,
    tool_names: &Arc<BTreeMap<String, String>>,
) -> Vec<HookSpec> {
    section.iter().map(|(n, c)| c.spec(n, tool_names)).collect()
}
