//! Agent dialects: how each agent family speaks to its command hooks.
//!
//! The field settled on Claude Code's command-hook format, and each agent
//! changes a few names, casings and semantics. A [`Dialect`] names one of
//! them; its definition (events, stdin keys, tool names, env vars, timeout
//! unit, matcher rules, how to read an answer) is data in this folder, one
//! file per dialect, written as translations both ways so the same table
//! serves a hook run by hookhost and an agent answered by hookhost.

pub(crate) mod agent;
mod claude_code;
mod codex;
mod codex_answers;
pub(crate) mod contract;
mod copilot;
mod cursor;
mod docker_agent;
mod gemini_answers;
mod gemini_cli;
pub(crate) mod handoff;
pub(crate) mod keys;
pub(crate) mod matcher;
pub(crate) mod messages;
pub(crate) mod notes;
pub(crate) mod origin;
pub(crate) mod reply;
pub(crate) mod spec;
pub(crate) mod stdin;
pub(crate) mod tools;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use spec::{Casing, Target};

/// One agent family's hook dialect. The names are the ones users write in
/// `dialect = "..."`, `[hooks.import]` and `hookhost relay --dialect`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Dialect {
    /// Claude Code (also Qwen Code, Factory and VS Code's Claude-format
    /// files, whose differences are named in spec/dialects.md).
    ClaudeCode,
    /// OpenAI Codex CLI.
    Codex,
    /// Google Gemini CLI.
    GeminiCli,
    /// Cursor.
    Cursor,
    /// GitHub Copilot CLI and VS Code's `.github/hooks` files.
    Copilot,
    /// docker-agent: hookhost's own command-hook flavour before dialects.
    #[default]
    DockerAgent,
}

impl Dialect {
    /// Every dialect, in the order the spec lists them.
    pub const ALL: [Dialect; 6] = [
        Dialect::ClaudeCode,
        Dialect::Codex,
        Dialect::GeminiCli,
        Dialect::Cursor,
        Dialect::Copilot,
        Dialect::DockerAgent,
    ];

    /// The dialect's definition.
    pub(crate) fn spec(self) -> &'static spec::Spec {
        match self {
            Dialect::ClaudeCode => &claude_code::SPEC,
            Dialect::Codex => &codex::SPEC,
            Dialect::GeminiCli => &gemini_cli::SPEC,
            Dialect::Cursor => &cursor::SPEC,
            Dialect::Copilot => &copilot::SPEC,
            Dialect::DockerAgent => &docker_agent::SPEC,
        }
    }

    /// Every native event of the dialect, in the order its spec lists
    /// them, with what an installer needs to route each one to hookhost
    /// (`hookhost install` writes one entry per event). Copilot lists both
    /// of its spellings: the CLI's camelCase events and VS Code's
    /// PascalCase ones.
    pub fn events(self) -> Vec<NativeEvent> {
        let spec = self.spec();
        spec.events
            .iter()
            .map(|e| NativeEvent {
                name: e.native,
                hookhost: match e.target {
                    Target::Stage(stage) => stage.as_str(),
                    Target::Lifecycle(name) => name,
                },
                can_refuse: e.can_block(),
                tool: e.is_about_a_tool(),
                named_in_payload: spec.casing_of(e.native) == Casing::Snake,
                takes_over: TAKES_OVER.contains(&(self, e.native)),
            })
            .collect()
    }

    /// The variables this dialect's agent sets for one hook run whose
    /// value only the agent knows (Claude Code's `CLAUDE_ENV_FILE`, Gemini
    /// CLI's `GEMINI_PLANS_DIR`). A relay reads them from its own
    /// environment and hands them on with the event
    /// ([`crate::ForeignEvent::with_agent_env`]), so that a hook the daemon
    /// runs gets what the agent gave the relay.
    pub fn agent_vars(self) -> impl Iterator<Item = &'static str> {
        self.spec()
            .env
            .iter()
            .filter(|(_, v)| *v == spec::EnvValue::FromAgent)
            .map(|(k, _)| *k)
    }

    /// The dialect's name, as users write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::ClaudeCode => "claude-code",
            Dialect::Codex => "codex",
            Dialect::GeminiCli => "gemini-cli",
            Dialect::Cursor => "cursor",
            Dialect::Copilot => "copilot",
            Dialect::DockerAgent => "docker-agent",
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One event an agent fires at its hooks, as its settings file names it.
/// An installer routes each to hookhost (`hookhost install`); these are
/// the facts it needs to write a correct entry without knowing the dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct NativeEvent {
    /// The name as the agent writes it (`PreToolUse`, `BeforeTool`,
    /// `preToolUse`).
    pub name: &'static str,
    /// What hookhost calls it: a stage (`before_tool`) or a lifecycle
    /// event (`stop`, or an open name such as `cwd_changed`).
    pub hookhost: &'static str,
    /// Whether hookhost can refuse there (a tool or model stage, an
    /// approval, a lifecycle event that can be blocked): the events where a
    /// hookhost that cannot be reached should refuse rather than let the
    /// agent go on, if the user wants it to fail closed. At `stop` a
    /// refusal means "keep going", so closing there is not the safe side.
    pub can_refuse: bool,
    /// Whether it concerns one tool call: Claude-shaped settings files
    /// give such events a `matcher` on the tool name.
    pub tool: bool,
    /// Whether the agent's input names the event (`hook_event_name`).
    /// When not (Copilot CLI's camelCase events), a command standing in for
    /// the hook must be told which event it runs for (`hookhost relay
    /// --event NAME`).
    pub named_in_payload: bool,
    /// Whether a hook there does the agent's own work instead of the
    /// agent (Claude Code's `WorktreeCreate` creates the worktree and must
    /// print its path; `WorktreeRemove` removes it): configuring any hook
    /// there changes what the agent does, so an installer leaves it out.
    pub takes_over: bool,
}

/// Events where any configured hook replaces the agent's own behaviour.
/// Codex's UserInstructions: a configured hook's text replaces the user's
/// own instructions (`~/.codex/AGENTS.md`), and one that gives none costs
/// a warning each thread; Codex 0.169.0 has no such event.
const TAKES_OVER: [(Dialect, &str); 3] = [
    (Dialect::ClaudeCode, "WorktreeCreate"),
    (Dialect::ClaudeCode, "WorktreeRemove"),
    (Dialect::Codex, "UserInstructions"),
];

/// A dialect name that is not one of [`Dialect::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown dialect {0:?} (expected one of claude-code, codex, gemini-cli, cursor, copilot, docker-agent)"
)]
pub struct UnknownDialect(pub String);

impl FromStr for Dialect {
    type Err = UnknownDialect;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Dialect::ALL
            .into_iter()
            .find(|d| d.as_str() == s)
            .ok_or_else(|| UnknownDialect(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Dialect, NativeEvent};
    use crate::ForeignEvent;

    fn event(d: Dialect, name: &str) -> NativeEvent {
        d.events()
            .into_iter()
            .find(|e| e.name == name)
            .unwrap_or_else(|| panic!("{d} has no {name}"))
    }

    #[test]
    fn events_are_the_spec_rows_with_what_an_installer_needs() {
        assert_eq!(Dialect::ClaudeCode.events().len(), 31);
        assert_eq!(Dialect::GeminiCli.events().len(), 11);
        let pre = event(Dialect::ClaudeCode, "PreToolUse");
        assert_eq!(pre.hookhost, "before_tool");
        assert!(pre.tool && pre.can_refuse && pre.named_in_payload && !pre.takes_over);
        let start = event(Dialect::ClaudeCode, "SessionStart");
        assert!(!start.tool && !start.can_refuse);
        let stop = event(Dialect::ClaudeCode, "Stop");
        assert_eq!(stop.hookhost, "stop");
        assert!(stop.can_refuse && !stop.tool);
        let cwd = event(Dialect::ClaudeCode, "CwdChanged");
        assert_eq!(cwd.hookhost, "cwd_changed");
        assert!(!cwd.can_refuse);
        assert!(event(Dialect::ClaudeCode, "WorktreeCreate").takes_over);
        assert!(event(Dialect::ClaudeCode, "PermissionRequest").tool);
        let model = event(Dialect::GeminiCli, "BeforeModel");
        assert!(model.can_refuse && !model.tool);
        assert!(!event(Dialect::Copilot, "preToolUse").named_in_payload);
        assert!(event(Dialect::Copilot, "PreToolUse").named_in_payload);
        assert!(event(Dialect::Cursor, "beforeShellExecution").tool);
        let takers: Vec<_> = Dialect::ALL
            .iter()
            .flat_map(|d| d.events())
            .filter(|e| e.takes_over)
            .map(|e| e.name)
            .collect();
        assert_eq!(
            takers,
            ["WorktreeCreate", "WorktreeRemove", "UserInstructions"]
        );
    }

    /// `can_refuse` says what the relay does with the same event once it
    /// arrives: both read the one rule.
    #[test]
    fn can_refuse_agrees_with_the_event_as_the_relay_reads_it() {
        let mut checked = 0;
        for d in Dialect::ALL {
            for e in d.events() {
                let input = json!({"hook_event_name": e.name, "tool_name": "Bash",
                    "tool_input": {"command": "ls"}, "toolName": "bash", "toolArgs": "{}",
                    "command": "ls", "file_path": "a", "llm_request": {"messages": []}});
                let read = ForeignEvent::read(d, &input, Some(e.name))
                    .unwrap_or_else(|err| panic!("{d} {}: {err}", e.name));
                assert_eq!(read.can_refuse(), e.can_refuse, "{d} {}", e.name);
                checked += 1;
            }
        }
        assert!(checked > 100, "{checked}");
    }
}
