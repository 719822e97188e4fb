//! `stop_block_limit`: at `stop` and `subagent_stop` a hook's block means
//! "keep going", its reason the agent's next instruction. A hook that
//! always blocks would keep the agent running forever, so the host counts
//! the consecutive blocks per session, tells the hooks (`stop_hook_active`,
//! `loop_count` in the payload), and overrides the block that would pass
//! `stop_block_limit` (spec/protocol.md §5.9). Applied around a stop's
//! chain by `chain/stops.rs`.

use hookhost_protocol::lifecycle::{LOOP_COUNT, STOP_HOOK_ACTIVE};
use hookhost_protocol::meta::Meta;
use hookhost_protocol::{LifecycleEvent, LifecycleParams, Outcome, Stage};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::session::{BlockCounts, SessionKey, label};

/// Sessions whose stop-loop count is kept at once; past it the least
/// recently used is forgotten (its count starts again at 0, and
/// `loop_count` from the agent still counts).
#[cfg(test)]
const MAX_STOP_LOOPS: usize = crate::policy::session::MAX_COUNTS;

/// The key of one count: the session (hashed, fixed size) and the event.
type LoopKey = (SessionKey, LifecycleEvent);

/// Consecutive blocked stops, by session and event (a sub-agent's stops
/// are counted apart from its parent's).
pub(crate) type StopLoops = BlockCounts<LifecycleEvent>;

/// A stop being run: whose it is (and a short label of the session for
/// the log), and how many blocks came before it.
#[derive(Debug)]
pub(crate) struct LoopRun {
    pub(crate) key: LoopKey,
    label: String,
    count: u32,
}

/// A stop's lifecycle event, for the observers: what it was before it
/// became a request.
pub(crate) struct StopSeen {
    /// The stop event.
    pub(crate) event: LifecycleEvent,
    /// Its payload, with the host's two stop members set.
    pub(crate) payload: Value,
    /// Its meta: the event's scope.
    pub(crate) meta: Meta,
}

/// The event, session and meta of lifecycle params that decode as such
/// (the chain itself rejects the others).
pub(crate) fn event_and_session(
    stage: Stage,
    params: &Value,
) -> Option<(LifecycleEvent, String, Meta)> {
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

impl StopLoops {
    /// Before a stop's chain (`event` of `session`, from `params`): its
    /// payload gets `stop_hook_active` and `loop_count`. `None` unless it
    /// is a stop.
    pub(crate) fn before(
        &self,
        (event, session, meta): (LifecycleEvent, String, Meta),
        params: &mut Value,
    ) -> Option<(LoopRun, StopSeen)> {
        if !event.is_stop() {
            return None;
        }
        let key = (SessionKey::of(&session), event);
        let count = add_stop_members(params, self.count(&key));
        let payload = params.get("payload").cloned().unwrap_or_default();
        let run = LoopRun {
            key,
            label: label(&session),
            count,
        };
        Some((
            run,
            StopSeen {
                event,
                payload,
                meta,
            },
        ))
    }

    /// After a stop's chain: a block counts, unless the session already
    /// had `limit` in a row, when it is overridden (not blocked, logged);
    /// anything else resets the count.
    pub(crate) fn after(&self, run: LoopRun, outcome: Outcome, limit: u32) -> Outcome {
        let Outcome::Blocked { by, .. } = &outcome else {
            self.reset(&run.key);
            return outcome;
        };
        if run.count < limit {
            self.blocked(run.key);
            return outcome;
        }
        let event = run.key.1;
        tracing::warn!(
            %event,
            session = %run.label,
            hook = %by,
            "{limit} blocked {event}s in a row (stop_block_limit): this block is overridden and the agent stops"
        );
        self.reset(&run.key);
        Outcome::Lifecycle {
            contexts: Vec::new(),
            system_messages: Vec::new(),
            summary: None,
        }
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
