//! One audit record as the line every backend stores: its JSON text,
//! redacted and cut, then sealed into its writer's hash chain. The text is
//! the record: a database keeps it verbatim beside the columns it is found
//! by, so `hookhost audit verify` checks the same bytes in every backend.

use std::borrow::Cow;

use serde::Serialize;

use super::AuditRecord;
use crate::observe::chain::Link;
use crate::observe::redact::redact;

/// The longest `reason` or `error` written, in characters; longer ones are
/// cut and end in [`ELLIPSIS`]. Hooks may return whole tool outputs as
/// reasons, and one runaway hook must not bloat the log.
pub(crate) const MAX_TEXT_CHARS: usize = 256;

/// Appended to a cut `reason` or `error`, so a reader knows there was more.
const ELLIPSIS: char = '…';

#[cfg(any(feature = "audit-sqlite", feature = "audit-postgres"))]
/// A record sealed into its chain: who wrote it, where in the writer's
/// sequence, and the line (with its `hash`, without the newline).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sealed {
    pub writer: String,
    pub seq: u64,
    pub line: String,
}

/// Turns records into sealed lines; owns the writer's place in its chain
/// and the buffers reused from one record to the next.
pub(crate) struct Encoder {
    link: Link,
    body: Vec<u8>,
    line: Vec<u8>,
}

impl Encoder {
    pub(crate) fn new() -> Encoder {
        Encoder {
            link: Link::start(),
            body: Vec::with_capacity(512),
            line: Vec::with_capacity(512),
        }
    }

    /// `record`'s line with its hash and a newline, or the encoding error
    /// (cannot happen for these plain fields; if it does, the caller loses
    /// the record, not the writer).
    pub(crate) fn seal(&mut self, record: &AuditRecord) -> serde_json::Result<&[u8]> {
        self.line.clear();
        self.body.clear();
        let seq = self.link.next();
        encode_line(&mut self.body, record, (&self.link, seq))?;
        self.link.seal(&self.body, &mut self.line);
        Ok(&self.line)
    }

    #[cfg(any(feature = "audit-sqlite", feature = "audit-postgres"))]
    /// The same, owned and without the newline, for a database row.
    pub(crate) fn seal_row(&mut self, record: &AuditRecord) -> serde_json::Result<Sealed> {
        let line = self.seal(record)?;
        let line = String::from_utf8_lossy(&line[..line.len() - 1]).into_owned();
        Ok(Sealed {
            writer: self.link.writer.clone(),
            seq: self.link.seq,
            line,
        })
    }

    /// Starts a new chain: after lines whose fate is unknown (a failed
    /// write), the next records must not claim to follow them.
    pub(crate) fn restart(&mut self) {
        self.link = Link::start();
    }
}

/// The serialized line, fields in the documented order.
#[derive(Serialize)]
struct Line<'a> {
    ts: String,
    writer: &'a str,
    seq: u64,
    prev: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
    hook: &'a str,
    stage: &'static str,
    request_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    session: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tenant: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    user: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    agent: Option<&'a str>,
    duration_us: u64,
    outcome: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tokens_in: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tokens_out: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cached: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    failed_open: Option<&'a [String]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    policy: Option<&'a str>,
}

/// Appends `record` as one compact JSON object and a newline to `buf`.
fn encode_line(
    buf: &mut Vec<u8>,
    record: &AuditRecord,
    (link, seq): (&Link, u64),
) -> serde_json::Result<()> {
    let who = record.who.as_deref();
    let decision = record.decision.as_deref();
    let line = Line {
        ts: hookhost_protocol::time::rfc3339(record.ts),
        writer: &link.writer,
        seq,
        prev: &link.prev,
        kind: decision.map(|_| "decision"),
        hook: &record.hook,
        stage: record.stage.as_str(),
        request_id: &record.request_id,
        session: record.session.as_deref().map(clean_text),
        tenant: who.and_then(|w| w.tenant.as_deref()),
        user: who.and_then(|w| w.user.as_deref()),
        agent: who.and_then(|w| w.agent.as_deref()),
        duration_us: u64::try_from(record.duration.as_micros()).unwrap_or(u64::MAX),
        outcome: &record.outcome,
        reason: record.reason.as_deref().map(clean_text),
        error: record.error.as_deref().map(clean_text),
        model: record.model.as_ref().map(|m| m.model.as_str()),
        tokens_in: record.model.as_ref().map(|m| m.tokens_in),
        tokens_out: record.model.as_ref().map(|m| m.tokens_out),
        cached: record.model.as_ref().map(|m| m.cached),
        failed_open: decision.map(|d| d.failed_open.as_slice()),
        policy: decision.and_then(|d| d.policy.as_deref()),
    };
    serde_json::to_writer(&mut *buf, &line)
}

/// Redacts, then cuts to [`MAX_TEXT_CHARS`] characters. Redaction comes
/// first so that a key straddling the cut is masked whole; cutting first
/// could leave a key prefix too short for the patterns to recognize.
fn clean_text(text: &str) -> Cow<'_, str> {
    let redacted = redact(text);
    match redacted.char_indices().nth(MAX_TEXT_CHARS) {
        None => redacted,
        Some((cut, _)) => {
            let mut out = String::with_capacity(cut + ELLIPSIS.len_utf8());
            out.push_str(&redacted[..cut]);
            out.push(ELLIPSIS);
            Cow::Owned(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_redacted_then_cut_on_a_char_boundary() {
        // Short text is kept as is.
        assert_eq!(
            clean_text("rule `sudo` denies this"),
            "rule `sudo` denies this"
        );
        // Exactly the limit: not cut.
        let exact = "é".repeat(MAX_TEXT_CHARS);
        assert_eq!(clean_text(&exact), exact);
        // Over the limit: 256 characters and an ellipsis, cut between
        // two-byte characters without splitting one.
        let long = "é".repeat(300);
        let cut = clean_text(&long);
        assert_eq!(cut.chars().count(), MAX_TEXT_CHARS + 1);
        assert!(cut.ends_with("é…"));
        assert_eq!(cut, format!("{}…", "é".repeat(MAX_TEXT_CHARS)));
        // A key straddling the cut: no part of it survives.
        let key = "sk-proj-abcdefghijklmnop1234";
        let straddling = format!("{}{key} and more", "x".repeat(250));
        let cleaned = clean_text(&straddling);
        assert!(!cleaned.contains("sk-"), "{cleaned}");
        assert!(!cleaned.contains("abcdef"), "{cleaned}");
        assert_eq!(cleaned, format!("{}[REDAC…", "x".repeat(250)));
    }
}
