//! What the subcommands share, and nothing that knows a subcommand: loading
//! a config, the exit code of a usage error, waiting for SIGINT/SIGTERM,
//! printing (the `out!` macros, terminal-safe text, aligned tables), where
//! the per-user files live, the descriptor limit, and the daemon's client.
//! The dispatcher (`cmd/mod.rs`) only dispatches: a subcommand finds what
//! it shares here, never back up in the dispatcher, and this module uses
//! no subcommand.

#[macro_use]
mod output;

pub mod approvals;
pub mod client;
pub mod config;
pub mod exit;
pub mod header;
pub mod limits;
pub mod paths;
pub mod remote;
pub mod signal;
pub mod since;
pub mod table;
pub mod term;
