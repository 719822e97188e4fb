//! The `hookhost` command line: run, check, serve and test agent hooks.
//! The library (`hookhost`) does the hosting; this crate adds the
//! subcommands, logging, and the sidecar's listeners.
//!
//! Install it with `cargo install hookhost-cli`; `hookhost --help` lists the
//! subcommands.
//!
//! # Features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `mimalloc` | yes | mimalloc as every hookhost process's allocator (built from its C sources with the system's compiler); without it, the platform's allocator |

// First: its `out!` and `outln!` macros are for every module below.
#[macro_use]
mod shared;

mod cmd;
mod gateway;
mod policy;
mod sidecar;

/// The allocator every hookhost process uses (cli/Cargo.toml says why).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    cmd::main()
}
