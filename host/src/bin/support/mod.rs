//! What the test hooks (`test_hook.rs`, `fault_hook.rs`) share.

use std::io::Write;

/// Appends `line` to `file`, creating it: how a test hook reports what it
/// saw (event kinds, its pids) to the test that started it. Errors are
/// ignored; the test then finds the line missing.
pub fn append_line(file: &str, line: &str) {
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
    {
        let _ = writeln!(f, "{line}");
    }
}
