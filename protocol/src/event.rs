//! `hook.runtime_event`: what happened, sent to observers without waiting.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::meta::Meta;

/// How much a runtime event matters, for filtering in a hook's logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Severity {
    /// Fine-grained detail.
    Debug,
    /// Normal operation.
    Info,
    /// Something unusual that did not stop the agent.
    Warn,
    /// Something failed.
    Error,
}

/// `hook.runtime_event` params. A notification: the hook must not answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RuntimeEvent {
    /// Unique per event, so a hook can deduplicate.
    pub id: String,
    /// Dotted kind, e.g. `agent.tool.exec_start`.
    pub kind: String,
    /// When it happened, RFC 3339 in UTC.
    pub time: String,
    /// The component that emitted it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<EventSource>,
    /// The agent, session and turn it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Meta>,
    /// How much it matters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<Severity>,
    /// Kind-specific data; `null` when absent (PicoClaw leaves an empty
    /// payload out).
    #[serde(default)]
    pub payload: Value,
    /// Unknown keys, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// What emitted a runtime event: a component's name, or PicoClaw's object
/// of the component and, optionally, which one of it (`{"component":
/// "channel", "name": "telegram"}`), passed on as it came.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
#[non_exhaustive]
pub enum EventSource {
    /// A component's name.
    Name(String),
    /// PicoClaw's `source` object.
    Component {
        /// The component (`agent`, `channel`, `mcp`, ...).
        component: String,
        /// Which one, when there are several.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
}

impl From<&str> for EventSource {
    fn from(name: &str) -> Self {
        EventSource::Name(name.to_string())
    }
}

impl From<String> for EventSource {
    fn from(name: String) -> Self {
        EventSource::Name(name)
    }
}

/// PicoClaw's short names for its agent event kinds, as its config
/// accepts them in `observe` (pkg/agent/hook_mount.go), with the kind
/// each stands for.
pub const SHORT_NAMES: [(&str, &str); 19] = [
    ("turn_start", "agent.turn.start"),
    ("turn_end", "agent.turn.end"),
    ("llm_request", "agent.llm.request"),
    ("llm_delta", "agent.llm.delta"),
    ("llm_response", "agent.llm.response"),
    ("llm_retry", "agent.llm.retry"),
    ("context_compress", "agent.context.compress"),
    ("session_summarize", "agent.session.summarize"),
    ("tool_exec_start", "agent.tool.exec_start"),
    ("tool_exec_end", "agent.tool.exec_end"),
    ("tool_exec_skipped", "agent.tool.exec_skipped"),
    ("steering_injected", "agent.steering.injected"),
    ("follow_up_queued", "agent.follow_up.queued"),
    ("interrupt_received", "agent.interrupt.received"),
    ("subturn_spawn", "agent.subturn.spawn"),
    ("subturn_end", "agent.subturn.end"),
    ("subturn_result_delivered", "agent.subturn.result_delivered"),
    ("subturn_orphan", "agent.subturn.orphan"),
    ("error", "agent.error"),
];

/// Why a name without a dot is refused.
const UNKNOWN_NAME: &str = "unknown event name: not a dotted kind, `*`, `all`, or one of \
     PicoClaw's short names (turn_start, turn_end, llm_request, llm_delta, llm_response, \
     llm_retry, context_compress, session_summarize, tool_exec_start, tool_exec_end, \
     tool_exec_skipped, steering_injected, follow_up_queued, interrupt_received, \
     subturn_spawn, subturn_end, subturn_result_delivered, subturn_orphan, error)";

/// The kind a PicoClaw short name stands for.
pub fn short_name(name: &str) -> Option<&'static str> {
    SHORT_NAMES
        .iter()
        .find(|(short, _)| *short == name)
        .map(|(_, kind)| *kind)
}

/// A pattern over event kinds, as written in `observe` lists.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
// Closed: the `observe` grammar is `*`, a `prefix.*` or an exact kind.
#[allow(clippy::exhaustive_enums)]
pub enum EventPattern {
    /// `*`: every event.
    All,
    /// `agent.tool.*`: the kind starts with `agent.tool.`.
    Prefix(String),
    /// An exact kind.
    Exact(String),
}

/// An `observe` entry that cannot be a pattern.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{pattern:?}: {why}")]
pub struct PatternError {
    /// The entry as written.
    pub pattern: String,
    /// What is wrong with it.
    pub why: &'static str,
}

impl EventPattern {
    /// Parses an `observe` entry, as a config or a hello declaration
    /// writes it: `*`, `prefix.*` or an exact kind, plus PicoClaw's
    /// spellings. `all` and `""` mean every event, as `*` does, and a
    /// short name ([`SHORT_NAMES`]: `turn_end`, `tool_exec_start`, ...) is
    /// the kind it stands for, so a PicoClaw hook's list means what it
    /// meant there. Every kind is dotted, so any other name without a dot
    /// is refused as unknown (a typo would otherwise match nothing,
    /// silently). A `*` anywhere else than alone or in a final `.*` is an
    /// error rather than a literal, since no kind contains one.
    pub fn parse(s: &str) -> Result<EventPattern, PatternError> {
        let err = |why| PatternError {
            pattern: s.to_string(),
            why,
        };
        if matches!(s, "*" | "all" | "") {
            return Ok(EventPattern::All);
        }
        if let Some(kind) = short_name(s) {
            return Ok(EventPattern::Exact(kind.to_string()));
        }
        if !s.contains('.') && !s.contains('*') {
            return Err(err(UNKNOWN_NAME));
        }
        if let Some(prefix) = s.strip_suffix(".*") {
            if prefix.is_empty() || prefix.contains('*') {
                return Err(err("`*` may only stand alone or end a pattern as `.*`"));
            }
            return Ok(EventPattern::Prefix(format!("{prefix}.")));
        }
        if s.contains('*') {
            return Err(err("`*` may only stand alone or end a pattern as `.*`"));
        }
        Ok(EventPattern::Exact(s.to_string()))
    }

    /// Whether an event of this kind matches.
    pub fn matches(&self, kind: &str) -> bool {
        match self {
            EventPattern::All => true,
            EventPattern::Prefix(p) => kind.starts_with(p.as_str()),
            EventPattern::Exact(k) => k == kind,
        }
    }

    /// Whether every kind this pattern matches is also matched by `other`;
    /// used to intersect a hook's declaration with the config.
    pub fn within(&self, other: &EventPattern) -> bool {
        match (self, other) {
            (_, EventPattern::All) => true,
            (EventPattern::All, _) => false,
            (EventPattern::Prefix(a), EventPattern::Prefix(b)) => a.starts_with(b.as_str()),
            (EventPattern::Exact(k), b) => b.matches(k),
            (EventPattern::Prefix(_), EventPattern::Exact(_)) => false,
        }
    }
}

impl fmt::Display for EventPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EventPattern::All => f.write_str("*"),
            EventPattern::Prefix(p) => write!(f, "{p}*"),
            EventPattern::Exact(k) => f.write_str(k),
        }
    }
}

/// The patterns a hook actually receives: the narrower of each pair from the
/// hook's declaration and the config. A hook that declared nothing gets the
/// config's list.
pub fn intersect_patterns(
    declared: Option<&[EventPattern]>,
    configured: &[EventPattern],
) -> Vec<EventPattern> {
    let Some(declared) = declared else {
        return configured.to_vec();
    };
    let mut out: Vec<EventPattern> = Vec::new();
    for d in declared {
        for c in configured {
            let narrower = if d.within(c) {
                Some(d)
            } else if c.within(d) {
                Some(c)
            } else {
                None
            };
            if let Some(n) = narrower
                && !out.contains(n)
            {
                out.push(n.clone());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> EventPattern {
        EventPattern::parse(s).expect("valid pattern")
    }

    #[test]
    fn patterns_match_as_documented() {
        assert!(p("*").matches("anything.at.all"));
        assert!(p("agent.tool.*").matches("agent.tool.exec_start"));
        assert!(!p("agent.tool.*").matches("agent.toolbox"));
        assert!(!p("agent.tool.*").matches("agent.tool"));
        assert!(p("agent.turn.start").matches("agent.turn.start"));
        assert!(!p("agent.turn.start").matches("agent.turn.started"));
    }

    /// From PicoClaw pkg/events/types.go Event: `source` is an object of
    /// `component` and `name`, `payload` is left out when empty; both are
    /// accepted, and a name string still is.
    #[test]
    fn a_picoclaw_event_with_a_source_object_and_no_payload_reads() {
        let e: RuntimeEvent = serde_json::from_value(serde_json::json!({
            "id": "e1", "kind": "agent.turn.end", "time": "2026-01-01T00:00:00Z",
            "source": {"component": "agent", "name": "main"},
            "scope": {"session_key": "s1", "runtime_id": "r"},
            "correlation": {"trace_id": "t"}, "attrs": {"k": 1}
        }))
        .expect("PicoClaw's event shape reads");
        assert_eq!(
            e.source,
            Some(EventSource::Component {
                component: "agent".into(),
                name: Some("main".into())
            })
        );
        assert_eq!(e.payload, Value::Null);
        assert_eq!(e.extra["correlation"]["trace_id"], "t");
        let back = serde_json::to_value(&e).expect("encodes");
        assert_eq!(
            back["source"],
            serde_json::json!({"component": "agent", "name": "main"})
        );
        let named: RuntimeEvent = serde_json::from_value(serde_json::json!({
            "id": "e2", "kind": "x.y", "time": "2026-01-01T00:00:00Z", "source": "agent", "payload": 1
        }))
        .expect("a name string reads");
        assert_eq!(named.source, Some("agent".into()));
    }

    /// The refusal of an unknown name lists the short names; it is a
    /// static text, so this keeps it and [`SHORT_NAMES`] in step.
    #[test]
    fn the_unknown_name_message_lists_every_short_name() {
        let listed = UNKNOWN_NAME.split_once("short names (").map(|(_, l)| l);
        let listed: Vec<&str> = listed
            .unwrap_or_default()
            .trim_end_matches(')')
            .split(", ")
            .collect();
        let names: Vec<&str> = SHORT_NAMES.iter().map(|(short, _)| *short).collect();
        assert_eq!(listed, names);
    }

    #[test]
    fn misplaced_stars_are_rejected() {
        assert!(EventPattern::parse("agent.*.start").is_err());
        assert!(EventPattern::parse("agent*").is_err());
        assert!(EventPattern::parse(".*").is_err());
    }

    /// From PicoClaw pkg/agent/hook_mount_test.go
    /// TestProcessHookObserveKindsFromConfigAcceptsRuntimeNames (and
    /// TestAgentLoop_MountProcessHook_LLMAndObserver's `observe` wildcards):
    /// short names are their kinds, dotted kinds stay themselves, `all`,
    /// `""` and `*` are every event, and an unknown name is refused.
    #[test]
    fn picoclaw_names_are_their_kinds_and_unknown_names_are_refused() {
        let got: Vec<EventPattern> = [
            "tool_exec_start",
            "agent.tool.exec_end",
            "gateway.ready",
            "mcp.server.failed",
        ]
        .iter()
        .map(|s| p(s))
        .collect();
        let want = [
            "agent.tool.exec_start",
            "agent.tool.exec_end",
            "gateway.ready",
            "mcp.server.failed",
        ];
        assert_eq!(got, want.map(|k| EventPattern::Exact(k.into())));
        assert!(p("turn_end").matches("agent.turn.end"));
        assert!(!p("turn_end").matches("turn_end"));
        assert!(p("error").matches("agent.error"));
        for all in ["all", "", "*"] {
            assert_eq!(p(all), EventPattern::All, "{all:?}");
        }
        for unknown in ["turn_ends", "not_supported", "All"] {
            let e = EventPattern::parse(unknown).expect_err(unknown);
            assert!(e.to_string().contains("unknown event name"), "{e}");
            assert!(e.to_string().contains("turn_end"), "{e}");
        }
    }

    #[test]
    fn intersection_keeps_the_narrower_side() {
        let got = intersect_patterns(Some(&[p("agent.*")]), &[p("agent.tool.*"), p("other.x")]);
        assert_eq!(got, vec![p("agent.tool.*")]);
        let got = intersect_patterns(Some(&[p("turn_end")]), &[p("agent.turn.*")]);
        assert_eq!(got, vec![p("agent.turn.end")]);
        let got = intersect_patterns(Some(&[p("agent.tool.exec_start")]), &[p("*")]);
        assert_eq!(got, vec![p("agent.tool.exec_start")]);
        let got = intersect_patterns(Some(&[p("llm.*")]), &[p("agent.*")]);
        assert!(got.is_empty());
        let got = intersect_patterns(None, &[p("agent.*")]);
        assert_eq!(got, vec![p("agent.*")]);
    }
}
