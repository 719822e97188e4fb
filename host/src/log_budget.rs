//! Keeps one misbehaving hook from flooding the agent's log. A hook can
//! write garbage as fast as a pipe carries it (the fault matrix sends
//! hundreds of thousands of lines a second), and one warning per bad line
//! would turn its flood into the agent's. Each connection may log a few
//! warnings per window; the rest are counted, and the count is said with
//! the next warning that gets through, or when the connection ends.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Warnings a connection may log per window.
pub const PER_WINDOW: u32 = 10;
/// The window.
pub const WINDOW: Duration = Duration::from_secs(10);

/// A budget of warnings, refilled every window.
#[derive(Debug)]
pub struct LogBudget {
    per_window: u32,
    window: Duration,
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
        Self::new(PER_WINDOW, WINDOW)
    }
}

impl LogBudget {
    /// `per_window` warnings every `window`.
    pub fn new(per_window: u32, window: Duration) -> Self {
        Self {
            per_window,
            window,
            state: Mutex::new(State {
                started: Instant::now(),
                used: 0,
                held_back: 0,
            }),
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
