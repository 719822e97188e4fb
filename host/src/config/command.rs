//! `[hooks.commands.NAME]`: a one-shot command hook as configured, in
//! docker-agent's terms (events, matcher, timeout in seconds), and the
//! table that maps docker-agent's event names onto hookhost's stages.
//!
//! It lives with the rest of the config so that loading a file needs
//! nothing from the members that run it; `members::command` reads the
//! event table from here.

use super::read::Kind;
use super::settings::{HookSettings, SettingsError, section};
use super::{Config, HookSpec};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use hookhost_protocol::lifecycle::LifecycleEvent;
use hookhost_protocol::{OnError, Stage};
use serde::Deserialize;

use super::on_error::FailurePolicy;
use super::prompt::ModelConfig;
use super::trust::Trust;
use super::webhook::WebhookGuard;
use crate::dialect::Dialect;
use crate::dialect::matcher::{Matcher, MatcherError, Rule, RuleError};
use crate::dialect::spec::{self, EnvValue, Target};
use crate::policy::filter::FilterError;
use crate::policy::scope::ScopeError;

/// The longest `timeout` a command hook may set: a day.
const MAX_TIMEOUT_SECS: u64 = 86_400;

/// `arg` with `${NAME}` and `$NAME` of each of `vars` replaced by `dir`:
/// an exec-form hook has no shell to expand them.
pub(crate) fn expand_project(arg: &str, vars: &[&str], dir: &Path) -> String {
    let dir = dir.display().to_string();
    vars.iter().fold(arg.to_string(), |a, k| {
        a.replace(&format!("${{{k}}}"), &dir)
            .replace(&format!("${k}"), &dir)
    })
}

/// `[hooks.commands.NAME]`: one command hook as configured.
///
/// The keys follow docker-agent's hook entries, so an existing entry can be
/// moved over by renaming little more than its event list.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields, default)]
pub struct CommandConfig {
    /// The keys every kind shares (read as the section's own: `deref`).
    #[serde(skip)]
    pub settings: HookSettings,
    /// A shell string, run with `sh -c` (as docker-agent and Claude Code
    /// do). Exclusive with `args`.
    pub command: Option<String>,
    /// argv, run without a shell. Exclusive with `command`.
    pub args: Option<Vec<String>>,
    /// docker-agent event names: `pre_tool_use`, `post_tool_use`,
    /// `permission_request`, `before_llm_call`, `after_llm_call`, or a
    /// lifecycle event (`session_start`, `stop`, ...).
    pub events: Vec<String>,
    /// Seconds before the run is killed; the dialect's default when absent
    /// (60 s for docker-agent). docker-agent reads 0 or a negative number
    /// as its default too: a negative number loads as 0.
    #[serde(deserialize_with = "seconds")]
    pub timeout: Option<u64>,
    /// Variables set for the command.
    pub env: BTreeMap<String, String>,
    /// Host variables passed through (besides `PATH`, which always is).
    pub inherit_env: Vec<String>,
    /// Where the command runs, relative to the config file's folder; that
    /// folder when absent.
    pub working_dir: Option<PathBuf>,
    /// Which agent's hook format the command speaks: its event names, its
    /// stdin, its answers, its matcher rules. docker-agent when absent.
    pub dialect: Dialect,
    /// An HTTP hook instead of a command: the event is POSTed here as the
    /// dialect's JSON and the response body read as its stdout would be.
    /// Exclusive with `command` and `args`.
    pub url: Option<String>,
    /// A prompt hook's model: asked for the decision instead of running a
    /// program. Set by `[hooks.prompts]` and by imported `prompt`
    /// handlers, never read from a `[hooks.commands]` table.
    #[serde(skip)]
    pub model: Option<Box<ModelConfig>>,
    /// A webhook's SSRF allowances and per-request headers, for `url`.
    /// Set by `[hooks.webhooks]`, never read from a `[hooks.commands]`
    /// table; without it a `url` hook may reach any address but the
    /// never-allowed ones (Claude Code's rule).
    #[serde(skip)]
    pub webhook: Option<Box<WebhookGuard>>,
    /// Headers for `url`; `$NAME` and `${NAME}` are read from the host's
    /// environment, but only for names in `allowed_env_vars`.
    pub headers: BTreeMap<String, String>,
    /// The variables `headers` may interpolate (Claude Code's rule).
    pub allowed_env_vars: Vec<String>,
    /// A Claude Code permission rule (`Bash(git *)`, `Edit(*.ts)`) the tool
    /// call must match for the hook to run: Claude's own `if`.
    pub rule: Option<String>,
    /// At stop: how many consecutive blocks of this hook are honoured
    /// (Cursor's `loop_limit`); the host-wide limit applies when absent.
    pub loop_limit: Option<u32>,
    /// docker-agent's `strict_output`: stdout on exit 0 must be empty or
    /// one JSON object of docker-agent's keys that the event can use;
    /// anything else is a failure of the hook. docker-agent dialect only.
    pub strict_output: bool,
    /// Where an imported hook came from; set by `[hooks.import]`, never
    /// read from TOML.
    #[serde(skip)]
    pub source: Option<HookSource>,
    /// Gemini CLI's `sequential: true` on the hook's definition (its
    /// matcher group): when any hook the agent would run for an event has
    /// it, each of the event's Gemini hooks gets the input as the one
    /// before it changed it (spec/dialects.md, Gemini CLI). Set by
    /// `[hooks.import]`, never read from TOML.
    #[serde(skip)]
    pub sequential: bool,
}

section!(CommandConfig);

/// What runs a command hook: the one of its keys that is set
/// ([`CommandConfig::runner`]).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Runner<'a> {
    /// `command`: a shell string, run with `sh -c`.
    Shell(&'a str),
    /// `args`: argv, run without a shell.
    Argv(&'a [String]),
    /// `url`: the event POSTed as the dialect's JSON (an HTTP hook or a
    /// webhook), the body read as its stdout.
    Post(&'a str),
    /// A prompt hook's model, asked for the decision.
    Ask(&'a ModelConfig),
}

/// `timeout`: whole seconds, a negative number read as 0 (docker-agent's
/// "use the default"), so a docker-agent entry with `timeout: -1` loads.
fn seconds<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    let t: Option<i64> = Option::deserialize(d)?;
    Ok(t.map(|t| u64::try_from(t).unwrap_or(0)))
}

/// Where an imported hook was written: the settings file, the event it was
/// listed under and its matcher, as `hookhost check` shows them.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HookSource {
    /// The settings file.
    pub file: PathBuf,
    /// The event, in the file's own spelling (`PreToolUse`, `BeforeTool`).
    pub event: String,
    /// The matcher as written, when there was one.
    pub matcher: Option<String>,
    /// Whether it may run: the user's own file, or a project's whose
    /// command the user trusted or not ([`Trust`]).
    pub trust: Trust,
}

impl HookSource {
    /// A source: `file`, listed under `event` with `matcher`.
    pub fn new(file: PathBuf, event: String, matcher: Option<String>) -> Self {
        Self {
            file,
            event,
            matcher,
            trust: Trust::Own,
        }
    }
}

impl Default for CommandConfig {
    fn default() -> Self {
        Self {
            settings: HookSettings::default(),
            command: None,
            args: None,
            events: Vec::new(),
            timeout: None,
            env: BTreeMap::new(),
            inherit_env: Vec::new(),
            working_dir: None,
            dialect: Dialect::DockerAgent,
            url: None,
            model: None,
            webhook: None,
            headers: BTreeMap::new(),
            allowed_env_vars: Vec::new(),
            rule: None,
            loop_limit: None,
            strict_output: false,
            source: None,
            sequential: false,
        }
    }
}

impl CommandConfig {
    /// A hook running the shell string `command` for `events`, with every
    /// other setting at its default; handy for embedding and tests.
    pub fn shell(command: &str, events: &[&str]) -> Self {
        Self {
            command: Some(command.to_string()),
            events: events.iter().map(|e| e.to_string()).collect(),
            ..Self::default()
        }
    }

    /// Checks what serde cannot: exactly one of `command` and `args`, known
    /// event names, a positive timeout, and filters that compile. The error
    /// names the key, because a typo in a security guard must not silently
    /// disable it.
    pub fn validate(&self) -> Result<(), CommandConfigError> {
        self.runner()?;
        let spec = self.dialect.spec();
        if self.events.is_empty() {
            return Err(CommandConfigError::NoEvents(self.dialect));
        }
        if let Some(bad) = self.events.iter().find(|e| spec.event(e).is_none()) {
            return Err(CommandConfigError::UnknownEvent(self.dialect, bad.clone()));
        }
        self.validate_timeout()?;
        if self.strict_output && self.dialect != Dialect::DockerAgent {
            return Err(CommandConfigError::StrictOutput(self.dialect));
        }
        let tool_event = self
            .events
            .iter()
            .filter_map(|e| spec.event(e))
            .any(|e| matches!(e.target, Target::Stage(_)));
        Matcher::new(self.matcher.as_deref(), spec.matching, tool_event)?;
        if let Some(rule) = &self.rule {
            Rule::new(rule)?;
        }
        self.settings.check(false)?;
        if self.quality_gate().is_some() && !self.lists_subagent_stop() {
            return Err(CommandConfigError::GateOffSubagentStop);
        }
        Ok(())
    }

    /// Whether one of its events is `subagent_stop` in its dialect.
    fn lists_subagent_stop(&self) -> bool {
        let spec = self.dialect.spec();
        self.events
            .iter()
            .filter_map(|e| spec.event(e))
            .any(|e| e.target == Target::Lifecycle("subagent_stop"))
    }

    /// A positive timeout the clock can hold, in one unit only.
    fn validate_timeout(&self) -> Result<(), CommandConfigError> {
        let ms = match (self.timeout, self.timeout_ms) {
            (Some(_), Some(_)) => return Err(CommandConfigError::TwoTimeouts),
            (Some(s), None) => s.saturating_mul(1000),
            (None, Some(ms)) => ms,
            (None, None) => return Ok(()),
        };
        match ms {
            // docker-agent: 0 (or a negative number) means the default.
            0 if self.dialect == Dialect::DockerAgent && self.timeout_ms.is_none() => Ok(()),
            0 => Err(CommandConfigError::ZeroTimeout),
            // A deadline past what the clock can hold would panic on the
            // first call (found by the config_parse fuzz target); a day is
            // already far longer than any agent waits for a tool.
            ms if ms > MAX_TIMEOUT_SECS * 1000 => Err(CommandConfigError::TimeoutTooLong),
            _ => Ok(()),
        }
    }

    /// What runs it, from the one key of `command`, `args`, `url` (or a
    /// prompt hook's model) that is set; the error names the keys when
    /// none or more than one is, or when this build cannot run it.
    pub fn runner(&self) -> Result<Runner<'_>, CommandConfigError> {
        let remote = cfg!(feature = "remote");
        match (&self.model, &self.url, &self.command, &self.args) {
            (Some(_), None, None, None) if !remote => Err(CommandConfigError::ModelNeedsRemote),
            (Some(m), None, None, None) => Ok(Runner::Ask(m)),
            (Some(_), ..) => Err(CommandConfigError::UrlAndCommand),
            (None, Some(_), None, None) if !remote => Err(CommandConfigError::HttpNeedsRemote),
            (None, Some(url), None, None) => Ok(Runner::Post(url)),
            (None, Some(_), ..) => Err(CommandConfigError::UrlAndCommand),
            (None, None, Some(_), Some(_)) => Err(CommandConfigError::CommandAndArgs),
            (None, None, None, None) => Err(CommandConfigError::NoCommand),
            (None, None, Some(c), None) if c.trim().is_empty() => {
                Err(CommandConfigError::EmptyCommand)
            }
            (None, None, Some(c), None) => Ok(Runner::Shell(c)),
            (None, None, None, Some(a)) if a.first().is_none_or(|p| p.is_empty()) => {
                Err(CommandConfigError::NoProgram)
            }
            (None, None, None, Some(a)) => Ok(Runner::Argv(a)),
        }
    }

    /// The chain policy for a failure at `stage`: refuse at a stage where
    /// one of its events fails closed (docker-agent's pre_tool_use and
    /// tool_guard, whatever `on_error` says); else `block` refuses (deny),
    /// `warn` and `ignore` go on (allow; they differ only in how loudly it
    /// is logged), and an unset `on_error` takes the stage's default, so a
    /// `permission_request` hook that times out or cannot start refuses.
    pub fn policy(&self, stage: Stage) -> OnError {
        if self.fail_closed_stages().contains(&stage) {
            return OnError::Deny;
        }
        FailurePolicy::resolve(self.on_error, stage)
    }

    /// The stages at which a failure refuses whatever `on_error` says: those
    /// of its events the dialect makes fail closed (docker-agent's
    /// pre_tool_use and tool_guard: a validator that breaks must not let
    /// the tool through).
    pub fn fail_closed_stages(&self) -> Vec<Stage> {
        let spec = self.dialect.spec();
        let mut stages: Vec<Stage> = Vec::new();
        for e in self.events.iter().filter_map(|e| spec.event(e)) {
            if let (true, Target::Stage(s)) = (e.fails_closed(), e.target) {
                if !stages.contains(&s) {
                    stages.push(s);
                }
            }
        }
        stages
    }

    /// The stages its events map onto, in [`Stage::ALL`] order. Only
    /// request lifecycle events give [`Stage::Lifecycle`]; the others reach
    /// the hook through the command hook's `notify`.
    pub fn stages(&self) -> Vec<Stage> {
        let spec = self.dialect.spec();
        let wanted: Vec<Stage> = self
            .events
            .iter()
            .filter_map(|e| match spec.event(e)?.target {
                Target::Stage(s) => Some(s),
                Target::Lifecycle(name) => {
                    let ev: LifecycleEvent = name.parse().ok()?;
                    ev.is_request().then_some(Stage::Lifecycle)
                }
            })
            .collect();
        Stage::ALL
            .into_iter()
            .filter(|s| wanted.contains(s))
            .collect()
    }

    /// `args` with the dialect's project-folder variables
    /// (`${CLAUDE_PROJECT_DIR}`, `$GEMINI_PROJECT_DIR`) replaced by `dir`:
    /// an exec-form hook has no shell to expand them, and Claude Code's own
    /// examples start `args` with one.
    pub fn expanded_args(&self, dir: &Path) -> Option<Vec<String>> {
        let args = self.args.as_ref()?;
        let vars = self.project_vars();
        Some(args.iter().map(|a| expand_project(a, &vars, dir)).collect())
    }

    /// The variables its agent sets for a hook: a family member's (Qwen
    /// Code, Factory) when the hook was imported from its folder, else the
    /// dialect's.
    pub(crate) fn agent_env(&self) -> &'static [(&'static str, EnvValue)] {
        self.source
            .as_ref()
            .and_then(|s| spec::family_of_file(&s.file, self.dialect))
            .map_or(self.dialect.spec().env, |f| f.env)
    }

    /// Whether it runs in the agent's working directory (the event's
    /// `cwd`), which is then also the project folder its variables name:
    /// a hook imported from the settings of an agent that runs hooks there
    /// (Claude Code and its family, whose hook runner spawns in the
    /// session's cwd, 2.1.330; Codex, "session cwd as working dir"; Gemini
    /// CLI, `cwd: input.cwd` in hookRunner.ts, gemini-cli 5411f113).
    /// Cursor runs project hooks at the project root and Copilot in a
    /// handler's own `cwd`, and a `[hooks.commands]` hook in its
    /// `working_dir`, so those keep their folder.
    pub(crate) fn in_session_cwd(&self) -> bool {
        self.source.is_some()
            && matches!(
                self.dialect,
                Dialect::ClaudeCode | Dialect::Codex | Dialect::GeminiCli
            )
    }

    /// The names of [`agent_env`](Self::agent_env) that hold the project
    /// folder, which an exec-form hook's `args` may name.
    pub(crate) fn project_vars(&self) -> Vec<&'static str> {
        self.agent_env()
            .iter()
            .filter(|(_, v)| *v == EnvValue::ProjectDir)
            .map(|(k, _)| *k)
            .collect()
    }

    /// The run's time limit: `timeout` (seconds) or `timeout_ms`, else the
    /// dialect's default (60 s for docker-agent, 600 s for Claude Code).
    pub fn timeout(&self) -> Duration {
        match (self.timeout, self.timeout_ms) {
            (Some(s), _) if s > 0 => Duration::from_secs(s),
            (Some(_), _) => Duration::from_millis(self.dialect.spec().default_timeout_ms),
            (None, Some(ms)) => Duration::from_millis(ms),
            (None, None) => Duration::from_millis(self.dialect.spec().default_timeout_ms),
        }
    }
}

/// What is wrong with a command hook's settings; the message names the
/// key, because a typo in a security guard must not silently disable it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CommandConfigError {
    /// Both `command` and `args`.
    #[error("`command` and `args` exclude each other: set only one")]
    CommandAndArgs,
    /// Neither `command` nor `args`.
    #[error("set `command` (a shell string) or `args` (argv)")]
    NoCommand,
    /// A blank `command`.
    #[error("`command` is empty")]
    EmptyCommand,
    /// `args` without a program.
    #[error("`args` must start with the program to run")]
    NoProgram,
    /// No event.
    #[error("`events` is empty; name at least one {0} event: {known}", known = .0.spec().event_names())]
    NoEvents(Dialect),
    /// An event name the dialect does not have.
    #[error("`events`: {0} has no event {1:?} (expected one of {known})", known = .0.spec().event_names())]
    UnknownEvent(Dialect, String),
    /// `timeout = 0`.
    #[error("`timeout` must be a positive number of seconds")]
    ZeroTimeout,
    /// Both `timeout` and `timeout_ms`.
    #[error("`timeout` (seconds) and `timeout_ms` exclude each other: set only one")]
    TwoTimeouts,
    /// `url` in a build without the `remote` feature.
    #[error("`url` (an HTTP hook) needs hookhost built with the `remote` feature")]
    HttpNeedsRemote,
    /// A prompt hook in a build without the `remote` feature.
    #[error("a prompt hook (a model's HTTP API) needs hookhost built with the `remote` feature")]
    ModelNeedsRemote,
    /// `url` beside `command` or `args`.
    #[error("`url` excludes `command` and `args`: set only one")]
    UrlAndCommand,
    /// A `url` or header that cannot be used.
    #[error("{0}")]
    Http(String),
    /// `matcher` does not compile under the dialect's rules.
    #[error(transparent)]
    Matcher(#[from] MatcherError),
    /// `rule` is not a permission rule.
    #[error(transparent)]
    Rule(#[from] RuleError),
    /// `strict_output` in a dialect that has no such rule.
    #[error("`strict_output` is docker-agent's; {0} hooks cannot set it")]
    StrictOutput(Dialect),
    /// A timeout the clock cannot hold.
    #[error("`timeout` is at most {MAX_TIMEOUT_SECS} seconds (a day)")]
    TimeoutTooLong,
    /// `matcher` or `if` does not compile.
    #[error(transparent)]
    Filter(#[from] FilterError),
    /// A `scope` list that would match nothing.
    #[error(transparent)]
    Scope(#[from] ScopeError),
    /// A shared key the command reads like every hook (`timeout_ms`,
    /// `if`, `scope`).
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// `block_on_failure` or `max_retries` on a hook that does not run at
    /// `subagent_stop`, where alone they mean something.
    #[error(
        "`block_on_failure` and `max_retries` apply at subagent_stop only, which `events` does not list"
    )]
    GateOffSubagentStop,
}

impl Kind for CommandConfig {
    const NOUN: &'static str = "command hook";

    fn section(config: &mut Config) -> &mut BTreeMap<String, Self> {
        &mut config.commands
    }

    fn spec(&self, name: &str, tool_names: &std::sync::Arc<BTreeMap<String, String>>) -> HookSpec {
        HookSpec::command(name, self.clone(), tool_names)
    }

    fn check(&self, _: &Config, _: &str) -> Result<(), String> {
        self.validate().map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::CommandOnError;

    #[test]
    fn validate_names_the_key() {
        let mut c = CommandConfig::shell("true", &["pre_tool_use"]);
        assert_eq!(c.validate(), Ok(()));
        c.args = Some(vec!["x".into()]);
        assert!(
            c.validate()
                .unwrap_err()
                .to_string()
                .contains("`command` and `args`")
        );
        c.command = None;
        assert_eq!(c.validate(), Ok(()));
        c.args = Some(vec![]);
        assert!(c.validate().unwrap_err().to_string().contains("`args`"));
        c.args = None;
        assert!(c.validate().unwrap_err().to_string().contains("`command`"));

        let mut c = CommandConfig::shell("true", &["pre_tool_use", "PreToolUse"]);
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("`events`") && e.contains("PreToolUse"), "{e}");
        c.events.clear();
        assert!(c.validate().unwrap_err().to_string().contains("`events`"));

        let mut c = CommandConfig::shell("true", &["session_end"]);
        c.dialect = Dialect::ClaudeCode;
        c.events = vec!["SessionEnd".into()];
        c.timeout = Some(0);
        assert!(c.validate().unwrap_err().to_string().contains("`timeout`"));
        let mut c = CommandConfig::shell("true", &["session_end"]);
        c.timeout = Some(i64::MAX as u64);
        assert!(
            c.validate()
                .unwrap_err()
                .to_string()
                .contains("at most 86400")
        );
        c.timeout = Some(86_400);
        assert_eq!(c.validate(), Ok(()));
        c.timeout = Some(1);
        c.matcher = Some("a)|(b".into());
        assert!(c.validate().unwrap_err().to_string().contains("`matcher`"));
    }

    #[test]
    fn config_deserializes_strictly() {
        let c: CommandConfig = toml::from_str(
            "command = \"x\"\nevents = [\"stop\"]\non_error = \"block\"\nif = \"true\"\ntimeout = 5",
        )
        .expect("valid toml");
        assert!(c.enabled);
        assert_eq!(c.on_error, Some(CommandOnError::Block));
        assert_eq!(c.policy(Stage::BeforeTool), OnError::Deny);
        assert_eq!(c.condition.as_deref(), Some("true"));
        assert_eq!(c.timeout(), Duration::from_secs(5));
        assert!(toml::from_str::<CommandConfig>("command = \"x\"\nmatchr = \"y\"").is_err());
        assert!(toml::from_str::<CommandConfig>("on_error = \"maybe\"").is_err());
        assert_eq!(CommandConfig::default().timeout(), Duration::from_secs(60));
        let unset = CommandConfig::default();
        assert_eq!(unset.policy(Stage::BeforeTool), OnError::Allow);
        assert_eq!(unset.policy(Stage::ApproveTool), OnError::Deny);
    }

    /// From docker-agent pkg/hooks/hooks_test.go TestHookGetTimeout: 0 and
    /// a negative `timeout` mean the default (60 s), a positive one is kept.
    #[test]
    fn zero_or_negative_timeout_is_the_docker_agent_default() {
        for (timeout, secs) in [("0", 60), ("-1", 60), ("30", 30)] {
            let text = format!("command = \"x\"\nevents = [\"stop\"]\ntimeout = {timeout}");
            let c: CommandConfig = toml::from_str(&text).expect("valid toml");
            assert_eq!(c.validate(), Ok(()), "{timeout}");
            assert_eq!(c.timeout(), Duration::from_secs(secs), "{timeout}");
        }
    }

    /// From docker-agent pkg/hooks/failure_test.go TestHookFailurePolicyMatrix:
    /// pre_tool_use and tool_guard refuse on failure under any `on_error`;
    /// tool_input_transform follows it.
    #[test]
    fn gates_fail_closed_under_any_on_error() {
        for on_error in [
            None,
            Some(CommandOnError::Warn),
            Some(CommandOnError::Ignore),
        ] {
            for (event, want) in [
                ("pre_tool_use", OnError::Deny),
                ("tool_guard", OnError::Deny),
                ("tool_input_transform", OnError::Allow),
            ] {
                let mut c = CommandConfig::shell("x", &[event]);
                c.on_error = on_error;
                assert_eq!(c.policy(Stage::BeforeTool), want, "{event} {on_error:?}");
            }
        }
    }

    #[test]
    fn stages_follow_the_events() {
        let c = CommandConfig::shell(
            "true",
            &[
                "session_end",
                "permission_request",
                "pre_tool_use",
                "after_llm_call",
                "stop",
            ],
        );
        // stop is a request: a stop hook may keep the agent going.
        assert_eq!(
            c.stages(),
            vec![
                Stage::AfterLlm,
                Stage::BeforeTool,
                Stage::ApproveTool,
                Stage::Lifecycle
            ]
        );
        let c = CommandConfig::shell("true", &["turn_start", "pre_compact"]);
        assert_eq!(c.stages(), vec![Stage::Lifecycle]);
        let c = CommandConfig::shell("true", &["session_end"]);
        assert!(c.stages().is_empty());
    }
}
