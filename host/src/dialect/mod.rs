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
mod copilot;
mod cursor;
mod docker_agent;
mod gemini_cli;
pub(crate) mod matcher;
pub(crate) mod reply;
pub(crate) mod spec;
pub(crate) mod stdin;
pub(crate) mod tools;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

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
