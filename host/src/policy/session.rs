//! Per-session state with a bound. Session ids come from the agent (or
//! whoever calls the host), so nothing keeps one whole: a table is keyed
//! by a fixed-size [`SessionKey`] (a keyed hash of the id), and holds at
//! most `cap` entries, the least recently used going first. The stop-loop
//! counts, the quality gates' retries and the prompt hooks' session spend
//! are such tables.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Mutex;

/// A session id reduced to 16 bytes: the first half of its sha256, so
/// that every replica of a gateway names a session's shared counts alike
/// (`policy/shared.rs`) while no id is kept whole; two ids collide only
/// by chance (about 2^-64 per pair even when sought on purpose).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct SessionKey([u64; 2]);

impl SessionKey {
    /// The key of session id `id` (any length; `""` is a session too).
    pub(crate) fn of(id: &str) -> SessionKey {
        use sha2::{Digest, Sha256};
        let d = Sha256::digest(id.as_bytes());
        let half = |i: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&d[i..i + 8]);
            u64::from_be_bytes(b)
        };
        SessionKey([half(0), half(8)])
    }

    /// 32 hex digits, as the shared store's keys name it.
    pub(crate) fn hex(&self) -> String {
        format!("{:016x}{:016x}", self.0[0], self.0[1])
    }
}

/// At most this many characters of a session id go into a log line.
const LABEL_CHARS: usize = 64;

/// A session id shortened for a log line: an id of megabytes is not
/// written whole to the log.
pub(crate) fn label(id: &str) -> String {
    match id.char_indices().nth(LABEL_CHARS) {
        None => id.to_string(),
        Some((at, _)) => format!("{}… ({} bytes)", &id[..at], id.len()),
    }
}

/// Values by (session, sub-key), at most `cap` of them: inserting a new
/// key into a full table drops the least recently used entry first.
#[derive(Debug)]
pub(crate) struct SessionTable<K, V> {
    cap: usize,
    inner: Mutex<Entries<K, V>>,
}

/// The map and the use clock it orders its entries by.
#[derive(Debug)]
struct Entries<K, V> {
    map: HashMap<(SessionKey, K), (V, u64)>,
    clock: u64,
}

impl<K: Hash + Eq + Clone, V: Clone> SessionTable<K, V> {
    /// An empty table of at most `cap` (at least 1) entries.
    pub(crate) fn new(cap: usize) -> Self {
        SessionTable {
            cap: cap.max(1),
            inner: Mutex::new(Entries {
                map: HashMap::new(),
                clock: 0,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Entries<K, V>> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The value for `key`, marked as just used.
    pub(crate) fn get(&self, key: &(SessionKey, K)) -> Option<V> {
        let mut e = self.lock();
        e.clock += 1;
        let now = e.clock;
        let (v, used) = e.map.get_mut(key)?;
        *used = now;
        Some(v.clone())
    }

    /// Sets `key` to `f(old value)`, making room first when the key is
    /// new and the table full. Returns the new value.
    pub(crate) fn update(&self, key: (SessionKey, K), f: impl FnOnce(Option<V>) -> V) -> V {
        let mut e = self.lock();
        e.clock += 1;
        let now = e.clock;
        if !e.map.contains_key(&key) && e.map.len() >= self.cap {
            let oldest = e
                .map
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(k, _)| k.clone());
            if let Some(k) = oldest {
                e.map.remove(&k);
            }
        }
        let old = e.map.remove(&key).map(|(v, _)| v);
        let new = f(old);
        e.map.insert(key, (new.clone(), now));
        new
    }

    /// Forgets `key`.
    pub(crate) fn remove(&self, key: &(SessionKey, K)) {
        self.lock().map.remove(key);
    }

    /// Forgets every entry of `session`.
    pub(crate) fn remove_session(&self, session: SessionKey) {
        self.lock().map.retain(|(s, _), _| *s != session);
    }

    /// How many entries the table holds.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lock().map.len()
    }
}

/// How many (session, key) counts a [`BlockCounts`] keeps at once; past
/// it the least recently used is forgotten (it starts afresh). The ids
/// come from the agent, so the bound keeps it from growing the host.
pub(crate) const MAX_COUNTS: usize = 4096;

/// Blocks in a row by (session, key): what `stop_block_limit` counts per
/// stop event and the quality gates per sub-agent. Only keys whose last
/// run was blocked have an entry, and at most [`MAX_COUNTS`] of them.
#[derive(Debug)]
pub(crate) struct BlockCounts<K> {
    blocked: SessionTable<K, u32>,
}

impl<K: Hash + Eq + Clone> Default for BlockCounts<K> {
    fn default() -> Self {
        BlockCounts {
            blocked: SessionTable::new(MAX_COUNTS),
        }
    }
}

impl<K: Hash + Eq + Clone> BlockCounts<K> {
    /// The blocks in a row so far for `key`.
    pub(crate) fn count(&self, key: &(SessionKey, K)) -> u32 {
        self.blocked.get(key).unwrap_or(0)
    }

    /// Records one more block in a row.
    pub(crate) fn blocked(&self, key: (SessionKey, K)) {
        self.blocked
            .update(key, |c| c.unwrap_or(0).saturating_add(1));
    }

    /// Sets the count of `key`.
    pub(crate) fn set(&self, key: (SessionKey, K), blocks: u32) {
        self.blocked.update(key, |_| blocks);
    }

    /// Forgets `key`'s count (a run that went through).
    pub(crate) fn reset(&self, key: &(SessionKey, K)) {
        self.blocked.remove(key);
    }

    /// Forgets every count of the session: a new prompt starts afresh, and
    /// an ended session has nothing left to count.
    pub(crate) fn reset_session(&self, session: SessionKey) {
        self.blocked.remove_session(session);
    }

    /// How many counts are kept (for tests).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.blocked.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_fixed_size_and_tell_sessions_apart() {
        let huge = "s".repeat(8 << 20);
        assert_eq!(std::mem::size_of::<SessionKey>(), 16);
        assert_eq!(SessionKey::of(&huge), SessionKey::of(&huge.clone()));
        assert_ne!(SessionKey::of("a"), SessionKey::of("b"));
        assert_ne!(SessionKey::of(""), SessionKey::of("a"));
        assert!(label(&huge).len() < 100, "a log line holds a short label");
        assert_eq!(label("abc"), "abc");
    }

    #[test]
    fn a_full_table_drops_the_least_recently_used() {
        let t: SessionTable<u8, u32> = SessionTable::new(3);
        for s in ["a", "b", "c"] {
            t.update((SessionKey::of(s), 0), |_| 1);
        }
        assert_eq!(t.get(&(SessionKey::of("a"), 0)), Some(1), "a is used");
        t.update((SessionKey::of("d"), 0), |_| 1);
        assert_eq!(t.len(), 3);
        assert_eq!(t.get(&(SessionKey::of("b"), 0)), None, "b went first");
        assert_eq!(t.get(&(SessionKey::of("a"), 0)), Some(1));
        for i in 0..10_000 {
            t.update((SessionKey::of(&i.to_string()), 1), |v| v.unwrap_or(0) + 1);
        }
        assert_eq!(t.len(), 3, "never more than the cap");
        t.update((SessionKey::of("x"), 1), |_| 5);
        t.update((SessionKey::of("x"), 2), |_| 5);
        t.remove_session(SessionKey::of("x"));
        assert_eq!(t.get(&(SessionKey::of("x"), 1)), None);
    }
}
