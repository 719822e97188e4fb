//! GitHub Copilot (CLI and cloud agent) and VS Code: `.github/hooks/*.json`
//! and `~/.copilot/hooks/*.json`, flat entries per event:
//! `{"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash":
//! "./scripts/guard.sh", "powershell": "...", "cwd": ".", "env": {},
//! "timeoutSec": 30}]}}`. VS Code's entries in the same files say
//! `command` with `linux`/`osx`/`windows` overrides and `timeout`. The
//! event key keeps its casing: Copilot picks its payload shape from it
//! (camelCase `preToolUse` or VS Code's PascalCase `PreToolUse`).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::claude::skip_reason;
use super::{Bad, File, Found, Run, flat, hooks_object, shell_hook, timeout_ms};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    bash: Option<String>,
    #[serde(default)]
    powershell: Option<String>,
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    linux: Option<String>,
    #[serde(default)]
    osx: Option<String>,
    #[serde(default)]
    windows: Option<String>,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    /// Seconds (Copilot).
    #[serde(default)]
    timeout_sec: Option<f64>,
    /// Seconds (VS Code).
    #[serde(default)]
    timeout: Option<f64>,
    #[serde(default)]
    matcher: Option<String>,
}

impl Entry {
    /// The command this host runs: Copilot's `bash`, else VS Code's entry
    /// for this OS, else its `command`. Blank ones do not count.
    fn unix_command(&mut self) -> Option<String> {
        let os = if cfg!(target_os = "macos") {
            self.osx.take()
        } else {
            self.linux.take()
        };
        [self.bash.take(), os, self.command.take()]
            .into_iter()
            .flatten()
            .find(|c| !c.trim().is_empty())
    }
}

/// The hooks of one Copilot hooks file.
pub(super) fn read(root: &Value, file: &File) -> Result<Vec<Found>, Bad> {
    let Some(hooks) = hooks_object(root)? else {
        return Ok(Vec::new());
    };
    Ok(flat(hooks, |entry: Entry, event, at| {
        let matcher = entry.matcher.clone();
        Ok((matcher, command(entry, event, file, at)?))
    }))
}

fn command(mut e: Entry, event: &str, file: &File, at: &str) -> Result<Run, Bad> {
    let kind = e.kind.clone().unwrap_or_else(|| "command".into());
    if kind != "command" {
        return Ok(Run::skip(&kind, skip_reason(&kind)));
    }
    let Some(command) = e.unix_command() else {
        if e.powershell.is_some() || e.windows.is_some() {
            return Ok(Run::skip(
                &kind,
                "only a PowerShell command; this host runs on Unix",
            ));
        }
        return Err(Bad::new(at, "no `bash` or `command` to run"));
    };
    let mut hook = shell_hook(command, false, event);
    let timeout = e.timeout_sec.or(e.timeout);
    hook.timeout_ms = timeout_ms(timeout, 1000.0).map_err(|m| Bad::new(at, m))?;
    hook.env = e.env;
    hook.working_dir = e.cwd.map(|cwd| file.project.join(cwd));
    Ok(Run::Hook(Box::new(hook)))
}
