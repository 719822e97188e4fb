//! Helpers shared by the example hooks: how a shell command reaches a hook
//! and how it splits into simple commands.
//!
//! Each binary in `src/bin/` is one hook; `examples/cases.json` holds the
//! cases every one of them (and its Python twin) must answer exactly.

use hookhost_sdk::params::ToolCall;
use serde_json::{Map, Value};

/// Tool names under which agents run shell commands.
pub const SHELL_TOOLS: [&str; 4] = ["shell", "bash", "Bash", "exec"];

/// The command line of a shell tool call, or `None` for any other tool or a
/// call without a string `command`.
pub fn shell_command(call: &ToolCall) -> Option<&str> {
    shell_command_of(&call.tool, &call.arguments)
}

/// [`shell_command`] for a tool name and its arguments (after_tool params
/// carry both without being a [`ToolCall`]).
pub fn shell_command_of<'a>(tool: &str, arguments: &'a Map<String, Value>) -> Option<&'a str> {
    if !SHELL_TOOLS.contains(&tool) {
        return None;
    }
    arguments.get("command")?.as_str()
}

/// The simple commands of a command line: the pieces between `;`, `&&`,
/// `||`, `|`, `&` and newlines, each split into words on whitespace. Empty
/// pieces are left out. Quoting is not interpreted; the examples err on the
/// side of seeing a command where a shell might see a quoted string.
pub fn simple_commands(line: &str) -> Vec<Vec<&str>> {
    line.split([';', '&', '|', '\n'])
        .map(|piece| piece.split_whitespace().collect::<Vec<_>>())
        .filter(|words| !words.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_on_every_separator() {
        assert_eq!(
            simple_commands("cd /tmp && rm -rf x|wc; echo a & b\nc || d"),
            vec![
                vec!["cd", "/tmp"],
                vec!["rm", "-rf", "x"],
                vec!["wc"],
                vec!["echo", "a"],
                vec!["b"],
                vec!["c"],
                vec!["d"]
            ]
        );
    }
}
