//! Per-hook counters and latency percentiles, as `Host::stats` reports them.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How many recent latencies the percentiles are computed over.
const WINDOW: usize = 4096;

/// Counters one chain member accumulates; updated on the call path, so
/// everything is an atomic or a short critical section.
#[derive(Debug, Default)]
pub(crate) struct MemberStats {
    /// Calls made (not counting ones filtered out or skipped).
    pub calls: AtomicU64,
    /// Calls that failed (error, timeout, crash, protocol violation).
    pub errors: AtomicU64,
    /// Of those, timeouts.
    pub timeouts: AtomicU64,
    /// Calls skipped by the matcher or the `if` condition.
    pub filtered: AtomicU64,
    /// `if` conditions that failed to evaluate (the hook's policy decided:
    /// skipped under allow, refused under deny).
    pub filter_errors: AtomicU64,
    /// Calls skipped because the breaker was open.
    pub breaker_skips: AtomicU64,
    /// Calls skipped because the chain budget was spent.
    pub budget_skips: AtomicU64,
    latencies: Mutex<Ring>,
}

#[derive(Debug, Default)]
struct Ring {
    us: Vec<u64>,
    next: usize,
}

impl MemberStats {
    /// Adds one call's latency.
    pub(crate) fn observe(&self, took: Duration) {
        let us = took.as_micros().min(u64::MAX as u128) as u64;
        let mut ring = self.latencies.lock().unwrap_or_else(|p| p.into_inner());
        if ring.us.len() < WINDOW {
            ring.us.push(us);
        } else {
            let i = ring.next;
            ring.us[i] = us;
        }
        ring.next = (ring.next + 1) % WINDOW;
    }

    /// The p50 and p99 of recent calls, in microseconds.
    pub(crate) fn percentiles(&self) -> (Option<u64>, Option<u64>) {
        let mut sorted = self
            .latencies
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .us
            .clone();
        if sorted.is_empty() {
            return (None, None);
        }
        sorted.sort_unstable();
        let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q).round() as usize];
        (Some(at(0.50)), Some(at(0.99)))
    }

    /// Bumps a counter by one.
    pub(crate) fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// A snapshot of one hook's figures; the same type is `host.stats`'s wire
/// form in the sidecar.
pub use hookhost_protocol::sidecar::HookStats;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_over_the_recent_window() {
        let s = MemberStats::default();
        assert_eq!(s.percentiles(), (None, None));
        for us in 1..=100 {
            s.observe(Duration::from_micros(us));
        }
        assert_eq!(s.percentiles(), (Some(51), Some(99)));
        for _ in 0..WINDOW {
            s.observe(Duration::from_micros(7));
        }
        assert_eq!(s.percentiles(), (Some(7), Some(7)), "old samples age out");
    }
}
