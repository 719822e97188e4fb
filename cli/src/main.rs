//! The `hookhost` command line: run, check, serve and test agent hooks.
//! The library (`hookhost`) does the hosting; this crate adds the
//! subcommands, logging, and the sidecar's listeners.

mod cmd;
mod sidecar;

fn main() -> std::process::ExitCode {
    cmd::main()
}
