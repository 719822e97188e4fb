//! The host's configuration: TOML, or PicoClaw's JSON shape, same structs.
//!
//! Loading is strict: an unknown key, a missing command, a bad enum value or
//! an unknown stage is an error that names the file, the hook and the key,
//! because a typo in a security gate's config must not silently disable it.

pub(crate) mod preflight;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use hookhost_protocol::event::EventPattern;
use hookhost_protocol::{OnError, Stage};
use serde::Deserialize;
use serde_json::Value;

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
    pub commands: BTreeMap<String, crate::members::command::CommandConfig>,
    /// Hooks served over the network (WebSocket or HTTP) by name.
    pub remotes: BTreeMap<String, RemoteConfig>,
    /// Where to write the audit log, if anywhere.
    pub audit: Option<AuditConfig>,
    /// The folder relative paths are resolved against (the config file's
    /// folder, or the working directory for a config built in code).
    pub base_dir: PathBuf,
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

/// How a hook process is reached. Only stdio exists today; the key is kept
/// so that PicoClaw configs, which spell it out, load unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
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
    /// Working directory, relative to the config file's folder.
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
    /// What a failure of this hook decides; per stage default when absent.
    #[serde(default)]
    pub on_error: Option<OnError>,
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
}

/// `[hooks.remotes.NAME]`: a hook that runs as a network service, reached
/// over WebSocket (`ws://`, `wss://`) or HTTP (`http://`, `https://`) with
/// the same protocol as a process (spec/protocol.md section 2.2).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RemoteConfig {
    /// Off switch for one hook.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Lower runs first; ties break by name, across every kind of hook.
    #[serde(default)]
    pub priority: i64,
    /// Where the hook service listens.
    pub url: String,
    /// Sent on the WebSocket upgrade and on every HTTP request. A value may
    /// name environment variables as `${env:NAME}`, read when the host
    /// connects, so a token never has to be written into the file.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Event kinds to forward (WebSocket only: HTTP carries requests only).
    #[serde(default)]
    pub observe: Vec<String>,
    /// Stages to call the hook for.
    #[serde(default)]
    pub intercept: Vec<Stage>,
    /// Overrides the stage default deadline for this hook.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// How long one connection attempt (TCP, TLS and upgrade) may take;
    /// `hello_timeout_ms` when absent.
    #[serde(default)]
    pub connect_timeout_ms: Option<u64>,
    /// What a failure of this hook decides; per stage default when absent.
    #[serde(default)]
    pub on_error: Option<OnError>,
    /// Regex on the tool name (anchored), as for process hooks.
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
    /// Overrides `breaker_failures` for this hook.
    #[serde(default)]
    pub breaker_failures: Option<u32>,
    /// Overrides `breaker_window_ms` for this hook.
    #[serde(default)]
    pub breaker_window_ms: Option<u64>,
    /// Overrides `breaker_cooldown_ms` for this hook.
    #[serde(default)]
    pub breaker_cooldown_ms: Option<u64>,
}

/// How a remote hook is reached, from its URL's scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemoteTransport {
    /// `ws://` or `wss://`: one long-lived connection, reconnected with
    /// backoff; requests and runtime events.
    WebSocket,
    /// `http://` or `https://`: one POST per request; no events.
    Http,
}

impl RemoteConfig {
    /// A remote at `url` that intercepts `intercept`, every other setting at
    /// its default; handy for embedding and tests.
    pub fn new(url: impl Into<String>, intercept: Vec<Stage>) -> Self {
        Self {
            enabled: true,
            priority: 0,
            url: url.into(),
            headers: BTreeMap::new(),
            observe: Vec::new(),
            intercept,
            timeout_ms: None,
            connect_timeout_ms: None,
            on_error: None,
            matcher: None,
            condition: None,
            breaker: None,
            breaker_failures: None,
            breaker_window_ms: None,
            breaker_cooldown_ms: None,
        }
    }

    /// WebSocket or HTTP, from the URL's scheme; the error names the key.
    pub fn transport(&self) -> Result<RemoteTransport, String> {
        let scheme = self
            .url
            .split_once("://")
            .map(|(s, _)| s.to_ascii_lowercase())
            .ok_or_else(|| {
                format!(
                    "key `url`: {:?} has no scheme",
                    crate::observe::redact::display_url(&self.url)
                )
            })?;
        match scheme.as_str() {
            "ws" | "wss" => Ok(RemoteTransport::WebSocket),
            "http" | "https" => Ok(RemoteTransport::Http),
            other => Err(format!(
                "key `url`: scheme `{other}` is not one of ws, wss, http, https"
            )),
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

    /// The parsed `observe` list (validated at load).
    pub fn observe_patterns(&self) -> Vec<EventPattern> {
        self.observe
            .iter()
            .filter_map(|p| EventPattern::parse(p).ok())
            .collect()
    }

    /// The headers with every `${env:NAME}` replaced from `lookup`; the
    /// error names the header and the variable, never the value.
    pub fn resolved_headers(
        &self,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Vec<(String, String)>, String> {
        self.headers
            .iter()
            .map(|(name, template)| {
                expand_env(template, &lookup)
                    .map(|v| (name.clone(), v))
                    .map_err(|e| format!("header `{name}`: {e}"))
            })
            .collect()
    }
}

/// Replaces each `${env:NAME}` in `template`; any other `$` is literal.
fn expand_env(template: &str, lookup: &impl Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(at) = rest.find("${env:") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "${env:".len()..];
        let end = after
            .find('}')
            .ok_or_else(|| "`${env:` without its closing `}`".to_string())?;
        let name = &after[..end];
        if name.is_empty() || name.contains('=') || name.contains('\0') {
            return Err(format!("invalid environment variable name {name:?}"));
        }
        let value =
            lookup(name).ok_or_else(|| format!("environment variable `{name}` is not set"))?;
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Per-hook overrides of the breaker defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BreakerConfig {
    /// `breaker = true | false`; unset, the member decides from its policy.
    pub enabled: Option<bool>,
    /// Overrides `breaker_failures`.
    pub breaker_failures: Option<u32>,
    /// Overrides `breaker_window_ms`.
    pub breaker_window_ms: Option<u64>,
    /// Overrides `breaker_cooldown_ms`.
    pub breaker_cooldown_ms: Option<u64>,
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
    /// What a failure decides.
    #[serde(default)]
    pub on_error: Option<OnError>,
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

fn yes() -> bool {
    true
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
        self.on_error.unwrap_or(OnError::default_for(stage))
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

/// Why a config cannot be used. The message always says where.
#[derive(Debug, thiserror::Error)]
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
    audit: Option<Value>,
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
            audit: None,
            base_dir: base_dir.into(),
        }
    }

    /// Reads a `.json` file as JSON and anything else as TOML, then checks
    /// that every hook's folder and program are there ([`crate::config::preflight`]).
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
        Config::parse(&text, is_json, path, base)
    }

    /// Parses config text; `path` only names the source in errors.
    pub fn parse(
        text: &str,
        is_json: bool,
        path: &Path,
        base_dir: PathBuf,
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
        let invalid = |location: String, message: String| ConfigError::Invalid {
            path: path.to_path_buf(),
            location,
            message,
        };
        let mut config = Config::empty(base_dir);
        let Some(hooks) = root.hooks else {
            return Ok(config);
        };
        let section: HooksSection = decode(hooks).map_err(|m| invalid("[hooks]".into(), m))?;
        config.enabled = section.enabled;
        if let Some(d) = section.defaults {
            config.defaults = decode(d).map_err(|m| invalid("[hooks.defaults]".into(), m))?;
        }
        for (name, raw) in section.builtins {
            let at = format!("builtin `{name}`");
            let b: BuiltinConfig = decode(raw).map_err(|m| invalid(at.clone(), m))?;
            crate::policy::filter::Filter::new(b.matcher.as_deref(), b.condition.as_deref())
                .map_err(|m| invalid(at.clone(), m))?;
            if b.timeout_ms == Some(0) {
                return Err(invalid(at, "key `timeout_ms`: must be at least 1".into()));
            }
            config.builtins.insert(name, b);
        }
        for (name, raw) in section.commands {
            let at = format!("command hook `{name}`");
            let c: crate::members::command::CommandConfig =
                decode(raw).map_err(|m| invalid(at.clone(), m))?;
            c.validate().map_err(|m| invalid(at.clone(), m))?;
            config.commands.insert(name, c);
        }
        if let Some(raw) = section.audit {
            let a: AuditConfig = decode(raw).map_err(|m| invalid("[hooks.audit]".into(), m))?;
            config.audit = Some(a);
        }
        for (name, raw) in section.processes {
            let at = format!("hook `{name}`");
            let hook: ProcessConfig = decode(raw).map_err(|m| invalid(at.clone(), m))?;
            validate_process(&hook).map_err(|m| invalid(at.clone(), m))?;
            crate::policy::filter::Filter::new(hook.matcher.as_deref(), hook.condition.as_deref())
                .map_err(|m| invalid(at.clone(), m))?;
            config.processes.insert(name, hook);
        }
        for (name, raw) in section.remotes {
            let at = format!("remote hook `{name}`");
            let hook: RemoteConfig = decode(raw).map_err(|m| invalid(at.clone(), m))?;
            validate_remote(&hook).map_err(|m| invalid(at.clone(), m))?;
            crate::policy::filter::Filter::new(hook.matcher.as_deref(), hook.condition.as_deref())
                .map_err(|m| invalid(at.clone(), m))?;
            config.remotes.insert(name, hook);
        }
        validate_defaults(&config.defaults).map_err(|m| invalid("[hooks.defaults]".into(), m))?;
        Ok(config)
    }

    /// Where the audit log goes, resolved against the config's folder.
    pub fn audit_path(&self) -> Option<PathBuf> {
        self.audit.as_ref().map(|a| {
            if a.path.is_absolute() {
                a.path.clone()
            } else {
                self.base_dir.join(&a.path)
            }
        })
    }

    /// The folder a command hook runs in.
    pub fn command_dir(&self, hook: &crate::members::command::CommandConfig) -> PathBuf {
        match &hook.working_dir {
            Some(d) if d.is_absolute() => d.clone(),
            Some(d) => self.base_dir.join(d),
            None => self.base_dir.clone(),
        }
    }

    /// The folder a hook runs in.
    pub fn hook_dir(&self, hook: &ProcessConfig) -> PathBuf {
        match &hook.dir {
            Some(d) if d.is_absolute() => d.clone(),
            Some(d) => self.base_dir.join(d),
            None => self.base_dir.clone(),
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

fn validate_process(hook: &ProcessConfig) -> Result<(), String> {
    match hook.command.first() {
        None => return Err("key `command`: must name a program (an argv list, not empty)".into()),
        Some(p) if p.trim().is_empty() => {
            return Err("key `command`: the program name is empty".into());
        }
        Some(_) => {}
    }
    for (i, p) in hook.observe.iter().enumerate() {
        EventPattern::parse(p).map_err(|e| format!("key `observe[{i}]`: {e}"))?;
    }
    if hook.timeout_ms == Some(0) {
        return Err("key `timeout_ms`: must be at least 1".into());
    }
    for name in hook.env.keys().chain(hook.inherit_env.iter()) {
        if name.is_empty() || name.contains('=') || name.contains('\0') {
            return Err(format!("invalid environment variable name {name:?}"));
        }
    }
    Ok(())
}

fn validate_remote(hook: &RemoteConfig) -> Result<(), String> {
    let transport = hook.transport()?;
    let host = hook
        .url
        .split_once("://")
        .map(|(_, rest)| rest.split(['/', '?', '#']).next().unwrap_or(""))
        .unwrap_or("");
    if host.is_empty() {
        return Err(format!(
            "key `url`: {:?} names no host",
            crate::observe::redact::display_url(&hook.url)
        ));
    }
    for (i, p) in hook.observe.iter().enumerate() {
        EventPattern::parse(p).map_err(|e| format!("key `observe[{i}]`: {e}"))?;
    }
    if transport == RemoteTransport::Http && !hook.observe.is_empty() {
        return Err(
            "key `observe`: an http:// hook gets requests only (no runtime events); use ws:// to observe"
                .into(),
        );
    }
    for (key, v) in [
        ("timeout_ms", hook.timeout_ms),
        ("connect_timeout_ms", hook.connect_timeout_ms),
    ] {
        if v == Some(0) {
            return Err(format!("key `{key}`: must be at least 1"));
        }
    }
    for (name, value) in &hook.headers {
        let valid_name = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
        if !valid_name {
            return Err(format!(
                "key `headers`: {name:?} is not a valid header name"
            ));
        }
        if value.contains(['\r', '\n', '\0']) {
            return Err(format!(
                "key `headers.{name}`: a header value cannot hold a line break or NUL"
            ));
        }
        // Only the syntax is checked here; the variables are read when the
        // host connects, so that a rotated token is picked up on reconnect.
        expand_env(value, &|_| Some(String::new()))
            .map_err(|e| format!("key `headers.{name}`: {e}"))?;
    }
    Ok(())
}

fn validate_defaults(d: &Defaults) -> Result<(), String> {
    let nonzero = [
        ("observer_timeout_ms", d.observer_timeout_ms),
        ("interceptor_timeout_ms", d.interceptor_timeout_ms),
        ("approval_timeout_ms", d.approval_timeout_ms),
        ("hello_timeout_ms", d.hello_timeout_ms),
        ("max_line_bytes", d.max_line_bytes as u64),
        ("event_queue", d.event_queue as u64),
        ("chain_budget_ms", d.chain_budget_ms),
        ("breaker_failures", d.breaker_failures as u64),
        ("breaker_window_ms", d.breaker_window_ms),
        ("restart_backoff_max_ms", d.restart_backoff_max_ms),
    ];
    for (key, v) in nonzero {
        if v == 0 {
            return Err(format!("key `{key}`: must be at least 1"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(c.audit_path(), Some(PathBuf::from("/cfg/audit.jsonl")));
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
            missing,
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
}
