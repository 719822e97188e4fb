//! Checks a one-shot command hook the way its agent runs it, as `hookhost
//! conformance --dialect D` reports it (spec/conformance.md §3).
//!
//! Nothing here speaks a dialect: the input is rendered, the program
//! spawned and its answer read by the code hookhost runs command hooks
//! with (`members::command`), so a hook that passes here is run the same
//! way in a chain. The files, by job: `events` (the sample params of
//! each event), `run` (a run, and the sweep for what it left running),
//! `checks` (the checks of one event).

mod checks;
mod events;
mod run;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::report::Report;
use crate::config::CommandConfig;
use crate::dialect::Dialect;
use crate::dialect::spec::Event;
use crate::members::command::CommandHook;

/// What to run, as which agent, and how patient to be.
///
/// `#[non_exhaustive]` so that a later option does not break callers:
/// build it with [`CommandOptions::new`] and set the public fields.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CommandOptions {
    /// Whose hook it is: its events, stdin, environment and answers.
    pub dialect: Dialect,
    /// The command: one argument is a settings file's `command` string,
    /// run with `sh -c` as every agent runs it; more are an argv, run
    /// without a shell (hookhost's `args`).
    pub command: Vec<String>,
    /// The native events to check; empty: every event of the dialect but
    /// those where a hook takes over the agent's own work.
    pub events: Vec<String>,
    /// How long one run may take before its process group is killed.
    pub timeout: Duration,
    /// Extra environment (besides `PATH` and the dialect's own variables).
    pub env: Vec<(String, String)>,
    /// The project folder: where the hook runs and what
    /// `CLAUDE_PROJECT_DIR` and the like name.
    pub dir: PathBuf,
}

impl CommandOptions {
    /// Runs `command` as `dialect` does, at every event, from the current
    /// directory, with a 10 s timeout per run (the CLI's defaults).
    pub fn new(dialect: Dialect, command: Vec<String>) -> Self {
        CommandOptions {
            dialect,
            command,
            events: Vec::new(),
            timeout: Duration::from_secs(10),
            env: Vec::new(),
            dir: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
        }
    }
}

/// Runs every check of every event asked for against the command hook.
///
/// Never fails: an unknown event or a command that cannot be configured
/// is a failed check, so every outcome is a [`Report`] a tool prints the
/// same way as a process hook's.
pub async fn run(opts: &CommandOptions) -> Report {
    let mut report = Report::default();
    let events = match events::select(opts.dialect, Some(&opts.events)) {
        Ok(events) => events,
        Err(why) => {
            report.required("events", Err(why));
            return report;
        }
    };
    let hook = match hook(opts, &events) {
        Ok(hook) => hook,
        Err(why) => {
            report.required("command", Err(why));
            return report;
        }
    };
    for event in events {
        let cx = checks::Ctx {
            hook: &hook,
            spec: opts.dialect.spec(),
            event,
            timeout: opts.timeout,
        };
        checks::check_event(&cx, &mut report).await;
    }
    report
}

/// The command hook a settings entry for `events` would make.
fn hook(opts: &CommandOptions, events: &[&'static Event]) -> Result<CommandHook, String> {
    let mut config = CommandConfig {
        dialect: opts.dialect,
        events: events.iter().map(|e| e.native.to_string()).collect(),
        env: opts.env.iter().cloned().collect(),
        ..CommandConfig::default()
    };
    config.timeout_ms = Some(
        u64::try_from(opts.timeout.as_millis())
            .unwrap_or(u64::MAX)
            .max(1),
    );
    match opts.command.as_slice() {
        [one] => config.command = Some(one.clone()),
        argv => config.args = Some(argv.to_vec()),
    }
    CommandHook::new("conformance", &config, &opts.dir, Arc::new(BTreeMap::new()))
        .map_err(|e| e.to_string())
}
