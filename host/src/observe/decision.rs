//! What decided one answered event, in one record (built by the host,
//! `host/decision.rs`, written by the audit log): the decision, the hook
//! that made it and its reason, the hooks that failed and were let pass
//! (failed open), and the policy in force. A team's gateway returns it
//! with every answer and writes it to the audit log, the same for every
//! dialect, so "who allowed this" has one answer wherever it is asked.

use serde::Serialize;

/// One answered event's decision record. `decision` is hookhost's own
/// word for the chain's verdict (`continue`, `modify`, `allow`, `ask`,
/// `respond`, `deny`, `abort`, `refused`, `blocked`, or `error` when the
/// chain could not run).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct DecisionRecord {
    /// The verdict.
    pub decision: &'static str,
    /// The hook that made it, when one did (the first to allow, ask,
    /// deny, answer, abort or block; the first to rewrite for `modify`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hook: Option<String>,
    /// Its reason, when it gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Hooks that failed and were skipped by their `on_error = "allow"`:
    /// the verdict was reached without them.
    pub failed_open: Vec<String>,
    /// The policy in force (`Host::set_policy`): a bundle's version and
    /// digest, when the config came from one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
}

impl DecisionRecord {
    /// The record of an event nobody waits on: `blocked` by the first
    /// hook's block (its reason), else `continue`. The announcement does not
    /// say which hook blocked.
    pub(crate) fn announced(blocked: Option<String>, policy: Option<String>) -> Self {
        DecisionRecord {
            decision: if blocked.is_some() {
                "blocked"
            } else {
                "continue"
            },
            hook: None,
            reason: blocked,
            failed_open: Vec::new(),
            policy,
        }
    }

    /// The record of a chain that could not run (`why`).
    pub(crate) fn error(why: String, policy: Option<String>) -> Self {
        DecisionRecord {
            decision: "error",
            hook: None,
            reason: Some(why),
            failed_open: Vec::new(),
            policy,
        }
    }
}
