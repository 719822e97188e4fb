//! What the test hooks (`test_hook.rs`, `fault_hook.rs`) share.

use std::io::Write;
use std::sync::{Arc, Mutex};

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

/// Stdout shared by a test hook's answering threads.
pub type Out = Arc<Mutex<std::io::Stdout>>;

/// Writes one whole line and flushes, so that answers written from several
/// threads never interleave.
pub fn send(out: &Out, line: &str) {
    let mut o = out.lock().unwrap_or_else(|p| p.into_inner());
    let _ = writeln!(o, "{line}");
    let _ = o.flush();
}
