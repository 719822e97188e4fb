//! Write hookhost hooks in Rust.
//!
//! A hook is a long-lived process that the hookhost host starts and talks
//! to over its stdin and stdout (JSON-RPC 2.0, one message per line; the
//! protocol is `spec/protocol.md` in the repository), or a network service
//! the host reaches over WebSocket or HTTP (see [below](#serving-over-websocket-and-http)).
//! With this crate a hook is a type implementing [`Hook`]: one async method
//! per stage, each answering a typed verdict, and a `main` that calls
//! [`run`], which serves either way.
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
//! # Serving over WebSocket and HTTP
//!
//! With the crate feature `ws`, [`run`] serves the hook as a network
//! service (spec §2.2; `[hooks.remotes.NAME]` in the host's config) when
//! the command line has `--listen ADDR` or `--listen=ADDR`:
//!
//! ```text
//! $ guard --listen 127.0.0.1:0
//! listening on ws://127.0.0.1:40213
//! ```
//!
//! Once bound it prints exactly that one line to stdout, with the port it
//! got, and flushes it; then stdout is pointed at stderr, as over stdio, so
//! whoever started the hook reads the address and nothing else. SIGTERM or
//! SIGINT stop it gracefully and it exits 0 within a second. `serve_ws`
//! does the same from a hook's own code and returns a `NetServer` handle
//! (`local_addr`, `stop`, `stopped`). Without the feature, `--listen` is
//! an error that says so.
//!
//! ## Who may connect
//!
//! A hook listening on a loopback address is still reachable by every local
//! process, and by every web page the user opens: a browser lets a page
//! open `ws://127.0.0.1:PORT` or `POST` to it. So, before jsonrpsee sees a
//! request or an upgrade:
//!
//! - **`Origin` is refused.** Any request or upgrade with an `Origin`
//!   header is answered `403` (browsers send one; hookhost sends none).
//! - **JSON only.** A `POST` must have `Content-Type: application/json`
//!   (parameters such as `; charset=utf-8` allowed), else `415`.
//! - **An optional token.** With `--token-file PATH` beside `--listen`, or
//!   `NetConfig::token` / `NetConfig::token_file` given to
//!   `serve_ws_with`, every request and upgrade must carry
//!   `Authorization: Bearer TOKEN` (the scheme in any case; the token
//!   compared in constant time), else `401` with `WWW-Authenticate:
//!   Bearer`. The token is the file's content with surrounding whitespace
//!   trimmed; an empty or unreadable file is an error at start
//!   ([`io::ErrorKind::InvalidInput`](std::io::ErrorKind::InvalidInput) for
//!   an empty one), as is `--token-file` without `--listen`. The host sends
//!   it from the remote's `headers`:
//!
//! ```text
//! $ guard --listen 127.0.0.1:8700 --token-file /run/secrets/guard-token
//! ```
//!
//! ```toml
//! [hooks.remotes.guard]
//! url     = "ws://127.0.0.1:8700"
//! headers = { Authorization = "Bearer ${env:GUARD_TOKEN}" }
//! ```
//!
//! Each refusal is logged as one line on stderr. The Python SDK applies
//! the same rules with the same statuses.
//!
//! One port takes both transports: a WebSocket upgrade opens a session of
//! its own that starts with `hook.hello` like a process start (any number
//! of sessions at once, one per agent); any other `POST` is one HTTP
//! request. Messages may be up to 64 MiB each way, since params carry whole
//! conversations.
//!
//! The server is jsonrpsee's, because it already serves WebSocket and HTTP
//! on one port with limits and a graceful stop, and because it dispatches
//! through the very [`RpcModule`](jsonrpsee_core::server::RpcModule) the
//! stdio transport uses: the handshake, the stages, typed params (-32602)
//! and the lifecycle verdict check are the same code on every transport.
//! What jsonrpsee's server lacks for this protocol is added by one RPC
//! middleware (jsonrpsee's `RpcServiceT`), which jsonrpsee instantiates per
//! WebSocket connection:
//!
//! - **Notifications.** jsonrpsee never routes a notification to a module
//!   method, but hands each one to the middleware's `notification`. There
//!   `hook.runtime_event` goes to the hook's event task, one for all
//!   connections, in arrival order (a bad event is logged on stderr and
//!   skipped), and `$/cancel_request` cancels the request with that id on
//!   the same connection. A notification sent as an HTTP `POST` gets an
//!   empty answer (jsonrpsee alone would send `null`).
//! - **Cancellation.** The middleware's `call` registers each request by
//!   id, then races it against its cancel; a cancelled request's future is
//!   dropped and it is answered -32800.
//! - **Panics.** A panicking handler is answered -32603 and serving goes
//!   on, as over stdio.
//!
//! Arrival order needs one more thing. jsonrpsee handles each WebSocket
//! message in a task of its own, and only a current-thread tokio runtime
//! runs such tasks in the order they were spawned. [`run`] builds one;
//! `serve_ws` called on a multi-threaded runtime runs the server on a
//! current-thread runtime of its own, on a thread of its own.
//!
//! Two things differ from stdio. Batches are refused (the protocol has
//! none). And a request whose id jsonrpsee's `Id` cannot hold, a negative
//! or fractional number, is read by jsonrpsee as a notification and never
//! answered; the host's client is jsonrpsee's and sends unsigned ids only.
//!
//! # Features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `ws` | no | serving a hook over WebSocket and HTTP: `serve_ws`, `serve_ws_with`, `NetServer`, `NetConfig`, and `--listen ADDR` in [`run`] (jsonrpsee's server) |
//!
//! Without it a hook serves over stdio only.
//!
//! # Why jsonrpsee, and how far
//!
//! Method dispatch is a jsonrpsee [`RpcModule`](jsonrpsee_core::server::RpcModule),
//! built in one place for every transport: it maps each method to its typed
//! handler, deserializes `params` from the raw message text straight into
//! the protocol's types (no intermediate `serde_json::Value`) and
//! serializes the reply. Over the network jsonrpsee's server is the
//! transport as well, with the middleware above for notifications,
//! cancellation and panics. jsonrpsee has no newline-delimited stdio
//! transport, so the line transport is this crate's (module `server`),
//! with its own notifications, cancellation by id and panic capture. One
//! gap is bridged there too: jsonrpsee's request id is unsigned, so a
//! negative integer id (legal in the protocol, never sent by hookhost
//! itself) is carried as `null` through jsonrpsee and the real id is put
//! back into the reply.

// docs.rs (nightly, `--cfg docsrs`) labels each item with the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
// `pub` means reachable from the crate root; anything else is `pub(crate)`.
#![deny(unreachable_pub)]

// The crate's README (its crates.io page) is compiled as a doctest, so
// its example cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

#[cfg(feature = "ws")]
mod access;
mod dispatch;
mod hook;
#[cfg(feature = "ws")]
mod net;
mod run;
mod server;
mod stdio;
mod verdict;

#[cfg(feature = "ws")]
pub use access::NetConfig;
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
pub use net::{NetServer, serve_ws, serve_ws_with};
pub use run::run;
pub use server::serve;
pub use stdio::serve_stdio;
pub use verdict::{Approval, LifecycleVerdict, Patch, ToolVerdict, Verdict};
