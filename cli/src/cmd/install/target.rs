//! Which settings file an agent reads at each scope, and how it nests its
//! hooks.

use std::path::{Path, PathBuf};

use clap::ValueEnum;
use hookhost::Dialect;

use crate::shared::paths;

/// The agents install knows how to route.
pub(super) const AGENTS: [Dialect; 5] = [
    Dialect::ClaudeCode,
    Dialect::Codex,
    Dialect::GeminiCli,
    Dialect::Cursor,
    Dialect::Copilot,
];

/// Parses AGENT: a dialect with a settings file of its own (docker-agent's
/// hooks live in its agent YAML, which install does not edit).
pub(super) fn parse_agent(s: &str) -> Result<Dialect, String> {
    let d: Dialect = s.parse().map_err(|e| format!("{e}"))?;
    if AGENTS.contains(&d) {
        Ok(d)
    } else {
        Err(format!(
            "{d} has no settings file install can edit (expected one of claude-code, codex, \
             gemini-cli, cursor, copilot)"
        ))
    }
}

/// Whose settings: the user's (every project) or one project's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum Scope {
    User,
    Project,
}

/// How a format lists handlers under an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    /// `{event: [{matcher, hooks: [handler]}]}`: Claude Code, Codex,
    /// Gemini CLI.
    Grouped,
    /// `{event: [handler]}`: Cursor, Copilot.
    Flat,
}

impl Shape {
    pub(super) fn of(agent: Dialect) -> Shape {
        match agent {
            Dialect::Cursor | Dialect::Copilot => Shape::Flat,
            _ => Shape::Grouped,
        }
    }
}

/// The file install writes for `agent` at `scope` (`project` is the
/// project folder at project scope).
///
/// Copilot reads every `*.json` of its hooks folder, so hookhost keeps its
/// entries in a file of its own there, `hookhost.json`.
pub(super) fn settings_file(agent: Dialect, scope: Scope, project: &Path) -> PathBuf {
    let home = paths::home();
    let user_dir = |var: &str, dir: &str| {
        std::env::var_os(var)
            .filter(|v| !v.is_empty())
            .map_or_else(|| home.join(dir), PathBuf::from)
    };
    match (agent, scope) {
        (Dialect::ClaudeCode, Scope::User) => {
            user_dir("CLAUDE_CONFIG_DIR", ".claude").join("settings.json")
        }
        (Dialect::ClaudeCode, Scope::Project) => project.join(".claude/settings.json"),
        (Dialect::Codex, Scope::User) => user_dir("CODEX_HOME", ".codex").join("hooks.json"),
        (Dialect::Codex, Scope::Project) => project.join(".codex/hooks.json"),
        (Dialect::GeminiCli, Scope::User) => home.join(".gemini/settings.json"),
        (Dialect::GeminiCli, Scope::Project) => project.join(".gemini/settings.json"),
        (Dialect::Cursor, Scope::User) => home.join(".cursor/hooks.json"),
        (Dialect::Cursor, Scope::Project) => project.join(".cursor/hooks.json"),
        (_, Scope::User) => home.join(".copilot/hooks/hookhost.json"),
        (_, Scope::Project) => project.join(".github/hooks/hookhost.json"),
    }
}

/// Refuses a project-scope `file` reached through a symbolic link: a
/// repository that ships `.codex -> ~/.codex` (or links the settings file
/// itself) would have install read the user's own settings and write them
/// into the repository. Every component from `project` down to `file` is
/// checked without following it; missing ones are fine (install creates
/// them as plain folders and files).
pub(super) fn refuse_links(project: &Path, file: &Path) -> Result<(), String> {
    let Ok(rest) = file.strip_prefix(project) else {
        return Ok(());
    };
    let mut at = project.to_path_buf();
    for part in rest.components() {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(format!(
                    "{} is a symbolic link; at project scope install writes only the \
                     project's own files, never through a link (it could lead to your own \
                     settings, which would then be copied into the repository): remove the link",
                    at.display()
                ));
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(format!("cannot inspect {}: {e}", at.display())),
        }
    }
    Ok(())
}

/// The files whose hooks `--adopt` moves: the settings file itself, and
/// for Copilot every other `*.json` of its hooks folder, sorted (the
/// order Copilot and hookhost's importer read them in).
pub(super) fn adopt_sources(agent: Dialect, file: &Path) -> Result<Vec<PathBuf>, String> {
    if agent != Dialect::Copilot {
        return Ok(vec![file.to_path_buf()]);
    }
    let Some(dir) = file.parent() else {
        return Ok(Vec::new());
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("cannot list {}: {e}", dir.display())),
    };
    let mut found: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json") && p.is_file() && p != file)
        .collect();
    found.sort();
    Ok(found)
}
