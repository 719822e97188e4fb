//! The verdicts a conformance run hands back: one [`Check`] per property,
//! in the order they ran, so that a tool can print them as lines or JSON
//! and a test can assert on any one by name.

/// One check's verdict.
///
/// `#[non_exhaustive]` so that a later field (a duration, a hint) does not
/// break an embedder that reads these; only the checker builds them.
#[derive(Debug, Clone, serde::Serialize)]
#[non_exhaustive]
pub struct Check {
    /// A stable name, e.g. `hello` or `before_tool: unicode`.
    pub name: String,
    /// Whether the hook passed.
    pub passed: bool,
    /// Why it failed (empty when it passed).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

/// Every check, in the order they ran.
///
/// `#[non_exhaustive]` for the same reason as [`Check`]: a summary field
/// can be added without breaking readers.
#[derive(Debug, Clone, Default, serde::Serialize)]
#[non_exhaustive]
pub struct Report {
    /// The checks.
    pub checks: Vec<Check>,
}

/// A check's outcome before it is named: `Err` carries the report's
/// detail text, which is what a hook author reads.
pub(super) type Verdict = Result<(), String>;

impl Report {
    pub(super) fn pass(&mut self, name: impl Into<String>) {
        self.checks.push(Check {
            name: name.into(),
            passed: true,
            detail: String::new(),
        });
    }

    pub(super) fn fail(&mut self, name: impl Into<String>, why: impl Into<String>) {
        self.checks.push(Check {
            name: name.into(),
            passed: false,
            detail: why.into(),
        });
    }

    pub(super) fn record(&mut self, name: impl Into<String>, verdict: Verdict) {
        match verdict {
            Ok(()) => self.pass(name),
            Err(why) => self.fail(name, why),
        }
    }

    /// How many passed.
    pub fn passed(&self) -> usize {
        self.checks.iter().filter(|c| c.passed).count()
    }

    /// How many failed: a hook conforms when this is zero.
    pub fn failed(&self) -> usize {
        self.checks.len() - self.passed()
    }
}
