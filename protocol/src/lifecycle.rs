//! Lifecycle events: the points of an agent's run that are not a model or
//! tool call (a session starting, a prompt arriving, a compaction, ...).
//!
//! Some of them are **requests**: the agent waits at the stage
//! [`Stage::Lifecycle`](crate::stage::Stage::Lifecycle) (method
//! `hook.lifecycle`) for the hooks' answer, which may block the event, add
//! context for the model, show a system message, or supply a summary. What
//! an answer may say depends on the event, so the rules are methods of
//! [`LifecycleEvent`]. Every other event only informs: it reaches hooks as a
//! `hook.runtime_event` notification of kind `lifecycle.<event>`.
//!
//! The wire types live with their kind ([`LifecycleParams`] in
//! [`params`](crate::params), [`LifecycleResult`] in [`action`](crate::action))
//! and are re-exported here for convenience.

use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::action::{LifecycleAction, LifecycleResult};
pub use crate::params::LifecycleParams;

/// The prefix of the runtime event kind under which a lifecycle event that
/// is not a request reaches observers (`lifecycle.session_end`, ...).
pub const EVENT_KIND_PREFIX: &str = "lifecycle.";

/// One lifecycle event of an agent's run.
///
/// The names, and which event is a request, may block, takes context or
/// takes a summary, are fixed by the protocol (spec section 5.9), so that
/// hooks written for one agent keep their meaning in another.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum LifecycleEvent {
    /// A session started (`payload.source`: startup, resume, clear, compact).
    SessionStart,
    /// A session ended.
    SessionEnd,
    /// The user submitted a prompt (`payload.prompt`), before the model sees it.
    UserPromptSubmit,
    /// A turn started.
    TurnStart,
    /// A turn ended.
    TurnEnd,
    /// The agent is about to stop answering.
    Stop,
    /// A sub-agent is about to start (`payload.agent_name`, `payload.task`).
    SubagentStart,
    /// A sub-agent stopped.
    SubagentStop,
    /// The conversation is about to be compacted (Claude Code's name).
    PreCompact,
    /// The agent notified the user of something.
    Notification,
    /// The agent hit an error.
    OnError,
    /// The agent reached its iteration limit.
    OnMaxIterations,
    /// The conversation is about to be compacted; a hook may write the summary.
    BeforeCompaction,
    /// The conversation was compacted.
    AfterCompaction,
}

impl LifecycleEvent {
    /// Every event, in the order the spec lists them.
    pub const ALL: [LifecycleEvent; 14] = [
        LifecycleEvent::SessionStart,
        LifecycleEvent::SessionEnd,
        LifecycleEvent::UserPromptSubmit,
        LifecycleEvent::TurnStart,
        LifecycleEvent::TurnEnd,
        LifecycleEvent::Stop,
        LifecycleEvent::SubagentStart,
        LifecycleEvent::SubagentStop,
        LifecycleEvent::PreCompact,
        LifecycleEvent::Notification,
        LifecycleEvent::OnError,
        LifecycleEvent::OnMaxIterations,
        LifecycleEvent::BeforeCompaction,
        LifecycleEvent::AfterCompaction,
    ];

    /// The snake_case wire name, as in `params.event`.
    pub fn as_str(self) -> &'static str {
        match self {
            LifecycleEvent::SessionStart => "session_start",
            LifecycleEvent::SessionEnd => "session_end",
            LifecycleEvent::UserPromptSubmit => "user_prompt_submit",
            LifecycleEvent::TurnStart => "turn_start",
            LifecycleEvent::TurnEnd => "turn_end",
            LifecycleEvent::Stop => "stop",
            LifecycleEvent::SubagentStart => "subagent_start",
            LifecycleEvent::SubagentStop => "subagent_stop",
            LifecycleEvent::PreCompact => "pre_compact",
            LifecycleEvent::Notification => "notification",
            LifecycleEvent::OnError => "on_error",
            LifecycleEvent::OnMaxIterations => "on_max_iterations",
            LifecycleEvent::BeforeCompaction => "before_compaction",
            LifecycleEvent::AfterCompaction => "after_compaction",
        }
    }

    /// Whether the agent waits for the hooks' answer (a `hook.lifecycle`
    /// request). The others only inform, as runtime events, because nothing
    /// a hook could answer would change what already happened.
    pub fn is_request(self) -> bool {
        matches!(
            self,
            LifecycleEvent::SessionStart
                | LifecycleEvent::UserPromptSubmit
                | LifecycleEvent::TurnStart
                | LifecycleEvent::SubagentStart
                | LifecycleEvent::PreCompact
                | LifecycleEvent::BeforeCompaction
        )
    }

    /// Whether a hook may answer `block`: only where the agent can still
    /// refrain from doing the thing (take the prompt, start the sub-agent,
    /// compact).
    pub fn can_block(self) -> bool {
        matches!(
            self,
            LifecycleEvent::UserPromptSubmit
                | LifecycleEvent::SubagentStart
                | LifecycleEvent::PreCompact
                | LifecycleEvent::BeforeCompaction
        )
    }

    /// Whether a hook may answer `additional_context`: only where the agent
    /// is about to build a model request that can carry it.
    pub fn takes_context(self) -> bool {
        matches!(
            self,
            LifecycleEvent::SessionStart
                | LifecycleEvent::UserPromptSubmit
                | LifecycleEvent::TurnStart
        )
    }

    /// Whether a hook may answer `summary`: only before_compaction, where
    /// the agent uses it in place of its own compaction summary.
    pub fn takes_summary(self) -> bool {
        self == LifecycleEvent::BeforeCompaction
    }

    /// The runtime event kind under which this event reaches observers
    /// (`lifecycle.<name>`).
    pub fn event_kind(self) -> String {
        format!("{EVENT_KIND_PREFIX}{}", self.as_str())
    }

    /// The event a runtime event kind stands for (`lifecycle.session_end`
    /// gives `SessionEnd`), if it is one.
    pub fn from_event_kind(kind: &str) -> Option<LifecycleEvent> {
        kind.strip_prefix(EVENT_KIND_PREFIX)?.parse().ok()
    }
}

impl fmt::Display for LifecycleEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A lifecycle event name that is not one of the fourteen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown lifecycle event {0:?} (expected one of session_start, session_end, user_prompt_submit, turn_start, turn_end, stop, subagent_start, subagent_stop, pre_compact, notification, on_error, on_max_iterations, before_compaction, after_compaction)"
)]
pub struct UnknownLifecycleEvent(pub String);

impl FromStr for LifecycleEvent {
    type Err = UnknownLifecycleEvent;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        LifecycleEvent::ALL
            .into_iter()
            .find(|e| e.as_str() == s)
            .ok_or_else(|| UnknownLifecycleEvent(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_str_serde_and_kind() {
        for e in LifecycleEvent::ALL {
            assert_eq!(e.as_str().parse::<LifecycleEvent>(), Ok(e));
            assert_eq!(
                serde_json::to_value(e).expect("serializes"),
                serde_json::Value::from(e.as_str())
            );
            assert_eq!(e.event_kind(), format!("lifecycle.{e}"));
            assert_eq!(LifecycleEvent::from_event_kind(&e.event_kind()), Some(e));
        }
        assert_eq!(
            LifecycleEvent::SessionEnd.event_kind(),
            "lifecycle.session_end"
        );
        assert_eq!(LifecycleEvent::from_event_kind("agent.session_end"), None);
        assert_eq!(LifecycleEvent::from_event_kind("lifecycle.nope"), None);
    }

    #[test]
    fn an_unknown_name_is_a_clear_error() {
        let err = "session_begin".parse::<LifecycleEvent>().unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("unknown lifecycle event \"session_begin\""),
            "{text}"
        );
        assert!(text.contains("before_compaction"), "{text}");
    }

    #[test]
    fn the_event_table_is_as_specified() {
        let names = |f: fn(LifecycleEvent) -> bool| -> Vec<&str> {
            LifecycleEvent::ALL
                .into_iter()
                .filter(|e| f(*e))
                .map(LifecycleEvent::as_str)
                .collect()
        };
        assert_eq!(
            names(LifecycleEvent::is_request),
            [
                "session_start",
                "user_prompt_submit",
                "turn_start",
                "subagent_start",
                "pre_compact",
                "before_compaction"
            ]
        );
        assert_eq!(
            names(LifecycleEvent::can_block),
            [
                "user_prompt_submit",
                "subagent_start",
                "pre_compact",
                "before_compaction"
            ]
        );
        assert_eq!(
            names(LifecycleEvent::takes_context),
            ["session_start", "user_prompt_submit", "turn_start"]
        );
        assert_eq!(names(LifecycleEvent::takes_summary), ["before_compaction"]);
    }

    #[test]
    fn only_request_events_take_an_answer() {
        for e in LifecycleEvent::ALL {
            if e.can_block() || e.takes_context() || e.takes_summary() {
                assert!(e.is_request(), "{e} takes an answer but is no request");
            }
        }
    }
}
