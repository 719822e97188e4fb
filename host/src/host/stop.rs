//! Blocked stops: at `stop` and `subagent_stop` a hook's block means "keep
//! going", its reason the agent's next instruction. A hook that always
//! blocks would keep the agent running forever, so the host counts the
//! consecutive blocks per session, tells the hooks (`stop_hook_active`,
//! `loop_count` in the payload), and overrides the block that would pass
//! `stop_block_limit` (spec/protocol.md §5.9).

use std::time::SystemTime;

use hookhost_protocol::event::RuntimeEvent;
use hookhost_protocol::lifecycle::{EVENT_KIND_PREFIX, LOOP_COUNT, STOP_HOOK_ACTIVE};
use hookhost_protocol::meta::Meta;
use hookhost_protocol::{LifecycleEvent, LifecycleParams, Outcome, Stage};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::*;
use crate::policy::session::{SessionKey, SessionTable, label};

/// Sessions whose stop-loop count is kept at once; past it the least
/// recently used is forgotten (its count starts again at 0, and
/// `loop_count` from the agent still counts).
pub(super) const MAX_STOP_LOOPS: usize = 4096;

/// The key of one count: the session (hashed, fixed size) and the event.
type LoopKey = (SessionKey, LifecycleEvent);

/// Consecutive blocked stops, by session and event (a sub-agent's stops
/// are counted apart from its parent's). Only sessions whose last stop was
/// blocked have an entry, and at most [`MAX_STOP_LOOPS`] of them.
#[derive(Debug)]
pub(super) struct StopLoops {
    blocked: SessionTable<LifecycleEvent, u32>,
}

impl Default for StopLoops {
    fn default() -> Self {
        StopLoops {
            blocked: SessionTable::new(MAX_STOP_LOOPS),
        }
    }
}

impl StopLoops {
    /// The blocks in a row so far for this session's `event`.
    fn count(&self, key: &LoopKey) -> u32 {
        self.blocked.get(key).unwrap_or(0)
    }

    /// Records one more block in a row.
    fn blocked(&self, key: LoopKey) {
        self.blocked
            .update(key, |c| c.unwrap_or(0).saturating_add(1));
    }

    /// Forgets the session's count for `event` (a stop that went through).
    fn reset(&self, key: &LoopKey) {
        self.blocked.remove(key);
    }

    /// Forgets every count of the session: a new prompt starts afresh, and
    /// an ended session has nothing left to count.
    fn reset_session(&self, session: SessionKey) {
        self.blocked.remove_session(session);
    }

    /// How many counts are kept (for tests).
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.blocked.len()
    }
}

/// A stop being run: whose it is (and a short label of the session for
/// the log), and how many blocks came before it.
#[derive(Debug)]
pub(super) struct StopRun {
    key: LoopKey,
    label: String,
    count: u32,
}

/// The event, session and meta of lifecycle params that decode as such
/// (the chain itself rejects the others).
fn event_and_session(stage: Stage, params: &Value) -> Option<(LifecycleEvent, String, Meta)> {
    if stage != Stage::Lifecycle {
        return None;
    }
    let p = LifecycleParams::deserialize(params).ok()?;
    let session = p.meta.session_key.clone().unwrap_or_default();
    Some((p.event, session, p.meta))
}

/// Sets the host's two stop members in `params.payload` and returns the
/// count in force. What the agent sent itself counts too: an agent that
/// says `stop_hook_active: true` or a higher `loop_count` (a relay, which
/// starts a new host per event, knows only what the agent says) is not
/// contradicted.
fn add_stop_members(params: &mut Value, count: u32) -> u32 {
    let Some(obj) = params.as_object_mut() else {
        return count;
    };
    let slot = obj
        .entry("payload")
        .or_insert_with(|| Value::Object(Map::new()));
    if !slot.is_object() {
        *slot = Value::Object(Map::new());
    }
    let Some(payload) = slot.as_object_mut() else {
        return count;
    };
    let said = |k: &str| payload.get(k).cloned().unwrap_or(Value::Null);
    let agent_count = said(LOOP_COUNT)
        .as_u64()
        .map_or(0, |c| u32::try_from(c).unwrap_or(u32::MAX));
    let agent_active = said(STOP_HOOK_ACTIVE).as_bool().unwrap_or(false);
    let count = count.max(agent_count);
    payload.insert(
        STOP_HOOK_ACTIVE.into(),
        Value::Bool(count > 0 || agent_active),
    );
    payload.insert(LOOP_COUNT.into(), Value::from(count));
    count
}

impl Host {
    /// Before a lifecycle chain: a `user_prompt_submit` resets its
    /// session's counts (quality gates' too); a stop gets `stop_hook_active` and `loop_count`
    /// in its payload and is emitted to observers as `lifecycle.<event>`,
    /// as it was before it became a request. `None` unless it is a stop.
    pub(super) fn before_stop(&self, stage: Stage, params: &mut Value) -> Option<StopRun> {
        let (event, session, meta) = event_and_session(stage, params)?;
        let hashed = SessionKey::of(&session);
        if event == LifecycleEvent::UserPromptSubmit {
            self.inner.stops.reset_session(hashed);
            self.inner.gates.reset_session(hashed);
        }
        if !event.is_stop() {
            return None;
        }
        let key = (hashed, event);
        let count = add_stop_members(params, self.inner.stops.count(&key));
        let payload = params.get("payload").cloned().unwrap_or_default();
        self.emit_lifecycle(event.as_str(), payload, meta);
        Some(StopRun {
            key,
            label: label(&session),
            count,
        })
    }

    /// After a stop's chain: a block counts, unless the session already
    /// had `stop_block_limit` in a row, when it is overridden (not
    /// blocked, logged); anything else resets the count.
    pub(super) fn after_stop(&self, run: StopRun, outcome: Outcome) -> Outcome {
        let Outcome::Blocked { by, .. } = &outcome else {
            self.inner.stops.reset(&run.key);
            return outcome;
        };
        let limit = self
            .inner
            .defaults
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .stop_block_limit;
        if run.count < limit {
            self.inner.stops.blocked(run.key);
            return outcome;
        }
        let event = run.key.1;
        tracing::warn!(
            %event,
            session = %run.label,
            hook = %by,
            "{limit} blocked {event}s in a row (stop_block_limit): this block is overridden and the agent stops"
        );
        self.inner.stops.reset(&run.key);
        Outcome::Lifecycle {
            contexts: Vec::new(),
            system_messages: Vec::new(),
            summary: None,
        }
    }

    /// An ended session's counts (stops and quality gates) are dropped.
    pub(super) fn session_ended(&self, session: &str) {
        let session = SessionKey::of(session);
        self.inner.stops.reset_session(session);
        self.inner.gates.reset_session(session);
    }

    /// Emits `lifecycle.<name>` with `payload` to the observers; `meta`,
    /// when it says anything, is the event's scope.
    pub(super) fn emit_lifecycle(&self, name: &str, payload: Value, meta: Meta) {
        self.emit(RuntimeEvent {
            id: self.next_event_id(),
            kind: format!("{EVENT_KIND_PREFIX}{name}"),
            time: hookhost_protocol::time::rfc3339(SystemTime::now()),
            source: Some("hookhost".into()),
            scope: (!meta.is_empty()).then_some(meta),
            severity: None,
            payload,
            extra: Map::new(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// 40 sessions of 8 MiB ids used to be kept whole, and the table never
    /// shrank: now each count is a fixed-size key and the table is capped.
    #[test]
    fn the_stop_loop_table_is_bounded_and_keeps_no_id() {
        let loops = StopLoops::default();
        for i in 0..MAX_STOP_LOOPS + 500 {
            let key = (
                SessionKey::of(&format!("session-{i}")),
                LifecycleEvent::Stop,
            );
            loops.blocked(key);
        }
        assert_eq!(loops.len(), MAX_STOP_LOOPS, "never more than the cap");
        let huge = "s".repeat(8 << 20);
        let key = (SessionKey::of(&huge), LifecycleEvent::Stop);
        assert_eq!(std::mem::size_of_val(&key.0), 16, "a fixed-size key");
        loops.blocked(key);
        loops.blocked(key);
        assert_eq!(
            loops.count(&(SessionKey::of(&huge), LifecycleEvent::Stop)),
            2
        );
        loops.reset(&key);
        assert_eq!(loops.count(&key), 0, "a stop let through drops its count");
        assert!(label(&huge).len() < 100, "the log names a short label");
    }

    #[test]
    fn what_the_agent_says_of_its_stop_loop_is_not_contradicted() {
        let mut fresh = json!({"event": "stop", "payload": {}});
        assert_eq!(add_stop_members(&mut fresh, 0), 0);
        assert_eq!(
            fresh["payload"],
            json!({"stop_hook_active": false, "loop_count": 0})
        );
        // A relay starts a new host per event: the agent's word counts.
        let mut told =
            json!({"event": "stop", "payload": {"stop_hook_active": true, "loop_count": 3}});
        assert_eq!(add_stop_members(&mut told, 1), 3);
        assert_eq!(
            told["payload"],
            json!({"stop_hook_active": true, "loop_count": 3})
        );
        let mut counted = json!({"event": "stop", "payload": {"stop_hook_active": false}});
        assert_eq!(add_stop_members(&mut counted, 2), 2);
        assert_eq!(counted["payload"]["stop_hook_active"], true);
    }
}
