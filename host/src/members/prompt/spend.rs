//! The token caps of one prompt hook: per session and per host process.
//! Checked before each call and charged after it, so a cap can be passed
//! by at most the calls already in flight when it was reached.
//!
//! With a shared store (`serve --state`) a session's spend is the store's,
//! so a session that moves between a gateway's replicas is held to one
//! cap: `hookhost:spend:<session>` by hook, expiring a day after its last
//! charge. When the store does not answer, the session's spend is unknown
//! and the call is refused as at a reached cap (the hook's `on_error`
//! decides, `block` unless set otherwise); a charge the store did not
//! take is logged. The process cap stays each replica's own.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::observe::log_budget::LogBudget;
use crate::policy::session::{SessionKey, SessionTable, label};
use crate::policy::shared::{self, Slot};

/// Sessions remembered at once; past this the least recently seen is
/// forgotten (its count starts again at 0 if it comes back).
const MAX_SESSIONS: usize = 4096;

/// Why a call may not be made.
#[derive(Debug)]
pub(super) enum Held {
    /// A cap is reached; the text names which.
    Capped(String),
    /// The shared store did not say what the session has spent.
    Unknown(String),
}

/// Tokens spent, and the caps they are held to.
#[derive(Debug)]
pub(super) struct Spend {
    /// The hook, as the store's field names it.
    hook: String,
    session_cap: Option<u64>,
    process_cap: Option<u64>,
    process: AtomicU64,
    /// Tokens by session, keyed by the hashed session id.
    sessions: SessionTable<(), u64>,
    /// The store sessions' spend is kept in, when replicas share one.
    pub(super) shared: Slot,
    /// Warnings about charges the store did not take, a few per window.
    warnings: LogBudget,
}

impl Spend {
    pub(super) fn new(hook: &str, session_cap: Option<u64>, process_cap: Option<u64>) -> Spend {
        Spend {
            hook: shared::hook_part(hook),
            session_cap,
            process_cap,
            process: AtomicU64::new(0),
            sessions: SessionTable::new(MAX_SESSIONS),
            shared: Slot::new(),
            warnings: LogBudget::default(),
        }
    }

    /// Refuses a call once a cap is reached, or when the shared store
    /// cannot say what the session has spent.
    pub(super) async fn check(&self, session: &str) -> Result<(), Held> {
        let spent = self.process.load(Ordering::Relaxed);
        if let Some(cap) = self.process_cap.filter(|cap| spent >= *cap) {
            return Err(Held::Capped(format!(
                "the process spend cap is reached ({spent} of {cap} tokens)"
            )));
        }
        let Some(cap) = self.session_cap else {
            return Ok(());
        };
        match self.session_spent(session, 0).await {
            Ok(spent) if spent >= cap => Err(Held::Capped(format!(
                "the session spend cap is reached (session {:?}: {spent} of {cap} tokens)",
                label(session)
            ))),
            Ok(_) => Ok(()),
            Err(e) => Err(Held::Unknown(format!(
                "the session's spend is unknown ({e}); the call is refused as at a reached cap"
            ))),
        }
    }

    /// Charges a call's tokens to the process and the session.
    pub(super) async fn charge(&self, session: &str, tokens: u64) {
        self.process.fetch_add(tokens, Ordering::Relaxed);
        if self.session_cap.is_none() {
            return;
        }
        if let Err(e) = self.session_spent(session, tokens).await {
            if self.warnings.admit().is_some() {
                tracing::warn!(error = %e, tokens, "a prompt hook's spend was not counted");
            }
        }
    }

    /// Adds `tokens` to the session's spend (0 reads it): the total.
    async fn session_spent(&self, session: &str, tokens: u64) -> Result<u64, shared::StateError> {
        let key = SessionKey::of(session);
        if let Some(store) = self.shared.get() {
            let hash = shared::spend_hash(key);
            return store.add(&hash, &self.hook, tokens, shared::TTL).await;
        }
        if tokens == 0 {
            return Ok(self.sessions.get(&(key, ())).unwrap_or(0));
        }
        let total = self
            .sessions
            .update((key, ()), |spent| spent.unwrap_or(0).saturating_add(tokens));
        Ok(total)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn capped(held: Result<(), Held>) -> String {
        match held {
            Err(Held::Capped(why)) => why,
            other => panic!("not capped: {other:?}"),
        }
    }

    #[tokio::test]
    async fn each_cap_refuses_once_reached() {
        let s = Spend::new("h", Some(100), Some(250));
        s.charge("a", 99).await;
        assert!(s.check("a").await.is_ok());
        s.charge("a", 1).await;
        let e = capped(s.check("a").await);
        assert!(e.contains("session") && e.contains("100 of 100"), "{e}");
        assert!(
            s.check("b").await.is_ok(),
            "another session has its own count"
        );
        s.charge("b", 150).await;
        let e = capped(s.check("c").await);
        assert!(e.contains("process") && e.contains("250 of 250"), "{e}");
    }

    /// Session ids are the agent's: the table keeps a fixed-size key per
    /// session and at most `MAX_SESSIONS` of them.
    #[tokio::test]
    async fn the_session_table_is_bounded_and_keeps_no_id() {
        let s = Spend::new("h", Some(u64::MAX), None);
        for i in 0..MAX_SESSIONS + 100 {
            s.charge(&format!("{i}-{}", "x".repeat(1000)), 1).await;
        }
        assert_eq!(s.sessions.len(), MAX_SESSIONS);
        let huge = "s".repeat(1 << 20);
        let e = Spend::new("h", Some(1), None);
        e.charge(&huge, 1).await;
        let why = capped(e.check(&huge).await);
        assert!(why.len() < 300, "the refusal names a short label");
    }

    #[tokio::test]
    async fn replicas_sharing_a_store_hold_a_session_to_one_cap() {
        use crate::policy::shared::memory::Memory;
        let memory = Arc::new(Memory::default());
        let store: Arc<dyn crate::policy::shared::StateStore> = memory.clone();
        let (a, b) = (
            Spend::new("h", Some(200), None),
            Spend::new("h", Some(200), None),
        );
        let other = Spend::new("other", Some(200), None);
        let _ = a.shared.set(store.clone());
        let _ = b.shared.set(store.clone());
        let _ = other.shared.set(store);
        a.charge("s", 120).await;
        assert!(b.check("s").await.is_ok());
        b.charge("s", 120).await;
        let e = capped(a.check("s").await);
        assert!(e.contains("240 of 200"), "{e}");
        assert!(other.check("s").await.is_ok(), "each hook has its own");
        memory
            .down
            .store(true, std::sync::atomic::Ordering::Relaxed);
        let held = a.check("t").await;
        assert!(
            matches!(&held, Err(Held::Unknown(why)) if why.contains("unknown")),
            "{held:?}"
        );
    }
}
