//! When to restart a lost peer: exponential backoff with jitter, the
//! crash window that marks a crash-looping process down, and the uptime
//! after which a peer counts as stable again. Pure (the caller passes the
//! clock), so the restart policy is tested without processes or sockets.

use std::collections::VecDeque;
use std::time::Duration;

use tokio::time::Instant;

/// A peer that stays up this long resets the backoff.
pub(crate) const STABLE_AFTER: Duration = Duration::from_secs(60);

/// The first delay; each later one doubles, up to the cap.
const FIRST_DELAY: Duration = Duration::from_millis(25);

/// Exponential backoff: about 25 ms first, doubling, capped at `max`
/// (`restart_backoff_max_ms`), each delay ±25% so that peers lost
/// together do not come back in lockstep.
#[derive(Debug, Clone)]
pub(crate) struct Backoff {
    attempt: u32,
    max: Duration,
}

impl Backoff {
    /// A fresh backoff capped at `max`.
    pub(crate) fn new(max: Duration) -> Backoff {
        Backoff { attempt: 0, max }
    }

    /// The next delay, for a jitter seed (any number; its low bits are
    /// used), and one step further.
    pub(crate) fn next_delay(&mut self, seed: u32) -> Duration {
        let base = FIRST_DELAY
            .saturating_mul(1u32 << self.attempt.min(16))
            .min(self.max);
        self.attempt = self.attempt.saturating_add(1);
        let jitter = (seed % 500) as f64 / 1000.0 - 0.25;
        base.mul_f64(1.0 + jitter)
    }

    /// Called when a live peer is lost after `up` of uptime: a stable
    /// one starts the backoff over.
    pub(crate) fn lost_after(&mut self, up: Duration) {
        if up >= STABLE_AFTER {
            self.attempt = 0;
        }
    }

    /// Whether no delay was taken since the start or the last reset.
    pub(crate) fn is_fresh(&self) -> bool {
        self.attempt == 0
    }

    /// Counts one attempt taken without a delay.
    pub(crate) fn skip(&mut self) {
        self.attempt = self.attempt.saturating_add(1);
    }
}

/// A jitter seed from the clock's low bits; no need for a real RNG here.
pub(crate) fn clock_seed() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0)
}

/// The crashes of one peer within `restart_window_ms`, for
/// `max_restarts`.
#[derive(Debug)]
pub(crate) struct CrashWindow {
    times: VecDeque<Instant>,
    window: Duration,
    max: u32,
}

impl CrashWindow {
    /// At most `max` crashes within `window` before the peer is down.
    pub(crate) fn new(window: Duration, max: u32) -> CrashWindow {
        CrashWindow {
            times: VecDeque::new(),
            window,
            max,
        }
    }

    /// Counts a crash at `now`; `Some(why)` when this one is past the
    /// limit and the peer should be marked down until a restart succeeds.
    pub(crate) fn note(&mut self, now: Instant) -> Option<String> {
        self.times.push_back(now);
        while self
            .times
            .front()
            .is_some_and(|t| now.duration_since(*t) > self.window)
        {
            self.times.pop_front();
        }
        (self.times.len() as u32 >= self.max).then(|| {
            format!(
                "crashed {} times within {} s; skipped until a restart succeeds",
                self.times.len(),
                self.window.as_secs()
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_from_25_ms_and_stops_at_the_cap() {
        let mut b = Backoff::new(Duration::from_millis(300));
        // Seed 250 is the middle of the jitter range: no jitter.
        let delays: Vec<u128> = (0..6).map(|_| b.next_delay(250).as_millis()).collect();
        assert_eq!(delays, [25, 50, 100, 200, 300, 300]);
    }

    #[test]
    fn jitter_stays_within_a_quarter_either_way() {
        for seed in [0, 1, 249, 499, 500, u32::MAX] {
            let d = Backoff::new(Duration::from_secs(1)).next_delay(seed);
            let ms = d.as_secs_f64() * 1000.0;
            assert!((18.75..=31.25).contains(&ms), "seed {seed}: {ms} ms");
        }
    }

    #[test]
    fn a_huge_attempt_count_neither_overflows_nor_passes_the_cap() {
        let mut b = Backoff::new(Duration::from_secs(5));
        for _ in 0..100 {
            b.next_delay(250);
        }
        assert_eq!(b.next_delay(250), Duration::from_secs(5));
    }

    #[test]
    fn only_a_stable_peer_starts_the_backoff_over() {
        let mut b = Backoff::new(Duration::from_secs(5));
        b.next_delay(250);
        b.next_delay(250);
        b.lost_after(STABLE_AFTER - Duration::from_millis(1));
        assert!(!b.is_fresh());
        assert_eq!(b.next_delay(250), Duration::from_millis(100));
        b.lost_after(STABLE_AFTER);
        assert!(b.is_fresh());
        b.skip();
        assert_eq!(b.next_delay(250), Duration::from_millis(50));
    }

    #[test]
    fn the_crash_window_trips_at_max_restarts_within_the_window() {
        let start = Instant::now();
        let mut w = CrashWindow::new(Duration::from_secs(10), 3);
        assert_eq!(w.note(start), None);
        assert_eq!(w.note(start + Duration::from_secs(1)), None);
        let why = w.note(start + Duration::from_secs(2));
        assert_eq!(
            why.as_deref(),
            Some("crashed 3 times within 10 s; skipped until a restart succeeds")
        );
    }

    #[test]
    fn crashes_older_than_the_window_are_forgotten() {
        let start = Instant::now();
        let mut w = CrashWindow::new(Duration::from_secs(10), 3);
        w.note(start);
        w.note(start + Duration::from_secs(1));
        assert_eq!(w.note(start + Duration::from_secs(20)), None);
        assert_eq!(w.note(start + Duration::from_secs(21)), None);
    }
}
