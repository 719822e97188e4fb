//! One case of the corpus, as data (`differential/cases/AGENT.json`), and
//! the project it lays out: the agent's settings file with the case's
//! hooks, the scripts they run, and any file the hooks read.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Value, json};

/// One case: hooks in the agent's own settings file, and what the fake
/// model does in the session.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// Unique within its agent's table.
    pub name: String,
    /// What the case shows (documentation; not read by the harness).
    #[serde(default)]
    pub about: String,
    /// Copy the agent's example project of `examples/dialects/` first.
    #[serde(default)]
    pub example: bool,
    /// The `hooks` object of the agent's project settings file (merged
    /// over the example's, event by event).
    #[serde(default)]
    pub hooks: Option<Value>,
    /// Other top-level keys of the settings file (Gemini's `hooksConfig`).
    #[serde(default)]
    pub settings: Option<Value>,
    /// Files to write in the project: path → text, or `@NAME` for
    /// `differential/hooks/NAME`. A text starting with `#!` is executable.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
    /// Files to write in the run's HOME (same forms as `files`).
    #[serde(default)]
    pub home_files: BTreeMap<String, String>,
    /// The model's tool calls, one a turn (the agent's shell tool's input
    /// unless `tool` names another); then it answers `say`.
    #[serde(default)]
    pub calls: Vec<Value>,
    /// The tool the calls name (default: the agent's shell tool).
    #[serde(default)]
    pub tool: Option<String>,
    /// The model's text once its calls are made.
    #[serde(default)]
    pub say: Option<String>,
    /// Claude Code: `--allowedTools` (default none: the default permission
    /// mode, where a call nobody allows is refused in `-p`).
    #[serde(default)]
    pub allowed_tools: Vec<String>,
    /// Claude Code: a plugin folder in the project. Natively it is loaded
    /// with `--plugin-dir`; under hookhost its `hooks/hooks.json` is
    /// imported by the user's hooks.toml instead.
    #[serde(default)]
    pub plugin: Option<String>,
    /// Why hookhost still gives another outcome here (spec/dialects.md
    /// §12 "Still differs"): the case is reported and counted apart, never
    /// as the same outcome, and a mark that no longer differs fails.
    #[serde(default)]
    pub diverges: Option<String>,
}

/// Every case of `agent`'s table.
pub fn load(agent: &str) -> Vec<Case> {
    let path = data_dir().join(format!("cases/{agent}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let cases: Vec<Case> =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    names.sort_unstable();
    let before = names.len();
    names.dedup();
    assert_eq!(
        before,
        names.len(),
        "{}: duplicate case names",
        path.display()
    );
    cases
}

/// `cli/tests/differential`.
pub fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/differential")
}

/// The agent's project settings file, relative to the project.
pub fn settings_file(agent: &str) -> &'static str {
    match agent {
        "claude-code" => ".claude/settings.json",
        "codex" => ".codex/hooks.json",
        _ => ".gemini/settings.json",
    }
}

impl Case {
    /// Writes the case's project into `project` (which exists).
    pub fn lay_out(&self, agent: &str, project: &Path) {
        for (rel, text) in self.laid_out(agent) {
            write_file(&project.join(rel), &text);
        }
        let home = project.parent().unwrap().join("home");
        for (rel, text) in &self.home_files {
            write_file(&home.join(rel), &resolve(text));
        }
        let file = project.join(settings_file(agent));
        let mut settings: Value = std::fs::read_to_string(&file)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_else(|| json!({}));
        if let Some(Value::Object(hooks)) = &self.hooks {
            let all = settings
                .as_object_mut()
                .unwrap()
                .entry("hooks")
                .or_insert_with(|| json!({}));
            for (event, groups) in hooks {
                all[event] = groups.clone();
            }
        }
        if let Some(Value::Object(extra)) = &self.settings {
            for (k, v) in extra {
                settings[k] = v.clone();
            }
        }
        write_file(&file, &serde_json::to_string_pretty(&settings).unwrap());
    }
}

impl Case {
    /// The case with `__PROJECT__` in its calls replaced by the project
    /// folder (a tool that takes an absolute path).
    pub fn in_project(&self, project: &Path) -> Case {
        let calls = serde_json::to_string(&self.calls).unwrap();
        let project = project.display().to_string();
        let calls = calls.replace("__PROJECT__", &project);
        Case {
            calls: serde_json::from_str(&calls).unwrap(),
            ..self.clone()
        }
    }

    /// The files the case lays out before the settings file: the example
    /// project's (when `example`), then its own, by relative path.
    pub fn laid_out(&self, agent: &str) -> BTreeMap<String, String> {
        let mut files = BTreeMap::new();
        if self.example {
            let root = hookhost_testkit::dialect_example(agent);
            read_tree(&root, &root, &mut files);
        }
        for (rel, text) in &self.files {
            files.insert(rel.clone(), resolve(text));
        }
        files
    }
}

fn read_tree(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            read_tree(root, &path, out);
        } else {
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            out.insert(rel, std::fs::read_to_string(&path).unwrap());
        }
    }
}

/// A file's text: inline, or `@NAME` read from `differential/hooks/`.
fn resolve(text: &str) -> String {
    match text.strip_prefix('@') {
        Some(name) => {
            let path = data_dir().join("hooks").join(name);
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        }
        None => text.to_string(),
    }
}

fn write_file(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    if text.starts_with("#!") {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}
