//! The host's configuration: TOML, or PicoClaw's JSON shape, same structs.
//!
//! Loading is strict: an unknown key, a missing command, a bad enum value or
//! an unknown stage is an error that names the file, the hook and the key,
//! because a typo in a security gate's config must not silently disable it.

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
    /// PicoClaw's in-process Go hooks; they cannot exist here, so each one
    /// is reported and skipped.
    #[serde(default)]
    builtins: BTreeMap<String, Value>,
}

impl Config {
    /// A config with no hooks, resolving paths against `base_dir`.
    pub fn empty(base_dir: impl Into<PathBuf>) -> Self {
        Self {
            enabled: true,
            defaults: Defaults::default(),
            processes: BTreeMap::new(),
            base_dir: base_dir.into(),
        }
    }

    /// Reads a `.json` file as JSON and anything else as TOML.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
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
        for name in section.builtins.keys() {
            tracing::warn!(
                hook = %name,
                "builtin hook `{name}` in {} skipped: PicoClaw's in-process builtins do not exist in hookhost",
                path.display()
            );
        }
        for (name, raw) in section.processes {
            let at = format!("hook `{name}`");
            let hook: ProcessConfig = decode(raw).map_err(|m| invalid(at.clone(), m))?;
            validate_process(&hook).map_err(|m| invalid(at.clone(), m))?;
            config.processes.insert(name, hook);
        }
        validate_defaults(&config.defaults).map_err(|m| invalid("[hooks.defaults]".into(), m))?;
        Ok(config)
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

fn validate_defaults(d: &Defaults) -> Result<(), String> {
    let nonzero = [
        ("observer_timeout_ms", d.observer_timeout_ms),
        ("interceptor_timeout_ms", d.interceptor_timeout_ms),
        ("approval_timeout_ms", d.approval_timeout_ms),
        ("hello_timeout_ms", d.hello_timeout_ms),
        ("max_line_bytes", d.max_line_bytes as u64),
        ("event_queue", d.event_queue as u64),
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
