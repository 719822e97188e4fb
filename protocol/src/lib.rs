//! The wire model of the hookhost hook protocol, version 1.
//!
//! A host and a hook exchange JSON-RPC 2.0 messages, one compact JSON value
//! per `\n`-terminated line, over the hook's stdin and stdout. This crate is
//! that contract as types, with nothing that does I/O:
//!
//! - [`envelope`]: requests, notifications, responses, error codes;
//! - [`hello`]: the handshake and version negotiation;
//! - [`params`], [`meta`]: what each stage sends;
//! - [`action`]: what hooks answer, and which actions each stage allows;
//! - [`merge_patch`]: RFC 7386, the meaning of `modify`;
//! - [`chain`]: how answers from several hooks fold into one verdict;
//! - [`event`]: runtime event notifications and `observe` patterns;
//! - [`lifecycle`]: lifecycle events, which of them a hook answers and
//!   what each answer may say;
//! - [`schema`]: the JSON Schemas published under `spec/schema/`.
//!
//! The normative text is `spec/protocol.md` in the repository.
//!
//! # Features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `io` | no | `framing::LineReader`: bounded line reading over tokio's async I/O; `outbox::Outbox`: line writing where the sender writes itself when the pipe is idle (tokio, memchr) |
//!
//! Without features the crate is types and pure functions over serde_json.
//!
//! ```
//! use hookhost_protocol::{chain::{Chain, OnError}, stage::Stage};
//! use serde_json::json;
//!
//! let mut chain = Chain::new(Stage::BeforeTool, json!({"tool": "shell", "arguments": {"command": "ls"}}))?;
//! let answer = json!({"action": "modify", "call": {"arguments": {"command": "ls -h"}}});
//! chain.step("ls_human", OnError::Allow, Ok(&answer));
//! let verdict = chain.finish().to_wire(Stage::BeforeTool);
//! assert_eq!(verdict["call"]["arguments"]["command"], "ls -h");
//! # Ok::<(), hookhost_protocol::chain::ParamsError>(())
//! ```

// docs.rs (nightly, `--cfg docsrs`) labels each item with the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
// Every public enum says whether it may grow: `#[non_exhaustive]`, or an
// allow with the reason it is closed.
#![deny(clippy::exhaustive_enums)]
// `pub` means reachable from the crate root; anything else is `pub(crate)`.
#![deny(unreachable_pub)]

pub mod action;
pub mod chain;
pub mod envelope;
pub mod event;
#[cfg(feature = "io")]
pub mod framing;
pub mod hello;
pub mod lifecycle;
pub mod merge_patch;
pub mod meta;
#[cfg(feature = "io")]
pub mod outbox;
pub mod params;
pub mod schema;
mod shape;
pub mod sidecar;
pub mod stage;
pub mod time;
pub mod token;

pub use action::{
    Action, Answer, Decision, LifecycleAction, LifecycleResult, ResultError,
    check_lifecycle_decision, decode_answer, decode_lifecycle_result, decode_result,
};
pub use chain::{Chain, Flow, OnError, Outcome};
pub use envelope::{ErrorObject, Id, Message, error_code};
pub use hello::{HelloParams, HelloResult, PROTOCOL_VERSION};
pub use lifecycle::LifecycleEvent;
pub use merge_patch::{apply_merge_patch, merge_patch_between};
pub use params::LifecycleParams;
pub use stage::Stage;
