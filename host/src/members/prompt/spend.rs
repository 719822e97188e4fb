//! The token caps of one prompt hook: per session and per host process.
//! Checked before each call and charged after it, so a cap can be passed
//! by at most the calls already in flight when it was reached.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::time::Instant;

/// Sessions remembered at once; past this the least recently seen is
/// forgotten (its count starts again at 0 if it comes back).
const MAX_SESSIONS: usize = 4096;

/// Tokens spent, and the caps they are held to.
#[derive(Debug)]
pub(super) struct Spend {
    session_cap: Option<u64>,
    process_cap: Option<u64>,
    process: AtomicU64,
    sessions: Mutex<HashMap<String, (u64, Instant)>>,
}

impl Spend {
    pub(super) fn new(session_cap: Option<u64>, process_cap: Option<u64>) -> Spend {
        Spend {
            session_cap,
            process_cap,
            process: AtomicU64::new(0),
            sessions: Mutex::new(HashMap::new()),
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
        let sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        match sessions.get(session) {
            Some((spent, _)) if *spent >= cap => Err(format!(
                "the session spend cap is reached (session {session:?}: {spent} of {cap} tokens)"
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
        let mut sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        if !sessions.contains_key(session) && sessions.len() >= MAX_SESSIONS {
            let oldest = sessions
                .iter()
                .min_by_key(|(_, (_, seen))| *seen)
                .map(|(k, _)| k.clone());
            if let Some(k) = oldest {
                sessions.remove(&k);
            }
        }
        let entry = sessions
            .entry(session.to_string())
            .or_insert((0, Instant::now()));
        entry.0 = entry.0.saturating_add(tokens);
        entry.1 = Instant::now();
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
}
