//! Write hookhost hooks in Rust.
//!
//! A hook is a long-lived process that the hookhost host starts and talks
//! to over its stdin and stdout (JSON-RPC 2.0, one message per line; the
//! protocol is `spec/protocol.md` in the repository). With this crate a hook
//! is a type implementing [`Hook`]: one async method per stage, each
//! answering a typed verdict, and a `main` that calls [`run`].
//!
//! ```no_run
//! use hookhost_sdk::{Hook, Patch, Stage, ToolVerdict, params::ToolCall};
//!
//! /// Denies `sudo`, rewrites a bare `ls` to `ls -h`.
//! struct Guard;
//!
//! impl Hook for Guard {
//!     fn intercepts(&self) -> Vec<Stage> {
//!         vec![Stage::BeforeTool]
//!     }
//!
//!     async fn before_tool(&self, call: ToolCall) -> ToolVerdict {
//!         let command = call.arguments.get("command").and_then(|c| c.as_str()).unwrap_or("");
//!         if command.split_whitespace().next() == Some("sudo") {
//!             return ToolVerdict::deny("sudo is not allowed");
//!         }
//!         if command.trim() == "ls" {
//!             return ToolVerdict::modify(Patch::new().set(&["arguments", "command"], "ls -h"));
//!         }
//!         ToolVerdict::Continue
//!     }
//! }
//!
//! fn main() -> std::io::Result<()> {
//!     hookhost_sdk::run(Guard)
//! }
//! ```
//!
//! Wire it in the host's config with `command = ["path/to/guard"]` and
//! `intercept = ["before_tool"]`.
//!
//! # What the server guarantees
//!
//! - **Typed answers.** [`Verdict`] (before_llm, after_llm, after_tool),
//!   [`ToolVerdict`] (before_tool) and [`Approval`] (approve_tool) cannot
//!   express an action the stage does not allow, so the host never rejects
//!   an answer as illegal. `modify` carries a [`Patch`], a JSON Merge Patch
//!   naming only what changes.
//! - **Lifecycle events.** [`Hook::lifecycle`] answers `hook.lifecycle`
//!   (declare [`Stage::Lifecycle`] in [`Hook::intercepts`]) with a
//!   [`LifecycleVerdict`]: continue or block, plus context, a system message
//!   or a summary. What is legal depends on the [`LifecycleEvent`], known only
//!   at run time, so the server checks the verdict against the event with
//!   the host's rules before sending it; one the event forbids goes out as an
//!   error reply (-32603) naming the field. Lifecycle events that are not
//!   requests reach [`Hook::on_event`] as runtime events of kind
//!   `lifecycle.<event>` (observe `lifecycle.*`).
//! - **Concurrency.** Each request runs as its own task, so a slow approval
//!   does not hold up other calls; answers go out as they are ready, in any
//!   order, matched by id. Runtime events go to [`Hook::on_event`] one at a
//!   time, in order, on a task of their own.
//! - **Cancellation.** `$/cancel_request {id}` stops that request's task
//!   (its future is dropped) and answers it -32800.
//! - **Failures stay local.** A panicking handler is answered -32603 and
//!   the hook keeps serving; an unknown method gets -32601; a line that is
//!   not JSON gets -32700 with `id: null`; bad params get -32602 naming the
//!   field. Notifications are never answered. Ids, integer or string, are
//!   echoed exactly.
//! - **A clean wire.** [`serve_stdio`] moves the protocol off fd 1 and
//!   points fd 1 at stderr, so a stray `println!` cannot corrupt a message.
//!   Each batch of ready answers is written with one write and one flush.
//! - **Prompt exit.** On stdin EOF or SIGTERM the server gives running
//!   requests a short grace period, flushes, and returns within a second.
//!
//! # Why jsonrpsee, and how far
//!
//! Method dispatch is a jsonrpsee [`RpcModule`](jsonrpsee_core::server::RpcModule):
//! it maps each method to its typed handler, deserializes `params` from the
//! raw line text straight into the protocol's types (no intermediate
//! `serde_json::Value`) and serializes the reply. jsonrpsee's own servers
//! speak HTTP and WebSocket, not newline-delimited stdio, so the line
//! transport, notifications, cancellation by id and panic capture are this
//! crate's (module `server`). One gap is bridged there too: jsonrpsee's
//! request id is unsigned, so a negative integer id (legal in the protocol,
//! never sent by hookhost itself) is carried as `null` through jsonrpsee and
//! the real id is put back into the reply.

mod dispatch;
mod hook;
#[cfg(feature = "ws")]
mod net;
mod run;
mod server;
mod stdio;
mod verdict;

pub use hook::Hook;
/// The wire model, re-exported so that a hook needs one dependency.
pub use hookhost_protocol as protocol;
pub use hookhost_protocol::Stage;
pub use hookhost_protocol::event::RuntimeEvent;
pub use hookhost_protocol::lifecycle::{LifecycleEvent, LifecycleParams};
/// The typed params each stage receives.
pub use hookhost_protocol::params;
pub use hookhost_protocol::params::ToolResult;
#[cfg(feature = "ws")]
pub use net::{NetServer, serve_ws};
pub use run::run;
pub use server::serve;
pub use stdio::serve_stdio;
pub use verdict::{Approval, LifecycleVerdict, Patch, ToolVerdict, Verdict};
