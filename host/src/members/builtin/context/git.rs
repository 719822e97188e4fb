//! Running git for a context builtin, bounded: a fixed argv (never a
//! shell), only `PATH` and `HOME` from the environment, no pager, no
//! optional locks (so reading the status never races the user's own git),
//! output read up to a cap and the process killed past [`GIT_TIMEOUT`].

use std::path::Path;
use std::process::Stdio;

use tokio::io::AsyncReadExt;
use tokio::process::Command;

use super::{GIT_TIMEOUT, MAX_CONTEXT};

/// git's output for `args` run in `dir`: `None` when git says no (not a
/// repository, no commits yet) or has nothing to print; an error when git
/// cannot be started or does not finish in time.
pub(super) async fn run(dir: &Path, args: &[&str]) -> Result<Option<String>, String> {
    let mut command = Command::new("git");
    command
        .args([
            "--no-pager",
            "-c",
            "core.fsmonitor=false",
            "-c",
            "color.ui=never",
        ])
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    for name in ["PATH", "HOME"] {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
    let what = format!("git {}", args.join(" "));
    let mut child = command.spawn().map_err(|e| format!("{what}: {e}"))?;
    let finished = tokio::time::timeout(GIT_TIMEOUT, async {
        let mut out = Vec::new();
        if let Some(stdout) = child.stdout.take() {
            stdout
                .take(MAX_CONTEXT as u64 + 1)
                .read_to_end(&mut out)
                .await
                .map_err(|e| format!("{what}: {e}"))?;
        }
        // Past the cap the rest is not wanted: stop git rather than wait.
        if out.len() > MAX_CONTEXT {
            let _ = child.start_kill();
        }
        let status = child.wait().await.map_err(|e| format!("{what}: {e}"))?;
        Ok::<_, String>((status, out))
    })
    .await;
    let (status, out) = match finished {
        Ok(result) => result?,
        Err(_) => {
            return Err(format!(
                "{what} did not finish in {} s",
                GIT_TIMEOUT.as_secs()
            ));
        }
    };
    let text = String::from_utf8_lossy(&out).trim_end().to_string();
    let cut = out.len() > MAX_CONTEXT;
    Ok(((status.success() || cut) && !text.is_empty()).then_some(text))
}
