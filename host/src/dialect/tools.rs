//! The canonical tool vocabulary: hookhost's names for the tools most
//! agents have, each dialect's native name and argument keys, so a Claude
//! hook matching `Bash` fires for an embedding agent's `shell` tool and
//! reads `tool_input.command` whatever the agent called it.
//!
//! Renames apply to the keys a table lists; every other key, and every
//! tool not in the table, passes through unchanged both ways.

use serde_json::{Map, Value};

use super::Dialect;

/// One canonical tool: its native names and argument keys, one column per
/// dialect in [`Dialect::ALL`] order (claude-code, codex, gemini-cli,
/// cursor, copilot, docker-agent). `""`: no translation (the name or key
/// passes unchanged). docker-agent's column is all `""`: its hooks have
/// always seen the agent's own names and keys, and a guard written against
/// them must not be handed other keys and silently allow.
struct Tool {
    canonical: &'static str,
    names: [&'static str; 6],
    keys: &'static [(&'static str, [&'static str; 6])],
}

const FILE: (&str, [&str; 6]) = (
    "path",
    [
        "file_path",
        "file_path",
        "file_path",
        "file_path",
        "path",
        "",
    ],
);

const TOOLS: &[Tool] = &[
    Tool {
        canonical: "shell",
        names: ["Bash", "Bash", "run_shell_command", "Shell", "bash", ""],
        keys: &[(
            "command",
            ["command", "command", "command", "command", "command", ""],
        )],
    },
    Tool {
        canonical: "read",
        names: ["Read", "Read", "read_file", "Read", "view", ""],
        keys: &[FILE],
    },
    Tool {
        canonical: "write",
        names: ["Write", "Write", "write_file", "Write", "create", ""],
        keys: &[
            FILE,
            (
                "content",
                ["content", "content", "content", "content", "file_text", ""],
            ),
        ],
    },
    Tool {
        canonical: "edit",
        names: ["Edit", "apply_patch", "replace", "Edit", "edit", ""],
        keys: &[
            FILE,
            (
                "old",
                ["old_string", "", "old_string", "old_string", "old_str", ""],
            ),
            (
                "new",
                ["new_string", "", "new_string", "new_string", "new_str", ""],
            ),
        ],
    },
    Tool {
        canonical: "fetch",
        names: [
            "WebFetch",
            "WebFetch",
            "web_fetch",
            "WebFetch",
            "web_fetch",
            "",
        ],
        keys: &[],
    },
    Tool {
        canonical: "grep",
        names: ["Grep", "Grep", "grep_search", "Grep", "grep", ""],
        keys: &[],
    },
    Tool {
        canonical: "glob",
        names: ["Glob", "Glob", "glob", "Glob", "glob", ""],
        keys: &[],
    },
];

/// Whether `name` is a tool of the canonical vocabulary.
pub(crate) fn is_canonical(name: &str) -> bool {
    by_canonical(name).is_some()
}

/// The canonical tool names, for error messages.
pub(crate) fn canonical_names() -> String {
    TOOLS
        .iter()
        .map(|t| t.canonical)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The column of a dialect in the tables.
fn column(d: Dialect) -> usize {
    Dialect::ALL.iter().position(|x| *x == d).unwrap_or(0)
}

fn by_canonical(name: &str) -> Option<&'static Tool> {
    TOOLS.iter().find(|t| t.canonical == name)
}

fn by_native(d: Dialect, name: &str) -> Option<&'static Tool> {
    let c = column(d);
    TOOLS
        .iter()
        .find(|t| !t.names[c].is_empty() && t.names[c] == name)
}

/// Whether `tool` (canonical) is one of `set`; `mcp` matches every MCP
/// tool (`mcp__server__tool`).
pub(crate) fn in_set(tool: &str, set: &[&str]) -> bool {
    set.iter()
        .any(|s| *s == tool || (*s == "mcp" && tool.starts_with("mcp__")))
}

/// The native name of canonical tool `tool` in dialect `d`.
pub(crate) fn to_native(d: Dialect, tool: &str) -> String {
    if let Some(t) = by_canonical(tool) {
        let n = t.names[column(d)];
        if !n.is_empty() {
            return n.to_string();
        }
    }
    if d == Dialect::GeminiCli {
        if let Some(rest) = tool.strip_prefix("mcp__") {
            return format!("mcp_{}", rest.replacen("__", "_", 1));
        }
    }
    tool.to_string()
}

/// The canonical name of native tool `tool` of dialect `d`.
pub(crate) fn from_native(d: Dialect, tool: &str) -> String {
    if let Some(t) = by_native(d, tool) {
        return t.canonical.to_string();
    }
    if d == Dialect::GeminiCli {
        if let Some((server, name)) = tool.strip_prefix("mcp_").and_then(|r| r.split_once('_')) {
            return format!("mcp__{server}__{name}");
        }
    }
    tool.to_string()
}

/// Renames argument keys of canonical tool `tool` from canonical to the
/// dialect's (`to_native`) or back. Back, a native key the agent itself
/// used (`kept` has it) stays as it is: an agent whose shell tool already
/// takes `file_path` gets `file_path` back from a Claude hook.
fn rename(
    d: Dialect,
    tool: &str,
    args: &Map<String, Value>,
    to_native: bool,
    kept: Option<&Map<String, Value>>,
) -> Map<String, Value> {
    let Some(t) = by_canonical(tool) else {
        return args.clone();
    };
    let c = column(d);
    let mut out = Map::new();
    for (k, v) in args {
        let renamed = t.keys.iter().find_map(|(canon, natives)| {
            let native = natives[c];
            if native.is_empty() {
                return None;
            }
            match to_native {
                true => (k == canon).then_some(native),
                false => {
                    (k == native && !kept.is_some_and(|a| a.contains_key(k))).then_some(*canon)
                }
            }
        });
        out.insert(renamed.unwrap_or(k).to_string(), v.clone());
    }
    out
}

/// Canonical arguments of canonical tool `tool`, in dialect `d`'s keys.
pub(crate) fn args_to_native(
    d: Dialect,
    tool: &str,
    args: &Map<String, Value>,
) -> Map<String, Value> {
    rename(d, tool, args, true, None)
}

/// Dialect `d`'s arguments of canonical tool `tool`, in canonical keys,
/// except the keys the agent's own arguments `original` already spell
/// natively.
pub(crate) fn args_from_native(
    d: Dialect,
    tool: &str,
    args: &Map<String, Value>,
    original: Option<&Map<String, Value>>,
) -> Map<String, Value> {
    rename(d, tool, args, false, original)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_and_keys_translate_both_ways() {
        assert_eq!(to_native(Dialect::ClaudeCode, "shell"), "Bash");
        assert_eq!(to_native(Dialect::GeminiCli, "shell"), "run_shell_command");
        assert_eq!(
            from_native(Dialect::GeminiCli, "run_shell_command"),
            "shell"
        );
        assert_eq!(from_native(Dialect::ClaudeCode, "Bash"), "shell");
        assert_eq!(to_native(Dialect::ClaudeCode, "my_tool"), "my_tool");
        assert_eq!(
            to_native(Dialect::GeminiCli, "mcp__gh__list_issues"),
            "mcp_gh_list_issues"
        );
        assert_eq!(
            from_native(Dialect::GeminiCli, "mcp_gh_list_issues"),
            "mcp__gh__list_issues"
        );
        let args = json!({"command": "ls", "timeout": 5});
        let args = args.as_object().expect("object");
        let native = args_to_native(Dialect::GeminiCli, "shell", args);
        assert_eq!(
            &args_from_native(Dialect::GeminiCli, "shell", &native, None),
            args
        );
        // docker-agent hooks see the agent's own names and keys, as always.
        assert_eq!(&args_to_native(Dialect::DockerAgent, "shell", args), args);
        assert_eq!(to_native(Dialect::DockerAgent, "read"), "read");
        // Back from a hook, a key the agent itself spells natively stays.
        let own = json!({"file_path": "/b"});
        let own = own.as_object().expect("object");
        let back = args_from_native(Dialect::ClaudeCode, "read", own, Some(own));
        assert_eq!(&back, own);
        let w = json!({"path": "/a", "content": "x"});
        let w = args_to_native(Dialect::Copilot, "write", w.as_object().expect("object"));
        assert_eq!(Value::Object(w), json!({"path": "/a", "file_text": "x"}));
    }
}
