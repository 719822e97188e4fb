//! `--adopt`: the user's own hooks in the agent's file move into
//! hookhost's chain. They are written unchanged, in the agent's format, to
//! a file hookhost's config imports (`[hooks.import]`), and taken out of
//! the agent's file, so each runs once: in hookhost, warm and composed.
//!
//! A hook moves only if hookhost would run it as the agent did, as far as
//! its entry shows. hookhost runs an imported Claude Code, Codex or Gemini
//! CLI hook where its agent does, in the session's folder, and a Cursor or
//! Copilot hook in the folder that holds the file's agent folder; with
//! `PATH`, the user's identity and locale (`HOME`, `LANG`...) and the
//! agent's own variables (spec/dialects.md §3). So a project's hooks are
//! adopted into a file in the same project
//! (`<project>/.claude/hookhost-adopted.json`); the user's into
//! `<config dir>/adopted/<agent>-user.json`, where a Cursor or Copilot hook
//! that names a relative path or the project folder would not keep its
//! meaning, so it stays with the agent. Hooks hookhost does not run
//! (prompt, agent, MCP-tool, PowerShell-only, background `async` ones,
//! Gemini's disabled ones) and ones whose command reads a variable
//! hookhost does not pass stay with the agent too, each named with the
//! reason; a hook that moves but whose script reads such a variable is
//! named in a note.

use std::path::{Path, PathBuf};

use hookhost::Dialect;
use serde_json::{Map, Value};

use super::file::Doc;
use super::plan::Step;
use super::route::{is_ours, words};
use super::shape::{self, Taken};
use super::target::{Scope, Shape};
use crate::shared::paths;

/// A handler left in the agent's file, and why.
pub(super) struct Left {
    pub(super) file: PathBuf,
    pub(super) event: String,
    pub(super) what: String,
    pub(super) why: String,
}

/// Where the hooks adopted from `agent`'s files at `scope` are kept.
pub(super) fn adopted_file(agent: Dialect, scope: Scope, project: &Path) -> PathBuf {
    match scope {
        Scope::User => paths::config_dir()
            .join("adopted")
            .join(format!("{agent}-user.json")),
        Scope::Project => project.join(agent_dir(agent)).join("hookhost-adopted.json"),
    }
}

/// The agent's folder in a project; Copilot's adopted file goes beside
/// `.github/hooks/`, not in it, where Copilot would load it too.
fn agent_dir(agent: Dialect) -> &'static str {
    match agent {
        Dialect::ClaudeCode => ".claude",
        Dialect::Codex => ".codex",
        Dialect::GeminiCli => ".gemini",
        Dialect::Cursor => ".cursor",
        _ => ".github",
    }
}

/// Takes the hooks that can move out of `root` (the file at `path`),
/// returning them by event, and names the ones that stay.
pub(super) fn take(
    root: &mut Map<String, Value>,
    path: &Path,
    agent: Dialect,
    scope: Scope,
) -> Result<(Taken, Vec<Left>), String> {
    let shape = Shape::of(agent);
    let disabled = gemini_disabled(root);
    let why = |event: &str, h: &Value| {
        unrouted(agent, event).or_else(|| stays(agent, scope, h, &disabled))
    };
    let mut left = Vec::new();
    for (event, handler) in shape::handlers(root, shape) {
        if is_ours(agent, handler) {
            continue;
        }
        match why(&event, handler) {
            Some(why) => left.push(Left {
                file: path.to_path_buf(),
                event,
                what: describe(handler),
                why,
            }),
            None => unmet_note(agent, path, &event, handler),
        }
    }
    let taken = shape::take_all(root, shape, &|event, h| {
        !is_ours(agent, h) && why(event, h).is_none()
    })?;
    Ok((taken, left))
}

/// Why a hook under `event` stays with the agent whatever it runs: install
/// does not route the event to hookhost (a hook there replaces the agent's
/// own work, Claude Code's WorktreeCreate, Codex's UserInstructions), so
/// moved into hookhost it would never run.
fn unrouted(agent: Dialect, event: &str) -> Option<String> {
    agent
        .events()
        .iter()
        .any(|e| e.name == event && e.takes_over)
        .then(|| format!("hookhost install does not route {event}, so it runs only here"))
}

/// Says which variables an adopted hook's script reads that hookhost will
/// not pass it (spec/dialects.md §3): it moves, but its author should
/// know, since its agent gave it its whole environment.
fn unmet_note(agent: Dialect, path: &Path, event: &str, handler: &Value) {
    let unmet = unmet(agent, path, handler);
    if unmet.is_empty() {
        return;
    }
    outln!(
        "note: {event} `{}` reads {}, which hookhost does not pass to hooks \
         (only PATH, the user's identity and locale such as HOME, and the agent's variables); \
         its agent gave it its whole environment",
        describe(handler),
        unmet.join(", ")
    );
}

/// The variables a handler of `agent`'s file at `path` reads and will not
/// get, each as `$NAME` with the script that reads it.
pub(super) fn unmet(agent: Dialect, path: &Path, handler: &Value) -> Vec<String> {
    let h = handler.as_object();
    let text = |k: &str| h.and_then(|h| h.get(k)).and_then(Value::as_str);
    let strings = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    };
    let env = h
        .and_then(|h| h.get("env"))
        .and_then(Value::as_object)
        .map(|e| {
            e.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
        })
        .into_iter()
        .flatten()
        .collect();
    let args = h
        .and_then(|h| h.get("args"))
        .map(|_| strings(h.and_then(|h| h.get("args"))));
    let command = ["command", "bash", "linux"].into_iter().find_map(text);
    let hook = hookhost::CommandConfig {
        dialect: agent,
        command: command.filter(|_| args.is_none()).map(str::to_string),
        args: args.map(|a| command.map(str::to_string).into_iter().chain(a).collect()),
        env,
        ..hookhost::CommandConfig::default()
    };
    let dir = project_of(path);
    hook.unmet_env(&dir)
        .into_iter()
        .map(|u| match u.script {
            Some(s) => format!("${} (in {})", u.name, s.display()),
            None => format!("${}", u.name),
        })
        .collect()
}

/// The project a settings file belongs to: the folder holding its agent
/// folder, where its agent runs its hooks.
fn project_of(path: &Path) -> PathBuf {
    let parent = path.parent().unwrap_or(Path::new("."));
    let agent_folder = |p: &Path| {
        p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('.'))
    };
    match parent.file_name() {
        Some(n) if n == "hooks" && parent.parent().is_some_and(agent_folder) => parent
            .parent()
            .and_then(Path::parent)
            .unwrap_or(parent)
            .to_path_buf(),
        _ if agent_folder(parent) => parent.parent().unwrap_or(parent).to_path_buf(),
        _ => parent.to_path_buf(),
    }
}

/// The names in Gemini's `hooksConfig.disabled` (or older
/// `hooks.disabled`): hooks the user switched off.
fn gemini_disabled(root: &Map<String, Value>) -> Vec<String> {
    let root = Value::Object(root.clone());
    ["/hooksConfig/disabled", "/hooks/disabled"]
        .iter()
        .filter_map(|p| root.pointer(p).and_then(Value::as_array))
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

/// Why a handler must stay with the agent; `None` when it can move.
fn stays(agent: Dialect, scope: Scope, handler: &Value, disabled: &[String]) -> Option<String> {
    let Some(h) = handler.as_object() else {
        return Some("not an object".into());
    };
    let text = |k: &str| h.get(k).and_then(Value::as_str);
    let kind = text("type").unwrap_or("command");
    let runs = kind == "command" || (agent == Dialect::ClaudeCode && kind == "http");
    if !runs {
        return Some(format!("hookhost does not run `{kind}` hooks"));
    }
    if text("shell") == Some("powershell") {
        return Some("a PowerShell hook".into());
    }
    if ["async", "asyncRewake"]
        .iter()
        .any(|k| h.get(*k) == Some(&Value::Bool(true)))
    {
        return Some("it runs in the background (`async`); hookhost would wait for it".into());
    }
    if text("name").is_some_and(|n| disabled.iter().any(|d| d == n)) {
        return Some("it is disabled".into());
    }
    let commands: Vec<&str> = ["command", "bash", "linux", "osx"]
        .into_iter()
        .filter_map(text)
        .collect();
    if kind == "command" && commands.is_empty() {
        return Some("no command hookhost can run here (PowerShell only?)".into());
    }
    let args = h.get("args").and_then(Value::as_array);
    let args = args.into_iter().flatten().filter_map(Value::as_str);
    let all: Vec<&str> = commands.into_iter().chain(args).collect();
    environment(agent, &all).or_else(|| folder(agent, scope, &all, text("cwd")))
}

/// A variable a command line reads that hookhost's run would not set as
/// the agent did: hookhost passes `PATH`, the user's identity and locale
/// (`HOME`, `LANG`...) and the agent's own variables (spec/dialects.md §3).
fn environment(agent: Dialect, commands: &[&str]) -> Option<String> {
    commands.iter().find_map(|c| {
        hookhost::env_reads(c, hookhost::Language::Any)
            .into_iter()
            .find(|v| !hookhost::passed_env(agent, v))
            .map(|var| format!("it uses ${var}, which hookhost does not pass to hooks"))
    })
}

/// At user scope, for an agent that runs hooks in a folder of the file's
/// (Cursor, Copilot), what depends on it: a relative path, the project
/// variables, a relative `cwd`. The user's adopted file is in hookhost's
/// config folder, so those would point there.
fn folder(agent: Dialect, scope: Scope, commands: &[&str], cwd: Option<&str>) -> Option<String> {
    // Claude Code, Codex and Gemini CLI run every hook in the session's
    // folder, and so does hookhost with theirs: nothing moves.
    let in_session = matches!(
        agent,
        Dialect::ClaudeCode | Dialect::Codex | Dialect::GeminiCli
    );
    if scope == Scope::Project || in_session {
        return None;
    }
    if cwd.is_some_and(|c| !c.starts_with('/')) {
        return Some("its `cwd` is relative to the project".into());
    }
    for c in commands {
        if c.contains("PROJECT_DIR") || c.contains("GEMINI_CWD") {
            return Some(
                "it uses the project folder, which user-wide hooks in hookhost do not have".into(),
            );
        }
        let relative = words(c)
            .unwrap_or_default()
            .into_iter()
            .map(|w| w.rsplit('=').next().unwrap_or_default().to_string())
            .find(|w| is_relative_path(w));
        if let Some(w) = relative {
            return Some(format!(
                "it runs `{w}`, a path relative to the agent's folder"
            ));
        }
    }
    None
}

fn is_relative_path(w: &str) -> bool {
    let absolute = ['/', '~', '$', '-'].iter().any(|c| w.starts_with(*c)) || w.contains("://");
    !absolute && w.contains('/')
}

/// A handler in a few words, for the list of those left behind.
fn describe(handler: &Value) -> String {
    let h = handler.as_object();
    let text = |k: &str| h.and_then(|h| h.get(k)).and_then(Value::as_str);
    ["command", "bash", "url", "linux", "prompt"]
        .into_iter()
        .find_map(text)
        .or_else(|| text("type"))
        .map_or_else(|| handler.to_string(), str::to_string)
}

/// `text` (a hookhost config, `None` when there is none) with `file` in
/// its `[hooks.import]` under `agent`, formatting and comments kept.
/// Returns `None` when it is listed already.
pub(super) fn import(
    text: Option<&str>,
    base: &Path,
    agent: Dialect,
    file: &Path,
) -> Result<Option<String>, String> {
    let mut doc: toml_edit::DocumentMut = text
        .unwrap_or("")
        .parse()
        .map_err(|e| format!("not TOML: {e}"))?;
    let hooks = doc.entry("hooks").or_insert_with(|| {
        let mut t = toml_edit::Table::new();
        t.set_implicit(true);
        toml_edit::Item::Table(t)
    });
    let hooks = hooks
        .as_table_mut()
        .ok_or("`hooks` is not a [hooks] table; add the import by hand")?;
    let import = hooks
        .entry("import")
        .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()));
    let import = import
        .as_table_like_mut()
        .ok_or("`hooks.import` is not a table")?;
    let path = file.display().to_string();
    let Some(entry) = import.get_mut(agent.as_str()) else {
        let list = toml_edit::Array::from_iter([path]);
        import.insert(agent.as_str(), toml_edit::value(list));
        return Ok(Some(doc.to_string()));
    };
    let added = add_path(entry, &path, |p| resolve(base, p) == file)
        .map_err(|m| format!("`hooks.import.{agent}` {m}"))?;
    Ok(added.then(|| doc.to_string()))
}

/// `uninstall` after `--adopt`: the steps that put the adopted hooks back
/// into the agent's own file (`doc`, edited here; appended event by event
/// after what it still holds), remove the adopted file and take it out of
/// `config`'s `[hooks.import]`: the inverse of adoption, so that no guard
/// is left running nowhere. Empty when nothing was adopted.
pub(super) fn restore(
    agent: Dialect,
    adopted: &Path,
    config: &Path,
    doc: &mut Doc,
) -> Result<Vec<Step>, String> {
    if !adopted.exists() {
        return Ok(Vec::new());
    }
    let mut from = Doc::load(adopted)?;
    let shape = Shape::of(agent);
    let back = shape::take_all(&mut from.root, shape, &|_, h| !is_ours(agent, h))
        .map_err(|m| format!("{}: {m}", adopted.display()))?;
    if doc.before.is_none() && shape == Shape::Flat && !back.is_empty() {
        doc.root.insert("version".into(), Value::from(1));
    }
    shape::append(&mut doc.root, &back).map_err(|m| format!("{}: {m}", doc.path.display()))?;
    let n = shape::count(&back, shape);
    let mut gone = Step::of(
        &from,
        format!("its {n} hooks went back to {}", doc.path.display()),
    );
    if from.root.keys().all(|k| k == "version") {
        gone.after = None;
        gone.note.push_str("; removed");
    }
    let mut steps = vec![gone];
    steps.extend(unimport_step(agent, adopted, config)?);
    Ok(steps)
}

/// The step that takes `adopted` out of `config`'s `[hooks.import]`, when
/// it is listed there.
fn unimport_step(agent: Dialect, adopted: &Path, config: &Path) -> Result<Option<Step>, String> {
    let before = match std::fs::read_to_string(config) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", config.display())),
    };
    let base = config.parent().unwrap_or(Path::new("."));
    let after = unimport(&before, base, agent, adopted)
        .map_err(|m| format!("{}: {m}", config.display()))?;
    Ok(after.map(|after| Step {
        path: config.to_path_buf(),
        before: Some(before),
        after: Some(after),
        note: format!("no longer imports {}", adopted.display()),
        check_config: true,
        mode: None,
    }))
}

/// `text` (a hookhost config) without `file` in its `[hooks.import]`
/// under `agent`, formatting and comments kept; an entry left with no
/// file goes, and an import table left empty too. `None` when it is not
/// listed.
pub(super) fn unimport(
    text: &str,
    base: &Path,
    agent: Dialect,
    file: &Path,
) -> Result<Option<String>, String> {
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e| format!("not TOML: {e}"))?;
    let Some(import) = doc
        .get_mut("hooks")
        .and_then(|h| h.get_mut("import"))
        .and_then(toml_edit::Item::as_table_like_mut)
    else {
        return Ok(None);
    };
    let Some(entry) = import.get_mut(agent.as_str()) else {
        return Ok(None);
    };
    let same = |p: &str| resolve(base, p) == file;
    let (removed, empty) = remove_path(entry, same);
    if !removed {
        return Ok(None);
    }
    if empty {
        import.remove(agent.as_str());
    }
    if import.is_empty()
        && let Some(hooks) = doc
            .get_mut("hooks")
            .and_then(toml_edit::Item::as_table_like_mut)
    {
        hooks.remove("import");
    }
    Ok(Some(doc.to_string()))
}

/// Takes the paths `same` finds out of an import entry (a path, a list,
/// or `{ files = [...] }`). Returns whether one was, and whether the entry
/// is left with none.
fn remove_path(entry: &mut toml_edit::Item, same: impl Fn(&str) -> bool) -> (bool, bool) {
    if let Some(old) = entry.as_str() {
        return match same(old) {
            true => (true, true),
            false => (false, false),
        };
    }
    let list = match entry.as_table_like_mut() {
        Some(t) => t.get_mut("files").and_then(toml_edit::Item::as_array_mut),
        None => entry.as_array_mut(),
    };
    let Some(list) = list else {
        return (false, false);
    };
    let before = list.len();
    list.retain(|v| !v.as_str().is_some_and(&same));
    (list.len() < before, list.is_empty())
}

/// Adds `path` to an import entry (a path, a list, or `{ files = [...] }`)
/// unless `same` finds it there.
fn add_path(
    entry: &mut toml_edit::Item,
    path: &str,
    same: impl Fn(&str) -> bool,
) -> Result<bool, String> {
    if let Some(old) = entry.as_str() {
        if same(old) {
            return Ok(false);
        }
        let list = toml_edit::Array::from_iter([old.to_string(), path.to_string()]);
        *entry = toml_edit::value(list);
        return Ok(true);
    }
    let list = match entry.as_table_like_mut() {
        Some(t) => t.get_mut("files").and_then(toml_edit::Item::as_array_mut),
        None => entry.as_array_mut(),
    };
    let list = list.ok_or("is not a path, a list of paths or { files = [...] }")?;
    if list.iter().filter_map(toml_edit::Value::as_str).any(same) {
        return Ok(false);
    }
    list.push(path);
    Ok(true)
}

/// A path of `[hooks.import]` as the importer reads it: `~/` is the home
/// folder, anything else relative to the config's folder.
fn resolve(base: &Path, path: &str) -> PathBuf {
    match path.strip_prefix("~/") {
        Some(rest) => paths::home().join(rest),
        None => base.join(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn what_stays_names_why() {
        let user = |h: Value| stays(Dialect::ClaudeCode, Scope::User, &h, &[]);
        assert_eq!(
            user(json!({"type": "command", "command": "/opt/guard.sh"})),
            None
        );
        assert_eq!(user(json!({"type": "http", "url": "http://x/y"})), None);
        assert!(user(json!({"type": "prompt", "prompt": "x"})).is_some());
        assert!(user(json!({"command": "/x", "async": true})).is_some());
        // HOME is passed now, and Claude's hooks run in the session's
        // folder under hookhost as under Claude: all of these move.
        assert_eq!(user(json!({"command": "~/bin/guard"})), None);
        assert_eq!(user(json!({"command": "$HOME/guard"})), None);
        assert_eq!(
            user(json!({"command": "\"$CLAUDE_PROJECT_DIR\"/h.sh"})),
            None
        );
        assert_eq!(user(json!({"command": "python3 .claude/hooks/g.py"})), None);
        // A secret the agent's process had is not passed.
        let why = user(json!({"command": "curl -H \"$SLACK_TOKEN\" x"})).unwrap();
        assert!(why.contains("$SLACK_TOKEN"), "{why}");
        // Cursor runs user hooks in its own folder, not the project.
        let cursor = |h: Value| stays(Dialect::Cursor, Scope::User, &h, &[]);
        assert!(cursor(json!({"command": "./hooks/g.sh"})).is_some());
        let project = |h: Value| stays(Dialect::ClaudeCode, Scope::Project, &h, &[]);
        assert_eq!(
            project(json!({"command": "\"$CLAUDE_PROJECT_DIR\"/h.sh"})),
            None
        );
        assert_eq!(
            project(json!({"command": "python3 .claude/hooks/g.py"})),
            None
        );
        let gemini = stays(
            Dialect::GeminiCli,
            Scope::Project,
            &json!({"name": "off", "command": "/x"}),
            &["off".into()],
        );
        assert!(gemini.is_some());
    }

    /// A hook that moves but whose script reads a variable hookhost does
    /// not pass is named with the variable and the script.
    #[test]
    fn an_adopted_scripts_unmet_variables_are_named() {
        let dir = std::env::temp_dir().join(format!("hookhost-adopt-env-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join(".claude/hooks")).unwrap();
        let script = dir.join(".claude/hooks/notify.sh");
        std::fs::write(
            &script,
            "#!/bin/sh\nset -u\ncurl -d \"$HOME\" \"$SLACK_WEBHOOK_URL\"\n",
        )
        .unwrap();
        let handler = json!({"type": "command", "command": "bash \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/notify.sh"});
        let settings = dir.join(".claude/settings.json");
        assert_eq!(
            stays(Dialect::ClaudeCode, Scope::Project, &handler, &[]),
            None
        );
        assert_eq!(
            unmet(Dialect::ClaudeCode, &settings, &handler),
            [format!("$SLACK_WEBHOOK_URL (in {})", script.display())]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_import_is_taken_out_with_the_rest_kept() {
        let base = Path::new("/cfg");
        let file = Path::new("/a/adopted.json");
        let old = "# mine\n[hooks.import]\ncursor = [\"x.json\", \"/a/adopted.json\"] # a note\n";
        let out = unimport(old, base, Dialect::Cursor, file).unwrap().unwrap();
        assert!(
            out.starts_with("# mine\n[hooks.import]\ncursor = [\"x.json\"]"),
            "{out}"
        );
        let only = "[hooks]\nenabled = true\n[hooks.import]\ncursor = \"/a/adopted.json\"\n";
        let out = unimport(only, base, Dialect::Cursor, file)
            .unwrap()
            .unwrap();
        assert_eq!(out, "[hooks]\nenabled = true\n");
        let table = "[hooks.import]\ncursor = { files = [\"/a/adopted.json\"], priority = 5 }\n";
        let out = unimport(table, base, Dialect::Cursor, file)
            .unwrap()
            .unwrap();
        assert!(!out.contains("adopted"), "{out}");
        assert_eq!(unimport(&out, base, Dialect::Cursor, file).unwrap(), None);
    }

    #[test]
    fn the_import_is_added_once_with_the_rest_kept() {
        let base = Path::new("/cfg");
        let file = Path::new("/a/adopted.json");
        let new = import(None, base, Dialect::Cursor, file).unwrap().unwrap();
        assert_eq!(new, "[hooks.import]\ncursor = [\"/a/adopted.json\"]\n");
        assert_eq!(
            import(Some(&new), base, Dialect::Cursor, file).unwrap(),
            None
        );
        let old = "# mine\n[hooks.import]\ncursor = \"x.json\" # a note\n";
        let both = import(Some(old), base, Dialect::Cursor, file)
            .unwrap()
            .unwrap();
        assert!(
            both.starts_with("# mine\n[hooks.import]\ncursor = [\"x.json\", \"/a/adopted.json\"]"),
            "{both}"
        );
        let table = "[hooks.import]\ncursor = { files = [\"/a/adopted.json\"], priority = 5 }\n";
        assert_eq!(
            import(Some(table), base, Dialect::Cursor, file).unwrap(),
            None
        );
    }
}
