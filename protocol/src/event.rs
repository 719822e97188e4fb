//! `hook.runtime_event`: what happened, sent to observers without waiting.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::meta::Meta;

/// How much a runtime event matters, for filtering in a hook's logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
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
    pub source: Option<String>,
    /// The agent, session and turn it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Meta>,
    /// How much it matters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<Severity>,
    /// Kind-specific data.
    pub payload: Value,
    /// Unknown keys, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A pattern over event kinds, as written in `observe` lists.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
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
    /// Parses `*`, `prefix.*` or an exact kind. A `*` anywhere else is an
    /// error rather than a literal, since no kind contains one.
    pub fn parse(s: &str) -> Result<EventPattern, PatternError> {
        let err = |why| PatternError {
            pattern: s.to_string(),
            why,
        };
        if s.is_empty() {
            return Err(err("empty pattern"));
        }
        if s == "*" {
            return Ok(EventPattern::All);
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

    #[test]
    fn misplaced_stars_are_rejected() {
        assert!(EventPattern::parse("agent.*.start").is_err());
        assert!(EventPattern::parse("agent*").is_err());
        assert!(EventPattern::parse(".*").is_err());
        assert!(EventPattern::parse("").is_err());
    }

    #[test]
    fn intersection_keeps_the_narrower_side() {
        let got = intersect_patterns(Some(&[p("agent.*")]), &[p("agent.tool.*"), p("other.x")]);
        assert_eq!(got, vec![p("agent.tool.*")]);
        let got = intersect_patterns(Some(&[p("agent.tool.exec_start")]), &[p("*")]);
        assert_eq!(got, vec![p("agent.tool.exec_start")]);
        let got = intersect_patterns(Some(&[p("llm.*")]), &[p("agent.*")]);
        assert!(got.is_empty());
        let got = intersect_patterns(None, &[p("agent.*")]);
        assert_eq!(got, vec![p("agent.*")]);
    }
}
