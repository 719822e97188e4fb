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
//!     ToolOutcome::Continue { call, contexts } => { /* run the (possibly rewritten) call */ }
//!     ToolOutcome::Ask { call, reason, .. } => { /* ask the user; run the call on a yes */ }
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
//! # Public items
//!
//! - The host: [`Host`] (`start`, `start_with`, `reload`, `shutdown`, the
//!   stage methods `before_tool` … `lifecycle`, `lifecycle_with`,
//!   `lifecycle_named`, `answer_foreign`, `run_stage`,
//!   `run_stage_traced`, `emit`, `next_event_id`, `stats`, `hooks`,
//!   `start_failures`, `set_policy`, `set_observer`).
//! - The embedder's own observer: [`Observer`], told of each finished
//!   hook call ([`HookCall`]) and each answered event ([`AnsweredEvent`]).
//! - What the stages return: [`ToolOutcome`], [`StageOutcome`],
//!   [`Approval`], [`LifecycleOutcome`]; per hook, with `run_stage_traced`:
//!   [`HookTrace`], [`NoAnswer`], [`BudgetSpent`].
//! - The read model: [`HookInfo`], [`HookKind`], [`HookStatus`],
//!   [`HookStats`], [`StartFailure`], [`ReloadReport`].
//! - Errors: [`CallError`] (one call), [`StartError`] (a hook that did not
//!   come up), [`ConfigError`] (a config that does not load) and the
//!   section errors it carries: [`CommandConfigError`],
//!   [`RemoteConfigError`], [`EnvError`], [`BuiltinError`].
//! - Config: [`Config`], [`Defaults`], [`HookSpec`] (one hook of any kind:
//!   its name, [`HookSettings`] and [`Backend`]; [`Config::hooks`]),
//!   [`ProcessConfig`], [`Transport`],
//!   [`BuiltinConfig`], [`CommandConfig`], [`FailurePolicy`] (every
//!   hook's `on_error`; [`CommandOnError`] is its former name),
//!   [`RemoteConfig`], [`RemoteTransport`], [`WebhookConfig`]
//!   ([`WebhookConfigError`]), [`AuditConfig`],
//!   [`BreakerConfig`].
//! - The audit log read back: [`AuditStore`] (a JSONL file, SQLite or
//!   PostgreSQL) with `verify` ([`ChainReport`]) and `query`
//!   ([`AuditQuery`]), [`AuditError`]; [`verify_audit`] for any reader
//!   of lines; [`Host::audit_figures`] ([`AuditFigures`]) for a running
//!   host's queue.
//! - Other agents' hooks: [`Dialect`] (claude-code, codex, gemini-cli,
//!   cursor, copilot, docker-agent; [`UnknownDialect`]), each one's events
//!   as an installer routes them (`Dialect::events`, [`NativeEvent`]), their settings
//!   files read by `[hooks.import]` ([`HookSource`] says where a hook came
//!   from, [`SkippedHook`] what was not run), and the other direction: an
//!   agent's own event read as a [`ForeignEvent`] ([`EventError`]) and
//!   answered by `Host::answer_foreign` as a [`NativeAnswer`].
//! - In-process hooks: [`BuiltinHook`], [`BuiltinRegistry`],
//!   [`BuiltinFactory`], [`HookFuture`].
//! - For a process that hosts hooks: [`become_subreaper`],
//!   [`reap_adopted_zombies`], [`kill_all_children`] (process-wide; opt
//!   in), and [`LogBudget`] (rate-limited warnings for what a peer can
//!   make happen often).
//! - [`protocol`]: the wire model, so one dependency is enough.
//! - With the `conformance` feature: `conformance()`,
//!   `ConformanceOptions`, `ConformanceReport`, `ConformanceCheck` (with
//!   its `ConformanceLevel`, required or robustness, and
//!   `ConformanceStatus`);
//!   `conformance_command()`, `ConformanceCommandOptions` for a one-shot
//!   command hook of any dialect; and
//!   `probe()`, a hook that checks the host running it, with
//!   `ProbeOptions`, `ProbeReport` (`ProbeCheck`, `ProbeViolation`,
//!   `ProbeSummary`, `ProbeCancel`, `ProbeEnding`) and `ProbeError`.
//!
//! # Features
//!
//! | feature | default | what it adds | crates an embedder pulls |
//! |---|---|---|---|
//! | none | | processes, builtins, command hooks, matchers, audit, breaker | 84 |
//! | `cel` | yes | `if = "…"` expressions on hooks (the cel crate) | 103 |
//! | `remote` | no | `[hooks.remotes.*]`: hooks over `ws://`, `wss://`, `http://`, `https://` (jsonrpsee's clients, rustls); command hooks with a `url` (Claude Code's `http` handlers, on the same hyper and rustls); `[hooks.webhooks.*]` (the same client, SSRF-guarded); `[hooks.prompts.*]` (a model's HTTP API through that client) | 214 with `cel` (no new packages for `url` hooks: the same hyper and rustls) |
//! | `conformance` | no | `conformance()`: check a hook program against the protocol; `probe()`: a hook that checks its host | +0 |
//! | `yaml` | no | `[hooks.import] docker-agent = "agent.yaml"`: docker-agent's agent YAML (serde_norway) | +3 |
//! | `audit-sqlite` | no | `[hooks.audit] url = "sqlite://PATH"`: the audit log in SQLite, compiled in (rusqlite, `bundled`) | +4 |
//! | `audit-postgres` | no | `[hooks.audit] url = "postgres://…"`: the audit log in PostgreSQL, shared by a gateway's replicas (rust-postgres's blocking client; TLS through rustls, tokio-postgres-rustls) | +103 |
//!
//! (Counted with `cargo tree -p hookhost -e normal --target all --prefix
//! none | sort -u | wc -l` and the feature flags.) A config that uses a feature this build
//! lacks fails to load with a [`ConfigError`] that names the feature. On
//! docs.rs every item that needs a feature says which.
//!
//! # Module map
//!
//! The modules are private; this root re-exports what an embedder uses.
//! Each floor imports only the floors below it.
//!
//! | floor | folder | job |
//! |---|---|---|
//! | 0 | `error.rs`, `outcome.rs` | how calls and starts fail; what the stages return |
//! | 1 | `transport/` | JSON-RPC over lines; spawning a hook process |
//! | 1 | `policy/` | matcher and `if` filters, circuit breaker, chain budget |
//! | 1 | `observe/` | stats, audit log, spans and step names, redaction, rate-limited warnings |
//! | 1 | `reaper.rs` | the child subreaper (opt in) |
//! | 1 | `net/` | outbound HTTP guarded against SSRF (feature `remote`) |
//! | 1 | `dialect/` | each agent's command-hook dialect as data, and the translations both ways |
//! | 2 | `config/` | the TOML (or PicoClaw JSON) config and its checks; other agents' settings files (`import/`) |
//! | 3 | `supervise/` | keeping persistent hooks (processes, remotes) alive: one peer lifecycle |
//! | 4 | `members/` | one configured hook of any kind: peer, builtin, command (and webhook, a command with a guarded URL; and prompt, a command whose runner is a model) |
//! | 5 | `chain/` | the chain driver: admission in policy order, the call, the record |
//! | 6 | `host/` | the [`Host`] handle: plan and apply a config, the stages, the read model |
//! | – | `conformance/` | the protocol checker (feature `conformance`) |
//! | – | `probe/` | the host checker: a hook that records and checks what its host sends (feature `conformance`) |
//!
//! `ARCHITECTURE.md` in the repository follows one request through them.

// docs.rs (nightly, `--cfg docsrs`) labels each item with the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
// Every public enum says whether it may grow: `#[non_exhaustive]`, or an
// allow with the reason it is closed.
#![deny(clippy::exhaustive_enums)]
// `pub` means reachable from the crate root; anything else is `pub(crate)`.
#![deny(unreachable_pub)]

// The crate's README (its crates.io page) is compiled as a doctest, so
// its example cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

mod chain;
mod config;
#[cfg(feature = "conformance")]
mod conformance;
mod dialect;
mod error;
mod host;
mod members;
#[cfg(feature = "remote")]
mod net;
mod observe;
mod outcome;
mod policy;
#[cfg(feature = "conformance")]
mod probe;
mod reaper;
mod supervise;
mod transport;

pub use chain::NoAnswer;
pub use config::{
    AuditConfig, Backend, BreakerConfig, BuiltinConfig, CommandConfig, CommandConfigError,
    CommandOnError, Config, ConfigError, Defaults, EnvError, FailurePolicy, Format, HookKind,
    HookSettings, HookSource, HookSpec, ProcessConfig, QualityGate, RemoteConfig,
    RemoteConfigError, RemoteTransport, Runner, Scope, ScopeError, Transport,
};
pub use config::{Definition, HookSetConfig, SetEntry, SetHook, SkippedHook};
pub use config::{Language, UnmetEnv, env_reads, passed_env};
pub use config::{ModelConfig, PromptConfig, PromptConfigError, Provider};
pub use config::{WebhookConfig, WebhookConfigError, WebhookGuard};
/// Repository trust: which imported hooks come from files a project
/// controls, their fingerprints, and the user's store of approved ones
/// (`hookhost trust`).
pub mod trust {
    pub use crate::config::trust::{
        ProjectHook, Trust, TrustError, TrustStore, TrustedHook, describe, fingerprint,
        project_controlled, short,
    };
}
#[cfg(feature = "conformance")]
pub use conformance::{
    Check as ConformanceCheck, CommandOptions as ConformanceCommandOptions,
    Level as ConformanceLevel, Options as ConformanceOptions, Report as ConformanceReport,
    Status as ConformanceStatus, run as conformance, run_command as conformance_command,
};
pub use dialect::agent::{EventError, NativeAnswer};
pub use dialect::{Dialect, NativeEvent, UnknownDialect};
pub use error::{CallError, StartError};
/// The wire model, re-exported so embedders need one dependency.
pub use hookhost_protocol as protocol;
pub use host::{
    DecisionRecord, ForeignEvent, HookInfo, HookStatus, HookTrace, Host, Identity, ReloadReport,
    StartFailure,
};
pub use members::builtin::{
    BuiltinError, BuiltinFactory, BuiltinHook, BuiltinRegistry, HookFuture,
};
pub use observe::audit::{
    AuditError, AuditFigures, AuditQuery, AuditStore, DEFAULT_QUEUE as AUDIT_QUEUE,
    masked as masked_url,
};
pub use observe::chain::{ChainReport, verify as verify_audit};
pub use observe::log_budget::LogBudget;
pub use observe::observer::{AnsweredEvent, HookCall, Observer};
pub use observe::redact::redact as redact_secrets;
pub use observe::stats::HookStats;
pub use observe::usage::ModelUsage;
pub use outcome::{Approval, GateOutcome, LifecycleOutcome, StageOutcome, ToolOutcome};
pub use policy::budget::BudgetSpent;
pub use policy::shared::{StateError, StateFuture, StateStore, TTL as STATE_TTL};
#[cfg(feature = "conformance")]
pub use probe::{
    Cancel as ProbeCancel, Check as ProbeCheck, Ending as ProbeEnding, Error as ProbeError,
    Options as ProbeOptions, Report as ProbeReport, Summary as ProbeSummary,
    Violation as ProbeViolation, run as probe,
};
pub use reaper::{become_subreaper, kill_all_children, reap_adopted_zombies};
