//! ls_human: rewrites a bare `ls` to `ls -h` at before_tool.
//!
//! The smallest useful `modify`: the patch names only
//! `arguments.command`, so every other argument (a `cwd`, say) survives.

use hookhost_examples::shell_command;
use hookhost_sdk::params::ToolCall;
use hookhost_sdk::{Hook, Patch, Stage, ToolVerdict};

struct LsHuman;

impl Hook for LsHuman {
    fn intercepts(&self) -> Vec<Stage> {
        vec![Stage::BeforeTool]
    }

    fn name(&self) -> Option<String> {
        Some("ls_human".into())
    }

    async fn before_tool(&self, call: ToolCall) -> ToolVerdict {
        match shell_command(&call) {
            Some(line) if line.trim() == "ls" => {
                ToolVerdict::modify(Patch::new().set(&["arguments", "command"], "ls -h"))
            }
            _ => ToolVerdict::Continue,
        }
    }
}

fn main() -> std::io::Result<()> {
    hookhost_sdk::run(LsHuman)
}
