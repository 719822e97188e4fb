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
//!     _ => { /* outcomes added later */ }
//! }
//! host.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! No hook can hang, crash or corrupt the agent: every call has a
//! deadline, every failure is resolved by the hook's `on_error` policy,
//! crashed hooks are restarted, and shutdown leaves no process behind.
//!
//! # Features
//!
//! | feature | default | what it adds | crates pulled |
//! |---|---|---|---|
//! | `cel` | yes | `if = "…"` expressions on hooks (the cel crate) | ≈ +20 |
//! | `remote` | no | `[hooks.remotes.*]`: hooks over `ws://`, `wss://`, `http://`, `https://` (jsonrpsee's clients, rustls) | ≈ +110 |
//! | `conformance` | no | [`conformance()`]: check a hook program against the protocol | none |
//!
//! A config that uses a feature this build lacks fails to load with a
//! [`ConfigError`] that names the feature.
//!
//! # Module map
//!
//! The modules are private; this root re-exports what an embedder uses.
//! Each floor imports only the floors below it.
//!
//! | floor | folder | job |
//! |---|---|---|
//! | 1 | `transport/` | JSON-RPC over lines; spawning a hook process |
//! | 1 | `policy/` | matcher and `if` filters, circuit breaker, chain budget |
//! | 1 | `observe/` | stats, audit log, spans and step names, redaction, rate-limited warnings |
//! | 2 | `config/` | the TOML (or PicoClaw JSON) config and its checks |
//! | 3 | `supervise/` | keeping persistent hooks (processes, remotes) alive |
//! | 4 | `members/` | one configured hook of any kind: process, remote, builtin, command |
//! | 5 | `chain/` | the chain driver: admission in policy order, the call, the record |
//! | 6 | `host/` | the [`Host`] handle: start, reload, the stages |
//!
//! `ARCHITECTURE.md` in the repository follows one request through them.

mod chain;
mod config;
#[cfg(feature = "conformance")]
mod conformance;
mod error;
mod host;
mod members;
mod observe;
mod outcome;
mod policy;
mod reaper;
mod supervise;
mod transport;

pub use chain::NoAnswer;
pub use config::{
    AuditConfig, BreakerConfig, BuiltinConfig, CommandConfig, CommandConfigError, CommandOnError,
    Config, ConfigError, Defaults, EnvError, ProcessConfig, RemoteConfig, RemoteConfigError,
    RemoteTransport, Transport,
};
#[cfg(feature = "conformance")]
pub use conformance::{
    Check as ConformanceCheck, Options as ConformanceOptions, Report as ConformanceReport,
    run as conformance,
};
pub use error::{CallError, StartError};
/// The wire model, re-exported so embedders need one dependency.
pub use hookhost_protocol as protocol;
pub use host::{HookInfo, HookKind, HookStatus, HookTrace, Host, ReloadReport, StartFailure};
pub use members::builtin::{
    BuiltinError, BuiltinFactory, BuiltinHook, BuiltinRegistry, HookFuture,
};
pub use observe::log_budget::LogBudget;
pub use observe::stats::HookStats;
pub use outcome::{Approval, LifecycleOutcome, StageOutcome, ToolOutcome};
pub use policy::budget::BudgetSpent;
pub use reaper::{become_subreaper, kill_all_children, reap_adopted_zombies};
