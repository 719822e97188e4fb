//! Checks a hook program against the protocol, the way `hookhost
//! conformance` reports it: the hook is spawned alone and driven over raw
//! lines, so that every byte it writes is seen, not just what the host's
//! forgiving reader would let through.
//!
//! The files, by job: `session` (the hook process and the lines it
//! writes), `runner` (isolation: a check that kills the hook gets it
//! restarted for the next), `samples` (the params each stage is called
//! with), `checks` (the checks, one function each, and their order),
//! `report` (the verdicts handed back, at two levels), and `command/`,
//! which checks a one-shot command hook of any dialect into the same
//! report. Built only with the
//! `conformance` feature, and needing nothing but the core: a hook
//! author's CI can depend on it without CEL or the remote clients.

mod checks;
mod command;
mod report;
mod runner;
mod samples;
mod session;

use std::time::Duration;

use hookhost_protocol::Stage;

pub use command::{CommandOptions, run as run_command};
pub use report::{Check, Level, Report, Status};

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
    /// The stages to check. `None`: what the hook declares or, for a hook
    /// that declares nothing, PicoClaw's five (lifecycle only when
    /// declared). A declared hook is checked only at stages it declares,
    /// since a host never calls it elsewhere.
    pub stages: Option<Vec<Stage>>,
}

impl Options {
    /// Runs `command` (argv) with no extra environment and a 5 s timeout
    /// per answer, the CLI's defaults.
    pub fn new(command: Vec<String>) -> Self {
        Options {
            command,
            env: Vec::new(),
            timeout: Duration::from_secs(5),
            stages: None,
        }
    }
}

/// Runs every check against the hook started from `opts.command`, in the
/// current directory (where a hook's relative paths are meant to resolve).
///
/// Never fails: a hook that cannot be started is a failed `spawn` check,
/// so every outcome is a [`Report`] a tool can print the same way.
pub async fn run(opts: &Options) -> Report {
    match session::Session::start(opts) {
        Ok(s) => {
            let mut runner = runner::Runner::new(opts, s);
            checks::run_checks(&mut runner, opts.stages.as_deref()).await;
            runner.report
        }
        Err(e) => {
            let mut report = Report::default();
            report.required("spawn", Err(e.to_string()));
            report
        }
    }
}
