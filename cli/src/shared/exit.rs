//! The exit code of a usage or config error, and its one line on stderr.
//! Exit codes: 0 done, 1 a check failed, 2 a usage or config error.

use std::process::ExitCode;

/// Exit code for usage and config errors.
pub const EXIT_USAGE: u8 = 2;

/// Prints a usage/config error and returns exit code 2.
pub fn usage_error(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("hookhost: {msg}");
    ExitCode::from(EXIT_USAGE)
}
