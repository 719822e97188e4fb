//! `out!` and `outln!`: `print!` and `println!` that do not panic when
//! stdout is gone. Declared first in the crate so every module has them.

/// `print!` that does not panic when stdout is gone: a reader that closes
/// early (`hookhost check | head -1`) must not turn into a panic and a
/// backtrace, and the host must still stop its hooks on the way out. What
/// was not written is dropped; the exit code stays the command's own.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($arg)*);
    }};
}

/// `outln!` that does not panic when stdout is gone; see [`out!`].
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}
