//! The counts that must agree across a gateway's replicas (a stop's
//! blocks in a row, a quality gate's retries), kept in a store they share
//! when the embedder gives one ([`StateStore`]; `hookhost serve --state
//! redis://…`). The policies themselves stay plain and in process: before
//! a stop's chain the counts of its keys are read from the store into the
//! host's tables, after it the counts it changed are written back
//! (`chain/stops.rs`). One agent session sends its stops one at a time,
//! so two replicas do not race on one session's counts.
//!
//! Beside the stop counts, a prompt hook's session spend and cached
//! decisions, and the breakers of hooks every replica calls alike
//! (remote, webhook, prompt), are kept in the store when there is one
//! (`members/prompt/`, `policy/breaker/shared.rs`); each says what it does when
//! the store does not answer.
//!
//! Each session's counts are one hash, `hookhost:session:<sha256 half>`,
//! expiring [`TTL`] after its last change: the store is bounded by the
//! sessions of a day, and no session id is stored.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use super::session::SessionKey;

/// How long a session's counts outlive their last change.
pub const TTL: Duration = Duration::from_secs(24 * 3600);

/// A store's answer, boxed so that the trait stays object-safe.
pub type StateFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StateError>> + Send + 'a>>;

/// Why the shared store did not answer: unreachable, too slow, or an
/// answer that is not a count. The policies then act as stated in
/// `chain/stops.rs`, never as if the count were zero.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("shared state: {0}")]
pub struct StateError(pub String);

/// Hashes of counts shared by a gateway's replicas. An implementation
/// bounds every call in time (an error is better than a wait: the call
/// path is waiting on it).
pub trait StateStore: Send + Sync + std::fmt::Debug {
    /// The counts of `key`'s `fields`, in order (`None`: not set).
    fn get<'a>(&'a self, key: &'a str, fields: &'a [String]) -> StateFuture<'a, Vec<Option<u32>>>;
    /// Sets `key`'s `fields` (a count of 0 removes the field) and makes the
    /// hash expire `ttl` from now.
    fn set<'a>(
        &'a self,
        key: &'a str,
        fields: &'a [(String, u32)],
        ttl: Duration,
    ) -> StateFuture<'a, ()>;
    /// Forgets the whole hash `key` (or the text `key`).
    fn forget<'a>(&'a self, key: &'a str) -> StateFuture<'a, ()>;
    /// Adds `delta` to `key`'s `field` at once for every replica (0 reads
    /// it) and makes the hash expire `ttl` from now: the new total. What a
    /// prompt hook's session spend is counted with.
    fn add<'a>(
        &'a self,
        key: &'a str,
        field: &'a str,
        delta: u64,
        ttl: Duration,
    ) -> StateFuture<'a, u64>;
    /// The text at `key` (`None`: not set, or expired).
    fn text<'a>(&'a self, key: &'a str) -> StateFuture<'a, Option<String>>;
    /// Sets the text at `key`, expiring `ttl` from now: a prompt hook's
    /// cached decision, a breaker's open state.
    fn put_text<'a>(&'a self, key: &'a str, value: &'a str, ttl: Duration) -> StateFuture<'a, ()>;
}

/// The store's name of a session's hash.
pub(crate) fn session_hash(session: SessionKey) -> String {
    format!("hookhost:session:{}", session.hex())
}

/// The store's name of what a session has spent on prompt hooks (a hash
/// by hook). Apart from the stop counts, which a new prompt resets.
#[cfg(feature = "remote")]
pub(crate) fn spend_hash(session: SessionKey) -> String {
    format!("hookhost:spend:{}", session.hex())
}

/// A hook's name as the store's keys name it: fixed-size, whatever the
/// config calls it.
pub(crate) fn hook_part(hook: &str) -> String {
    SessionKey::of(hook).hex()
}

/// The store given to a part of the host, once, after it was built: a
/// gateway shares state from before it serves, and a member built by a
/// reload is given it as it joins the chain.
pub(crate) type Slot = std::sync::OnceLock<std::sync::Arc<dyn StateStore>>;

/// A store in memory for the host's own tests, which share one between
/// two breakers, spends or caches as two replicas would; `down` makes
/// every call fail, as an unreachable store does.
#[cfg(test)]
pub(crate) mod memory {
    use std::collections::HashMap;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;

    #[derive(Debug, Default)]
    pub(crate) struct Memory {
        hashes: Mutex<HashMap<String, HashMap<String, u64>>>,
        texts: Mutex<HashMap<String, String>>,
        pub(crate) down: AtomicBool,
    }

    impl Memory {
        fn up(&self) -> Result<(), StateError> {
            match self.down.load(Ordering::Relaxed) {
                true => Err(StateError("down".into())),
                false => Ok(()),
            }
        }
    }

    impl StateStore for Memory {
        fn get<'a>(
            &'a self,
            key: &'a str,
            fields: &'a [String],
        ) -> StateFuture<'a, Vec<Option<u32>>> {
            Box::pin(async move {
                self.up()?;
                let hashes = self.hashes.lock().unwrap_or_else(|p| p.into_inner());
                let hash = hashes.get(key);
                let count = |f: &String| hash.and_then(|h| h.get(f)).map(|n| *n as u32);
                Ok(fields.iter().map(count).collect())
            })
        }

        fn set<'a>(
            &'a self,
            key: &'a str,
            fields: &'a [(String, u32)],
            _: Duration,
        ) -> StateFuture<'a, ()> {
            Box::pin(async move {
                self.up()?;
                let mut hashes = self.hashes.lock().unwrap_or_else(|p| p.into_inner());
                let hash = hashes.entry(key.to_string()).or_default();
                for (f, n) in fields {
                    hash.insert(f.clone(), u64::from(*n));
                }
                Ok(())
            })
        }

        fn forget<'a>(&'a self, key: &'a str) -> StateFuture<'a, ()> {
            Box::pin(async move {
                self.up()?;
                self.hashes
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(key);
                self.texts
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(key);
                Ok(())
            })
        }

        fn add<'a>(
            &'a self,
            key: &'a str,
            field: &'a str,
            delta: u64,
            _: Duration,
        ) -> StateFuture<'a, u64> {
            Box::pin(async move {
                self.up()?;
                let mut hashes = self.hashes.lock().unwrap_or_else(|p| p.into_inner());
                let n = hashes
                    .entry(key.to_string())
                    .or_default()
                    .entry(field.to_string())
                    .or_default();
                *n = n.saturating_add(delta);
                Ok(*n)
            })
        }

        fn text<'a>(&'a self, key: &'a str) -> StateFuture<'a, Option<String>> {
            Box::pin(async move {
                self.up()?;
                Ok(self
                    .texts
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .get(key)
                    .cloned())
            })
        }

        fn put_text<'a>(
            &'a self,
            key: &'a str,
            value: &'a str,
            _: Duration,
        ) -> StateFuture<'a, ()> {
            Box::pin(async move {
                self.up()?;
                let mut texts = self.texts.lock().unwrap_or_else(|p| p.into_inner());
                texts.insert(key.to_string(), value.to_string());
                Ok(())
            })
        }
    }
}
