//! A call's deadline: the instant it is given up, and the length of the
//! wait it was set from. The instant bounds every wait on the way down
//! (the peer's start, the write queue, the answer); the length words the
//! timeout ("no answer within 200 ms"), so the two travel as one value
//! and each layer that can time out says so the same way.

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

use crate::error::CallError;

/// Longer than any run lasts (about thirty years): where a wait too long
/// to add to the clock ends.
const LONGEST: Duration = Duration::from_secs(30 * 365 * 86_400);

/// `now + wait`, or as late as the clock allows: a configured wait too
/// long to add never panics, it just never runs out.
pub(crate) fn later(now: Instant, wait: Duration) -> Instant {
    now.checked_add(wait)
        .or_else(|| now.checked_add(LONGEST))
        .unwrap_or(now)
}

/// When a call is given up, with the wait it was granted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Deadline {
    at: Instant,
    timeout: Duration,
}

impl Deadline {
    /// A wait of `timeout` starting now.
    pub(crate) fn after(timeout: Duration) -> Deadline {
        Deadline {
            at: later(Instant::now(), timeout),
            timeout,
        }
    }

    /// The wait granted at `begun` that ends at `at`.
    pub(crate) fn between(begun: Instant, at: Instant) -> Deadline {
        Deadline {
            at,
            timeout: at.saturating_duration_since(begun),
        }
    }

    /// A wait that ends at `at`, as long as what is left of it now: for a
    /// layer that bounds its caller's deadline further and words its own
    /// timeout by what it had.
    #[cfg_attr(not(feature = "remote"), allow(dead_code))]
    pub(crate) fn until(at: Instant) -> Deadline {
        Deadline::between(Instant::now(), at)
    }

    /// The instant the call is given up.
    pub(crate) fn at(&self) -> Instant {
        self.at
    }

    /// The wait it was set from: what a timeout's message names.
    pub(crate) fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The error of a call that ran out of this wait.
    pub(crate) fn expired(&self) -> CallError {
        CallError::Timeout(self.timeout)
    }

    /// Runs `work` until the deadline; past it, the call's timeout error.
    pub(crate) async fn bound<F: Future>(&self, work: F) -> Result<F::Output, CallError> {
        tokio::time::timeout_at(self.at, work)
            .await
            .map_err(|_| self.expired())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_late_answer_is_a_timeout_named_by_the_wait_granted() {
        let d = Deadline::after(Duration::from_millis(20));
        let late = d.bound(tokio::time::sleep(Duration::from_secs(10))).await;
        assert_eq!(
            late.map_err(|e| e.to_string()),
            Err("no answer within 20 ms".into())
        );
        let d = Deadline::after(Duration::from_secs(10));
        assert_eq!(d.bound(async { 7 }).await, Ok(7));
    }

    #[test]
    fn a_wait_between_two_instants_is_their_distance() {
        let begun = Instant::now();
        let d = Deadline::between(begun, begun + Duration::from_millis(50));
        assert_eq!(d.timeout(), Duration::from_millis(50));
        assert_eq!(d.at(), begun + Duration::from_millis(50));
        let past = Deadline::between(begun + Duration::from_secs(1), begun);
        assert_eq!(
            past.timeout(),
            Duration::ZERO,
            "a deadline already past grants nothing"
        );
    }

    #[test]
    fn a_wait_too_long_for_the_clock_never_panics() {
        let d = Deadline::after(Duration::MAX);
        assert!(d.at() > Instant::now() + Duration::from_secs(365 * 86_400));
        assert_eq!(d.timeout(), Duration::MAX);
    }
}
