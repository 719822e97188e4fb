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
#[non_exhaustive]
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
    /// The agent is about to stop answering. A hook may block it: the
    /// reason is the next instruction, and the agent keeps going. The host
    /// adds `stop_hook_active` and `loop_count` to the payload.
    Stop,
    /// A sub-agent is about to start (`payload.agent_name`, `payload.task`).
    SubagentStart,
    /// A sub-agent is about to stop; blocked like [`LifecycleEvent::Stop`].
    SubagentStop,
    /// The conversation is about to be compacted (Claude Code's name); a
    /// hook may add compaction instructions as `additional_context`.
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
                | LifecycleEvent::Stop
                | LifecycleEvent::SubagentStart
                | LifecycleEvent::SubagentStop
                | LifecycleEvent::PreCompact
                | LifecycleEvent::BeforeCompaction
        )
    }

    /// Whether a hook may answer `block`: only where the agent can still
    /// refrain from doing the thing (take the prompt, start the sub-agent,
    /// compact) or can keep working instead of stopping.
    pub fn can_block(self) -> bool {
        matches!(
            self,
            LifecycleEvent::UserPromptSubmit
                | LifecycleEvent::Stop
                | LifecycleEvent::SubagentStart
                | LifecycleEvent::SubagentStop
                | LifecycleEvent::PreCompact
                | LifecycleEvent::BeforeCompaction
        )
    }

    /// Whether a block means "keep going": at stop and subagent_stop the
    /// block's reason is the agent's next instruction, and the host counts
    /// consecutive blocks per session to cap the loop.
    pub fn is_stop(self) -> bool {
        matches!(self, LifecycleEvent::Stop | LifecycleEvent::SubagentStop)
    }

    /// Whether a hook may answer `additional_context`: only where the agent
    /// is about to build a model request that can carry it (at pre_compact,
    /// the compaction's).
    pub fn takes_context(self) -> bool {
        matches!(
            self,
            LifecycleEvent::SessionStart
                | LifecycleEvent::UserPromptSubmit
                | LifecycleEvent::TurnStart
                | LifecycleEvent::PreCompact
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

/// The payload member the host adds at stop and subagent_stop: whether the
/// previous stop of this session was blocked (a hook that blocks should let
/// the agent stop when it is true, or it may loop).
pub const STOP_HOOK_ACTIVE: &str = "stop_hook_active";

/// The payload member the host adds at stop and subagent_stop: how many
/// stops of this session in a row were blocked so far.
pub const LOOP_COUNT: &str = "loop_count";

/// Lifecycle events other agents name that this protocol gives no answer
/// to (Claude Code's, spec section 5.9). An agent announces them by name
/// ([`is_event_name`]); they reach observers as `lifecycle.<name>` and run
/// the command hooks that list them, whose output is only logged.
pub const OBSERVE_ONLY_EVENTS: [&str; 20] = [
    "post_tool_use_failure",
    "permission_denied",
    "post_tool_batch",
    "cwd_changed",
    "file_changed",
    "task_created",
    "task_completed",
    "post_compact",
    "setup",
    "config_change",
    "instructions_loaded",
    "worktree_create",
    "worktree_remove",
    "elicitation",
    "elicitation_result",
    "teammate_idle",
    "stop_failure",
    "user_prompt_expansion",
    "message_display",
    "directory_added",
];

/// Whether `name` may name a lifecycle event an agent announces: snake_case,
/// `[a-z][a-z0-9_]{0,63}`. The vocabulary is open so that an agent's own
/// events reach observers and command hooks without a protocol change;
/// only the named [`LifecycleEvent`]s can be answered.
pub fn is_event_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_lowercase())
        && name.len() <= 64
        && bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// A name an agent announced that cannot name a lifecycle event (see
/// [`is_event_name`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid lifecycle event name {0:?} (expected snake_case: [a-z][a-z0-9_]{{0,63}})")]
pub struct InvalidEventName(pub String);

/// Checks `name` with [`is_event_name`].
pub fn check_event_name(name: &str) -> Result<(), InvalidEventName> {
    if is_event_name(name) {
        Ok(())
    } else {
        Err(InvalidEventName(name.to_string()))
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
                "stop",
                "subagent_start",
                "subagent_stop",
                "pre_compact",
                "before_compaction"
            ]
        );
        assert_eq!(
            names(LifecycleEvent::can_block),
            [
                "user_prompt_submit",
                "stop",
                "subagent_start",
                "subagent_stop",
                "pre_compact",
                "before_compaction"
            ]
        );
        assert_eq!(names(LifecycleEvent::is_stop), ["stop", "subagent_stop"]);
        assert_eq!(
            names(LifecycleEvent::takes_context),
            [
                "session_start",
                "user_prompt_submit",
                "turn_start",
                "pre_compact"
            ]
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

    #[test]
    fn event_names_are_snake_case_up_to_64_bytes() {
        for ok in ["stop", "cwd_changed", "a", "x9_", &"a".repeat(64)] {
            assert!(is_event_name(ok), "{ok}");
        }
        for bad in [
            "",
            "Stop",
            "9a",
            "_a",
            "cwd-changed",
            "a.b",
            "é",
            &"a".repeat(65),
        ] {
            assert!(!is_event_name(bad), "{bad}");
        }
        let err = check_event_name("Cwd").unwrap_err().to_string();
        assert!(
            err.contains("invalid lifecycle event name \"Cwd\""),
            "{err}"
        );
        for name in OBSERVE_ONLY_EVENTS {
            assert!(is_event_name(name), "{name}");
            assert!(name.parse::<LifecycleEvent>().is_err(), "{name}");
        }
    }
}
