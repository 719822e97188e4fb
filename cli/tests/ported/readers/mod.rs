//! How each agent reads one command hook's answer, and what it sends one:
//! the agents' own parsers (Codex, Gemini CLI) or their documentation
//! (Cursor, Copilot), applied to the relay's exit code, stdout and stderr.

use serde_json::{Map, Value};

pub mod codex;
pub mod copilot;
pub mod cursor;
pub mod gemini;

/// The relay's exit code, stdout and stderr for one case.
pub struct Answer {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// The trimmed text, or None when it is blank.
pub fn trimmed(s: &str) -> Option<String> {
    let t = s.trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// Codex's `looks_like_json`: starts with `{` or `[`.
pub fn looks_like_json(s: &str) -> bool {
    let t = s.trim_start();
    t.starts_with('{') || t.starts_with('[')
}

/// One JSON object (Codex's `parse_json`), else nothing.
pub fn json_object(stdout: &str) -> Option<Map<String, Value>> {
    let t = stdout.trim();
    if t.is_empty() {
        return None;
    }
    serde_json::from_str::<Value>(t).ok()?.as_object().cloned()
}

/// Copies `keys` (wire name, outcome name) present in `o` into `out`.
pub fn pick(o: &Map<String, Value>, keys: &[(&str, &str)], out: &mut Map<String, Value>) {
    for (wire, key) in keys {
        if let Some(v) = o.get(*wire).filter(|v| !v.is_null()) {
            out.entry(key.to_string()).or_insert_with(|| v.clone());
        }
    }
}

/// The outcome agent `agent` reaches with the relay's answer to `event`.
pub fn read(agent: &str, event: &str, a: &Answer) -> Value {
    match agent {
        "codex" => codex::read(event, a),
        "gemini-cli" => gemini::read(event, a),
        "cursor" => cursor::read(event, a),
        _ => copilot::read(event, a),
    }
}

/// The event exactly as `agent` sends it (before the case's own keys).
pub fn input(agent: &str, event: &str, cwd: &str) -> Value {
    match agent {
        "codex" => codex::input(event, cwd),
        "gemini-cli" => gemini::input(event, cwd),
        "cursor" => cursor::input(event, cwd),
        _ => copilot::input(event, cwd),
    }
}
