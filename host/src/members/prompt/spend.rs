//! The token caps of one prompt hook: per session and per host process.
//! Checked before each call and charged after it, so a cap can be passed
//! by at most the calls already in flight when it was reached.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::policy::session::{SessionKey, SessionTable, label};

/// Sessions remembered at once; past this the least recently seen is
/// forgotten (its count starts again at 0 if it comes back).
const MAX_SESSIONS: usize = 4096;

/// Tokens spent, and the caps they are held to.
#[derive(Debug)]
pub(super) struct Spend {
    session_cap: Option<u64>,
    process_cap: Option<u64>,
    process: AtomicU64,
    /// Tokens by session, keyed by the hashed session id.
    sessions: SessionTable<(), u64>,
}

impl Spend {
    pub(super) fn new(session_cap: Option<u64>, process_cap: Option<u64>) -> Spend {
        Spend {
            session_cap,
            process_cap,
            process: AtomicU64::new(0),
            sessions: SessionTable::new(MAX_SESSIONS),
        }
    }

    /// Refuses a call once a cap is reached; the text names which.
    pub(super) fn check(&self, session: &str) -> Result<(), String> {
        let spent = self.process.load(Ordering::Relaxed);
        if let Some(cap) = self.process_cap.filter(|cap| spent >= *cap) {
            return Err(format!(
                "the process spend cap is reached ({spent} of {cap} tokens)"
            ));
        }
        let Some(cap) = self.session_cap else {
            return Ok(());
        };
        match self.sessions.get(&(SessionKey::of(session), ())) {
            Some(spent) if spent >= cap => Err(format!(
                "the session spend cap is reached (session {:?}: {spent} of {cap} tokens)",
                label(session)
            )),
            _ => Ok(()),
        }
    }

    /// Charges a call's tokens to the process and the session.
    pub(super) fn charge(&self, session: &str, tokens: u64) {
        self.process.fetch_add(tokens, Ordering::Relaxed);
        if self.session_cap.is_none() {
            return;
        }
        self.sessions
            .update((SessionKey::of(session), ()), |spent| {
                spent.unwrap_or(0).saturating_add(tokens)
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cap_refuses_once_reached() {
        let s = Spend::new(Some(100), Some(250));
        s.charge("a", 99);
        assert!(s.check("a").is_ok());
        s.charge("a", 1);
        let e = s.check("a").unwrap_err();
        assert!(e.contains("session") && e.contains("100 of 100"), "{e}");
        assert!(s.check("b").is_ok(), "another session has its own count");
        s.charge("b", 150);
        let e = s.check("c").unwrap_err();
        assert!(e.contains("process") && e.contains("250 of 250"), "{e}");
    }

    /// Session ids are the agent's: the table keeps a fixed-size key per
    /// session and at most `MAX_SESSIONS` of them.
    #[test]
    fn the_session_table_is_bounded_and_keeps_no_id() {
        let s = Spend::new(Some(u64::MAX), None);
        for i in 0..MAX_SESSIONS + 100 {
            s.charge(&format!("{i}-{}", "x".repeat(1000)), 1);
        }
        assert_eq!(s.sessions.len(), MAX_SESSIONS);
        let huge = "s".repeat(1 << 20);
        let e = Spend::new(Some(1), None);
        e.charge(&huge, 1);
        let why = e.check(&huge).unwrap_err();
        assert!(why.len() < 300, "the refusal names a short label");
    }
}
