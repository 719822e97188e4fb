//! What a probe run hands back: one [`Check`] per rule of the protocol the
//! host must keep, each with the lines that broke it, and a [`Summary`] of
//! what arrived. Rendered as lines for a person or as one JSON object for
//! a tool (spec/conformance.md §4 and §5.3 pin both forms).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;
use serde_json::Value;

/// One rule's verdict.
///
/// `#[non_exhaustive]` so that a later field (a hint, a spec section) does
/// not break a reader; only the probe builds these.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Check {
    /// A stable name, e.g. `ids` or `cancel_after_deadline`.
    pub name: &'static str,
    /// True when nothing broke the rule.
    pub passed: bool,
    /// Each time the host broke the rule, in arrival order: a host author
    /// fixes them one by one, so they are not folded into one text.
    pub violations: Vec<Violation>,
}

impl Check {
    pub(super) fn new(name: &'static str, violations: Vec<Violation>) -> Self {
        Check {
            name,
            passed: violations.is_empty(),
            violations,
        }
    }
}

/// One breach of a rule.
///
/// `#[non_exhaustive]` for the same reason as [`Check`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Violation {
    /// The offending line of the probe's stdin (from 1), when one line is
    /// to blame; `None` for what is about the whole run (a SIGTERM).
    pub line: Option<usize>,
    /// What is wrong, for the host's author.
    pub detail: String,
}

impl Violation {
    pub(super) fn at(line: usize, detail: impl Into<String>) -> Self {
        Violation {
            line: Some(line),
            detail: detail.into(),
        }
    }

    pub(super) fn run(detail: impl Into<String>) -> Self {
        Violation {
            line: None,
            detail: detail.into(),
        }
    }
}

/// Why the probe stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Ending {
    /// stdin reached EOF (and no `--linger-ms` was asked for).
    Eof,
    /// SIGTERM arrived.
    Term,
    /// The linger time after EOF passed without a SIGTERM.
    LingerExpired,
    /// Writing to stdout failed: the host closed its end.
    StdoutClosed,
}

/// A `$/cancel_request` the host sent, and what it cancelled.
///
/// `#[non_exhaustive]` for the same reason as [`Check`].
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Cancel {
    /// The id the cancel names, as sent.
    pub id: Value,
    /// The cancel's line.
    pub line: usize,
    /// The cancelled request's line, when the host sent one with that id.
    pub request_line: Option<usize>,
    /// The cancelled request's method.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// Milliseconds from the request's arrival to the cancel's.
    pub after_ms: Option<u64>,
    /// `stalled` (never answered, as `--stall` asked), `answered` (the
    /// probe had answered it: allowed, the hook ignores it), `pending`
    /// (not answered yet, not stalled: a hello held back), or `unknown`
    /// (no earlier request had that id: a violation).
    pub target: &'static str,
}

/// What arrived and when, for the report's last lines.
///
/// `#[non_exhaustive]` so that a later figure does not break a reader.
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct Summary {
    /// Non-blank lines read from stdin.
    pub lines: usize,
    /// Requests per method.
    pub requests: BTreeMap<String, usize>,
    /// Notifications per method.
    pub notifications: BTreeMap<String, usize>,
    /// Every cancel, in arrival order.
    pub cancels: Vec<Cancel>,
    /// When the probe wrote its hello answer (ms since it started).
    pub hello_answered_ms: Option<u64>,
    /// When stdin reached EOF.
    pub eof_ms: Option<u64>,
    /// When SIGTERM arrived.
    pub term_ms: Option<u64>,
    /// When a write to stdout failed.
    pub stdout_closed_ms: Option<u64>,
    /// Why the probe stopped.
    pub ended: Option<Ending>,
}

/// Every check, in a fixed order, and the summary.
///
/// `#[non_exhaustive]` so that a field can be added without breaking
/// readers.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Report {
    /// The checks, always all of them, in the order of spec/conformance.md §4.
    pub checks: Vec<Check>,
    /// What arrived.
    pub summary: Summary,
}

impl Report {
    /// How many violations, over every check: the host conforms (as far
    /// as this run exercised it) when this is zero.
    pub fn violations(&self) -> usize {
        self.checks.iter().map(|c| c.violations.len()).sum()
    }

    /// The report as one JSON object (spec/conformance.md §5.3).
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "checks": self.checks,
            "summary": self.summary,
            "checks_run": self.checks.len(),
            "violations": self.violations(),
        })
    }

    /// The report as lines: `PASS name` or one `VIOLATION name: detail`
    /// per breach, the summary, then `N checks, N violations`.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for c in &self.checks {
            if c.passed {
                let _ = writeln!(out, "PASS {}", c.name);
            }
            for v in &c.violations {
                let _ = match v.line {
                    Some(n) => writeln!(out, "VIOLATION {}: line {n}: {}", c.name, v.detail),
                    None => writeln!(out, "VIOLATION {}: {}", c.name, v.detail),
                };
            }
        }
        self.summary.write_text(&mut out);
        let _ = writeln!(
            out,
            "{} checks, {} violations",
            self.checks.len(),
            self.violations()
        );
        out
    }
}

impl Summary {
    fn write_text(&self, out: &mut String) {
        let _ = writeln!(out, "lines: {}", self.lines);
        let _ = writeln!(out, "requests: {}", counts(&self.requests));
        let _ = writeln!(out, "notifications: {}", counts(&self.notifications));
        let _ = writeln!(out, "cancels: {}", self.cancel_text());
        let _ = writeln!(out, "timeline: {}", self.timeline_text());
    }

    fn cancel_text(&self) -> String {
        if self.cancels.is_empty() {
            return "none".into();
        }
        let each = self.cancels.iter().map(|c| {
            let method = c.method.as_deref().unwrap_or("?");
            match c.after_ms {
                Some(ms) => format!("id {} ({method}, {}) after {ms} ms", c.id, c.target),
                None => format!("id {} ({})", c.id, c.target),
            }
        });
        each.collect::<Vec<_>>().join(", ")
    }

    fn timeline_text(&self) -> String {
        let at = |what: &str, ms: Option<u64>| match ms {
            Some(ms) => format!("{what} at {ms} ms"),
            None => format!("no {what}"),
        };
        let mut parts = vec![
            at("hello answer", self.hello_answered_ms),
            at("stdin EOF", self.eof_ms),
            at("SIGTERM", self.term_ms),
        ];
        if let (Some(eof), Some(term)) = (self.eof_ms, self.term_ms)
            && term >= eof
        {
            parts.push(format!("SIGTERM {} ms after EOF", term - eof));
        }
        if self.stdout_closed_ms.is_some() {
            parts.push(at("stdout closed", self.stdout_closed_ms));
        }
        if let Some(e) = self.ended {
            let name = serde_json::to_value(e).unwrap_or(Value::Null);
            parts.push(format!("ended: {}", name.as_str().unwrap_or("?")));
        }
        parts.join("; ")
    }
}

fn counts(map: &BTreeMap<String, usize>) -> String {
    if map.is_empty() {
        return "none".into();
    }
    let each = map.iter().map(|(m, n)| format!("{m} {n}"));
    each.collect::<Vec<_>>().join(", ")
}
