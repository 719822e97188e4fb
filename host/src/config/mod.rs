//! The host's configuration: TOML, or PicoClaw's JSON shape, same structs.
//!
//! Loading is strict: an unknown key, a missing command, a bad enum value or
//! an unknown stage is an error that names the file, the hook and the key,
//! because a typo in a security guard's config must not silently disable it.
//! So is a section this build cannot run: `if` without the `cel` feature,
//! `[hooks.remotes]` without `remote`.
//!
//! This module holds the whole ([`Config`], [`Defaults`]) and the reading;
//! each section's type is in its own file (hooks, command, remote) and the
//! checks serde cannot make are in validate.

pub(crate) mod command;
mod env_reads;
mod hook_spec;
mod hooks;
mod import;
mod on_error;
mod picoclaw;
pub(crate) mod preflight;
mod prompt;
mod read;
mod remote;
mod settings;
pub(crate) mod trust;
mod validate;
mod webhook;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use hookhost_protocol::Stage;
use serde::Deserialize;
use serde_json::Value;

use crate::observe::audit::AuditStore;

pub use command::{CommandConfig, CommandConfigError, HookSource, Runner};
pub use env_reads::{Language, UnmetEnv, passed as passed_env, reads as env_reads};
#[cfg(test)]
pub(crate) use hook_spec::group_fails_closed;
pub use hook_spec::{Backend, HookKind, HookSpec};
pub(crate) use hooks::SpawnKey;
pub use hooks::{
    AuditConfig, BreakerConfig, BuiltinConfig, ProcessConfig, QualityGate, Scope, ScopeError,
    Transport,
};
pub use import::{Definition, HookSetConfig, SetEntry, SetHook, SkippedHook};
pub use on_error::{CommandOnError, FailurePolicy};
pub use prompt::{ModelConfig, PromptConfig, PromptConfigError, Provider};
pub use remote::{EnvError, RemoteConfig, RemoteConfigError, RemoteTransport};
#[cfg(feature = "remote")]
pub(crate) use remote::{expand_env, resolve_headers};
pub use settings::HookSettings;
use trust::TrustStore;
pub use webhook::{WebhookConfig, WebhookConfigError, WebhookGuard};

use crate::dialect::{Dialect, tools};
use crate::policy::breaker::BreakerLimits;
use hooks::yes;

/// Everything the host needs to run a set of hooks.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The master switch; when false no hook is started.
    pub enabled: bool,
    /// Stage timeouts and limits that hooks inherit.
    pub defaults: Defaults,
    /// Process hooks by name.
    pub processes: BTreeMap<String, ProcessConfig>,
    /// Builtin (in-process) hooks by registry name.
    pub builtins: BTreeMap<String, BuiltinConfig>,
    /// One-shot command hooks (Claude Code / docker-agent style) by name.
    pub commands: BTreeMap<String, CommandConfig>,
    /// Hooks served over the network (WebSocket or HTTP) by name.
    pub remotes: BTreeMap<String, RemoteConfig>,
    /// Hooks that ask a language model for the decision, by name; each
    /// runs as the command hook [`PromptConfig::command`] describes.
    pub prompts: BTreeMap<String, PromptConfig>,
    /// Webhooks (the event POSTed in an agent's hook format, SSRF-guarded)
    /// by name.
    pub webhooks: BTreeMap<String, WebhookConfig>,
    /// Where to write the audit log, if anywhere.
    pub audit: Option<AuditConfig>,
    /// Handlers in `[hooks.import]` files that are not run (prompt, agent,
    /// MCP-tool hooks...), kept so `hookhost check` can show them.
    pub skipped: Vec<SkippedHook>,
    /// docker-agent agent files' hooks, one group per agent and event, by
    /// name: each group runs as one member (docker-agent's merge rules).
    pub hook_sets: BTreeMap<String, HookSetConfig>,
    /// `[hooks.tool_names]`: the agent's own tool names mapped to the
    /// canonical vocabulary (`my_exec = "shell"`), so hooks of every dialect
    /// see their native name for it (`Bash`, `run_shell_command`).
    pub tool_names: BTreeMap<String, String>,
    /// The folder relative paths are resolved against (the config file's
    /// folder, or the working directory for a config built in code).
    pub base_dir: PathBuf,
    /// Whose rules the file was read by: hookhost's (TOML, or a config
    /// built in code) or PicoClaw's (a `.json` file).
    pub format: Format,
    /// Every file and folder the config was read from: the config file and
    /// each `[hooks.import]` path, whether or not it exists yet, so that a
    /// daemon can reload when any of them changes (a settings file the
    /// user edits, a folder that gains a file).
    pub sources: Vec<PathBuf>,
}

/// Whose rules a config was read by. A `.json` file is a PicoClaw config
/// and is read as PicoClaw reads it (spec/protocol.md section 15), so that
/// it runs unchanged; TOML keeps hookhost's strictness.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Format {
    /// hookhost's own: a TOML file, or a config built in code.
    #[default]
    Hookhost,
    /// A PicoClaw `.json` file: a process hook's folder and program are
    /// checked when it is spawned, a relative `dir` is the working
    /// directory's, an unknown builtin is skipped, builtins run before the
    /// other hooks, and process hooks get PicoClaw's wire extras.
    PicoClaw,
}

/// `[hooks.defaults]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Defaults {
    /// How long the host waits to hand one runtime event to a hook.
    pub observer_timeout_ms: u64,
    /// Deadline of a before/after llm/tool call.
    pub interceptor_timeout_ms: u64,
    /// Deadline of an approve_tool call.
    pub approval_timeout_ms: u64,
    /// Deadline of the `hook.hello` handshake.
    pub hello_timeout_ms: u64,
    /// The longest line accepted from a hook's stdout.
    pub max_line_bytes: usize,
    /// Runtime events buffered per hook before new ones are dropped.
    pub event_queue: usize,
    /// How long a hook has to exit after its stdin closes, and again after
    /// SIGTERM, before the next step of shutdown.
    pub shutdown_grace_ms: u64,
    /// Crashes within `restart_window_ms` after which a hook is marked failed.
    pub max_restarts: u32,
    /// The window for `max_restarts`.
    pub restart_window_ms: u64,
    /// The longest wait between restart attempts; the wait starts near
    /// 25 ms and doubles up to this. A lower cap brings a hook that keeps
    /// dying back sooner, at the price of more spawns.
    pub restart_backoff_max_ms: u64,
    /// Deadline for a whole stage's chain; hooks still to run when it is
    /// spent are skipped with their policies.
    pub chain_budget_ms: u64,
    /// Hook failures within `breaker_window_ms` that open a hook's breaker.
    pub breaker_failures: u32,
    /// The window for `breaker_failures`.
    pub breaker_window_ms: u64,
    /// How long an open breaker skips its hook before one trial call.
    pub breaker_cooldown_ms: u64,
    /// Consecutive blocked stops (stop, subagent_stop) per session after
    /// which the next block is overridden, so that a hook cannot keep an
    /// agent from ever stopping.
    pub stop_block_limit: u32,
}

impl Default for Defaults {
    fn default() -> Self {
        Self {
            observer_timeout_ms: 500,
            interceptor_timeout_ms: 5000,
            approval_timeout_ms: 60_000,
            hello_timeout_ms: 5000,
            max_line_bytes: 4 * 1024 * 1024,
            event_queue: 1024,
            shutdown_grace_ms: 2000,
            max_restarts: 5,
            restart_window_ms: 60_000,
            restart_backoff_max_ms: 30_000,
            chain_budget_ms: 10_000,
            breaker_failures: 5,
            breaker_window_ms: 60_000,
            breaker_cooldown_ms: 30_000,
            stop_block_limit: 8,
        }
    }
}

impl Defaults {
    /// The stage's default deadline.
    pub fn stage_timeout(&self, stage: Stage) -> Duration {
        Duration::from_millis(match stage {
            Stage::ApproveTool => self.approval_timeout_ms,
            _ => self.interceptor_timeout_ms,
        })
    }
}

impl From<&Defaults> for BreakerLimits {
    /// The breaker settings a hook inherits.
    fn from(d: &Defaults) -> Self {
        BreakerLimits {
            failures: d.breaker_failures,
            window: Duration::from_millis(d.breaker_window_ms),
            cooldown: Duration::from_millis(d.breaker_cooldown_ms),
        }
    }
}

/// Why a config cannot be used. The message always says where.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Not valid TOML or JSON.
    #[error("{path}: {message}")]
    Syntax {
        /// The file.
        path: PathBuf,
        /// The parser's message, with line and column.
        message: String,
    },
    /// Valid syntax, wrong content.
    #[error("{path}: {location}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// `[hooks.defaults]`, `hook \`guard\``, ...
        location: String,
        /// What is wrong, naming the key.
        message: String,
    },
    /// The config uses what this build of hookhost left out; the message
    /// names the cargo feature to turn on.
    #[error("{path}: {location}: {what} needs hookhost built with the `{feature}` feature")]
    MissingFeature {
        /// The file.
        path: PathBuf,
        /// `hook \`guard\``, `remote hook \`policy\``, ...
        location: String,
        /// What the section uses: `` `if` ``, `a remote hook`.
        what: &'static str,
        /// The cargo feature: `cel` or `remote`.
        feature: &'static str,
    },
}

/// Builds the errors of one file: every message starts with its path.
struct Source<'a> {
    path: &'a Path,
    /// The trust store imported project hooks are checked against; the
    /// user's ([`TrustStore::load_default`]) when `None`.
    trust: Option<&'a TrustStore>,
}

impl Source<'_> {
    fn invalid(&self, location: &str, message: impl std::fmt::Display) -> ConfigError {
        ConfigError::Invalid {
            path: self.path.to_path_buf(),
            location: location.to_string(),
            message: message.to_string(),
        }
    }

    /// Decodes one section strictly; the error names the key.
    fn decode<T: serde::de::DeserializeOwned>(
        &self,
        location: &str,
        value: Value,
    ) -> Result<T, ConfigError> {
        decode(value).map_err(|m| self.invalid(location, m))
    }

    /// Refuses what needs a feature this build lacks.
    fn needs(
        &self,
        location: &str,
        what: &'static str,
        feature: &'static str,
        built: bool,
    ) -> Result<(), ConfigError> {
        if built {
            return Ok(());
        }
        Err(ConfigError::MissingFeature {
            path: self.path.to_path_buf(),
            location: location.to_string(),
            what,
            feature,
        })
    }
}

/// The top level of a PicoClaw-shaped JSON config: only `hooks` is read.
#[derive(Deserialize)]
struct Root {
    #[serde(default)]
    hooks: Option<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HooksSection {
    #[serde(default = "yes")]
    enabled: bool,
    #[serde(default)]
    defaults: Option<Value>,
    #[serde(default)]
    processes: BTreeMap<String, Value>,
    #[serde(default)]
    builtins: BTreeMap<String, Value>,
    #[serde(default)]
    commands: BTreeMap<String, Value>,
    #[serde(default)]
    remotes: BTreeMap<String, Value>,
    #[serde(default)]
    prompts: BTreeMap<String, Value>,
    #[serde(default)]
    webhooks: BTreeMap<String, Value>,
    #[serde(default)]
    audit: Option<Value>,
    #[serde(default)]
    import: Option<Value>,
    #[serde(default)]
    tool_names: BTreeMap<String, String>,
}

impl Config {
    /// A config with no hooks, resolving paths against `base_dir`.
    pub fn empty(base_dir: impl Into<PathBuf>) -> Self {
        Self {
            enabled: true,
            defaults: Defaults::default(),
            processes: BTreeMap::new(),
            builtins: BTreeMap::new(),
            commands: BTreeMap::new(),
            remotes: BTreeMap::new(),
            prompts: BTreeMap::new(),
            webhooks: BTreeMap::new(),
            audit: None,
            skipped: Vec::new(),
            hook_sets: BTreeMap::new(),
            tool_names: BTreeMap::new(),
            base_dir: base_dir.into(),
            format: Format::Hookhost,
            sources: Vec::new(),
        }
    }

    /// Reads a `.json` file as JSON and anything else as TOML, then checks
    /// that every hook's folder and program are there ([`Config::preflight`]).
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let config = Config::read(path)?;
        config.preflight(path)?;
        Ok(config)
    }

    /// The file-system checks of [`Config::load`]: every hook's folder and
    /// program are there. `path` is the file it was read from, named in
    /// the errors.
    pub fn preflight(&self, path: &Path) -> Result<(), ConfigError> {
        preflight::check(self, path)
    }

    /// [`Config::load`] without the file-system checks, for a caller that
    /// rewrites commands before starting (and may run
    /// [`Config::preflight`] itself afterwards).
    pub fn read(path: &Path) -> Result<Config, ConfigError> {
        Config::read_with(path, None)
    }

    /// [`Config::load`], checking the project hooks of `[hooks.import]`
    /// against `trust` instead of the user's store (an embedder's own
    /// store, or a test's).
    pub fn load_with_trust(path: &Path, trust: &TrustStore) -> Result<Config, ConfigError> {
        let config = Config::read_with(path, Some(trust))?;
        config.preflight(path)?;
        Ok(config)
    }

    fn read_with(path: &Path, trust: Option<&TrustStore>) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let is_json = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"));
        let base = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        let base = std::fs::canonicalize(&base).unwrap_or(base);
        let mut config = Config::parse_with(&text, is_json, path, base, trust)?;
        config.sources.insert(0, path.to_path_buf());
        Ok(config)
    }

    /// A config whose only hooks are those of one agent's settings file
    /// (`.claude/settings.json`, `.cursor/hooks.json`, ...), read as
    /// `[hooks.import]` would read it; for `hookhost relay -c FILE`.
    pub fn import(dialect: Dialect, path: &Path) -> Result<Config, ConfigError> {
        let path = std::fs::canonicalize(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let file = toml::Value::String(path.display().to_string());
        let text = format!("[hooks.import]\n\"{dialect}\" = {file}\n");
        let config = Config::parse(&text, false, &path, base)?;
        config.preflight(&path)?;
        Ok(config)
    }

    /// Whether `path` looks like agent `dialect`'s own settings file rather
    /// than a hookhost config: its `hooks` object has one of the dialect's
    /// event names as a key.
    pub fn is_settings_file(dialect: Dialect, path: &Path) -> bool {
        let Ok(text) = std::fs::read_to_string(path) else {
            return false;
        };
        let root: Option<Value> = match path.extension().and_then(|e| e.to_str()) {
            Some("json") => serde_json::from_str(&text).ok(),
            _ => toml::from_str(&text).ok(),
        };
        let spec = dialect.spec();
        root.as_ref()
            .and_then(|r| r.get("hooks"))
            .and_then(Value::as_object)
            .is_some_and(|h| h.keys().any(|k| spec.event(k).is_some()))
    }

    /// Parses config text; `path` only names the source in errors.
    /// Imported project hooks are checked against the user's trust store.
    pub fn parse(
        text: &str,
        is_json: bool,
        path: &Path,
        base_dir: PathBuf,
    ) -> Result<Config, ConfigError> {
        Config::parse_with(text, is_json, path, base_dir, None)
    }

    fn parse_with(
        text: &str,
        is_json: bool,
        path: &Path,
        base_dir: PathBuf,
        trust: Option<&TrustStore>,
    ) -> Result<Config, ConfigError> {
        let syntax = |message: String| ConfigError::Syntax {
            path: path.to_path_buf(),
            message,
        };
        let root: Root = if is_json {
            serde_json::from_str(text).map_err(|e| syntax(format!("invalid JSON: {e}")))?
        } else {
            toml::from_str(text).map_err(|e| syntax(format!("invalid TOML: {e}")))?
        };
        let mut config = Config::empty(base_dir);
        if is_json {
            config.format = Format::PicoClaw;
        }
        if let Some(hooks) = root.hooks {
            let src = Source { path, trust };
            let section: HooksSection = src.decode("[hooks]", hooks)?;
            config.read_section(&src, section)?;
        }
        Ok(config)
    }

    /// Fills the config from `[hooks]`, section by section.
    fn read_section(&mut self, src: &Source<'_>, section: HooksSection) -> Result<(), ConfigError> {
        self.enabled = section.enabled;
        if let Some(mut d) = section.defaults {
            if self.format == Format::PicoClaw {
                picoclaw::defaults(&mut d);
            }
            self.defaults = src.decode("[hooks.defaults]", d)?;
        }
        self.read_section_of::<BuiltinConfig>(src, section.builtins)?;
        self.read_section_of::<CommandConfig>(src, section.commands)?;
        self.read_section_of::<PromptConfig>(src, section.prompts)?;
        if let Some(raw) = section.import {
            import::read(self, src, raw)?;
        }
        for (tool, canonical) in &section.tool_names {
            if !tools::is_canonical(canonical) {
                let why = format!(
                    "`{tool}`: {canonical:?} is not a canonical tool ({})",
                    tools::canonical_names()
                );
                return Err(src.invalid("[hooks.tool_names]", why));
            }
        }
        self.tool_names = section.tool_names;
        if let Some(raw) = section.audit {
            let audit: AuditConfig = src.decode("[hooks.audit]", raw)?;
            self.audit_store_of(&audit)
                .map_err(|e| src.invalid("[hooks.audit]", e))?;
            self.audit = Some(audit);
        }
        self.read_section_of::<ProcessConfig>(src, section.processes)?;
        self.read_section_of::<RemoteConfig>(src, section.remotes)?;
        self.read_section_of::<WebhookConfig>(src, section.webhooks)?;
        validate::defaults(&self.defaults).map_err(|e| src.invalid("[hooks.defaults]", e))
    }

    /// Where the audit log goes, resolved against the config's folder;
    /// `None` without `[hooks.audit]`. A config built in code may hold a
    /// bad one, so this is checked again here.
    pub fn audit_store(&self) -> Option<Result<AuditStore, String>> {
        self.audit.as_ref().map(|a| self.audit_store_of(a))
    }

    fn audit_store_of(&self, audit: &AuditConfig) -> Result<AuditStore, String> {
        if audit.queue == Some(0) {
            return Err("`queue` must be at least 1".into());
        }
        match (&audit.path, &audit.url) {
            (Some(path), None) => Ok(AuditStore::Jsonl(self.base_dir.join(path))),
            (None, Some(url)) => AuditStore::parse(url, &self.base_dir).map_err(|e| e.to_string()),
            _ => Err("give one of `path` (a JSONL file) and `url`".into()),
        }
    }

    /// The folder a command hook runs in.
    pub fn command_dir(&self, hook: &CommandConfig) -> PathBuf {
        match &hook.working_dir {
            Some(d) if d.is_absolute() => d.clone(),
            Some(d) => self.base_dir.join(d),
            None => self.base_dir.clone(),
        }
    }

    /// The folder a hook runs in: its `dir`, relative to the config
    /// file's folder; in a PicoClaw config, relative to the agent's
    /// working directory (the process's), which is also where a hook with
    /// no `dir` runs, as in PicoClaw.
    pub fn hook_dir(&self, hook: &ProcessConfig) -> PathBuf {
        let base = match self.format {
            Format::PicoClaw => std::env::current_dir().unwrap_or_else(|_| self.base_dir.clone()),
            Format::Hookhost => self.base_dir.clone(),
        };
        match &hook.dir {
            Some(d) if d.is_absolute() => d.clone(),
            Some(d) => base.join(d),
            None => base,
        }
    }

    /// In a PicoClaw config, takes out the enabled builtins that `known`
    /// (the host's registry) does not name, each logged and listed in
    /// [`Config::skipped`]: PicoClaw's own builtins (`audit`, ...) are Go
    /// code compiled into PicoClaw, and a hook that cannot exist must not
    /// refuse every call through its failure policy. A hookhost config
    /// keeps them, so that a typo there is a start failure.
    pub fn skip_unknown_builtins(&mut self, known: impl Fn(&str) -> bool) {
        if self.format != Format::PicoClaw {
            return;
        }
        let file = self.sources.first().cloned().unwrap_or_default();
        let unknown: Vec<String> = self
            .builtins
            .iter()
            .filter(|(name, b)| b.enabled && !known(name))
            .map(|(name, _)| name.clone())
            .collect();
        for name in unknown {
            self.builtins.remove(&name);
            let why = format!(
                "hookhost has no builtin `{name}` (PicoClaw's builtins are compiled into PicoClaw); not run"
            );
            tracing::warn!(hook = %name, "builtin `{name}` skipped: {why}");
            let source = HookSource::new(file.clone(), format!("hooks.builtins.{name}"), None);
            self.skipped.push(SkippedHook {
                source,
                kind: "builtin".into(),
                why,
            });
        }
    }
}

/// Deserializes with the path of the offending key in the message.
fn decode<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, String> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path == "." || path.is_empty() {
            inner.to_string()
        } else {
            format!("key `{path}`: {inner}")
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use hookhost_protocol::OnError;

    fn parse_toml(text: &str) -> Result<Config, ConfigError> {
        Config::parse(text, false, Path::new("hooks.toml"), PathBuf::from("/cfg"))
    }

    #[test]
    fn the_documented_example_loads() {
        let c = parse_toml(
            r#"
[hooks]
enabled = true
[hooks.defaults]
observer_timeout_ms = 500
interceptor_timeout_ms = 5000
approval_timeout_ms = 60000
hello_timeout_ms = 5000
[hooks.processes.guard]
enabled = true
priority = 10
transport = "stdio"
command = ["python3", "examples/python/guard.py"]
dir = "."
env = { GUARD_MODE = "strict" }
inherit_env = ["HOME"]
observe = ["agent.tool.*"]
intercept = ["before_tool", "approve_tool"]
timeout_ms = 2000
on_error = "deny"
"#,
        )
        .expect("valid config");
        let g = &c.processes["guard"];
        assert_eq!(g.priority, 10);
        assert_eq!(g.intercept, vec![Stage::BeforeTool, Stage::ApproveTool]);
        assert_eq!(g.policy(Stage::BeforeTool), OnError::Deny);
        assert_eq!(c.hook_dir(g), PathBuf::from("/cfg/."));
    }

    #[test]
    fn errors_name_the_file_the_hook_and_the_key() {
        let cases = [
            (
                "[hooks.processes.g]\ncommand=[\"x\"]\ncolour=1\n",
                "hook `g`: key `colour`: unknown field `colour`",
            ),
            (
                "[hooks.processes.g]\nenabled=true\n",
                "hook `g`: missing field `command`",
            ),
            (
                "[hooks.processes.g]\ncommand=[\"x\"]\non_error=\"maybe\"\n",
                "hook `g`: key `on_error`: unknown variant `maybe`",
            ),
            (
                "[hooks.processes.g]\ncommand=[\"x\"]\nintercept=[\"before_tools\"]\n",
                "hook `g`: key `intercept[0]`: unknown variant `before_tools`",
            ),
            (
                "[hooks.processes.g]\ncommand=[]\n",
                "hook `g`: key `command`",
            ),
            (
                "[hooks.defaults]\nhello_timeout=1\n",
                "[hooks.defaults]: key `hello_timeout`: unknown field",
            ),
        ];
        for (text, want) in cases {
            let err = parse_toml(text).expect_err(text).to_string();
            assert!(err.starts_with("hooks.toml: "), "{err}");
            assert!(err.contains(want), "{err:?} should contain {want:?}");
        }
    }

    #[test]
    #[cfg(feature = "cel")]
    fn filters_builtins_and_audit_are_checked_at_load() {
        let c = parse_toml(
            r#"
[hooks.audit]
path = "audit.jsonl"
[hooks.builtins.deny_tools]
priority = 5
config = { tools = ["curl"] }
[hooks.processes.g]
command = ["x"]
matcher = "Bash|shell"
if = 'size(arguments.command) > 80'
breaker_failures = 3
"#,
        )
        .expect("valid config");
        assert_eq!(
            c.audit_store(),
            Some(Ok(AuditStore::Jsonl(PathBuf::from("/cfg/audit.jsonl"))))
        );
        assert_eq!(c.builtins["deny_tools"].priority, 5);
        assert_eq!(c.processes["g"].breaker().breaker_failures, Some(3));
        let cases = [
            (
                "[hooks.processes.g]\ncommand=[\"x\"]\nif='tool =='\n",
                "hook `g`: `if`: syntax error",
            ),
            (
                "[hooks.processes.g]\ncommand=[\"x\"]\nif='toool == \"x\"'\n",
                "hook `g`: `if`: unknown variable `toool`",
            ),
            (
                "[hooks.processes.g]\ncommand=[\"x\"]\nmatcher='('\n",
                "hook `g`: `matcher`",
            ),
            (
                "[hooks.builtins.b]\ncolour=1\n",
                "builtin `b`: key `colour`: unknown field",
            ),
            (
                "[hooks.audit]\nfile='x'\n",
                "[hooks.audit]: key `file`: unknown field",
            ),
        ];
        for (text, want) in cases {
            let err = parse_toml(text).expect_err(text).to_string();
            assert!(err.contains(want), "{err:?} should contain {want:?}");
        }
    }

    #[test]
    #[cfg(feature = "remote")]
    fn remote_hooks_load_and_their_mistakes_are_named() {
        let c = parse_toml(
            r#"
[hooks.remotes.policy]
url = "wss://hooks.example:8443/policy"
headers = { Authorization = "Bearer ${env:POLICY_TOKEN}", X-Team = "agents" }
priority = 20
intercept = ["before_tool"]
observe = ["agent.tool.*"]
on_error = "deny"
[hooks.remotes.audit]
url = "http://127.0.0.1:9000"
intercept = ["after_tool"]
"#,
        )
        .expect("valid config");
        let p = &c.remotes["policy"];
        assert_eq!(p.transport(), Ok(RemoteTransport::WebSocket));
        assert_eq!(c.remotes["audit"].transport(), Ok(RemoteTransport::Http));
        let headers = p
            .resolved_headers(|n| (n == "POLICY_TOKEN").then(|| "s3cret".to_string()))
            .expect("resolves");
        assert_eq!(
            headers,
            vec![
                ("Authorization".to_string(), "Bearer s3cret".to_string()),
                ("X-Team".to_string(), "agents".to_string())
            ]
        );
        let missing = p.resolved_headers(|_| None).expect_err("unset variable");
        assert_eq!(
            missing.to_string(),
            "header `Authorization`: environment variable `POLICY_TOKEN` is not set"
        );
        let cases = [
            (
                "[hooks.remotes.r]\nurl='tcp://x:1'\n",
                "remote hook `r`: key `url`: scheme `tcp` is not one of ws, wss, http, https",
            ),
            ("[hooks.remotes.r]\nurl='localhost:1'\n", "has no scheme"),
            ("[hooks.remotes.r]\nurl='ws:///x'\n", "names no host"),
            (
                "[hooks.remotes.r]\n",
                "remote hook `r`: missing field `url`",
            ),
            (
                "[hooks.remotes.r]\nurl='http://x'\nobserve=['*']\n",
                "an http:// hook gets requests only",
            ),
            (
                "[hooks.remotes.r]\nurl='ws://x'\nheaders={'a b'='1'}\n",
                "\"a b\" is not a valid header name",
            ),
            (
                "[hooks.remotes.r]\nurl='ws://x'\nheaders={A='${env:T'}\n",
                "key `headers.A`: `${env:` without its closing `}`",
            ),
            (
                "[hooks.remotes.r]\nurl='ws://x'\nconnect_timeout_ms=0\n",
                "key `connect_timeout_ms`: must be at least 1",
            ),
            (
                "[hooks.remotes.r]\nurl='ws://x'\ncommand=['x']\n",
                "unknown field `command`",
            ),
        ];
        for (text, want) in cases {
            let err = parse_toml(text).expect_err(text).to_string();
            assert!(err.contains(want), "{err:?} should contain {want:?}");
        }
    }

    #[test]
    fn a_picoclaw_json_config_loads_as_it_is() {
        let json = r#"{
          "agents": {"defaults": {"model": "x"}},
          "hooks": {
            "enabled": true,
            "defaults": {"observer_timeout_ms": 500, "interceptor_timeout_ms": 5000, "approval_timeout_ms": 60000},
            "processes": {
              "py_review_gate": {
                "enabled": true, "priority": 100, "transport": "stdio",
                "command": ["python3", "/tmp/review_gate.py"],
                "observe": ["agent.tool.exec_start", "agent.tool.exec_end"],
                "intercept": ["before_tool", "approve_tool"],
                "env": {"PICOCLAW_HOOK_LOG_FILE": "/tmp/x.log"}
              }
            }
          }
        }"#;
        let c = Config::parse(json, true, Path::new("config.json"), PathBuf::from("/"))
            .expect("PicoClaw config loads");
        assert_eq!(c.processes["py_review_gate"].priority, 100);
    }

    /// From PicoClaw pkg/config/config_test.go
    /// TestLoadConfig_HooksProcessConfig: its config loads as it is,
    /// although `dir` does not exist and `uvx` may not be installed
    /// (PicoClaw checks both at spawn), with the short observe names as
    /// their kinds and PicoClaw's `audit` builtin skipped and listed.
    #[test]
    fn picoclaws_own_test_config_loads_as_it_is() {
        let dir = std::env::temp_dir().join(format!("hookhost-pico-load-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch folder");
        let path = dir.join("config.json");
        let json = r#"{
  "version": 1,
  "hooks": {
    "processes": {
      "review-gate": {
        "enabled": true,
        "transport": "stdio",
        "command": ["uvx-not-installed-here", "picoclaw-hook-reviewer"],
        "dir": "/tmp/hooks/no-such-folder",
        "env": {"HOOK_MODE": "rewrite"},
        "observe": ["turn_start", "turn_end"],
        "intercept": ["before_tool", "approve_tool"]
      }
    },
    "builtins": {
      "audit": {"enabled": true, "priority": 5, "config": {"label": "audit"}}
    }
  }
}"#;
        std::fs::write(&path, json).expect("config written");
        let mut c = Config::load(&path).expect("PicoClaw's test config loads");
        assert_eq!(c.format, Format::PicoClaw);
        let gate = &c.processes["review-gate"];
        assert_eq!(
            gate.dir.as_deref(),
            Some(Path::new("/tmp/hooks/no-such-folder"))
        );
        assert_eq!(gate.env["HOOK_MODE"], "rewrite");
        assert!(gate.picoclaw);
        let kinds: Vec<String> = gate
            .observe_patterns()
            .iter()
            .map(|p| p.to_string())
            .collect();
        assert_eq!(kinds, ["agent.turn.start", "agent.turn.end"]);
        assert_eq!(
            gate.intercept,
            [Stage::BeforeTool, Stage::AfterTool, Stage::ApproveTool]
        );
        assert_eq!(c.builtins["audit"].priority, 5);
        assert_eq!(c.defaults.approval_timeout_ms, 60_000);
        c.skip_unknown_builtins(|name| name == "deny_tools");
        assert!(c.builtins.is_empty());
        assert_eq!(c.skipped.len(), 1);
        assert_eq!(c.skipped[0].kind, "builtin");
        assert_eq!(c.skipped[0].source.event, "hooks.builtins.audit");
        assert!(
            c.skipped[0].why.contains("no builtin `audit`"),
            "{:?}",
            c.skipped[0]
        );
    }

    /// The counterpart of picoclaws_own_test_config_loads_as_it_is: the
    /// same missing folder in TOML fails at load, and an unknown builtin
    /// stays (a start failure, so that a typo is seen).
    #[test]
    fn a_toml_config_keeps_its_checks_at_load() {
        let dir = std::env::temp_dir().join(format!("hookhost-toml-load-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch folder");
        let toml = dir.join("hooks.toml");
        std::fs::write(
            &toml,
            "[hooks.processes.g]\ncommand = [\"true\"]\ndir = \"/tmp/hooks/no-such-folder\"\n",
        )
        .expect("toml written");
        let err = Config::load(&toml).expect_err("a missing folder fails a TOML load");
        assert!(err.to_string().contains("key `dir`"), "{err}");
        let mut t = Config::read(&toml).expect("reads");
        t.builtins.insert("audit".into(), c_builtin());
        t.skip_unknown_builtins(|_| false);
        assert!(t.builtins.contains_key("audit") && t.skipped.is_empty());
    }

    fn c_builtin() -> BuiltinConfig {
        serde_json::from_value(serde_json::json!({})).expect("a builtin section")
    }

    /// From PicoClaw pkg/agent/hook_mount.go processHookObserveKindsFromConfig
    /// (TestAgentLoop_ProcessDirectWithChannel_InvalidConfiguredHookFails for
    /// the failing case): an unknown observe name fails at load, naming the
    /// hook and the name; PicoClaw's wildcards load.
    #[test]
    fn an_unknown_observe_name_fails_naming_hook_and_name() {
        let at = |observe: &str| {
            let json = format!(
                r#"{{"hooks": {{"processes": {{"g": {{"enabled": true, "command": ["x"], "observe": {observe}}}}}}}}}"#
            );
            Config::parse(&json, true, Path::new("config.json"), PathBuf::from("/"))
        };
        let err = at(r#"["turn_end", "turn_ends"]"#)
            .expect_err("unknown name")
            .to_string();
        assert!(
            err.contains("hook `g`: key `observe[1]`: \"turn_ends\": unknown event name"),
            "{err}"
        );
        for wildcard in [r#"["all"]"#, r#"[""]"#, r#"["*"]"#] {
            let c = at(wildcard).expect(wildcard);
            let all = c.processes["g"].observe_patterns();
            assert_eq!(
                all,
                [hookhost_protocol::event::EventPattern::All],
                "{wildcard}"
            );
        }
        let err =
            parse_toml("[hooks.processes.g]\ncommand=[\"x\"]\nobserve=[\"tool_exec_strat\"]\n")
                .expect_err("TOML too")
                .to_string();
        assert!(err.contains("hook `g`: key `observe[0]`"), "{err}");
    }

    #[test]
    #[cfg(not(feature = "cel"))]
    fn an_if_without_the_cel_feature_fails_naming_it() {
        let cases = [
            (
                "[hooks.processes.g]\ncommand=[\"x\"]\nif='true'\n",
                "hook `g`",
            ),
            ("[hooks.builtins.b]\nif='true'\n", "builtin `b`"),
            (
                "[hooks.commands.c]\ncommand='x'\nevents=['stop']\nif='true'\n",
                "command hook `c`",
            ),
        ];
        for (text, at) in cases {
            let err = parse_toml(text).expect_err(text);
            assert!(
                matches!(err, ConfigError::MissingFeature { feature: "cel", .. }),
                "{err:?}"
            );
            assert_eq!(
                err.to_string(),
                format!("hooks.toml: {at}: `if` needs hookhost built with the `cel` feature")
            );
        }
        // The matcher needs no feature.
        let c = parse_toml("[hooks.processes.g]\ncommand=[\"x\"]\nmatcher='shell'\n")
            .expect("a matcher loads without cel");
        assert_eq!(c.processes["g"].matcher.as_deref(), Some("shell"));
    }

    #[test]
    #[cfg(not(feature = "remote"))]
    fn a_remote_hook_without_the_remote_feature_fails_naming_it() {
        let err = parse_toml("[hooks.remotes.r]\nurl='ws://x'\n").expect_err("no remote");
        assert!(
            matches!(
                err,
                ConfigError::MissingFeature {
                    feature: "remote",
                    ..
                }
            ),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "hooks.toml: remote hook `r`: a remote hook needs hookhost built with the `remote` feature"
        );
        let err = parse_toml("[hooks.webhooks.w]\nurl='http://x'\nevents=['Stop']\n")
            .expect_err("no remote");
        assert_eq!(
            err.to_string(),
            "hooks.toml: webhook `w`: a webhook needs hookhost built with the `remote` feature"
        );
    }
}
