//! The verdicts a conformance run hands back: one [`Check`] per property,
//! in the order they ran, so that a tool can print them as lines or JSON
//! and a test can assert on any one by name.

use serde::Serialize;

/// How much a check matters, as spec/conformance.md §1 defines it.
///
/// A host relies on the required checks: a hook that fails one breaks
/// under it. The robustness checks are what a careful hook also does; a
/// miss there works under hookhost today and is reported as a warning
/// with advice, so that a working hook is never called broken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Level {
    /// What the host relies on.
    Required,
    /// What a careful hook also does.
    Robustness,
}

/// A check's result as printed: `PASS`, `WARN` or `FAIL`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Status {
    /// The hook did what the check asks.
    Pass,
    /// A robustness check missed: the hook works, but could do better.
    Warn,
    /// A required check missed: the host cannot rely on the hook.
    Fail,
}

impl Status {
    /// The word a line of the report starts with.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Warn => "WARN",
            Status::Fail => "FAIL",
        }
    }
}

/// One check's verdict.
///
/// `#[non_exhaustive]` so that a later field (a duration, a hint) does not
/// break an embedder that reads these; only the checker builds them.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Check {
    /// A stable name, e.g. `hello` or `before_tool: unicode`.
    pub name: String,
    /// Whether a miss is a failure or a warning.
    pub level: Level,
    /// The result.
    pub status: Status,
    /// Why it missed (empty when it passed).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub detail: String,
    /// What to change, for a robustness miss (empty otherwise).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub advice: String,
    /// The hook died or stopped answering during this check, so the
    /// checks after it ran against a freshly started process.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub restarted: bool,
}

impl Check {
    /// Whether the hook did what the check asks.
    pub fn passed(&self) -> bool {
        self.status == Status::Pass
    }
}

/// Every check, in the order they ran.
///
/// `#[non_exhaustive]` for the same reason as [`Check`]: a summary field
/// can be added without breaking readers.
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct Report {
    /// The checks.
    pub checks: Vec<Check>,
    /// Notes that are not checks: stages a legacy hook does not offer,
    /// stages asked for that the hook did not declare.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Checks not run because the hook kept going mute (a note says so).
    /// A hook with skipped checks does not conform: what was not checked
    /// cannot be relied on.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
}

/// A check's outcome before it is named: `Err` carries the report's
/// detail text, which is what a hook author reads.
pub(super) type Verdict = Result<(), String>;

impl Report {
    /// Records a required check.
    pub(super) fn required(&mut self, name: impl Into<String>, verdict: Verdict) {
        self.push(name.into(), Level::Required, verdict, "");
    }

    /// Records a robustness check, with the advice a miss prints.
    pub(super) fn robustness(&mut self, name: impl Into<String>, verdict: Verdict, advice: &str) {
        self.push(name.into(), Level::Robustness, verdict, advice);
    }

    fn push(&mut self, name: String, level: Level, verdict: Verdict, advice: &str) {
        let (status, detail, advice) = match (verdict, level) {
            (Ok(()), _) => (Status::Pass, String::new(), String::new()),
            (Err(why), Level::Required) => (Status::Fail, why, String::new()),
            (Err(why), Level::Robustness) => (Status::Warn, why, advice.to_string()),
        };
        self.checks.push(Check {
            name,
            level,
            status,
            detail,
            advice,
            restarted: false,
        });
    }

    /// Marks the last check as the one after which the hook was restarted.
    pub(super) fn mark_restart(&mut self) {
        if let Some(last) = self.checks.last_mut() {
            last.restarted = true;
        }
    }

    /// Adds a note (not a check).
    pub(super) fn note(&mut self, text: impl Into<String>) {
        self.notes.push(text.into());
    }

    /// How many checks have `status`.
    pub fn count(&self, status: Status) -> usize {
        self.checks.iter().filter(|c| c.status == status).count()
    }

    /// The names of the checks the hook had to be restarted after.
    pub fn restarts(&self) -> Vec<&str> {
        self.checks
            .iter()
            .filter(|c| c.restarted)
            .map(|c| c.name.as_str())
            .collect()
    }

    /// Whether the hook conforms: no required check failed, none was
    /// skipped and, when `strict`, no robustness check warned either.
    pub fn conforms(&self, strict: bool) -> bool {
        self.count(Status::Fail) == 0
            && self.skipped.is_empty()
            && (!strict || self.count(Status::Warn) == 0)
    }
}
