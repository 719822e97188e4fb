//! cache: answers a repeated read-only tool call from a cache (`respond`),
//! so the tool does not run again.
//!
//! after_tool fills the cache; before_tool looks it up. A call is cached
//! only when it cannot change anything: the tools `read_file` and
//! `list_dir`, and shell commands that are one simple command (no `;`,
//! `&`, `|`, `>`, `<`, newline, backtick or `$(`) starting with `cat`,
//! `head`, `tail`, `ls`, `wc` or `stat`. Error results are never cached.
//! Entries live `CACHE_TTL_SECONDS` (default 300); one whose age has
//! reached the TTL is a miss.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use hookhost_examples::{SHELL_TOOLS, shell_command_of};
use hookhost_sdk::params::{AfterToolParams, ToolCall};
use hookhost_sdk::{Hook, Stage, ToolResult, ToolVerdict, Verdict};
use serde_json::{Map, Value};

const READ_ONLY_TOOLS: [&str; 2] = ["read_file", "list_dir"];
const READ_ONLY_COMMANDS: [&str; 6] = ["cat", "head", "tail", "ls", "wc", "stat"];
/// Characters that make a command line more than one read-only command.
const COMPOUND: [&str; 9] = [";", "&", "|", ">", "<", "`", "$(", "\n", "\r"];
/// Above this many entries, expired ones are swept on insert.
const SWEEP_AT: usize = 10_000;

/// The cache key: the tool and its arguments as canonical JSON.
type Key = (String, String);

struct Cache {
    ttl: Duration,
    entries: Mutex<HashMap<Key, (Instant, ToolResult)>>,
}

/// Whether a call with these arguments only reads.
fn read_only(tool: &str, arguments: &Map<String, Value>) -> bool {
    if READ_ONLY_TOOLS.contains(&tool) {
        return true;
    }
    if !SHELL_TOOLS.contains(&tool) {
        return false;
    }
    let Some(line) = shell_command_of(tool, arguments) else {
        return false;
    };
    if COMPOUND.iter().any(|c| line.contains(c)) {
        return false;
    }
    line.split_whitespace()
        .next()
        .is_some_and(|first| READ_ONLY_COMMANDS.contains(&first))
}

/// JSON with object keys sorted at every depth, so that the same arguments
/// in another key order hit the same entry.
fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                canonical(&map[k.as_str()], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

fn key(tool: &str, arguments: &Map<String, Value>) -> Key {
    let mut args = String::new();
    canonical(&Value::Object(arguments.clone()), &mut args);
    (tool.to_string(), args)
}

impl Cache {
    fn from_env() -> Cache {
        let ttl = match std::env::var("CACHE_TTL_SECONDS") {
            Err(_) => 300.0,
            Ok(s) => match s.trim().parse::<f64>() {
                Ok(v) if v.is_finite() && v >= 0.0 => v,
                _ => {
                    eprintln!(
                        "cache: CACHE_TTL_SECONDS={s:?} is not a number of seconds; using 300"
                    );
                    300.0
                }
            },
        };
        Cache {
            ttl: Duration::from_secs_f64(ttl),
            entries: Mutex::new(HashMap::new()),
        }
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, HashMap<Key, (Instant, ToolResult)>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Hook for Cache {
    fn intercepts(&self) -> Vec<Stage> {
        vec![Stage::BeforeTool, Stage::AfterTool]
    }

    fn name(&self) -> Option<String> {
        Some("cache".into())
    }

    async fn before_tool(&self, call: ToolCall) -> ToolVerdict {
        if !read_only(&call.tool, &call.arguments) {
            return ToolVerdict::Continue;
        }
        let key = key(&call.tool, &call.arguments);
        let mut entries = self.entries();
        match entries.get(&key) {
            Some((stored, result)) if stored.elapsed() < self.ttl => {
                ToolVerdict::respond(result.clone())
            }
            Some(_) => {
                entries.remove(&key);
                ToolVerdict::Continue
            }
            None => ToolVerdict::Continue,
        }
    }

    async fn after_tool(&self, done: AfterToolParams) -> Verdict {
        if !done.result.is_error && read_only(&done.tool, &done.arguments) {
            let key = key(&done.tool, &done.arguments);
            let mut entries = self.entries();
            if entries.len() >= SWEEP_AT {
                let ttl = self.ttl;
                entries.retain(|_, (stored, _)| stored.elapsed() < ttl);
            }
            entries.insert(key, (Instant::now(), done.result));
        }
        Verdict::Continue
    }
}

fn main() -> std::io::Result<()> {
    hookhost_sdk::run(Cache::from_env())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_json_sorts_keys_at_every_depth() {
        let mut a = String::new();
        canonical(
            &json!({"b": 1, "a": {"d": [1, {"y": 2, "x": "é"}], "c": null}}),
            &mut a,
        );
        assert_eq!(a, r#"{"a":{"c":null,"d":[1,{"x":"é","y":2}]},"b":1}"#);
    }

    #[test]
    fn only_single_read_commands_are_read_only() {
        let args = |c: &str| json!({"command": c}).as_object().cloned().unwrap();
        assert!(read_only("shell", &args("cat a")));
        assert!(read_only("read_file", &Map::new()));
        assert!(!read_only("shell", &args("cat a > b")));
        assert!(!read_only("shell", &args("cat $(x)")));
        assert!(!read_only("shell", &args("rm x")));
        assert!(!read_only("write_file", &args("cat a")));
    }
}
