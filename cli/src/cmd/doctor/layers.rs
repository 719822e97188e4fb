//! The settings files an agent reads, managed first, each as JSON: what
//! `hookhost doctor` weighs the way the agent does.
//!
//! - Claude Code: `/etc/claude-code/managed-settings.json` and its
//!   `managed-settings.d/*.json` drop-ins (alphabetical), the user's
//!   `~/.claude/settings.json` (`$CLAUDE_CONFIG_DIR`), the project's
//!   `.claude/settings.json` and `.claude/settings.local.json`.
//! - Codex: `/etc/codex/requirements.toml` (managed hooks and
//!   constraints), `/etc/codex/config.toml` (system, managed too), the
//!   user's `$CODEX_HOME` (`~/.codex`) `config.toml` and `hooks.json`, the
//!   project's `.codex/config.toml` and `.codex/hooks.json`.
//! - Gemini CLI: `/etc/gemini-cli/settings.json` (system: overrides every
//!   other file), `system-defaults.json` (the lowest), the user's
//!   `~/.gemini/settings.json`, the project's `.gemini/settings.json`.

use std::path::{Path, PathBuf};

use hookhost::Dialect;
use serde_json::Value;

use crate::cmd::install::tomljson;
use crate::shared::paths;

/// One settings file.
pub(super) struct Layer {
    /// `managed`, `user`, `project`, ... as the agent's docs name it.
    pub(super) name: &'static str,
    pub(super) path: PathBuf,
    /// Written by the admin: its hooks are managed ones.
    pub(super) managed: bool,
    /// Its content as a JSON object; `None` when the file is missing.
    pub(super) settings: Option<Value>,
    /// Why it could not be read (the agent then ignores or refuses it).
    pub(super) error: Option<String>,
}

impl Layer {
    fn read(name: &'static str, path: PathBuf, managed: bool) -> Layer {
        let toml = path.extension().is_some_and(|e| e == "toml");
        let (settings, error) = match std::fs::read_to_string(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (None, None),
            Err(e) => (None, Some(e.to_string())),
            Ok(text) => match parse(&text, toml) {
                Ok(v) => (Some(v), None),
                Err(e) => (None, Some(e)),
            },
        };
        Layer {
            name,
            path,
            managed,
            settings,
            error,
        }
    }

    /// The value at `key` (dotted: `hooksConfig.enabled`).
    pub(super) fn get(&self, key: &str) -> Option<&Value> {
        let mut at = self.settings.as_ref()?;
        for part in key.split('.') {
            at = at.get(part)?;
        }
        Some(at)
    }
}

fn parse(text: &str, toml: bool) -> Result<Value, String> {
    if toml {
        let doc: toml_edit::DocumentMut = text.parse().map_err(|e| format!("not TOML: {e}"))?;
        return Ok(tomljson::to_json(doc.as_item()));
    }
    match serde_json::from_str(text) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err("not a JSON object".into()),
        Err(e) => Err(format!("not JSON: {e}")),
    }
}

/// `agent`'s layers, managed first; `root` stands for `/`.
pub(super) fn layers(agent: Dialect, root: &Path, project: &Path) -> Vec<Layer> {
    match agent {
        Dialect::ClaudeCode => claude(root, project),
        Dialect::Codex => codex(root, project),
        _ => gemini(root, project),
    }
}

fn claude(root: &Path, project: &Path) -> Vec<Layer> {
    let etc = root.join("etc/claude-code");
    let mut out = vec![Layer::read(
        "managed",
        etc.join("managed-settings.json"),
        true,
    )];
    out.extend(drop_ins(&etc.join("managed-settings.d")));
    let user = user_dir("CLAUDE_CONFIG_DIR", ".claude");
    out.push(Layer::read("user", user.join("settings.json"), false));
    let dir = project.join(".claude");
    out.push(Layer::read("project", dir.join("settings.json"), false));
    out.push(Layer::read("local", dir.join("settings.local.json"), false));
    out
}

/// Claude Code's managed drop-ins, in the order it merges them.
fn drop_ins(dir: &Path) -> Vec<Layer> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    found.sort();
    found
        .into_iter()
        .map(|p| Layer::read("managed drop-in", p, true))
        .collect()
}

fn codex(root: &Path, project: &Path) -> Vec<Layer> {
    let etc = root.join("etc/codex");
    let user = user_dir("CODEX_HOME", ".codex");
    let dir = project.join(".codex");
    vec![
        Layer::read("requirements", etc.join("requirements.toml"), true),
        Layer::read("system", etc.join("config.toml"), true),
        Layer::read("user", user.join("config.toml"), false),
        Layer::read("user", user.join("hooks.json"), false),
        Layer::read("project", dir.join("config.toml"), false),
        Layer::read("project", dir.join("hooks.json"), false),
    ]
}

fn gemini(root: &Path, project: &Path) -> Vec<Layer> {
    let etc = root.join("etc/gemini-cli");
    vec![
        Layer::read("system", etc.join("settings.json"), true),
        Layer::read("system-defaults", etc.join("system-defaults.json"), true),
        Layer::read("user", paths::home().join(".gemini/settings.json"), false),
        Layer::read("project", project.join(".gemini/settings.json"), false),
    ]
}

/// `$VAR` when set and not empty, else `~/DIR`.
fn user_dir(var: &str, dir: &str) -> PathBuf {
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map_or_else(|| paths::home().join(dir), PathBuf::from)
}
