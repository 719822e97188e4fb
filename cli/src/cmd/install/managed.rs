//! `hookhost install AGENT --managed --url URL`: the agent's admin tier
//! (the file only root writes, which the agent reads before the user's
//! and lets no user file undo) pins one entry per event, hookhost's
//! gateway, failing closed wherever a refusal guards something.
//!
//! - Claude Code: `/etc/claude-code/managed-settings.json`, `type: "http"`
//!   hooks to `URL/hooks/claude-code` with `onFailure: "block"`, the token
//!   read from `$HOOKHOST_TOKEN` (listed in `allowedEnvVars` and the
//!   managed `httpHookAllowedEnvVars`, so no secret sits in a file every
//!   user reads), and `allowManagedHooksOnly`.
//! - Codex: `/etc/codex/requirements.toml`, its managed hooks running
//!   `hookhost relay --connect URL`, `allow_managed_hooks_only`, and
//!   `[features] hooks = true` (a user's `hooks = false` would otherwise
//!   turn every hook off, managed ones too).
//! - Gemini CLI: `/etc/gemini-cli/settings.json` (the system settings,
//!   which override every other file), relay hooks as for Codex and
//!   `hooksConfig.enabled = true`.

use std::path::{Path, PathBuf};

use hookhost::Dialect;
use serde_json::{Map, Value, json};

use super::file::Doc;
use super::plan::Step;
use super::route::{self, Via};
use super::shape;
use super::target::Shape;
use super::tomljson;

/// The environment variable Claude Code's managed http hooks read the
/// gateway's token from (and the relay reads it from too).
pub(crate) const TOKEN_VAR: &str = "HOOKHOST_TOKEN";

/// The file holding `agent`'s managed tier, under `root` (`/` on a real
/// machine; another folder for tests and image builds).
pub(crate) fn managed_file(agent: Dialect, root: &Path) -> Result<PathBuf, String> {
    let rel = match agent {
        Dialect::ClaudeCode => "etc/claude-code/managed-settings.json",
        Dialect::Codex => "etc/codex/requirements.toml",
        Dialect::GeminiCli => "etc/gemini-cli/settings.json",
        other => {
            return Err(format!(
                "{other} has no managed settings file install can write (--managed: claude-code, \
                 codex or gemini-cli)"
            ));
        }
    };
    Ok(root.join(rel))
}

/// The change to `agent`'s managed file that routes every event to the
/// gateway at `base` (`program`: the relay's path, quoted for `sh`).
pub(super) fn step(
    agent: Dialect,
    file: &Path,
    base: &str,
    program: &str,
) -> Result<Option<Step>, String> {
    let base = base.trim_end_matches('/');
    let gateway = Via::Gateway {
        program: program.to_string(),
        url: base.to_string(),
    };
    let mut step = match agent {
        Dialect::ClaudeCode => claude(file, base)?,
        Dialect::Codex => codex(file, &gateway)?,
        _ => gemini(file, &gateway)?,
    };
    if step.before == step.after {
        return Ok(None);
    }
    // Every user's agent reads it; only root writes it.
    step.mode = Some(0o644);
    Ok(Some(step))
}

/// Claude Code's managed-settings.json.
fn claude(file: &Path, base: &str) -> Result<Step, String> {
    let url = super::hook_url(base, Dialect::ClaudeCode)?;
    let via = Via::Http {
        url,
        token: format!("${TOKEN_VAR}"),
        env: Some(TOKEN_VAR),
    };
    let routes = route::routes(Dialect::ClaudeCode, &via, true);
    let mut doc = Doc::load(file)?;
    shape::install(&mut doc.root, Shape::Grouped, Dialect::ClaudeCode, &routes)
        .map_err(|m| format!("{}: {m}", file.display()))?;
    doc.root
        .insert("allowManagedHooksOnly".into(), Value::Bool(true));
    add_to_list(&mut doc.root, "httpHookAllowedEnvVars", TOKEN_VAR);
    Ok(Step::of(&doc, routed(routes.len())))
}

/// Gemini CLI's system settings.json.
fn gemini(file: &Path, via: &Via) -> Result<Step, String> {
    let routes = route::routes(Dialect::GeminiCli, via, true);
    let mut doc = Doc::load(file)?;
    shape::install(&mut doc.root, Shape::Grouped, Dialect::GeminiCli, &routes)
        .map_err(|m| format!("{}: {m}", file.display()))?;
    let config = doc.root.entry("hooksConfig").or_insert_with(|| json!({}));
    match config.as_object_mut() {
        Some(config) => config.insert("enabled".into(), Value::Bool(true)),
        None => return Err(format!("{}: hooksConfig is not an object", file.display())),
    };
    Ok(Step::of(&doc, routed(routes.len())))
}

/// Codex's requirements.toml: its `[hooks]` edited as JSON, every other
/// line kept as it was.
fn codex(file: &Path, via: &Via) -> Result<Step, String> {
    let before = match std::fs::read_to_string(file) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("cannot read {}: {e}", file.display())),
    };
    let mut doc: toml_edit::DocumentMut = before
        .as_deref()
        .unwrap_or("")
        .parse()
        .map_err(|e| format!("{} is not TOML: {e}", file.display()))?;
    let mut root = Map::new();
    match tomljson::to_json(doc.as_item().get("hooks").unwrap_or(&toml_edit::Item::None)) {
        Value::Null => {}
        hooks => {
            root.insert("hooks".into(), hooks);
        }
    }
    let routes = route::routes(Dialect::Codex, via, true);
    shape::install(&mut root, Shape::Grouped, Dialect::Codex, &routes)
        .map_err(|m| format!("{}: {m}", file.display()))?;
    doc["allow_managed_hooks_only"] = toml_edit::value(true);
    if !doc.contains_key("features") {
        doc["features"] = toml_edit::table();
    }
    doc["features"]["hooks"] = toml_edit::value(true);
    doc["hooks"] = tomljson::to_item(root.get("hooks").unwrap_or(&Value::Null));
    Ok(Step {
        path: file.to_path_buf(),
        before,
        after: Some(doc.to_string()),
        note: routed(routes.len()),
        check_config: false,
        mode: None,
    })
}

/// Adds `item` to the list at `key`, keeping what the admin listed.
fn add_to_list(root: &mut Map<String, Value>, key: &str, item: &str) {
    let list = root.entry(key).or_insert_with(|| json!([]));
    match list.as_array_mut() {
        Some(list) if list.iter().any(|v| v == item) => {}
        Some(list) => list.push(Value::from(item)),
        None => *list = json!([item]),
    }
}

fn routed(events: usize) -> String {
    format!("managed: routed {events} events to the hookhost gateway, failing closed")
}
