//! The wire types of hookhost's sidecar (`spec/sidecar.md`) that the hook
//! protocol does not already have: an agent that drives `hookhost serve`
//! sends the stage params of this crate and gets the stage results of this
//! crate, plus these.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::event::{EventSource, RuntimeEvent, Severity};
use crate::meta::Meta;

/// `host.emit` params: a runtime event whose `id` and `time` the sidecar
/// fills in when the agent leaves them out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EmitParams {
    /// Unique per event; generated when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Dotted kind, e.g. `agent.tool.exec_start`.
    pub kind: String,
    /// RFC 3339 in UTC; the time of receipt when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    /// The component that emitted it: a name, or PicoClaw's object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<EventSource>,
    /// The agent, session and turn it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Meta>,
    /// How much it matters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<Severity>,
    /// Kind-specific data; `null` when absent.
    #[serde(default)]
    pub payload: Value,
    /// Unknown keys, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl EmitParams {
    /// The event as hooks get it, with `id` and `time` filled in.
    pub fn into_event(
        self,
        id: impl FnOnce() -> String,
        time: impl FnOnce() -> String,
    ) -> RuntimeEvent {
        RuntimeEvent {
            id: self.id.unwrap_or_else(id),
            kind: self.kind,
            time: self.time.unwrap_or_else(time),
            source: self.source,
            scope: self.scope,
            severity: self.severity,
            payload: self.payload,
            extra: self.extra,
        }
    }
}

/// One configured hook's figures since the host started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HookStats {
    /// The hook's name.
    pub hook: String,
    /// `process`, `remote` (a hook served over WebSocket or HTTP),
    /// `builtin` or `command`.
    pub kind: String,
    /// Calls made.
    pub calls: u64,
    /// Calls that failed.
    pub errors: u64,
    /// Of those, timeouts.
    pub timeouts: u64,
    /// Process restarts, or a remote's reconnects (0 for other kinds).
    pub restarts: u64,
    /// `closed`, `open`, `half_open`, or `off` (`breaker = false`, or a
    /// fail-closed hook).
    pub breaker: String,
    /// Runtime events dropped for this hook.
    pub dropped_events: u64,
    /// Calls skipped by its filters.
    pub filtered: u64,
    /// `if` evaluation errors.
    pub filter_errors: u64,
    /// Calls skipped by the open breaker.
    pub breaker_skips: u64,
    /// Calls skipped because the chain budget was spent.
    pub budget_skips: u64,
    /// Median latency of recent calls, µs; `null` before the first call.
    pub p50_us: Option<u64>,
    /// 99th percentile latency of recent calls, µs.
    pub p99_us: Option<u64>,
    /// A prompt hook's model figures; absent for every other kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelStats>,
}

/// What a prompt hook's model has cost and saved since the hook started.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ModelStats {
    /// Requests sent to the provider.
    pub requests: u64,
    /// Calls answered from the cache, without a request.
    pub cache_hits: u64,
    /// Prompt tokens spent, as the provider counted them.
    pub tokens_in: u64,
    /// Answer tokens spent.
    pub tokens_out: u64,
    /// Calls refused because a spend cap was reached.
    pub capped: u64,
}

/// `host.stats` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StatsResult {
    /// One entry per configured hook, in chain order.
    pub hooks: Vec<HookStats>,
}

/// `host.reload` result, by hook name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ReloadResult {
    /// Hooks whose settings and process stayed as they were.
    pub unchanged: Vec<String>,
    /// Hooks that are new or whose settings changed.
    pub changed: Vec<String>,
    /// Hooks no longer configured.
    pub removed: Vec<String>,
}
