//! Keeps one misbehaving hook from flooding the agent's log. A hook can
//! write garbage as fast as a pipe carries it (the fault matrix sends
//! hundreds of thousands of lines a second), or crash as fast as it can be
//! restarted, and one warning per bad line or per restart would turn its
//! flood into the agent's. Each connection (and each supervisor, for its
//! restarts) may log a few warnings per window; the rest are counted, and
//! the count is said with the next warning that gets through, or when the
//! connection (or the supervisor) ends.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Warnings a connection may log per window.
pub(crate) const PER_WINDOW: u32 = 10;
/// The window.
pub(crate) const WINDOW: Duration = Duration::from_secs(10);

/// A budget of warnings, refilled every window.
#[derive(Debug)]
pub struct LogBudget {
    per_window: u32,
    window: Duration,
    /// What the warnings are about, for the held-back count.
    about: &'static str,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    started: Instant,
    used: u32,
    held_back: u64,
}

impl Default for LogBudget {
    fn default() -> Self {
        Self::about("warnings about this hook's output")
    }
}

impl LogBudget {
    /// `per_window` warnings every `window`.
    pub fn new(per_window: u32, window: Duration) -> Self {
        Self {
            per_window,
            window,
            about: "warnings",
            state: Mutex::new(State {
                started: Instant::now(),
                used: 0,
                held_back: 0,
            }),
        }
    }

    /// The default budget, for warnings `about` something (said in the
    /// held-back counts: "12 more {about} were held back").
    pub fn about(about: &'static str) -> Self {
        Self {
            about,
            ..Self::new(PER_WINDOW, WINDOW)
        }
    }

    /// Logs `message` about `hook` at WARN if the budget admits it,
    /// saying how many were held back before it.
    pub fn warn(&self, hook: &str, message: std::fmt::Arguments<'_>) {
        if let Some(held) = self.admit() {
            tracing::warn!(hook, held_back = held, "{message}{}", self.held_note(held));
        }
    }

    /// Like [`LogBudget::warn`], for what concerns no hook (the sidecar's
    /// refused connections, a failing `accept`).
    pub fn warn_line(&self, message: std::fmt::Arguments<'_>) {
        if let Some(held) = self.admit() {
            tracing::warn!(held_back = held, "{message}{}", self.held_note(held));
        }
    }

    /// Like [`LogBudget::warn`], at ERROR.
    pub fn error(&self, hook: &str, message: std::fmt::Arguments<'_>) {
        if let Some(held) = self.admit() {
            tracing::error!(hook, held_back = held, "{message}{}", self.held_note(held));
        }
    }

    /// Says, once, how many warnings were held back and not yet reported;
    /// for when the connection or supervisor ends.
    pub fn report_held_back(&self, hook: &str) {
        let held = self.take_held_back();
        if held > 0 {
            tracing::warn!(
                hook,
                held_back = held,
                "{held} more {} were held back",
                self.about
            );
        }
    }

    fn held_note(&self, held: u64) -> String {
        if held == 0 {
            String::new()
        } else {
            format!(
                " (and {held} more {} held back before this one)",
                self.about
            )
        }
    }

    /// `Some(n)`: log this warning, and say that `n` were held back since
    /// the last one logged. `None`: hold it back (it is counted).
    pub fn admit(&self) -> Option<u64> {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if s.started.elapsed() >= self.window {
            s.started = Instant::now();
            s.used = 0;
        }
        if s.used < self.per_window {
            s.used += 1;
            Some(std::mem::take(&mut s.held_back))
        } else {
            s.held_back += 1;
            None
        }
    }

    /// Warnings held back and not yet reported; resets the count.
    pub fn take_held_back(&self) -> u64 {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        std::mem::take(&mut s.held_back)
    }
}

/// Captures what `tracing` writes on this thread, for tests that check
/// the log itself.
#[cfg(test)]
pub(crate) mod capture {
    use std::sync::{Arc, Mutex};

    /// The captured bytes.
    #[derive(Clone, Default)]
    pub(crate) struct Captured(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Captured {
        /// Captures this thread's log until the guard is dropped.
        pub(crate) fn start() -> (Captured, tracing::subscriber::DefaultGuard) {
            let log = Captured::default();
            let sink = log.clone();
            let subscriber = tracing_subscriber::fmt()
                .with_writer(move || sink.clone())
                .with_ansi(false)
                .finish();
            (log, tracing::subscriber::set_default(subscriber))
        }

        /// What was logged so far.
        pub(crate) fn text(&self) -> String {
            let bytes = self.0.lock().unwrap_or_else(|p| p.into_inner()).clone();
            String::from_utf8_lossy(&bytes).into_owned()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_logs_the_budget_then_counts_and_reports_the_rest() {
        let b = LogBudget::new(3, Duration::from_millis(50));
        let first: Vec<Option<u64>> = (0..1000).map(|_| b.admit()).collect();
        assert_eq!(&first[..3], &[Some(0), Some(0), Some(0)]);
        assert!(first[3..].iter().all(Option::is_none));
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(b.admit(), Some(997), "the next window reports the rest");
        assert_eq!(b.admit(), Some(0));
        b.admit();
        b.admit();
        assert_eq!(b.take_held_back(), 1);
        assert_eq!(b.take_held_back(), 0);
    }
}
