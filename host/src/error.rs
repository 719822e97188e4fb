//! How a call to one hook can fail ([`CallError`]: each variant is handled
//! by the hook's `on_error` policy; the text becomes the reason a caller
//! sees), and why a hook did not come up ([`StartError`]: reported by
//! `Host::start_failures`, and quoted by the calls that fail meanwhile).

use std::sync::Arc;
use std::time::Duration;

use hookhost_protocol::ErrorObject;

/// A failed call to one hook. Non-exhaustive: each new kind of hook has
/// brought its own way to fail (prompt hooks added `Model`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// No answer before the deadline.
    #[error("no answer within {} ms", .0.as_millis())]
    Timeout(Duration),
    /// The process exited while the call was pending.
    #[error("the hook process exited ({0}) while the call was pending")]
    Crashed(String),
    /// The hook closed its stdout, so no answer can come.
    #[error("the hook closed its stdout")]
    Closed,
    /// The hook stopped reading its stdin, so no request reaches it.
    #[error("the hook closed its stdin")]
    StdinClosed,
    /// The hook is not running: restarting past the deadline, or marked
    /// failed after repeated crashes, or shut down.
    #[error("the hook is unavailable: {0}")]
    Unavailable(String),
    /// A project's command the user has not trusted (`hookhost trust`):
    /// nothing was spawned, posted or asked. Its policy answers as for a
    /// hook that could not start, and the agent's answer names it.
    #[error("{0}")]
    Untrusted(String),
    /// The connection to a remote hook failed during the call (refused,
    /// reset, closed, or an HTTP status other than 200).
    #[error("the connection to the remote hook failed: {0}")]
    Network(String),
    /// The hook answered with a JSON-RPC error.
    #[error("the hook answered an error: {0}")]
    Rpc(ErrorObject),
    /// A builtin hook returned an error.
    #[error("the builtin failed: {0}")]
    Builtin(String),
    /// A prompt hook's model gave no answer: its provider failed, refused
    /// (an HTTP error, a 429 past the deadline), or a spend cap is reached.
    #[error("the model provider failed: {0}")]
    Model(String),
    /// The hook's answer for this call broke the protocol.
    #[error("protocol violation: {0}")]
    Protocol(String),
}

/// Why a hook did not come up: a process that could not be spawned or
/// handshaken, a remote that could not be reached, a builtin or command
/// hook that could not be built, an audit file that could not be opened.
/// Its text is what `hookhost check` prints and what a failing call's
/// reason quotes, so each variant reads as a sentence with its context.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    /// The program could not be started.
    #[error("cannot start {program:?} in {dir}: {source}")]
    Spawn {
        /// The program as configured.
        program: String,
        /// Its working directory.
        dir: String,
        /// The OS error.
        #[source]
        source: Arc<std::io::Error>,
    },
    /// The process exited before it answered `hook.hello`.
    #[error("exited during the handshake ({status})")]
    ExitedDuringHello {
        /// How it exited.
        status: std::process::ExitStatus,
    },
    /// No answer to `hook.hello` within `hello_timeout_ms`.
    #[error("no answer to hook.hello{} within {} ms", from_url(.url), .after.as_millis())]
    HelloTimeout {
        /// The remote's URL (password masked); `None` for a process.
        url: Option<String>,
        /// The timeout.
        after: Duration,
    },
    /// `hook.hello` failed: an error answer, or the pipe or connection
    /// failed during it.
    #[error("hook.hello failed{}: {reason}", at_url(.url))]
    HelloFailed {
        /// The remote's URL (password masked); `None` for a process.
        url: Option<String>,
        /// What failed (redacted for a remote).
        reason: String,
    },
    /// The hello answer is not a hello result.
    #[error("invalid hook.hello result: {0}")]
    InvalidHello(String),
    /// The hello answer refuses the handshake or its version.
    #[error("handshake refused: {0}")]
    Refused(#[source] hookhost_protocol::hello::HelloError),
    /// A remote could not be connected to (or its client not built).
    #[error("{what} {url}: {reason}")]
    Connect {
        /// `cannot connect to` (WebSocket) or `cannot use` (HTTP).
        what: &'static str,
        /// The URL, password masked.
        url: String,
        /// The client's error, redacted.
        reason: String,
    },
    /// A setting found unusable at start: a URL scheme, a header, a
    /// `${env:NAME}` that is not set. Only a config built in code that
    /// skipped `Config::parse` gets the first kinds here.
    #[error("{0}")]
    Settings(String),
    /// A builtin or command hook that could not be built; the source is
    /// the builtin's or the command config's own typed error.
    #[error("{source}")]
    Build {
        /// Why.
        #[source]
        source: Arc<dyn std::error::Error + Send + Sync>,
    },
    /// The task keeping the hook alive ended before its first handshake.
    #[error("its supervisor ended before the handshake")]
    Abandoned,
    /// The audit log could not be opened.
    #[error("cannot open {path}: {source}")]
    Audit {
        /// The file.
        path: String,
        /// The OS error.
        #[source]
        source: Arc<std::io::Error>,
    },
    /// A start failure with the last lines the process wrote to stderr.
    #[error("{error}; its stderr ended with:\n{stderr}")]
    WithStderr {
        /// Why it failed.
        error: Box<StartError>,
        /// The tail of its stderr.
        stderr: String,
    },
}

impl StartError {
    /// The failure with `stderr` attached, when there is any.
    pub(crate) fn with_stderr(self, stderr: String) -> StartError {
        if stderr.is_empty() {
            self
        } else {
            StartError::WithStderr {
                error: Box::new(self),
                stderr,
            }
        }
    }
}

fn from_url(url: &Option<String>) -> String {
    url.as_ref()
        .map(|u| format!(" from {u}"))
        .unwrap_or_default()
}

fn at_url(url: &Option<String>) -> String {
    url.as_ref().map(|u| format!(" at {u}")).unwrap_or_default()
}
