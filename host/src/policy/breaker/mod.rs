//! A circuit breaker per hook: after too many failures in a window the hook
//! is skipped (its policy decides) for a cool-down, then one trial call
//! decides whether it is back.
//!
//! Only failures count: errors, timeouts, crashes and protocol violations.
//! A hook's deliberate verdicts (deny, abort, refuse) are answers, not
//! failures, so no caller can switch a security guard off by provoking it
//! into denying.
//!
//! The breaker of a hook every replica of a gateway calls alike is shared
//! through the host's state store ([`Breaker::share`], `shared.rs`).

mod shared;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::policy::shared::StateStore;

/// Per-hook overrides of the breaker defaults, as a hook's config section
/// spells them (`breaker`, `breaker_failures`, ...). Defined here, with the
/// breaker that reads it, so that this floor needs nothing from the config.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BreakerConfig {
    /// `breaker = true | false`; unset, the member decides from its policy.
    pub enabled: Option<bool>,
    /// Overrides `breaker_failures`.
    pub breaker_failures: Option<u32>,
    /// Overrides `breaker_window_ms`.
    pub breaker_window_ms: Option<u64>,
    /// Overrides `breaker_cooldown_ms`.
    pub breaker_cooldown_ms: Option<u64>,
}

/// The settings a hook's breaker falls back on (`[hooks.defaults]`'s
/// `breaker_*` keys, converted by the config).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BreakerLimits {
    /// Failures within `window` that open the breaker.
    pub failures: u32,
    /// The window for `failures`.
    pub window: Duration,
    /// How long an open breaker skips its hook before one trial call.
    pub cooldown: Duration,
}

/// Where a breaker is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BreakerState {
    /// Calls go through.
    Closed,
    /// Calls are skipped until the cool-down ends.
    Open,
    /// The cool-down ended; one trial call is allowed through.
    HalfOpen,
    /// Turned off (`breaker = false`, or a fail-closed hook): every call
    /// goes through, however many failed.
    Off,
}

impl BreakerState {
    /// The name used in logs and stats.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            BreakerState::Closed => "closed",
            BreakerState::Open => "open",
            BreakerState::HalfOpen => "half_open",
            BreakerState::Off => "off",
        }
    }
}

/// Whether a call may go to the hook.
#[derive(Debug)]
pub(crate) enum Clearance<'a> {
    /// Call it; report the result through the permit.
    Call(Permit<'a>),
    /// Do not call it; the text says why, for the policy's reason.
    Skip(String),
}

/// The right to make one admitted call. Its result goes back through
/// [`Permit::record`]; a permit dropped unrecorded (the caller gave up on
/// its future mid-call) gives its trial back, so a half-open breaker can
/// never wait forever for a result that will not come.
#[derive(Debug)]
#[must_use = "record the call's result, or the trial is given back"]
pub(crate) struct Permit<'a> {
    breaker: &'a Breaker,
    trial: bool,
    recorded: bool,
}

impl Permit<'_> {
    /// Reports how the call went: `failed` for errors, timeouts, crashes
    /// and protocol violations; a verdict of any kind is success.
    pub(crate) fn record(mut self, failed: bool) {
        self.recorded = true;
        self.breaker.record(self.trial, failed);
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        if !self.recorded && self.trial {
            self.breaker.abandon();
        }
    }
}

#[derive(Debug)]
struct Inner {
    state: BreakerState,
    failures: VecDeque<Instant>,
    opened_at: Option<Instant>,
    trial_in_flight: bool,
}

/// One hook's breaker.
#[derive(Debug)]
pub(crate) struct Breaker {
    hook: String,
    /// Off: admits every call and records nothing.
    enabled: bool,
    threshold: u32,
    window: Duration,
    cooldown: Duration,
    inner: Mutex<Inner>,
    /// The store its state is shared through, when replicas share one.
    shared: OnceLock<Arc<shared::Shared>>,
}

impl Breaker {
    /// A closed breaker with the hook's settings over the defaults; off
    /// when `overrides.enabled` is `Some(false)`.
    pub(crate) fn new(
        hook: &str,
        overrides: &BreakerConfig,
        defaults: impl Into<BreakerLimits>,
    ) -> Self {
        let defaults = defaults.into();
        Self {
            hook: hook.to_string(),
            enabled: overrides.enabled != Some(false),
            threshold: overrides
                .breaker_failures
                .unwrap_or(defaults.failures)
                .max(1),
            window: overrides
                .breaker_window_ms
                .map_or(defaults.window, Duration::from_millis),
            cooldown: overrides
                .breaker_cooldown_ms
                .map_or(defaults.cooldown, Duration::from_millis),
            inner: Mutex::new(Inner {
                state: BreakerState::Closed,
                failures: VecDeque::new(),
                opened_at: None,
                trial_in_flight: false,
            }),
            shared: OnceLock::new(),
        }
    }

    /// Shares its state through `store` from now on: it opens when another
    /// replica's opens, and says so when its own does.
    pub(crate) fn share(&self, store: &Arc<dyn StateStore>) {
        if self.enabled {
            let _ = self
                .shared
                .set(Arc::new(shared::Shared::new(&self.hook, store.clone())));
        }
    }

    /// A closed breaker opens when another replica's is open, for what is
    /// left of that one's cool-down.
    fn follow(&self, inner: &mut Inner) {
        let Some(left) = self.shared.get().and_then(|s| s.open_for()) else {
            return;
        };
        if inner.state != BreakerState::Closed {
            return;
        }
        let waited = self.cooldown.saturating_sub(left);
        inner.state = BreakerState::Open;
        inner.opened_at = Some(
            Instant::now()
                .checked_sub(waited)
                .unwrap_or_else(Instant::now),
        );
        tracing::warn!(hook = %self.hook, "circuit breaker opened: another replica's is open for {} ms", left.as_millis());
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The state now (an open breaker past its cool-down reads half-open).
    pub(crate) fn state(&self) -> BreakerState {
        if !self.enabled {
            return BreakerState::Off;
        }
        let mut inner = self.lock();
        self.follow(&mut inner);
        match (inner.state, inner.opened_at) {
            (BreakerState::Open, Some(at)) if at.elapsed() >= self.cooldown => {
                BreakerState::HalfOpen
            }
            (s, _) => s,
        }
    }

    /// Asks to call the hook now.
    pub(crate) fn admit(&self) -> Clearance<'_> {
        if !self.enabled {
            return self.permit(false);
        }
        let mut inner = self.lock();
        self.follow(&mut inner);
        match inner.state {
            BreakerState::Closed | BreakerState::Off => self.permit(false),
            BreakerState::Open => {
                let since = inner.opened_at.map(|t| t.elapsed()).unwrap_or_default();
                if since >= self.cooldown {
                    inner.state = BreakerState::HalfOpen;
                    inner.trial_in_flight = true;
                    tracing::info!(hook = %self.hook, "circuit breaker half-open: one trial call");
                    self.permit(true)
                } else {
                    Clearance::Skip(format!(
                        "circuit breaker open after {} failures; retrying in {} ms",
                        self.threshold,
                        (self.cooldown - since).as_millis()
                    ))
                }
            }
            BreakerState::HalfOpen if !inner.trial_in_flight => {
                inner.trial_in_flight = true;
                self.permit(true)
            }
            BreakerState::HalfOpen => {
                Clearance::Skip("circuit breaker half-open: a trial call is in flight".into())
            }
        }
    }

    fn permit(&self, trial: bool) -> Clearance<'_> {
        Clearance::Call(Permit {
            breaker: self,
            trial,
            recorded: false,
        })
    }

    /// A trial whose caller gave up: back to open, with a fresh cool-down
    /// before the next trial.
    fn abandon(&self) {
        let mut inner = self.lock();
        if inner.state == BreakerState::HalfOpen && inner.trial_in_flight {
            inner.state = BreakerState::Open;
            inner.opened_at = Some(Instant::now());
            inner.trial_in_flight = false;
            tracing::info!(hook = %self.hook, "circuit breaker: the trial call was abandoned by its caller; open again");
        }
    }

    fn tell_opened(&self) {
        if let Some(s) = self.shared.get() {
            s.opened(self.cooldown);
        }
    }

    /// Only the trial's own result moves a half-open breaker; a late result
    /// of a call admitted before the breaker opened does not.
    fn record(&self, trial: bool, failed: bool) {
        if !self.enabled {
            return;
        }
        let mut inner = self.lock();
        let now = Instant::now();
        match (inner.state, failed) {
            (BreakerState::HalfOpen, _) if !trial => {}
            (BreakerState::HalfOpen, false) => {
                inner.state = BreakerState::Closed;
                inner.failures.clear();
                inner.trial_in_flight = false;
                inner.opened_at = None;
                if let Some(s) = self.shared.get() {
                    s.closed();
                }
                tracing::warn!(hook = %self.hook, "circuit breaker closed: the trial call succeeded");
            }
            (BreakerState::HalfOpen, true) => {
                inner.state = BreakerState::Open;
                inner.opened_at = Some(now);
                inner.trial_in_flight = false;
                self.tell_opened();
                tracing::warn!(hook = %self.hook, "circuit breaker re-opened: the trial call failed");
            }
            (BreakerState::Closed, true) => {
                inner.failures.push_back(now);
                while inner
                    .failures
                    .front()
                    .is_some_and(|t| now.duration_since(*t) > self.window)
                {
                    inner.failures.pop_front();
                }
                if inner.failures.len() as u32 >= self.threshold {
                    inner.state = BreakerState::Open;
                    inner.opened_at = Some(now);
                    self.tell_opened();
                    tracing::warn!(
                        hook = %self.hook,
                        failures = inner.failures.len(),
                        window_ms = self.window.as_millis() as u64,
                        "circuit breaker opened: the hook is skipped (its on_error policy applies) for {} ms",
                        self.cooldown.as_millis()
                    );
                }
            }
            (BreakerState::Closed, false) | (BreakerState::Open | BreakerState::Off, _) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `[hooks.defaults]`'s breaker keys at their documented values.
    fn limits() -> BreakerLimits {
        BreakerLimits {
            failures: 5,
            window: Duration::from_secs(60),
            cooldown: Duration::from_secs(30),
        }
    }

    fn breaker(threshold: u32, cooldown_ms: u64) -> Breaker {
        let overrides = BreakerConfig {
            enabled: None,
            breaker_failures: Some(threshold),
            breaker_window_ms: Some(60_000),
            breaker_cooldown_ms: Some(cooldown_ms),
        };
        Breaker::new("h", &overrides, limits())
    }

    fn call(b: &Breaker) -> Permit<'_> {
        match b.admit() {
            Clearance::Call(p) => p,
            Clearance::Skip(why) => panic!("skipped: {why}"),
        }
    }

    #[test]
    fn opens_on_failures_and_never_on_verdicts() {
        let b = breaker(5, 60_000);
        for _ in 0..50 {
            call(&b).record(false);
        }
        for _ in 0..5 {
            call(&b).record(true);
        }
        assert_eq!(b.state(), BreakerState::Open);
        assert!(matches!(b.admit(), Clearance::Skip(_)));
    }

    #[test]
    fn half_open_lets_one_trial_through_and_its_result_decides() {
        let b = breaker(1, 0);
        call(&b).record(true);
        assert_eq!(b.state(), BreakerState::HalfOpen);
        let trial = call(&b);
        assert!(
            matches!(b.admit(), Clearance::Skip(_)),
            "only one trial at a time"
        );
        trial.record(true);
        call(&b).record(false); // cool-down 0: the next trial
        assert_eq!(b.state(), BreakerState::Closed);
        call(&b).record(false);
    }

    #[test]
    fn a_trial_dropped_by_its_caller_is_given_back() {
        let b = breaker(1, 0);
        call(&b).record(true);
        drop(call(&b)); // the caller's future was dropped mid-call
        assert_eq!(
            b.state(),
            BreakerState::HalfOpen,
            "open again, cool-down 0 passed"
        );
        call(&b).record(false);
        assert_eq!(b.state(), BreakerState::Closed);
    }

    #[test]
    fn only_the_trial_moves_a_half_open_breaker() {
        let b = breaker(1, 0);
        let early = call(&b); // admitted while closed
        call(&b).record(true); // opens it
        let trial = call(&b);
        early.record(false); // a late success from before: not the trial
        assert!(matches!(b.admit(), Clearance::Skip(_)), "still half-open");
        trial.record(true);
        assert_eq!(b.state(), BreakerState::HalfOpen, "re-opened, cool-down 0");
    }

    #[test]
    fn an_off_breaker_admits_every_call_however_many_fail() {
        let overrides = BreakerConfig {
            enabled: Some(false),
            breaker_failures: Some(1),
            ..BreakerConfig::default()
        };
        let b = Breaker::new("h", &overrides, limits());
        for _ in 0..20 {
            call(&b).record(true);
        }
        assert_eq!(b.state(), BreakerState::Off);
    }

    /// Lets the breaker's store tasks (spawned off the call's path) run.
    async fn settle() {
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test]
    async fn a_replica_follows_another_replicas_open_breaker() {
        use crate::policy::shared::memory::Memory;
        let store: Arc<dyn StateStore> = Arc::new(Memory::default());
        let (a, b) = (breaker(1, 60_000), breaker(1, 60_000));
        a.share(&store);
        b.share(&store);
        call(&a).record(true);
        assert_eq!(a.state(), BreakerState::Open);
        settle().await;
        assert_eq!(b.state(), BreakerState::Closed, "not fetched yet");
        settle().await;
        assert_eq!(b.state(), BreakerState::Open, "b follows a");
        assert!(matches!(b.admit(), Clearance::Skip(_)));
    }

    #[tokio::test]
    async fn a_store_that_does_not_answer_leaves_each_breaker_alone() {
        use crate::policy::shared::memory::Memory;
        let memory = Arc::new(Memory::default());
        let store: Arc<dyn StateStore> = memory.clone();
        let (a, b) = (breaker(1, 60_000), breaker(1, 60_000));
        a.share(&store);
        b.share(&store);
        call(&a).record(true);
        settle().await;
        memory
            .down
            .store(true, std::sync::atomic::Ordering::Relaxed);
        assert_eq!(b.state(), BreakerState::Closed);
        settle().await;
        call(&b).record(false);
        assert_eq!(b.state(), BreakerState::Closed, "the hook is called");
    }
}
