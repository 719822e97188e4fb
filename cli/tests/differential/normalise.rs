//! What makes two runs of one case differ that is not an outcome: their
//! scratch folders, ids, times, durations. Everything observed passes
//! through [`text`] or [`value`] before it is compared.

use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value;

/// What one run's observations are normalised with: its scratch folder
/// and the commands and names of the hooks its agent ran (the agent names
/// them in what it tells the model and the user, and under hookhost that
/// is the relay).
pub struct Norm {
    pub dir: String,
    pub commands: Vec<String>,
}

/// Scratch paths (`/tmp/hookhost-test-PID-N`, in any spelling the agents
/// use: plain, and Claude's project key with `/` and `.` as `-`), UUIDs,
/// ISO times, dates and long hex ids, replaced by fixed words.
pub fn text(norm: &Norm, s: &str) -> String {
    let mut s = s.to_string();
    for c in &norm.commands {
        s = s.replace(&format!("command: \"{c}\""), "command: \"<HOOK>\"");
        s = s.replace(&format!("[{c}]"), "[<HOOK>]");
        s = s.replace(&format!("({c})"), "(<HOOK>)");
        if s == format!("  - {c}") {
            s = "  - <HOOK>".into();
        }
    }
    let key = norm.dir.replace(['/', '.', '_'], "-");
    let mut s = s.replace(&norm.dir, "<DIR>").replace(&key, "<DIR>");
    s = s.replace(crate::common::HOOKHOST, "<HOOKHOST>");
    for (re, to) in patterns() {
        s = re.replace_all(&s, *to).into_owned();
    }
    s
}

fn patterns() -> &'static [(Regex, &'static str)] {
    static P: OnceLock<Vec<(Regex, &'static str)>> = OnceLock::new();
    P.get_or_init(|| {
        [
            (r"/tmp/hookhost-test-\d+-\d+", "<DIR>"),
            // Gemini's transcript: session-<time>-<8 hex of its id>.jsonl.
            (
                r"session-\d{4}-\d{2}-\d{2}T[\d-]+-[0-9a-f]{8}\.jsonl",
                "session-<ID>.jsonl",
            ),
            (r"-tmp-hookhost-test-\d+-\d+", "<DIR>"),
            (
                r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
                "<UUID>",
            ),
            (
                r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?",
                "<TIME>",
            ),
            (r"\d{4}-\d{2}-\d{2}T\d{2}_\d{2}_\d{2}_\d+Z", "<TIME>"),
            (r"\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}", "<TIME>"),
            (r"\d{4}-\d{2}-\d{2}", "<DATE>"),
            (r"Chunk ID: [0-9a-f]+", "Chunk ID: <ID>"),
            (
                r"<duration_ms>\d+</duration_ms>",
                "<duration_ms><DURATION></duration_ms>",
            ),
            // Claude's subagent ids.
            (r"\ba[0-9a-f]{16}\b", "<AGENT ID>"),
            (r"Process Group PGID: \d+", "Process Group PGID: <PID>"),
            // Gemini's call ids carry the time in ms.
            (r"_\d{13}_", "_<MS>_"),
            // Gemini's view of the project's files: `install --adopt`
            // leaves its adopted file and a backup in `.gemini/`.
            (
                r"(?s)Showing up to \d+ items \(files \+ folders\)\..*?</session_context>",
                "<FILE TREE></session_context>",
            ),
            (r"Wall time: [\d.]+ seconds", "Wall time: <DURATION>"),
            (r"\b[0-9a-f]{24,}\b", "<HEX>"),
            (r"\b\d+(\.\d+)?\s?(ms|s)\b", "<DURATION>"),
            (r"127\.0\.0\.1:\d+", "127.0.0.1:<PORT>"),
            // Codex numbers each hook it runs in the prompt a Stop hook
            // adds: the number of the relay is not the number of the hook.
            (r#"hook_run_id=\\?"[^"\\]*\\?""#, "hook_run_id=<ID>"),
            // Gemini counts the hooks it ran: the user's own, or the one
            // relay standing in for them; that any failed is kept.
            (
                r"Hook execution for (\w+): \d+ succeeded, [1-9]\d* failed",
                "Hook execution for $1: <N> succeeded, some failed",
            ),
        ]
        .into_iter()
        .map(|(re, to)| (Regex::new(re).unwrap(), to))
        .collect()
    })
}

/// [`text`] applied to every string (and key) of a JSON value.
pub fn value(norm: &Norm, v: &Value) -> Value {
    match v {
        Value::String(s) => Value::String(text(norm, s)),
        Value::Array(items) => Value::Array(items.iter().map(|i| value(norm, i)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| match (k.as_str(), v) {
                    // How long the tool took, in what Claude sends a hook.
                    ("duration_ms", Value::Number(_)) => (k.clone(), "<DURATION>".into()),
                    _ => (text(norm, k), value(norm, v)),
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Every string under a `command` or `name` key of `v`.
pub fn commands(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Array(items) => items.iter().for_each(|i| commands(i, out)),
        Value::Object(map) => {
            for (k, v) in map {
                match (k.as_str(), v) {
                    ("command" | "name", Value::String(c)) => out.push(c.clone()),
                    _ => commands(v, out),
                }
            }
        }
        _ => {}
    }
}

/// The places where `a` and `b` differ, as `path: a ≠ b` lines (at most
/// `limit`).
pub fn differences(a: &Value, b: &Value, limit: usize) -> Vec<String> {
    let mut out = Vec::new();
    walk("", a, b, &mut out, limit);
    out
}

fn walk(path: &str, a: &Value, b: &Value, out: &mut Vec<String>, limit: usize) {
    if out.len() >= limit || a == b {
        return;
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let (va, vb) = (x.get(k), y.get(k));
                let (va, vb) = (va.unwrap_or(&Value::Null), vb.unwrap_or(&Value::Null));
                walk(&format!("{path}/{k}"), va, vb, out, limit);
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (va, vb)) in x.iter().zip(y).enumerate() {
                walk(&format!("{path}/{i}"), va, vb, out, limit);
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            let at = x.iter().zip(y).take_while(|(a, b)| a == b).count();
            out.push(format!("{path}: {} items ≠ {} items", x.len(), y.len()));
            let (a, b) = (
                x.get(at).unwrap_or(&Value::Null),
                y.get(at).unwrap_or(&Value::Null),
            );
            walk(&format!("{path}/{at}"), a, b, out, limit);
        }
        (Value::String(x), Value::String(y)) => {
            let (x, y) = around_difference(x, y);
            out.push(format!("{path}:\n      native:   {x}\n      hookhost: {y}"));
        }
        _ => out.push(format!(
            "{path}:\n      native:   {}\n      hookhost: {}",
            short(a),
            short(b)
        )),
    }
}

/// Two strings shown from a little before where they first differ.
fn around_difference(x: &str, y: &str) -> (String, String) {
    let same = x.chars().zip(y.chars()).take_while(|(a, b)| a == b).count();
    let from = same.saturating_sub(80);
    let cut = |s: &str| {
        let part: String = s.chars().skip(from).take(320).collect();
        let more = if s.chars().count() > from + 320 {
            "…"
        } else {
            ""
        };
        let less = if from > 0 { "…" } else { "" };
        format!("{less}{:?}{more}", part)
    };
    (cut(x), cut(y))
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 600 {
        let cut: String = s.chars().take(600).collect();
        format!("{cut}…")
    } else {
        s
    }
}
