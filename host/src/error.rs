//! How a call to one hook can fail. Each variant is handled by the hook's
//! `on_error` policy; the text becomes the reason a caller sees.

use std::time::Duration;

use hookhost_protocol::ErrorObject;

/// A failed call to one hook.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
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
    /// The hook's answer for this call broke the protocol.
    #[error("protocol violation: {0}")]
    Protocol(String),
}
