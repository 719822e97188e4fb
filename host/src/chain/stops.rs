//! The policies around a whole stop or subagent_stop run, which keep
//! counts per session across runs: the quality gates' retries
//! (`policy/quality_gate/`) and `stop_block_limit`
//! (`policy/stop_limit.rs`). They are applied here, in this order, once:
//! [`Stops::before`] the chain and [`Stops::after`] it. To add or move a
//! policy that spans a stop's runs, edit those two and nothing else.
//!
//! With a shared store (`policy/shared.rs`) the counts of a run's keys are
//! read from it before the chain and written back after. When the store
//! does not answer before the chain (or after it, when the block's count
//! is written), the count is unknown: a block of that stop or
//! subagent_stop is let go (the agent stops, as when nobody
//! answers a stop) with a system message and a warning that say why,
//! rather than risk a loop no replica can cap.

use std::sync::{Arc, OnceLock};

use hookhost_protocol::{LifecycleEvent, Outcome, Stage};
use serde_json::Value;

use crate::members::Member;
use crate::observe::log_budget::LogBudget;
use crate::outcome::GateOutcome;
use crate::policy::quality_gate::GateLog;
use crate::policy::quality_gate::retries::{GateCounts, GateRun};
use crate::policy::session::SessionKey;
use crate::policy::shared::{self, StateError, StateStore};
use crate::policy::stop_limit::{self, LoopRun, StopLoops, StopSeen};

/// The per-session counts of the stop policies, kept by the host across
/// stage runs (and across reloads).
#[derive(Default)]
pub(crate) struct Stops {
    /// Consecutive blocked stops per session, for `stop_block_limit`.
    loops: StopLoops,
    /// Blocked attempts in a row per session and sub-agent, for the
    /// quality gates' `max_retries`.
    gates: GateCounts,
    /// The store the counts are shared through, when one is given.
    shared: OnceLock<Arc<dyn StateStore>>,
    /// Warnings about the store, a few per window.
    store_warnings: LogBudget,
}

/// A stop's count's key: the session and the event.
type StopKey = (SessionKey, LifecycleEvent);
/// A quality gate's count's key: the session and the sub-agent.
type GateKey = (SessionKey, SessionKey);

/// What [`Stops::before`] learned of one run, for [`Stops::after`].
#[derive(Debug, Default)]
pub(crate) struct Stopping {
    /// A stop's count, for `stop_block_limit`.
    stop: Option<LoopRun>,
    /// A subagent_stop's key, for the quality gates.
    gated: Option<GateRun>,
    /// The shared store did not answer before the chain.
    unshared: Option<StateError>,
}

impl Stops {
    /// Shares the counts through `store` from now on; a second store is
    /// refused (`false`).
    pub(crate) fn share(&self, store: Arc<dyn StateStore>) -> bool {
        self.shared.set(store).is_ok()
    }

    /// Before a run's chain, in this order: a `user_prompt_submit` resets
    /// its session's counts (stops and quality gates); the run's counts
    /// are read from the shared store; a stop gets `stop_hook_active` and
    /// `loop_count` in its payload (and is handed back to be emitted to
    /// observers as `lifecycle.<event>`); a subagent_stop is keyed for its
    /// quality gates.
    pub(crate) async fn before(
        &self,
        stage: Stage,
        params: &mut Value,
    ) -> (Stopping, Option<StopSeen>) {
        let Some(seen) = stop_limit::event_and_session(stage, params) else {
            return (Stopping::default(), None);
        };
        if seen.0 == LifecycleEvent::UserPromptSubmit {
            self.session_ended(&seen.1).await;
        }
        let gated = GateRun::of(stage, params);
        let stop_key = seen.0.is_stop().then(|| (SessionKey::of(&seen.1), seen.0));
        let unshared = self
            .load(stop_key, gated.as_ref().map(|g| g.key))
            .await
            .err();
        let (stop, announced) = self.loops.before(seen, params).unzip();
        let stopping = Stopping {
            stop,
            gated,
            unshared,
        };
        (stopping, announced)
    }

    /// The store's fields of a run: its stop's count and its sub-agent's.
    fn fields(stop: Option<StopKey>, gate: Option<GateKey>) -> Option<(String, Vec<String>)> {
        let session = stop.map(|k| k.0).or(gate.map(|k| k.0))?;
        let mut fields = Vec::new();
        if let Some((_, event)) = stop {
            fields.push(format!("stop:{}", event.as_str()));
        }
        if let Some((_, agent)) = gate {
            fields.push(format!("gate:{}", agent.hex()));
        }
        Some((shared::session_hash(session), fields))
    }

    /// Reads the run's counts from the shared store into the tables.
    async fn load(&self, stop: Option<StopKey>, gate: Option<GateKey>) -> Result<(), StateError> {
        let (Some(store), Some((hash, fields))) = (self.shared.get(), Self::fields(stop, gate))
        else {
            return Ok(());
        };
        let counts = store.get(&hash, &fields).await?;
        let mut counts = counts.into_iter();
        if let Some(key) = stop {
            match counts.next().flatten() {
                Some(n) => self.loops.set(key, n),
                None => self.loops.reset(&key),
            }
        }
        if let Some(key) = gate {
            match counts.next().flatten() {
                Some(n) => self.gates.set(key, n),
                None => self.gates.reset(&key),
            }
        }
        Ok(())
    }

    /// Writes the run's counts back to the shared store.
    async fn save(&self, stop: Option<StopKey>, gate: Option<GateKey>) -> Result<(), StateError> {
        let (Some(store), Some((hash, fields))) = (self.shared.get(), Self::fields(stop, gate))
        else {
            return Ok(());
        };
        let counts = stop
            .map(|k| self.loops.count(&k))
            .into_iter()
            .chain(gate.map(|k| self.gates.count(&k)));
        let set: Vec<(String, u32)> = fields.into_iter().zip(counts).collect();
        store.set(&hash, &set, shared::TTL).await
    }

    fn warn_store(&self, e: &StateError, what: &str) {
        if self.store_warnings.admit().is_some() {
            tracing::warn!(error = %e, "{what}");
        }
    }

    /// After a run's chain, in this order: the quality gates judge a
    /// subagent_stop (`log` is what they did during the run; a retry
    /// keeps the block, an exhausted gate's block is overridden), then
    /// `stop_block_limit` caps the blocks in a row, and a block it
    /// overrides ends the gate's retries too; the counts go back to the
    /// shared store. A block whose counts the store did not give, or did
    /// not take, is let go.
    pub(crate) async fn after(
        &self,
        stopping: Stopping,
        outcome: Outcome,
        log: GateLog,
        members: &[Arc<Member>],
        limit: u32,
    ) -> (Outcome, Option<GateOutcome>) {
        if let Some(e) = &stopping.unshared {
            if let Outcome::Blocked { by, .. } = &outcome {
                return (self.let_go(e, by), None);
            }
        }
        let stop_key = stopping.stop.as_ref().map(|s| s.key);
        let gate_key = stopping.gated.as_ref().map(|g| g.key);
        let unshared = stopping.unshared.is_some();
        let judged = self.judge(stopping, outcome, log, members, limit);
        if unshared {
            return judged;
        }
        match (self.save(stop_key, gate_key).await, &judged.0) {
            // A block whose count no replica will see could run past the
            // cap: it is let go, as when the count could not be read.
            (Err(e), Outcome::Blocked { by, .. }) => (self.let_go(&e, by), None),
            _ => judged,
        }
    }

    /// The stop policies' verdict on a run's outcome, in their order,
    /// on the counts in the host's tables.
    fn judge(
        &self,
        stopping: Stopping,
        outcome: Outcome,
        log: GateLog,
        members: &[Arc<Member>],
        limit: u32,
    ) -> (Outcome, Option<GateOutcome>) {
        let gate_of = |by: &str| {
            let m = members.iter().find(|m| *m.name == *by);
            m.and_then(|m| m.quality_gate)
        };
        let (outcome, gate) = match &stopping.gated {
            Some(g) => self.gates.judge(g, outcome, log, gate_of),
            None => (outcome, None),
        };
        let Some(stop) = stopping.stop else {
            return (outcome, gate);
        };
        let was_blocked = matches!(outcome, Outcome::Blocked { .. });
        let outcome = self.loops.after(stop, outcome, limit);
        let overridden = was_blocked && !matches!(outcome, Outcome::Blocked { .. });
        let gate = match (&stopping.gated, overridden) {
            (Some(g), true) => self.gates.overridden(g, gate),
            _ => gate,
        };
        (outcome, gate)
    }

    /// Forgets a session's counts (stops and quality gates): a new prompt
    /// starts afresh, and an ended session has nothing left to count.
    pub(crate) async fn session_ended(&self, session: &str) {
        let session = SessionKey::of(session);
        self.loops.reset_session(session);
        self.gates.reset_session(session);
        if let Some(store) = self.shared.get() {
            if let Err(e) = store.forget(&shared::session_hash(session)).await {
                self.warn_store(&e, "a session's shared counts were not reset");
            }
        }
    }

    /// A block whose count the shared store could not give is let go, and
    /// said so to the agent's user and in the log.
    fn let_go(&self, e: &StateError, by: &str) -> Outcome {
        self.warn_store(e, "the stop's count is unknown: its block is let go");
        let message = format!(
            "hookhost: {e}; the block by {by} is let go so that the agent stops (a loop no replica can count must not run on)"
        );
        Outcome::Lifecycle {
            contexts: Vec::new(),
            system_messages: vec![message],
            summary: None,
        }
    }
}

impl std::fmt::Debug for Stops {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stops")
            .field("shared", &self.shared.get())
            .finish_non_exhaustive()
    }
}
