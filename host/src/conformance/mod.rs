//! Checks a hook program against the protocol, the way `hookhost
//! conformance` reports it: the hook is spawned alone and driven over raw
//! lines, so that every byte it writes is seen, not just what the host's
//! forgiving reader would let through.
//!
//! The files, by job: `session` (the hook process and the lines it
//! writes), `samples` (the params each stage is called with), `checks`
//! (the checks, one function each, and their order), `report` (the
//! verdicts handed back). Built only with the `conformance` feature, and
//! needing nothing but the core: a hook author's CI can depend on it
//! without CEL or the remote clients.

mod checks;
mod report;
mod samples;
mod session;

use std::time::Duration;

pub use report::{Check, Report};

/// What to run and how patient to be.
///
/// `#[non_exhaustive]` so that a later option does not break callers:
/// build it with [`Options::new`] and set the public fields.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Options {
    /// argv of the hook.
    pub command: Vec<String>,
    /// Extra environment for the hook (besides `PATH`).
    pub env: Vec<(String, String)>,
    /// How long one answer may take.
    pub timeout: Duration,
}

impl Options {
    /// Runs `command` (argv) with no extra environment and a 5 s timeout
    /// per answer, the CLI's defaults.
    pub fn new(command: Vec<String>) -> Self {
        Options {
            command,
            env: Vec::new(),
            timeout: Duration::from_secs(5),
        }
    }
}

/// Runs every check against the hook started from `opts.command`, in the
/// current directory (where a hook's relative paths are meant to resolve).
///
/// Never fails: a hook that cannot be started is a failed `spawn` check,
/// so every outcome is a [`Report`] a tool can print the same way.
pub async fn run(opts: &Options) -> Report {
    let mut report = Report::default();
    match session::Session::start(opts) {
        Ok(mut s) => checks::run_checks(&mut s, &mut report).await,
        Err(e) => report.fail("spawn", e.to_string()),
    }
    report
}
