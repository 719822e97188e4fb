//! Running git for a context builtin, bounded: a fixed argv (never a
//! shell), only `PATH` and `HOME` from the environment, no pager, no
//! optional locks (so reading the status never races the user's own git),
//! output read up to a cap and the process killed past [`GIT_TIMEOUT`].
//!
//! The repository is not trusted: its `.git/config` and `.gitattributes`
//! can name commands git would run inside the daemon (clean/smudge
//! filters, `diff.external`, a diff driver's `command` and `textconv`,
//! `core.fsmonitor`, `core.pager`, `gpg.program` through
//! `log.showSignature`, submodules' own configs). Every git run here turns
//! each of them off on its command line ([`NEUTRAL`], and the filter
//! drivers the config names, [`filter_overrides`]); the callers add
//! `--no-ext-diff --no-textconv --ignore-submodules=all` to `diff` and
//! `--ignore-submodules=all` to `status`.

use std::path::Path;
use std::process::{ExitStatus, Stdio};

use tokio::io::AsyncReadExt;
use tokio::process::{Child, Command};

use super::{GIT_TIMEOUT, MAX_CONTEXT};

/// git's own options that switch off every command a repository's config
/// could make it run, first on every command line.
const NEUTRAL: &[&str] = &[
    "--no-pager",
    "--no-optional-locks",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.pager=cat",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.attributesFile=/dev/null",
    "-c",
    "diff.external=",
    "-c",
    "log.showSignature=false",
    "-c",
    "status.submoduleSummary=false",
    "-c",
    "color.ui=never",
];

/// git's output for `args` run in `dir`: `None` when git says no (not a
/// repository, no commits yet) or has nothing to print; an error when git
/// cannot be started or does not finish in time.
pub(super) async fn run(dir: &Path, args: &[&str]) -> Result<Option<String>, String> {
    let filters = filter_overrides(dir).await?;
    let mut argv: Vec<&str> = filters.iter().map(String::as_str).collect();
    argv.extend_from_slice(args);
    run_plain(dir, &argv, &format!("git {}", args.join(" "))).await
}

/// `-c filter.NAME.clean= -c filter.NAME.smudge= -c filter.NAME.process=
/// -c filter.NAME.required=false` for each filter driver the config
/// defines: a filter cannot be turned off by wildcard, so each is named.
/// Reading the config runs nothing.
async fn filter_overrides(dir: &Path) -> Result<Vec<String>, String> {
    let keys = ["config", "--name-only", "--get-regexp", r"^filter\."];
    let listed = run_plain(dir, &keys, "git config")
        .await?
        .unwrap_or_default();
    let mut names: Vec<&str> = listed
        .lines()
        .filter_map(|key| key.strip_prefix("filter.")?.rsplit_once('.'))
        .map(|(name, _)| name)
        .collect();
    names.sort_unstable();
    names.dedup();
    let mut argv = Vec::new();
    for name in names {
        for (var, value) in [
            ("clean", ""),
            ("smudge", ""),
            ("process", ""),
            ("required", "false"),
        ] {
            argv.push("-c".to_string());
            argv.push(format!("filter.{name}.{var}={value}"));
        }
    }
    Ok(argv)
}

/// Runs git with `args` after [`NEUTRAL`]; `what` names it in an error.
async fn run_plain(dir: &Path, args: &[&str], what: &str) -> Result<Option<String>, String> {
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

/// The command: git's own flags first, a clean environment (no system
/// config or attributes either).
fn command(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new("git");
    command
        .args(NEUTRAL)
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_ATTR_NOSYSTEM", "1")
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
