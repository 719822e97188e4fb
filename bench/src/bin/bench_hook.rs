//! A Rust SDK hook that answers `continue` at before_tool and does nothing
//! else: what hookhost costs when the hook itself costs nothing.

use hookhost_sdk::params::ToolCall;
use hookhost_sdk::{Hook, Stage, ToolVerdict};

/// Lets every tool call through.
struct Pass;

impl Hook for Pass {
    fn intercepts(&self) -> Vec<Stage> {
        vec![Stage::BeforeTool]
    }

    async fn before_tool(&self, _call: ToolCall) -> ToolVerdict {
        ToolVerdict::Continue
    }
}

fn main() -> std::io::Result<()> {
    hookhost_sdk::run(Pass)
}
