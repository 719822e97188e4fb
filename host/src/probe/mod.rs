//! `hookhost probe`: a hook that checks the host running it. It speaks
//! protocol v1 on stdin and stdout like any well-behaved hook, records
//! every line the host sends and when, and at the end checks the record
//! against what the spec asks of a host: the handshake first and alone,
//! integer ids, valid envelopes and params, only the two notifications,
//! a cancel for every call that passed its deadline, stdin EOF before
//! SIGTERM. For people writing another host of the protocol.
//!
//! The files, by job: `session` (the run loop: reading, answering,
//! stopping), `answer` (what the probe writes back), `record` (what
//! arrived, when), `checks` (one function per rule), `summary` (the
//! figures), `report` (the types handed back and their two renderings).
//! Built with the `conformance` feature, like the hook checker.

mod answer;
mod checks;
mod record;
mod report;
mod session;
mod summary;

use std::time::Duration;

use hookhost_protocol::Stage;
use tokio::signal::unix::{SignalKind, signal};

pub use report::{Cancel, Check, Ending, Report, Summary, Violation};

/// How the probe behaves toward the host.
///
/// `#[non_exhaustive]` so that a later option does not break callers:
/// build it with [`Options::new`] and set the public fields.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Options {
    /// How long the hello answer is held back, so that a host that writes
    /// before it has the answer is seen doing so.
    pub hello_delay: Duration,
    /// The stages declared in the hello answer (`None`: no declaration, so
    /// the host's config alone decides and no stage is out of bounds).
    pub intercept: Option<Vec<Stage>>,
    /// The event patterns declared in the hello answer (`None`: none).
    pub observe: Option<Vec<String>>,
    /// Stages whose calls are never answered, so that the host's deadline
    /// and its `$/cancel_request` can be observed.
    pub stall: Vec<Stage>,
    /// After stdin EOF, how long to stay up waiting for SIGTERM (`None`:
    /// exit at EOF, as a good hook does).
    pub linger: Option<Duration>,
}

impl Options {
    /// No declaration, nothing stalled, a 100 ms hello delay, exit at EOF:
    /// the CLI's defaults.
    pub fn new() -> Self {
        Options {
            hello_delay: Duration::from_millis(100),
            intercept: None,
            observe: None,
            stall: Vec::new(),
            linger: None,
        }
    }

    /// Declares every stage and every event (`observe = ["*"]`).
    pub fn declare_all(&mut self) {
        self.intercept = Some(Stage::ALL.to_vec());
        self.observe = Some(vec!["*".into()]);
    }
}

impl Default for Options {
    fn default() -> Self {
        Options::new()
    }
}

/// Why the probe could not run at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The SIGTERM handler could not be installed; without it a host's
    /// shutdown sequence cannot be observed.
    #[error("cannot watch for SIGTERM: {0}")]
    Signal(#[source] std::io::Error),
}

/// Serves the host on this process's stdin and stdout until stdin EOF
/// (plus the linger time), SIGTERM, or a closed stdout, then checks what
/// arrived. Nothing else may write to stdout meanwhile: it is the wire.
pub async fn run(opts: &Options) -> Result<Report, Error> {
    let mut term = signal(SignalKind::terminate()).map_err(Error::Signal)?;
    let term = async move {
        term.recv().await;
    };
    let record = session::serve(opts, tokio::io::stdin(), tokio::io::stdout(), term).await;
    Ok(report(&record, opts))
}

/// The checks and the summary of one run.
fn report(record: &record::Record, opts: &Options) -> Report {
    Report {
        checks: checks::run_all(record, opts),
        summary: summary::summarize(record, opts),
    }
}

#[cfg(test)]
mod tests;
