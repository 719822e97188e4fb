//! The untyped way into the chain: a stage's raw JSON params in, the
//! merged verdict out, optionally with each hook's part. It sets up one
//! stage run (request id, chain budget, audit and trace sinks) and hands
//! it to the chain driver in `chain/`.

use std::sync::atomic::Ordering;

use hookhost_protocol::chain::ParamsError;
use hookhost_protocol::{Chain, Outcome, Stage};
use serde_json::Value;

use crate::chain::{self, GateLog, HookTrace, Run, Sinks};
use crate::dialect::origin::Origin;
use crate::observe::audit::Who;
use crate::outcome::GateOutcome;
use crate::policy::budget::ChainBudget;
use crate::policy::stop_limit::StopSeen;

use super::*;

impl Host {
    /// Runs one stage over raw JSON params and returns the merged verdict;
    /// what `hookhost call` prints is `outcome.to_wire(stage)`.
    pub async fn run_stage(&self, stage: Stage, params: Value) -> Result<Outcome, ParamsError> {
        self.run_chain(stage, params, None).await
    }

    /// Like [`Host::run_stage`], also returning each hook's part: what it
    /// answered, how long it took, and what the chain made of it.
    pub async fn run_stage_traced(
        &self,
        stage: Stage,
        params: Value,
    ) -> Result<(Outcome, Vec<HookTrace>), ParamsError> {
        let mut trace = Vec::new();
        let outcome = self.run_chain(stage, params, Some(&mut trace)).await?;
        Ok((outcome, trace))
    }

    /// One stage run over the chain as it is now; see [`Host::run_gated`].
    async fn run_chain(
        &self,
        stage: Stage,
        params: Value,
        trace: Option<&mut Vec<HookTrace>>,
    ) -> Result<Outcome, ParamsError> {
        let id = self.next_request_id();
        let (outcome, _) = self.run_gated(stage, params, trace, None, id).await?;
        Ok(outcome)
    }

    /// One stage run answering an agent's own event (`origin`), traced
    /// when `trace` is given: what `hookhost relay` stands on. The run's
    /// request id is the audit records' (`id`).
    pub(super) async fn run_from(
        &self,
        (stage, params): (Stage, Value),
        trace: Option<&mut Vec<HookTrace>>,
        origin: &Origin,
        id: String,
    ) -> Result<Outcome, ParamsError> {
        let (outcome, _) = self
            .run_gated(stage, params, trace, Some(origin), id)
            .await?;
        Ok(outcome)
    }

    /// One stage run, with what the quality gates decided at
    /// subagent_stop. Each hook's part is recorded only when `trace` is
    /// given, so the plain path (every agent call) builds no trace. The
    /// stop policies are applied around the chain
    /// ([`chain::Stops`]) on every way in, so the caps hold for the
    /// sidecar and `call` too.
    pub(super) async fn run_gated(
        &self,
        stage: Stage,
        mut params: Value,
        trace: Option<&mut Vec<HookTrace>>,
        origin: Option<&Origin>,
        request_id: String,
    ) -> Result<(Outcome, Option<GateOutcome>), ParamsError> {
        let (stopping, seen) = self.inner.stops.before(stage, &mut params).await;
        if let Some(StopSeen {
            event,
            payload,
            meta,
        }) = seen
        {
            self.emit_lifecycle(event.as_str(), payload, meta);
        }
        let session = self.inner.audit.as_ref().and_then(|_| session_of(&params));
        let who = self.inner.audit.as_ref().and_then(|_| Who::of(&params));
        let chain = Chain::new(stage, params)?;
        let members = self.chain();
        let mut run = Run {
            stage,
            budget: ChainBudget::start(self.chain_budget_ms()),
            sinks: Sinks {
                request_id,
                session,
                who,
                audit: self.inner.audit.as_ref(),
                observer: self.observer(),
                trace,
            },
            gates: GateLog::default(),
            origin,
        };
        let outcome = chain::run(&mut run, &members, chain).await;
        let limit = self.stop_block_limit();
        let stops = &self.inner.stops;
        Ok(stops
            .after(stopping, outcome, run.gates, &members, limit)
            .await)
    }

    fn chain_budget_ms(&self) -> u64 {
        self.defaults().chain_budget_ms
    }

    fn stop_block_limit(&self) -> u32 {
        self.defaults().stop_block_limit
    }

    /// The defaults in force (a reload swaps them).
    fn defaults(&self) -> std::sync::RwLockReadGuard<'_, Defaults> {
        self.inner
            .defaults
            .read()
            .unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn next_request_id(&self) -> String {
        let n = self.inner.request_seq.fetch_add(1, Ordering::Relaxed) + 1;
        format!("r{n}")
    }
}

/// The session a stage run is for (`meta.session_key`), read only when an
/// audit log will record it.
fn session_of(params: &Value) -> Option<String> {
    let key = params.get("meta")?.get("session_key")?.as_str()?;
    Some(key.to_string())
}
