//! The `hookhost` command line: run, check, serve and test agent hooks.
//! The library (`hookhost`) does the hosting; this crate adds the
//! subcommands, logging, the sidecar's listeners and the child reaper.

mod cmd;
mod reaper;
mod sidecar;

fn main() -> std::process::ExitCode {
    cmd::main()
}
