//! Running git for a context builtin, bounded: a fixed argv (never a
//! shell), only `PATH` and `HOME` from the environment, no pager, no
//! optional locks (so reading the status never races the user's own git),
//! output read up to a cap and the process killed past [`GIT_TIMEOUT`].

use std::path::Path;
use std::process::{ExitStatus, Stdio};

use tokio::io::AsyncReadExt;
use tokio::process::{Child, Command};

use super::{GIT_TIMEOUT, MAX_CONTEXT};

/// git's output for `args` run in `dir`: `None` when git says no (not a
/// repository, no commits yet) or has nothing to print; an error when git
/// cannot be started or does not finish in time.
pub(super) async fn run(dir: &Path, args: &[&str]) -> Result<Option<String>, String> {
    let what = format!("git {}", args.join(" "));
    let mut child = command(dir, args)
        .spawn()
        .map_err(|e| format!("{what}: {e}"))?;
    let (status, out) = match tokio::time::timeout(GIT_TIMEOUT, collect(&mut child)).await {
        Ok(result) => result.map_err(|e| format!("{what}: {e}"))?,
        // Dropping the child kills it (kill_on_drop).
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

/// The command: git's own flags first, a clean environment.
fn command(dir: &Path, args: &[&str]) -> Command {
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
    command
}

/// Reads stdout up to one byte past the cap (then stops git rather than
/// read the rest) and waits for it to exit.
async fn collect(child: &mut Child) -> std::io::Result<(ExitStatus, Vec<u8>)> {
    let mut out = Vec::new();
    if let Some(stdout) = child.stdout.take() {
        stdout
            .take(MAX_CONTEXT as u64 + 1)
            .read_to_end(&mut out)
            .await?;
    }
    if out.len() > MAX_CONTEXT {
        let _ = child.start_kill();
    }
    Ok((child.wait().await?, out))
}
