//! The policies around a whole stop or subagent_stop run, which keep
//! counts per session across runs: the quality gates' retries
//! (`policy/quality_gate/`) and `stop_block_limit`
//! (`policy/stop_limit.rs`). They are applied here, in this order, once:
//! [`Stops::before`] the chain and [`Stops::after`] it. To add or move a
//! policy that spans a stop's runs, edit those two and nothing else.

use std::sync::Arc;

use hookhost_protocol::{LifecycleEvent, Outcome, Stage};
use serde_json::Value;

use crate::members::Member;
use crate::outcome::GateOutcome;
use crate::policy::quality_gate::GateLog;
use crate::policy::quality_gate::retries::{GateCounts, GateRun};
use crate::policy::session::SessionKey;
use crate::policy::stop_limit::{self, LoopRun, StopLoops, StopSeen};

/// The per-session counts of the stop policies, kept by the host across
/// stage runs (and across reloads).
#[derive(Debug, Default)]
pub(crate) struct Stops {
    /// Consecutive blocked stops per session, for `stop_block_limit`.
    loops: StopLoops,
    /// Blocked attempts in a row per session and sub-agent, for the
    /// quality gates' `max_retries`.
    gates: GateCounts,
}

/// What [`Stops::before`] learned of one run, for [`Stops::after`].
#[derive(Debug, Default)]
pub(crate) struct Stopping {
    /// A stop's count, for `stop_block_limit`.
    stop: Option<LoopRun>,
    /// A subagent_stop's key, for the quality gates.
    gated: Option<GateRun>,
}

impl Stops {
    /// Before a run's chain, in this order: a `user_prompt_submit` resets
    /// its session's counts (stops and quality gates); a stop gets
    /// `stop_hook_active` and `loop_count` in its payload (and is handed
    /// back to be emitted to observers as `lifecycle.<event>`); a
    /// subagent_stop is keyed for its quality gates.
    pub(crate) fn before(&self, stage: Stage, params: &mut Value) -> (Stopping, Option<StopSeen>) {
        let Some(seen) = stop_limit::event_and_session(stage, params) else {
            return (Stopping::default(), None);
        };
        if seen.0 == LifecycleEvent::UserPromptSubmit {
            self.session_ended(&seen.1);
        }
        let (stop, announced) = self.loops.before(seen, params).unzip();
        let gated = GateRun::of(stage, params);
        (Stopping { stop, gated }, announced)
    }

    /// After a run's chain, in this order: the quality gates judge a
    /// subagent_stop (`log` is what they did during the run; a retry
    /// keeps the block, an exhausted gate's block is overridden), then
    /// `stop_block_limit` caps the blocks in a row, and a block it
    /// overrides ends the gate's retries too.
    pub(crate) fn after(
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
    pub(crate) fn session_ended(&self, session: &str) {
        let session = SessionKey::of(session);
        self.loops.reset_session(session);
        self.gates.reset_session(session);
    }
}
