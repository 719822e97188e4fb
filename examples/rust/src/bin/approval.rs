//! approval: approves the tools on an allowlist, refuses every other one.
//!
//! The allowlist is a TOML file with `allow = ["tool", ...]`, named by
//! `APPROVAL_ALLOWLIST` (default `approval_allowlist.toml`, relative to the
//! working directory). It is read once at start. If it cannot be read the
//! hook still starts and refuses everything, saying why: an approver that
//! fails open would defeat its purpose.

use std::collections::BTreeSet;

use hookhost_sdk::params::ToolCall;
use hookhost_sdk::{Approval, Hook, Stage};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AllowlistFile {
    allow: Vec<String>,
}

struct Approver {
    /// The allowed tools, or why there is no list.
    allow: Result<BTreeSet<String>, String>,
}

fn load(path: &str) -> Result<BTreeSet<String>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let file: AllowlistFile = toml::from_str(&text).map_err(|e| format!("{path}: {e}"))?;
    Ok(file.allow.into_iter().collect())
}

impl Hook for Approver {
    fn intercepts(&self) -> Vec<Stage> {
        vec![Stage::ApproveTool]
    }

    fn name(&self) -> Option<String> {
        Some("approval".into())
    }

    async fn approve_tool(&self, call: ToolCall) -> Approval {
        match &self.allow {
            Ok(allow) if allow.contains(&call.tool) => Approval::approve(),
            Ok(_) => Approval::refuse(format!(
                "approval: tool `{}` is not on the allowlist",
                call.tool
            )),
            Err(why) => Approval::refuse(format!(
                "approval: tool `{}` refused: the allowlist cannot be read ({why})",
                call.tool
            )),
        }
    }
}

fn main() -> std::io::Result<()> {
    let path = std::env::var("APPROVAL_ALLOWLIST")
        .unwrap_or_else(|_| "approval_allowlist.toml".to_string());
    let allow = load(&path);
    if let Err(why) = &allow {
        eprintln!("approval: refusing every tool: {why}");
    }
    hookhost_sdk::run(Approver { allow })
}
