//! hookhost: the host an agent embeds to run out-of-process hooks.
//!
//! An agent builds a [`Config`] (or loads one with [`Config::load`]),
//! starts a [`Host`], and asks it for a verdict at each hook point:
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use hookhost::{Config, Host, ToolOutcome};
//! use hookhost::protocol::params::ToolCall;
//!
//! let host = Host::start(Config::load("hooks.toml".as_ref())?).await;
//! let call = ToolCall { tool: "shell".into(), ..Default::default() };
//! match host.before_tool(call).await {
//!     ToolOutcome::Continue(call) => { /* run the (possibly rewritten) call */ }
//!     ToolOutcome::Respond(result) => { /* use the hook's result */ }
//!     ToolOutcome::Deny { reason } => { /* tell the model why */ }
//!     ToolOutcome::Abort { hard, reason } => { /* end the turn or the loop */ }
//! }
//! host.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! No hook can hang, crash or corrupt the agent: every call has a
//! deadline, every failure is resolved by the hook's `on_error` policy,
//! crashed hooks are restarted, and shutdown leaves no process behind.
//! `ARCHITECTURE.md` in the repository maps the modules.

pub mod audit;
pub mod breaker;
pub mod builtin;
pub mod command;
pub mod config;
pub mod conformance;
pub mod connection;
mod declaration;
pub mod error;
pub mod filter;
pub mod hook;
pub mod host;
pub mod line_reader;
pub mod log_budget;
pub mod member;
pub mod outcome;
pub mod preflight;
pub mod process;
pub mod reaper;
pub mod redact;
pub mod remote;
pub mod sidecar;
pub mod stats;
pub mod supervisor;

pub use builtin::{BuiltinHook, BuiltinRegistry};
pub use config::{Config, ConfigError, Defaults, ProcessConfig, RemoteConfig};
pub use error::CallError;
/// The wire model, re-exported so embedders need one dependency.
pub use hookhost_protocol as protocol;
pub use host::{HookTrace, Host, ReloadReport, StartFailure, StartedHook};
pub use outcome::{Approval, LifecycleOutcome, StageOutcome, ToolOutcome};
pub use stats::HookStats;
